/**
 * Syntax highlighting as data: the lab editor's own Lezer grammars (PostgreSQL from
 * @codemirror/lang-sql, Go, TypeScript) parse the source, and `syntaxClasses` turns the tree
 * into runs of text with a class. Svelte renders the runs as text nodes, so the source can
 * never become markup. Only parsers and the highlighter load here, not the editor.
 */
import { PostgreSQL } from '@codemirror/lang-sql';
import { parser as goParser } from '@lezer/go';
import { parser as jsParser } from '@lezer/javascript';
import { highlightCode } from '@lezer/highlight';
import type { Parser } from '@lezer/common';
import type { CodeLanguage } from '../backend';
import { syntaxClasses } from './syntax';

/** A run of source text; `cls` holds the `syn-*` classes of a highlighted token. */
export interface HlRun {
  text: string;
  cls?: string;
}

const tsParser = jsParser.configure({ dialect: 'ts' });

/** The Lezer parser for each of the lesson format's code languages. */
const PARSERS: Readonly<Record<CodeLanguage, () => Parser>> = {
  sql: () => PostgreSQL.language.parser,
  go: () => goParser,
  ts: () => tsParser,
};

/** Highlights `source`; an unknown language (or a parser failure) yields the plain text. */
export function highlight(source: string, language: CodeLanguage): HlRun[] {
  const parser = PARSERS[language];
  if (!parser) return [{ text: source }];
  try {
    const runs: HlRun[] = [];
    const put = (text: string, cls: string) => {
      const last = runs[runs.length - 1];
      if (last && (last.cls ?? '') === cls) last.text += text;
      else runs.push(cls ? { text, cls } : { text });
    };
    highlightCode(source, parser().parse(source), syntaxClasses, put, () => put('\n', ''));
    return runs;
  } catch {
    return [{ text: source }];
  }
}

/** The plain text of the runs (what copy-to-clipboard and tests compare with the source). */
export function hlText(runs: readonly HlRun[]): string {
  return runs.map((r) => r.text).join('');
}

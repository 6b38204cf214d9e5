/**
 * Syntax highlighting as data: the lab editor's own Lezer grammars (PostgreSQL from
 * @codemirror/lang-sql, Go, TypeScript) parse the source, and `syntaxClasses` turns the tree
 * into runs of text with a class. Svelte renders the runs as text nodes, so the source can
 * never become markup. Each grammar loads on first use, so a page with SQL only never loads
 * the Go and TypeScript parsers.
 */
import { highlightCode } from '@lezer/highlight';
import type { Parser } from '@lezer/common';
import type { CodeLanguage } from '../backend';
import { syntaxClasses } from './syntax';

/** A run of source text; `cls` holds the `syn-*` classes of a highlighted token. */
export interface HlRun {
  text: string;
  cls?: string;
}

/** A highlighter for one language: source in, runs out (the plain text when parsing fails). */
export type Highlight = (source: string) => HlRun[];

/** Loads the Lezer parser of each of the lesson format's code languages. */
const PARSERS: Readonly<Record<CodeLanguage, () => Promise<Parser>>> = {
  sql: () => import('@codemirror/lang-sql').then((m) => m.PostgreSQL.language.parser),
  go: () => import('@lezer/go').then((m) => m.parser),
  ts: () => import('@lezer/javascript').then((m) => m.parser.configure({ dialect: 'ts' })),
};

/** The highlighter for `language` once its grammar has loaded; an unknown language gets plain text. */
export async function highlighterFor(language: CodeLanguage): Promise<Highlight> {
  const load = PARSERS[language];
  if (!load) return (source) => [{ text: source }];
  const parser = await load();
  return remembered((source) => highlightWith(parser, source));
}

/** How many highlighted sources a language keeps (a lesson's statements, panes and snippets fit many times over). */
const REMEMBERED = 500;

/**
 * `highlight` with its answers kept by source text: every step redraws the panes' lines whose
 * data changed, and most of them show a statement highlighted before. The same source then gets
 * the same runs (same object), so nothing below it redraws either. Oldest first out.
 */
export function remembered(highlight: Highlight, size = REMEMBERED): Highlight {
  const kept = new Map<string, HlRun[]>();
  return (source) => {
    let runs = kept.get(source);
    if (runs) return runs;
    runs = highlight(source);
    if (kept.size >= size) kept.delete(kept.keys().next().value!);
    kept.set(source, runs);
    return runs;
  };
}

/** Highlights `source` with `parser`; a parser failure yields the plain text. */
export function highlightWith(parser: Parser, source: string): HlRun[] {
  try {
    const runs: HlRun[] = [];
    const put = (text: string, cls: string) => {
      const last = runs[runs.length - 1];
      if (last && (last.cls ?? '') === cls) last.text += text;
      else runs.push(cls ? { text, cls } : { text });
    };
    highlightCode(source, parser.parse(source), syntaxClasses, put, () => put('\n', ''));
    return runs;
  } catch {
    return [{ text: source }];
  }
}

/** The plain text of the runs (what copy-to-clipboard and tests compare with the source). */
export function hlText(runs: readonly HlRun[]): string {
  return runs.map((r) => r.text).join('');
}

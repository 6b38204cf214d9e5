/**
 * Syntax highlighting as data: highlight.js output parsed into a tree of text and classed spans,
 * which Svelte renders as text nodes. No HTML string ever reaches the DOM.
 */
import hljs from 'highlight.js/lib/core';
import go from 'highlight.js/lib/languages/go';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import type { CodeLanguage } from '../backend';

hljs.registerLanguage('go', go);
hljs.registerLanguage('sql', sql);
hljs.registerLanguage('typescript', typescript);

/** highlight.js language names for the lesson format's languages. */
export const HLJS_LANGUAGE: Readonly<Record<CodeLanguage, string>> = { go: 'go', sql: 'sql', ts: 'typescript' };

/** A highlighted fragment: plain text, or a span with highlight.js classes around fragments. */
export type HlNode = { text: string } | { cls: string; children: HlNode[] };

/** Highlights `source`; an unknown language (or a highlighter failure) yields the plain text. */
export function highlight(source: string, language: CodeLanguage): HlNode[] {
  const name = HLJS_LANGUAGE[language];
  if (!name) return [{ text: source }];
  try {
    return parseHljsHtml(hljs.highlight(source, { language: name, ignoreIllegals: true }).value);
  } catch {
    return [{ text: source }];
  }
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'", '#39': "'" };
const TOKEN_RE = /<span class="([^"<>]*)">|<\/span>|&(amp|lt|gt|quot|#x27|#39);|[^<&]+|[<&]/g;

/**
 * Parses highlight.js's HTML, which is only `<span class="…">`, `</span>` and escaped text.
 * Anything else (impossible from highlight.js, which escapes the source) stays literal text,
 * and class names keep only class-name characters.
 */
export function parseHljsHtml(html: string): HlNode[] {
  const root: HlNode[] = [];
  const stack: HlNode[][] = [root];
  const top = () => stack[stack.length - 1];
  const pushText = (text: string) => {
    const list = top();
    const prev = list[list.length - 1];
    if (prev && 'text' in prev) list[list.length - 1] = { text: prev.text + text };
    else list.push({ text });
  };
  for (const m of html.matchAll(TOKEN_RE)) {
    const tok = m[0];
    if (m[1] !== undefined) {
      const span: HlNode = { cls: m[1].replace(/[^\w\s-]/g, ''), children: [] };
      top().push(span);
      stack.push(span.children);
    } else if (tok === '</span>') {
      if (stack.length > 1) stack.pop();
      else pushText(tok);
    } else if (m[2] !== undefined) pushText(ENTITIES[m[2]]);
    else pushText(tok);
  }
  return root;
}

/** The plain text of a tree (what copy-to-clipboard and tests compare with the source). */
export function hlText(nodes: readonly HlNode[]): string {
  return nodes.map((n) => ('text' in n ? n.text : hlText(n.children))).join('');
}

/**
 * The syntax highlighter (model/highlight.ts), loaded per language on first use in chunks of
 * their own: the PostgreSQL grammar comes with @codemirror/language and its view core, which
 * the lesson list never needs. Until a language's chunk arrives, its code shows as plain text.
 */
import type { CodeLanguage } from '../backend';
import type { Highlight } from '../model/highlight';

const loaded = $state<Partial<Record<CodeLanguage, Highlight>>>({});
const loading: Partial<Record<CodeLanguage, Promise<Highlight>>> = {};

/** Starts loading the highlighter for `language` once; resolves with it. */
export function loadHighlighter(language: CodeLanguage): Promise<Highlight> {
  loading[language] ??= import('../model/highlight').then((m) => m.highlighterFor(language)).then((h) => (loaded[language] = h));
  return loading[language];
}

/** The highlighter for `language` if it has loaded (reactive: readers update when it arrives), else null. */
export function highlighter(language: CodeLanguage): Highlight | null {
  const h = loaded[language];
  if (!h) void loadHighlighter(language);
  return h ?? null;
}

/**
 * The syntax highlighter (model/highlight.ts), loaded on first use in a chunk of its own: the
 * PostgreSQL grammar comes with @codemirror/language and its view core, which the lesson list
 * never needs. Until the chunk arrives, code shows as plain text.
 */
import type { highlight as Highlight } from '../model/highlight';

let loaded = $state<typeof Highlight | null>(null);
let loading: Promise<typeof Highlight> | null = null;

/** Starts loading the highlighter once; resolves with it. */
export function loadHighlighter(): Promise<typeof Highlight> {
  loading ??= import('../model/highlight').then((m) => (loaded = m.highlight));
  return loading;
}

/** The highlighter if it has loaded (reactive: readers update when it arrives), else null. */
export function highlighter(): typeof Highlight | null {
  if (!loaded) void loadHighlighter();
  return loaded;
}

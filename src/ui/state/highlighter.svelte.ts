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

/** Runs `work` when the main thread is idle (after a timeout where the browser has no idle callbacks), with whether it may go on; returns a cancel. */
function whenIdle(work: (more: () => boolean) => void): () => void {
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback((deadline) => work(() => deadline.timeRemaining() > 2), { timeout: 2000 });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(() => {
    const end = performance.now() + 4;
    work(() => performance.now() < end);
  }, 50);
  return () => clearTimeout(id);
}

/**
 * Highlights `sources` ahead, in idle time, so that the highlighter's kept answers
 * (model/highlight `remembered`) already hold them when a step shows them: a lesson's
 * statements and code snippets are known when it opens, and a Lezer parse of a new statement
 * or snippet inside a step's update cost 1–6 ms. Returns a cancel (for a lesson closed early).
 */
export function warmHighlights(sources: readonly { source: string; language: CodeLanguage }[]): () => void {
  let i = 0;
  let stopped = false;
  let cancel: () => void = () => {};
  const work = (more: () => boolean) => {
    while (!stopped && i < sources.length) {
      const { source, language } = sources[i];
      const h = loaded[language];
      if (!h) {
        // Its grammar is still loading: go on once it is there.
        void loadHighlighter(language).then(() => {
          if (!stopped) cancel = whenIdle(work);
        });
        return;
      }
      h(source);
      i++;
      if (!more()) break;
    }
    if (!stopped && i < sources.length) cancel = whenIdle(work);
  };
  cancel = whenIdle(work);
  return () => {
    stopped = true;
    cancel();
  };
}

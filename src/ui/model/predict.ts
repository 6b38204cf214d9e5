/** Predict checkpoints: which one resolves at a cursor, and how the learner did (pure). */
import type { PredictInfo, ScriptItem } from '../backend';

/** How a prediction turned out; 'unanswered' when the learner jumped past the question. */
export type Verdict = 'right' | 'wrong' | 'skipped' | 'unanswered';

export interface PredictOutcome {
  predict: PredictInfo;
  /** The chosen choice id; null when skipped, undefined when never answered. */
  chosen: string | null | undefined;
  verdict: Verdict;
}

/** The verdict for a saved answer (undefined: never answered, null: skipped). */
export function verdictOf(predict: PredictInfo, chosen: string | null | undefined): Verdict {
  if (chosen === undefined) return 'unanswered';
  if (chosen === null) return 'skipped';
  return chosen === predict.answer ? 'right' : 'wrong';
}

/**
 * The checkpoint whose outcome shows after `cursor` items ran: its predicted step has run and
 * only pauses ran after it (a pause is often where the predicted outcome happens).
 */
export function resolvedPredict(
  script: readonly ScriptItem[],
  cursor: number,
  answerOf: (key: string) => string | null | undefined,
): PredictOutcome | null {
  let last = Math.min(cursor, script.length) - 1;
  while (last >= 0 && script[last].kind === 'pause') last--;
  if (last < 0) return null;
  const predict = script.find((it) => it.predict?.target === last)?.predict;
  if (!predict) return null;
  const chosen = answerOf(predict.key);
  return { predict, chosen, verdict: verdictOf(predict, chosen) };
}

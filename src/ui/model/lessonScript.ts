/** Joins a parsed lesson's content (narration, predicts, code) to the script the engine plays. Pure. */
import type { Lesson, PredictItem } from '../../scenario/lesson';
import type { LessonMeta, PredictInfo, ScriptItem } from '../backend';

/**
 * The script with each item's narration and code reference, and each predict checkpoint on the
 * item that follows it. Items are matched by spec step name ("a1", "clock2"), so the order the
 * engine plays them in does not matter. The input is not mutated.
 */
export function annotateScript(script: readonly ScriptItem[], lesson: Lesson): ScriptItem[] {
  const out = script.map((s) => ({ ...s }));
  const byStep = new Map(out.filter((s) => s.step !== undefined).map((s) => [s.step!, s]));
  let pending: PredictItem | null = null;
  for (const item of lesson.steps) {
    if (item.kind === 'predict') {
      // Several predicts in a row: the first one is asked (the format allows it; no lesson does it).
      pending ??= item;
      continue;
    }
    const s = byStep.get(item.name);
    if (!s) continue;
    if (item.narration) s.narration = { ...item.narration };
    if (item.code !== undefined) s.code = item.code;
    if (item.kind === 'pause') s.pauseMs = item.ms;
    if (pending) {
      const target = byStep.get(pending.step);
      if (target) s.predict = predictInfo(pending, target.index);
      pending = null;
    }
  }
  return out;
}

function predictInfo(p: PredictItem, target: number): PredictInfo {
  return {
    key: p.step,
    target,
    question: { ...p.question },
    choices: p.choices.map((c) => ({ id: c.id, label: { ...c.label } })),
    answer: p.answer,
    explanation: { ...p.explanation },
  };
}

/** The lesson-wide content the player shows: summary, conclusion and code snippets. */
export function lessonMeta(lesson: Lesson): LessonMeta {
  return {
    id: lesson.id,
    summary: { ...lesson.summary },
    ...(lesson.conclusion ? { conclusion: { ...lesson.conclusion } } : {}),
    ...(lesson.code ? { code: lesson.code.map((c) => ({ ...c, title: { ...c.title } })) } : {}),
    ...(lesson.hideUntilEnd ? { hideUntilEnd: [...lesson.hideUntilEnd] } : {}),
  };
}

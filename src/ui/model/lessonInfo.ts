/** What the lesson list needs of a lesson, computed from its parsed file. Pure. */
import type { Lesson, Localized } from '../../scenario/lesson';
import type { LessonSummary } from '../backend';

/** A catalog entry: what the lesson list shows, plus the lesson's summary, topics and level. */
export interface LessonInfo extends LessonSummary {
  title: Localized;
  summary: Localized;
  topics: string[];
  level: Lesson['level'];
  minutes: number;
}

export function lessonInfoOf(l: Lesson): LessonInfo {
  return {
    id: l.id,
    title: l.title,
    summary: l.summary,
    topics: [...l.topics],
    topic: l.topics.join(', '),
    level: l.level,
    minutes: l.minutes,
    steps: l.steps.filter((s) => s.kind !== 'predict').length,
    predictAnswers: Object.fromEntries(l.steps.flatMap((s) => (s.kind === 'predict' ? [[s.step, s.answer]] : []))),
  };
}

/** The lesson list as a path: lessons grouped into the course's parts, and a track's progress (pure). */
import type { CourseData, InterviewQuestionData, LessonSummary, LocalizedText } from '../backend';

/** One group of the list: a course part, or the lessons no part names yet (`title` null). */
export interface ListPart {
  id: string;
  title: LocalizedText | null;
  lessons: (LessonSummary & { number: number })[];
}

/**
 * The lessons in course order, grouped by part and numbered 1..n across the course; lessons the
 * course file does not name come last, in their own group, so nothing bundled is ever hidden.
 */
export function listParts(lessons: readonly LessonSummary[], course: CourseData | null): ListPart[] {
  const byId = new Map(lessons.map((l) => [l.id, l]));
  const out: ListPart[] = [];
  let n = 0;
  const placed = new Set<string>();
  for (const part of course?.parts ?? []) {
    const items = part.lessons.flatMap((id) => {
      const l = byId.get(id);
      if (!l) return [];
      placed.add(id);
      return [{ ...l, number: ++n }];
    });
    if (items.length > 0) out.push({ id: part.id, title: part.title, lessons: items });
  }
  const rest = lessons.filter((l) => !placed.has(l.id)).map((l) => ({ ...l, number: ++n }));
  if (rest.length > 0) out.push({ id: 'other', title: null, lessons: rest });
  return out;
}

/** A track's progress: its lessons present in the bundle, how many are done, and the next one to open. */
export function trackProgress(
  track: CourseData['tracks'][number],
  lessons: readonly LessonSummary[],
  isDone: (id: string) => boolean,
): { lessons: LessonSummary[]; done: number; total: number; minutes: number; next: string | null } {
  const list = track.lessons.flatMap((id) => lessons.filter((l) => l.id === id));
  const done = list.filter((l) => isDone(l.id)).length;
  return {
    lessons: list,
    done,
    total: list.length,
    minutes: list.reduce((sum, l) => sum + (l.minutes ?? 0), 0),
    next: list.find((l) => !isDone(l.id))?.id ?? null,
  };
}

/** A topic tag's label in the course's tag dictionary, or the tag itself when it has none. */
export function tagLabel(course: CourseData | null, tag: string): LocalizedText {
  return course?.tags[tag] ?? tag;
}

/** One card of the follow-up drill: a follow-up question and the main question it follows. */
export interface DrillCard {
  id: string;
  question: LocalizedText;
  model: LocalizedText;
  /** The main interview question it follows up on. */
  parent: { id: string; question: LocalizedText };
}

/**
 * The follow-up drill's cards, mixed across questions: the first follow-up of every question,
 * then every second one, and so on, so two cards in a row never follow up on the same question
 * while another question still has cards left.
 */
export function drillCards(questions: readonly InterviewQuestionData[]): DrillCard[] {
  const out: DrillCard[] = [];
  const depth = Math.max(0, ...questions.map((q) => q.followups?.length ?? 0));
  for (let j = 0; j < depth; j++)
    for (const q of questions) {
      const f = q.followups?.[j];
      if (f) out.push({ ...f, parent: { id: q.id, question: q.question } });
    }
  return out;
}

/** A page body split into its paragraphs (separated by blank lines). */
export function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

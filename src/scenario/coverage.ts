/** Checks docs/coverage.md against the lessons: every step name it cites must be a real step of that lesson. */
import type { Lesson } from './lesson';

/** A step name as the coverage notes write it: session letters and a number (`a2`, `clock1`, `w1_2`). */
const STEP_RE = /\b([a-z][a-z0-9]*?\d+(?:_\d+)?)\b/g;

/**
 * Every step name cited in the notes that the lesson it is cited for does not have, as
 * "lesson: step" sentences. A citation is a lesson id followed by a parenthesis; a range `t1–t5`
 * cites both ends.
 */
export function coverageProblems(markdown: string, lessons: readonly Lesson[]): string[] {
  const steps = new Map(lessons.map((l) => [l.id, new Set(l.steps.flatMap((s) => (s.kind === 'predict' ? [] : [s.name])))]));
  const out: string[] = [];
  const cite = new RegExp(
    `\\b(${[...steps.keys()].map((id) => id.replace(/-/g, '\\-')).join('|')}) \\(([^()]*(?:\\([^()]*\\)[^()]*)*)\\)`,
    'g',
  );
  for (const m of markdown.matchAll(cite)) {
    const [, id, inside] = m;
    // Quoted text and code are prose, not step names.
    const prose = inside.replace(/`[^`]*`|"[^"]*"/g, ' ');
    for (const s of prose.matchAll(STEP_RE)) {
      const name = s[1];
      if (/^(?:pg|log|hash)/.test(name) || !/^[a-z]+\d+(?:_\d+)?$/.test(name)) continue;
      if (!steps.get(id)!.has(name)) out.push(`${id}: docs/coverage.md cites step ${name}, which the lesson does not have`);
    }
  }
  return [...new Set(out)];
}

/**
 * The course file against the lessons on disk: every lesson has its place, every tag a label, the
 * tracks are what they claim; and no lesson gives away a predict outcome before step 1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { courseGaps, courseOrder, parseCourse } from './course';
import { LessonError, parseInterview, parseLesson, type Lesson } from './lesson';
import { coverageProblems } from './coverage';
import { findSpoilers } from './spoilers';

const dir = new URL('../../lessons/', import.meta.url).pathname;
const lessons: Lesson[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => parseLesson(readFileSync(dir + f, 'utf8')));
const ids = lessons.map((l) => l.id);
const courseText = readFileSync(dir + 'course/course.yaml', 'utf8');
const course = parseCourse(courseText, ids);
const interview = parseInterview(readFileSync(dir + 'interview/interview.yaml', 'utf8'), ids);

describe('lessons/course/course.yaml', () => {
  it('places every lesson file in a part and labels every topic tag', () => {
    expect(courseGaps(course, lessons), 'what lessons/course/course.yaml still needs').toEqual([]);
  });

  it('names no lesson that does not exist, with a message that says which', () => {
    expect(() => parseCourse(courseText.replace('[classic-deadlock,', '[no-such-lesson, classic-deadlock,'), ids)).toThrow(
      /unknown lesson "no-such-lesson" \(there is no lessons\/no-such-lesson\.yaml\)/,
    );
  });

  it('says exactly what to add for a lesson missing from it', () => {
    const extra = { id: 'lock-upgrade', topics: ['deadlock', 'brand-new-tag'], level: 'senior' as const };
    const gaps = courseGaps(course, [...lessons, extra]);
    expect(gaps).toHaveLength(2);
    expect(gaps[0]).toContain('lessons/lock-upgrade.yaml is in no part of lessons/course/course.yaml: add "- lock-upgrade"');
    expect(gaps[1]).toContain('topic tag "brand-new-tag" (used by lock-upgrade) has no translation');
  });

  it('rejects a lesson listed twice', () => {
    const twice = courseText.replace('[classic-deadlock, three-way-deadlock,', '[classic-deadlock, classic-deadlock, three-way-deadlock,');
    expect(() => parseCourse(twice, ids)).toThrow(LessonError);
  });

  it('starts with the classic deadlock and ends with isolation and retry', () => {
    const order = courseOrder(course);
    expect(course.start).toBe(order[0]);
    expect(order[0]).toBe('classic-deadlock');
    expect(course.parts.at(-1)!.lessons).toEqual(expect.arrayContaining(['retry-backoff', 'serializable-write-skew']));
  });

  it('orders the levels within each part: no beginner lesson after a senior one', () => {
    const rank = { beginner: 0, intermediate: 1, senior: 2 };
    for (const part of course.parts) {
      const levels = part.lessons.map((id) => rank[lessons.find((l) => l.id === id)!.level]);
      const firstSenior = levels.indexOf(2);
      if (firstSenior >= 0) expect(levels.slice(firstSenior), `part ${part.id}`).not.toContain(0);
    }
  });

  it('self-study is every lesson in course order', () => {
    expect(course.tracks.find((t) => t.id === 'self-study')!.lessons).toEqual(courseOrder(course));
  });

  it('the interview track covers the lesson behind every interview question and every senior-topic lesson', () => {
    const track = course.tracks.find((t) => t.id === 'interview-evening')!.lessons;
    for (const q of interview.questions) expect(track, `question ${q.id}`).toContain(q.lesson);
    for (const l of lessons.filter((x) => x.level === 'senior')) expect(track, `senior lesson ${l.id}`).toContain(l.id);
  });

  it('the classroom track fits about 45 minutes', () => {
    const track = course.tracks.find((t) => t.id === 'classroom')!.lessons;
    const minutes = track.reduce((sum, id) => sum + lessons.find((l) => l.id === id)!.minutes, 0);
    expect(minutes).toBeGreaterThanOrEqual(35);
    expect(minutes).toBeLessThanOrEqual(50);
  });
});

describe('no spoilers before step 1', () => {
  it.each(lessons.map((l) => [l.id, l] as const))('%s: title and summary state no predict outcome', (_id, lesson) => {
    const found = findSpoilers(lesson).map((s) => `${s.lang} ${s.field} gives away checkpoint ${s.checkpoint}: ${s.evidence}`);
    expect(found).toEqual([]);
  });

  it('every lesson has at least two checkpoints and a conclusion for after the last step', () => {
    for (const l of lessons) {
      expect(l.steps.filter((s) => s.kind === 'predict').length, l.id).toBeGreaterThanOrEqual(2);
      expect(l.conclusion, `${l.id} has no conclusion`).toBeDefined();
    }
  });

  it('flags the spoilers the course used to ship', () => {
    const was = (summary: string, lesson: string) => {
      const l = lessons.find((x) => x.id === lesson)!;
      return findSpoilers({ ...l, summary: { en: summary, ru: l.summary.ru } }).length;
    };
    expect(
      was(
        'The same two transfers, but B closes the cycle later. Now the first waiter is the victim, not the last one.',
        'deadlock-victim-timing',
      ),
    ).toBeGreaterThan(0);
    expect(
      was(
        'Three transfers form a ring. No pair of them deadlocks, yet all three do. The detector follows the whole wait-for graph.',
        'three-way-deadlock',
      ),
    ).toBeGreaterThan(0);
    expect(was('SELECT … FOR UPDATE NOWAIT refuses to wait: it fails at once with 55P03.', 'nowait')).toBeGreaterThan(0);
    expect(
      was('A transaction that is idle in transaction keeps all its row locks until the timeout ends it.', 'idle-in-transaction'),
    ).toBeGreaterThan(0);
    const skew = lessons.find((x) => x.id === 'serializable-write-skew')!;
    expect(findSpoilers({ ...skew, title: { en: 'SERIALIZABLE: write skew fails at COMMIT', ru: skew.title.ru } }).length).toBeGreaterThan(
      0,
    );
  });
});

describe('interview follow-ups and senior topic pages', () => {
  it('every question has at least two follow-ups', () => {
    for (const q of interview.questions) expect(q.followups.length, q.id).toBeGreaterThanOrEqual(2);
  });
  it('has the six senior topic pages', () => {
    expect(interview.pages.map((p) => p.id).sort()).toEqual(
      [
        'advisory-vs-coordinator',
        'hashtextextended',
        'idempotency-side-effects',
        'pooler-transaction-mode',
        'skip-locked-vs-broker',
        'transaction-timeout',
      ].sort(),
    );
  });
});

describe('docs/coverage.md', () => {
  const coverage = readFileSync(new URL('../../docs/coverage.md', import.meta.url), 'utf8');
  it('cites only real step names of each lesson', () => {
    expect(coverageProblems(coverage, lessons)).toEqual([]);
  });
  it('the check catches a step a lesson does not have', () => {
    expect(coverageProblems('classic-deadlock (a9, b2)', lessons)).toEqual([
      'classic-deadlock: docs/coverage.md cites step a9, which the lesson does not have',
    ]);
  });
  it('names every senior topic page', () => {
    for (const p of interview.pages) expect(coverage).toContain(`\`${p.id}\``);
  });
});

import { describe, expect, it } from 'vitest';
import type { CourseData, LessonSummary } from '../backend';
import { drillCards, listParts, paragraphs, tagLabel, trackProgress } from './course';

const lesson = (id: string, minutes = 5): LessonSummary => ({ id, title: id, topic: '', steps: 3, minutes });
const course: CourseData = {
  start: 'b',
  parts: [
    { id: 'one', title: { en: 'One', ru: 'Один' }, lessons: ['b', 'a'] },
    { id: 'two', title: { en: 'Two', ru: 'Два' }, lessons: ['c', 'gone'] },
  ],
  tracks: [{ id: 't', title: 'T', description: 'D', lessons: ['a', 'c'] }],
  tags: { deadlock: { en: 'deadlock', ru: 'взаимоблокировка' } },
};

describe('listParts', () => {
  it('orders and numbers the lessons by the course, and keeps unlisted ones last', () => {
    const parts = listParts([lesson('a'), lesson('c'), lesson('x'), lesson('b')], course);
    expect(parts.map((p) => [p.id, p.lessons.map((l) => `${l.number}:${l.id}`)])).toEqual([
      ['one', ['1:b', '2:a']],
      ['two', ['3:c']],
      ['other', ['4:x']],
    ]);
    expect(parts[2].title).toBeNull();
  });
  it('without a course file shows one unnamed group in bundle order', () => {
    expect(listParts([lesson('z'), lesson('y')], null).map((p) => p.lessons.map((l) => l.id))).toEqual([['z', 'y']]);
  });
});

describe('trackProgress', () => {
  it('counts done lessons and points at the first one not done', () => {
    const done = new Set(['a']);
    const p = trackProgress(course.tracks[0], [lesson('a', 4), lesson('b'), lesson('c', 6)], (id) => done.has(id));
    expect(p).toMatchObject({ done: 1, total: 2, minutes: 10, next: 'c' });
    done.add('c');
    expect(trackProgress(course.tracks[0], [lesson('a'), lesson('c')], (id) => done.has(id)).next).toBeNull();
  });
});

describe('tagLabel', () => {
  it('translates known tags and falls back to the tag', () => {
    expect(tagLabel(course, 'deadlock')).toEqual({ en: 'deadlock', ru: 'взаимоблокировка' });
    expect(tagLabel(course, 'mvcc')).toBe('mvcc');
  });
});

describe('drillCards', () => {
  it('mixes follow-ups across questions, round by round', () => {
    const q = (id: string, n: number) => ({
      id,
      question: id,
      model: '',
      lesson: 'l',
      see: [],
      followups: Array.from({ length: n }, (_, i) => ({ id: `${id}-${i + 1}`, question: `${id}?`, model: '' })),
    });
    const cards = drillCards([q('a', 2), q('b', 3), q('c', 1)]);
    expect(cards.map((c) => c.id)).toEqual(['a-1', 'b-1', 'c-1', 'a-2', 'b-2', 'b-3']);
    expect(cards[1].parent).toEqual({ id: 'b', question: 'b' });
  });
});

describe('paragraphs', () => {
  it('splits on blank lines and joins wrapped lines', () => {
    expect(paragraphs('One\nline.\n\n  Two.\n\n\n')).toEqual(['One line.', 'Two.']);
  });
});

import { describe, expect, it } from 'vitest';
import { interviewData, lessonCatalog, lessonInfos } from './backend-worker';

describe('bundled course content', () => {
  it('loads the interview file against the bundled lessons', async () => {
    const interview = await lessonCatalog.interview!();
    expect(interview).toEqual(interviewData());
    expect(interview!.questions).toHaveLength(9);
    const ids = new Set(lessonInfos().map((l) => l.id));
    for (const q of interview!.questions) expect(ids.has(q.lesson)).toBe(true);
  });

  it('lists each lesson with its predict answers, and never the interview file as a lesson', () => {
    const infos = lessonInfos();
    expect(infos.find((l) => l.id === 'classic-deadlock')!.predictAnswers).toEqual({ a2: 'waits-for-b', b2: 'b-fails-after-timeout' });
    expect(infos.some((l) => l.id.includes('interview'))).toBe(false);
  });
});

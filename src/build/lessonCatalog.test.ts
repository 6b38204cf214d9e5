import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLessonCatalog } from './lessonCatalog';
import { parseLesson } from '../scenario/lesson';
import { lessonInfoOf } from '../ui/model/lessonInfo';
import { parseCourse } from '../scenario/course';

describe('the lesson catalog built with the app', () => {
  it('has every lesson file, in file-name order, with what the parsed file says', () => {
    const files = readdirSync('lessons').filter((f) => f.endsWith('.yaml'));
    const { entries, problems } = buildLessonCatalog('lessons');
    expect(problems).toEqual([]);
    expect(entries.map((e) => e.path)).toEqual(files.map((f) => `/lessons/${f}`).sort((a, b) => a.localeCompare(b)));
    for (const e of entries) expect(e.info).toEqual(lessonInfoOf(parseLesson(readFileSync(`.${e.path}`, 'utf8'))));
    const { course } = buildLessonCatalog('lessons');
    expect(course).toEqual(
      parseCourse(
        readFileSync('lessons/course/course.yaml', 'utf8'),
        entries.map((e) => e.info.id),
      ),
    );
    expect(course!.parts.length).toBeGreaterThan(0);
    const classic = entries.find((e) => e.info.id === 'classic-deadlock')!.info;
    expect(classic.predictAnswers).toEqual({ a2: 'waits-for-b', b2: 'b-fails-after-timeout' });
  });

  it('leaves out a file that does not parse and says which and why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lessons-'));
    writeFileSync(join(dir, 'a-good.yaml'), readFileSync('lessons/classic-deadlock.yaml', 'utf8'));
    writeFileSync(join(dir, 'b-broken.yaml'), 'id: broken\ntitle: [unclosed\n');
    const { entries, problems } = buildLessonCatalog(dir);
    expect(entries.map((e) => e.info.id)).toEqual(['classic-deadlock']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^\/lessons\/b-broken\.yaml: /);
  });

  it('has no course when the course file names a lesson that did not parse, and says why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lessons-'));
    writeFileSync(join(dir, 'a-good.yaml'), readFileSync('lessons/classic-deadlock.yaml', 'utf8'));
    mkdirSync(join(dir, 'course'));
    writeFileSync(join(dir, 'course', 'course.yaml'), readFileSync('lessons/course/course.yaml', 'utf8'));
    const { course, problems } = buildLessonCatalog(dir);
    expect(course).toBeNull();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^\/lessons\/course\/course\.yaml: /);
  });
});

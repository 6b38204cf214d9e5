import { describe, expect, it } from 'vitest';
import classicYaml from '../../../lessons/classic-deadlock.yaml?raw';
import { parseLesson } from '../../scenario/lesson';
import { deepFreeze } from '../fixtures/build';
import type { ScriptItem } from '../backend';
import { annotateScript, lessonMeta } from './lessonScript';

const lesson = deepFreeze(parseLesson(classicYaml));
/** The script the engine builds for classic-deadlock (labels trimmed: only names matter). */
const engineScript: ScriptItem[] = deepFreeze(
  lesson.steps
    .filter((s) => s.kind !== 'predict')
    .map((s, index) =>
      s.kind === 'step'
        ? { index, kind: 'step' as const, session: s.session, step: s.name, sql: s.sql, label: `${s.session}: …` }
        : { index, kind: 'pause' as const, session: 'clock', step: s.name, label: 'pause' },
    ),
);

describe('annotateScript', () => {
  const script = annotateScript(engineScript, lesson);

  it('gives every item of classic-deadlock its narration in both languages', () => {
    expect(script).toHaveLength(engineScript.length);
    for (const item of script) {
      expect(item.narration).toMatchObject({ en: expect.any(String), ru: expect.any(String) });
    }
    expect(script[0].narration).toMatchObject({ en: expect.stringContaining('A starts moving 100') });
  });

  it.each([
    { args: 2, expected: { key: 'a2', target: 2, answer: 'waits-for-b' } },
    { args: 4, expected: { key: 'b2', target: 4, answer: 'b-fails-after-timeout' } },
  ])('puts a checkpoint on item $args', ({ args, expected }) => {
    expect(script[args].predict).toMatchObject(expected);
    expect(script[args].predict!.choices.length).toBeGreaterThan(1);
    expect(script[args].predict!.explanation).toMatchObject({ ru: expect.any(String) });
  });

  it('puts checkpoints nowhere else and gives pauses their duration', () => {
    expect(script.filter((s) => s.predict).map((s) => s.index)).toEqual([2, 4]);
    expect(script.filter((s) => s.kind === 'pause').map((s) => s.pauseMs)).toEqual([2000, 2000]);
  });

  it('asks a checkpoint before a pause that precedes the predicted step, and resolves it on that step', () => {
    const steps = [...lesson.steps];
    [steps[4], steps[5]] = [steps[5], steps[4]]; // predict, pause, B's step
    expect(steps.map((x) => x.kind).slice(3, 7)).toEqual(['step', 'predict', 'pause', 'step']);
    const moved = annotateScript(engineScript, { ...lesson, steps });
    expect(moved[3].kind).toBe('pause');
    expect(moved[3].predict).toMatchObject({ key: 'b2', target: 4 });
    expect(moved[4].predict).toBeUndefined();
  });

  it('carries code references and the lesson meta', () => {
    const withCode = {
      ...lesson,
      code: [{ id: 'tx', language: 'go' as const, title: { en: 'Tx', ru: 'Tx' }, source: 'tx.Commit()' }],
      steps: lesson.steps.map((s, i) => (i === 0 && s.kind === 'step' ? { ...s, code: 'tx' } : s)),
    };
    expect(annotateScript(engineScript, withCode)[0].code).toBe('tx');
    expect(lessonMeta(withCode)).toMatchObject({ id: 'classic-deadlock', code: [{ id: 'tx', language: 'go' }] });
    expect(lessonMeta(lesson).code).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { guidedScript } from '../fixtures/guided';
import { resolvedPredict, verdictOf } from './predict';
import type { ScriptItem } from '../backend';

const predict = guidedScript[4].predict!;

describe('verdictOf', () => {
  it.each([
    { args: 'waits-for-b', expected: 'right' },
    { args: 'completes', expected: 'wrong' },
    { args: null, expected: 'skipped' },
    { args: undefined, expected: 'unanswered' },
  ])('$args → $expected', ({ args, expected }) => expect(verdictOf(predict, args)).toBe(expected));
});

describe('resolvedPredict', () => {
  // guidedScript: 4 = A's UPDATE (predicted), 5 = pause, 6 = B's UPDATE.
  it.each([
    { args: { cursor: 0, saved: 'completes' }, expected: null },
    { args: { cursor: 4, saved: 'completes' }, expected: null },
    { args: { cursor: 5, saved: 'completes' }, expected: 'wrong' },
    { args: { cursor: 5, saved: 'waits-for-b' }, expected: 'right' },
    { args: { cursor: 6, saved: 'waits-for-b' }, expected: 'right' }, // still shown through the pause
    { args: { cursor: 7, saved: 'waits-for-b' }, expected: null }, // the next step ran
    { args: { cursor: 5, saved: undefined }, expected: 'unanswered' },
    { args: { cursor: 5, saved: null }, expected: 'skipped' },
  ])('$args → $expected', ({ args, expected }) => {
    const r = resolvedPredict(guidedScript, args.cursor, (key) => (key === 'a_upd2' ? args.saved : undefined));
    expect(r?.verdict ?? null).toBe(expected);
  });

  it('does not mutate the script', () => {
    const before = JSON.stringify(guidedScript);
    resolvedPredict(guidedScript as ScriptItem[], 5, () => 'completes');
    expect(JSON.stringify(guidedScript)).toBe(before);
    expect(Object.isFrozen(guidedScript[4])).toBe(true);
  });
});

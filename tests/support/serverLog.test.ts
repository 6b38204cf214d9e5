import { describe, expect, it } from 'vitest';
import { SAME_MOMENT_MS, alignSameMoment, logTimeMs } from './serverLog';

describe('logTimeMs', () => {
  it.each([
    { field: '2026-12-01 10:15:02.345 UTC [1234] LOG:  x', ms: Date.parse('2026-12-01T10:15:02.345Z') },
    { field: '10:15:02.345 [1234] LOG:  x', ms: ((10 * 60 + 15) * 60 + 2.345) * 1000 },
    { field: 'no prefix', ms: undefined },
  ])('$field', ({ field, ms }) => expect(logTimeMs(field)).toBe(ms));
});

describe('alignSameMoment', () => {
  const M = '[M] ERROR:  canceling statement due to lock timeout';
  const R = '[R] LOG:  process R acquired AccessShareLock on relation accounts after ? ms';
  const M2 = '[M] STATEMENT:  ALTER TABLE accounts ADD COLUMN note text';
  const R2 = '[R] STATEMENT:  SELECT id FROM accounts';
  it.each([
    { name: 'equal logs stay as they are', expected: [M, R], times: [0, 1], actual: [M, R], out: [M, R] },
    { name: 'two sessions at the same moment take the other order', expected: [R, M], times: [0, 2], actual: [M, R], out: [M, R] },
    {
      name: 'two sessions further apart keep the real order (the comparison fails)',
      expected: [R, M],
      times: [0, SAME_MOMENT_MS + 1],
      actual: [M, R],
      out: [R, M],
    },
    { name: 'one session never reorders', expected: [M2, M], times: [0, 0], actual: [M, M2], out: [M2, M] },
    { name: 'an entry without a time keeps its place', expected: [R, M], times: [undefined, 0], actual: [M, R], out: [R, M] },
    { name: 'a different entry is not hidden', expected: [R, M2], times: [0, 0], actual: [M, R], out: [R, M2] },
    {
      name: 'an entry and its STATEMENT line move as one run',
      expected: [R, R2, M, M2],
      times: [0, 0, 3, 3],
      actual: [M, M2, R, R2],
      out: [M, M2, R, R2],
    },
    {
      name: 'runs further apart than the moment keep the real order',
      expected: [R, R2, M, M2],
      times: [0, 0, SAME_MOMENT_MS + 5, SAME_MOMENT_MS + 5],
      actual: [M, M2, R, R2],
      out: [R, R2, M, M2],
    },
  ])('$name', ({ expected, times, actual, out }) => expect(alignSameMoment(expected, times, actual)).toEqual(out));
});

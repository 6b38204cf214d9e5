import { describe, expect, it } from 'vitest';
import { lockCell, sortLockRows } from './locks';
import { deadlockCycle } from '../fixtures/deadlock';

describe('sortLockRows', () => {
  it('puts waiting rows first, oldest wait first, without mutating the input', () => {
    const rows = deadlockCycle.locks;
    const sorted = sortLockRows(rows);
    expect(sorted.slice(0, 2).map((r) => [r.session, r.granted, r.transactionid])).toEqual([
      ['A', false, 746],
      ['B', false, 745],
    ]);
    expect(sorted.slice(2).every((r) => r.granted)).toBe(true);
    expect(sorted).toHaveLength(rows.length);
    expect(Object.isFrozen(rows)).toBe(true);
  });
});

describe('lockCell', () => {
  it.each([
    { args: null, expected: '' },
    { args: true, expected: 't' },
    { args: false, expected: 'f' },
    { args: 745, expected: '745' },
    { args: 'accounts', expected: 'accounts' },
  ])('$args → "$expected"', ({ args, expected }) => expect(lockCell(args)).toBe(expected));
});

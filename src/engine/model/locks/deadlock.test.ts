/**
 * Direct tests of the deadlock.c port: DeadLockCheck's proposed wait orders (TopoSort keeps as
 * much of the old order as it can, the way PostgreSQL's does), purity, and the RememberSimpleDeadLock report.
 */
import { describe, expect, it } from 'vitest';
import { deadLockCheck, rememberSimpleDeadLock } from './deadlock';
import { LockManager, tagKey } from './lockManager';
import type { LockMode, LockTag, ProcId, Xid } from './types';

const t1: LockTag = { type: 'relation', relation: 'accounts', oid: 16385 };
const t2: LockTag = { type: 'relation', relation: 'orders', oid: 16390 };
const x100: LockTag = { type: 'transactionid', xid: 100 as Xid };
const P = (s: string) => s as ProcId;

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object') {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

function build(steps: [string, LockTag, LockMode][]): LockManager {
  const m = new LockManager();
  for (const [p, tag, mode] of steps) m.acquire(P(p), tag, mode);
  return m;
}

describe('deadLockCheck (pure)', () => {
  // t1: A holds AccessShare; queue B:AccessExclusive, X:AccessShare, C:AccessShare.
  // t2: C holds Exclusive; A waits for Share. Cycle C -soft-> B -hard-> A -hard-> C.
  const m = build([
    ['A', t1, 'AccessShareLock'],
    ['C', t2, 'ExclusiveLock'],
    ['B', t1, 'AccessExclusiveLock'],
    ['X', t1, 'AccessShareLock'],
    ['C', t1, 'AccessShareLock'],
    ['A', t2, 'ShareLock'],
  ]);

  const cases: { name: string; checker: string; expected: unknown }[] = [
    {
      name: 'TopoSort moves C before B; X, not constrained, is emitted last (PostgreSQL fills from the back)',
      checker: 'C',
      expected: { kind: 'ok', waitOrders: [{ lock: tagKey(t1), procs: ['C', 'B', 'X'] }] },
    },
    {
      name: 'found the same way from A',
      checker: 'A',
      expected: { kind: 'ok', waitOrders: [{ lock: tagKey(t1), procs: ['C', 'B', 'X'] }] },
    },
    { name: 'X is in no cycle', checker: 'X', expected: { kind: 'ok', waitOrders: [] } },
  ];

  it.each(cases)('$name', ({ checker, expected }) => {
    const state = deepFreeze(m.toJSON());
    expect(deadLockCheck(state, P(checker))).toEqual(expected);
  });

  it('LockManager applies the order, then ProcLockWakeup grants C only', () => {
    const c = m.clone();
    expect(c.checkDeadlock(P('C'))).toEqual({ kind: 'soft', woken: ['C'] });
    expect(c.waiters(t1)).toEqual([
      { proc: 'B', mode: 'AccessExclusiveLock' },
      { proc: 'X', mode: 'AccessShareLock' },
    ]);
  });

  it('a hard deadlock reports the cycle of the unrearranged queues', () => {
    const h = build([
      ['A', x100, 'ExclusiveLock'],
      ['B', t1, 'AccessExclusiveLock'],
      ['A', t1, 'AccessShareLock'],
      ['B', x100, 'ShareLock'],
    ]);
    expect(deadLockCheck(deepFreeze(h.toJSON()), P('A'))).toEqual({
      kind: 'hard',
      report: {
        edges: [
          { waiter: 'A', tag: t1, mode: 'AccessShareLock', blocker: 'B' },
          { waiter: 'B', tag: x100, mode: 'ShareLock', blocker: 'A' },
        ],
      },
    });
  });
});

describe('rememberSimpleDeadLock', () => {
  it('reports proc1’s request, then proc2’s wait, each blocked by the other', () => {
    expect(rememberSimpleDeadLock(P('B'), 'ShareLock', t1, P('A'), t1, 'ShareLock')).toEqual({
      edges: [
        { waiter: 'B', tag: t1, mode: 'ShareLock', blocker: 'A' },
        { waiter: 'A', tag: t1, mode: 'ShareLock', blocker: 'B' },
      ],
    });
  });
});

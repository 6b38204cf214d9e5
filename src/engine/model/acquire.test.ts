import { describe, expect, it } from 'vitest';
import { walkPlan } from './acquire';
import { dml, facts, relItem, rowItem, running, tuple, world } from './fixtures';
import type { LockMode, RowLockMode } from './locks/types';

describe('walkPlan: a second session after the first holds a row', () => {
  const CASES: {
    held: RowLockMode;
    asked: RowLockMode;
    policy?: 'block' | 'nowait';
    outcome: 'ok' | 'wait' | 'error';
    sqlstate?: string;
  }[] = [
    { held: 'NoKeyUpdate', asked: 'ForKeyShare', outcome: 'ok' },
    { held: 'ForShare', asked: 'ForShare', outcome: 'ok' },
    { held: 'ForKeyShare', asked: 'NoKeyUpdate', outcome: 'ok' },
    { held: 'NoKeyUpdate', asked: 'NoKeyUpdate', outcome: 'wait' },
    { held: 'ForShare', asked: 'ForUpdate', outcome: 'wait' },
    { held: 'ForKeyShare', asked: 'Update', outcome: 'wait' },
    { held: 'NoKeyUpdate', asked: 'ForShare', policy: 'nowait', outcome: 'error', sqlstate: '55P03' },
  ];
  it.each(CASES)('$held then $asked ($policy): $outcome', ({ held, asked, policy, outcome, sqlstate }) => {
    const eng = world();
    const a = running(eng, 'a');
    expect(walkPlan(eng, a, dml(), facts([rowItem(tuple(0), held)]))).toBe('ok');
    const b = running(eng, 'b');
    expect(walkPlan(eng, b, dml({ waitPolicy: policy ?? 'block' }), facts([rowItem(tuple(0), asked)]))).toBe(outcome);
    if (outcome === 'ok') expect(eng.rows.heldMode(tuple(0), 'b')).toBe(asked);
    if (outcome === 'wait') {
      // README.tuplock: the tuple lock first, then a ShareLock wait on the holder's xid.
      expect(b.step!.wait).toMatchObject({ tag: { type: 'transactionid', xid: a.txn!.xid }, mode: 'ShareLock', holder: 'a' });
      expect(b.step!.tupleLocks).toEqual([expect.objectContaining({ type: 'tuple', block: 0, offset: 1 })]);
      expect(eng.lm.waitingFor(b.proc)).toBeTruthy();
    }
    if (outcome === 'error') {
      expect(b.step!.error?.sqlstate).toBe(sqlstate);
      expect(b.txn!.aborted).toBe(true);
      expect(eng.rows.heldMode(tuple(0), 'b')).toBeUndefined();
    }
  });
});

describe('walkPlan: table locks', () => {
  const CASES: { held: LockMode; asked: LockMode; nowait?: boolean; outcome: 'ok' | 'wait' | 'error' }[] = [
    { held: 'RowExclusiveLock', asked: 'RowExclusiveLock', outcome: 'ok' },
    { held: 'AccessShareLock', asked: 'ExclusiveLock', outcome: 'ok' },
    { held: 'ShareLock', asked: 'RowExclusiveLock', outcome: 'wait' },
    { held: 'AccessExclusiveLock', asked: 'AccessShareLock', outcome: 'wait' },
    { held: 'AccessExclusiveLock', asked: 'AccessShareLock', nowait: true, outcome: 'error' },
  ];
  it.each(CASES)('$held then $asked (nowait $nowait): $outcome', ({ held, asked, nowait, outcome }) => {
    const eng = world();
    const a = running(eng, 'a');
    expect(walkPlan(eng, a, dml(), facts([relItem(held)]))).toBe('ok');
    expect(a.txn!.held).toEqual([expect.objectContaining({ mode: held, depth: 0 })]);
    const b = running(eng, 'b');
    expect(walkPlan(eng, b, dml({ verb: 'lock', lockNowait: !!nowait }), facts([relItem(asked)]))).toBe(outcome);
    if (outcome === 'wait') expect(b.step!.wait).toMatchObject({ tag: { type: 'relation', relation: 'accounts' }, mode: asked });
    if (outcome === 'error') expect(b.step!.error?.sqlstate).toBe('55P03');
    if (outcome === 'ok') expect(b.txn!.held.map((h) => h.mode)).toEqual([asked]);
  });
});

describe('walkPlan: row locks need the transaction id', () => {
  it('assigns the xid (and the savepoint subxid) before writing the row lock', () => {
    const eng = world();
    const a = running(eng, 'a');
    a.txn!.savepoints.push({ name: 'sp', logLen: 0, setsLen: 0, localSetsLen: 0 });
    expect(walkPlan(eng, a, dml(), facts([rowItem(tuple(3), 'NoKeyUpdate')]))).toBe('ok');
    expect(a.txn!.xid).not.toBeNull();
    expect(a.txn!.xidHolds.map((h) => h.depth)).toEqual([0, 1]);
    expect(eng.rows.all()[0].holders).toEqual([expect.objectContaining({ session: 'a', depth: 1, xid: a.txn!.savepoints[0].xid })]);
  });
});

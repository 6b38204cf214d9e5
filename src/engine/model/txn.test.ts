import { describe, expect, it } from 'vitest';
import { walkPlan } from './acquire';
import { dml, facts, relItem, rowItem, running, tuple, world } from './fixtures';
import { abortTxnState, endTxnState, releaseDepth } from './txn';
import type { ModelState } from '../state';

/** a holds a table lock at depth 0 and, under savepoint sp, row (0,1); b waits for that row. */
function contended(): ModelState {
  const eng = world();
  const a = running(eng, 'a');
  walkPlan(eng, a, dml(), facts([relItem('RowExclusiveLock')]));
  a.txn!.savepoints.push({ name: 'sp', logLen: 0, setsLen: 0, localSetsLen: 0 });
  walkPlan(eng, a, dml(), facts([rowItem(tuple(0), 'NoKeyUpdate')]));
  const b = running(eng, 'b');
  expect(walkPlan(eng, b, dml(), facts([rowItem(tuple(0), 'NoKeyUpdate')]))).toBe('wait');
  return eng;
}

const locksOf = (eng: ModelState, name: string) =>
  eng.lm
    .entries()
    .filter((e) => e.proc === name && e.granted)
    .map((e) => `${e.tag.type} ${e.mode}`)
    .sort();

describe('one release routine: what each way of ending leaves behind', () => {
  const CASES: {
    how: string;
    end: (eng: ModelState) => void;
    aLocks: string[];
    aRows: number;
    txn: 'open' | 'aborted' | 'gone';
    event?: 'commit' | 'rollback';
  }[] = [
    {
      how: 'ROLLBACK TO sp',
      end: (eng) => releaseDepth(eng, eng.sessions.get('a')!, 1),
      aLocks: ['relation RowExclusiveLock', 'transactionid ExclusiveLock', 'virtualxid ExclusiveLock'],
      aRows: 0,
      txn: 'open',
    },
    {
      how: 'an error under sp (the subtransaction aborts)',
      end: (eng) => abortTxnState(eng, eng.sessions.get('a')!, true),
      aLocks: ['relation RowExclusiveLock', 'transactionid ExclusiveLock', 'virtualxid ExclusiveLock'],
      aRows: 0,
      txn: 'aborted',
    },
    {
      how: 'an error with the block given up',
      end: (eng) => abortTxnState(eng, eng.sessions.get('a')!, false),
      aLocks: [],
      aRows: 0,
      txn: 'gone',
      event: 'rollback',
    },
    {
      how: 'COMMIT',
      end: (eng) => endTxnState(eng, eng.sessions.get('a')!, true),
      aLocks: [],
      aRows: 0,
      txn: 'gone',
      event: 'commit',
    },
    {
      how: 'ROLLBACK',
      end: (eng) => endTxnState(eng, eng.sessions.get('a')!, false),
      aLocks: [],
      aRows: 0,
      txn: 'gone',
      event: 'rollback',
    },
  ];
  it.each(CASES)('$how', ({ end, aLocks, aRows, txn, event }) => {
    const eng = contended();
    const woken = eng.resumeQueue.length;
    const r = end(eng);
    void r;
    const a = eng.sessions.get('a')!;
    expect(locksOf(eng, 'a')).toEqual(aLocks);
    expect(eng.rows.heldBy('a')).toHaveLength(aRows);
    expect(a.txn === null ? 'gone' : a.txn.aborted ? 'aborted' : 'open').toBe(txn);
    if (event) expect(eng.events.at(-1)).toMatchObject({ type: event, session: 'a' });
    // b's wait was on the subtransaction's xid: every way of ending it grants the wait.
    expect(eng.lm.waitingFor(eng.sessions.get('b')!.proc)).toBeFalsy();
    if (txn !== 'gone') expect(eng.resumeQueue.length).toBe(woken + 1);
  });
});

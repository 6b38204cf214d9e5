/**
 * A seeded fuzz of the lock model alone: random facts (plans of table and row locks, savepoints,
 * errors, commits, rollbacks) for three sessions, with the invariants checked after every step
 * against a lock table rebuilt from what each transaction says it holds.
 */
import { describe, expect, it } from 'vitest';
import { failWaitingStep, grantWait, releaseTupleLocks, walkPlan } from './acquire';
import type { PlanItem } from './facts';
import { dml, facts, relItem, rowItem, running, tuple, world } from './fixtures';
import { LockManager, tagKey } from './locks/lockManager';
import type { LockMode, LockTag, RowLockMode, Xid } from './locks/types';
import { abortTxnState, endTxnState, releaseDepth } from './txn';
import type { ModelState, Sess } from '../state';

/** mulberry32: a small seeded PRNG (the model itself never draws random numbers). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROW_MODES: RowLockMode[] = ['ForKeyShare', 'ForShare', 'ForNoKeyUpdate', 'ForUpdate', 'NoKeyUpdate', 'Update'];
const TABLE_MODES: LockMode[] = ['AccessShareLock', 'RowShareLock', 'RowExclusiveLock', 'ShareLock', 'ExclusiveLock'];

const key = (proc: string, tag: LockTag, mode: LockMode) => `${proc} ${tagKey(tag)} ${mode}`;

/** The granted locks a fresh lock table holds when every open transaction takes again what it says it holds. */
function rebuilt(eng: ModelState): string[] {
  const lm = new LockManager();
  const out = new Set<string>();
  const take = (s: Sess, tag: LockTag, mode: LockMode) => {
    expect(lm.acquire(s.proc, tag, mode).status, `${s.name} ${key(s.proc, tag, mode)} conflicts in the rebuild`).toBe('granted');
    out.add(key(s.proc, tag, mode));
  };
  for (const s of eng.sessions.values()) {
    if (!s.txn) continue;
    take(s, { type: 'virtualxid', vxid: s.txn.vxid }, 'ExclusiveLock');
    for (const x of s.txn.xidHolds) take(s, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock');
    for (const h of s.txn.held) take(s, h.tag, h.mode);
  }
  return [...out].sort();
}

function checkInvariants(eng: ModelState): void {
  const granted = [
    ...new Set(
      eng.lm
        .entries()
        .filter((e) => e.granted)
        .map((e) => key(e.proc, e.tag, e.mode)),
    ),
  ].sort();
  expect(granted).toEqual(rebuilt(eng));
  for (const s of eng.sessions.values()) {
    // A session is queued in the lock table exactly when its step waits.
    expect(!!eng.lm.waitingFor(s.proc), `${s.name} queued`).toBe(!!s.step?.wait);
    const depth = s.txn?.savepoints.length ?? -1;
    for (const h of s.txn?.held ?? []) expect(h.depth).toBeLessThanOrEqual(depth);
    for (const x of s.txn?.xidHolds ?? []) expect(x.depth).toBeLessThanOrEqual(depth);
  }
  for (const { holders } of eng.rows.all())
    for (const h of holders) {
      const txn = eng.sessions.get(h.session)!.txn;
      expect(txn, `row holder ${h.session} has a transaction`).toBeTruthy();
      expect(h.depth).toBeLessThanOrEqual(txn!.savepoints.length);
    }
}

/** What the scheduler does for a woken session, minus PGlite: take the granted lock and walk the plan again. */
function wake(eng: ModelState, plans: Map<string, PlanItem[]>): void {
  while (eng.resumeQueue.length) {
    const s = eng.sessions.get(eng.resumeQueue.shift()!)!;
    if (!s.step?.wait || eng.lm.waitingFor(s.proc)) continue;
    grantWait(eng, s);
    const outcome = walkPlan(eng, s, dml(), facts(plans.get(s.name) ?? []));
    if (outcome === 'ok') releaseTupleLocks(eng, s);
  }
}

function runSeed(seed: number, steps: number): void {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const eng = world();
  const plans = new Map<string, PlanItem[]>();
  for (let i = 0; i < steps; i++) {
    const s = pick([...eng.sessions.values()]);
    const op = rnd();
    if (s.step?.wait) {
      // A waiting session can only be interrupted (a timeout, a cancel): its step fails.
      if (op < 0.3) {
        s.step.error = { severity: 'ERROR', sqlstate: '57014', message: 'canceling statement due to user request' };
        failWaitingStep(eng, s);
      }
    } else if (op < 0.45) {
      const plan = rnd() < 0.3 ? [relItem(pick(TABLE_MODES))] : [];
      for (let n = 1 + Math.floor(rnd() * 2); n > 0; n--) plan.push(rowItem(tuple(Math.floor(rnd() * 3)), pick(ROW_MODES)));
      running(eng, s.name);
      plans.set(s.name, plan);
      const outcome = walkPlan(eng, s, dml(), facts(plan));
      if (outcome === 'ok') releaseTupleLocks(eng, s);
    } else if (op < 0.55 && s.txn && !s.txn.aborted) {
      s.txn.savepoints.push({ name: `sp${i}`, logLen: s.txn.log.length, setsLen: 0, localSetsLen: 0 });
    } else if (op < 0.65 && s.txn?.savepoints.length) {
      const depth = 1 + Math.floor(rnd() * s.txn.savepoints.length);
      s.txn.savepoints.length = depth;
      s.txn.aborted = false;
      releaseDepth(eng, s, depth);
    } else if (op < 0.75 && s.txn) {
      abortTxnState(eng, s, rnd() < 0.5);
    } else if (op < 0.9 && s.txn) {
      const { woken } = endTxnState(eng, s, !s.txn.aborted && rnd() < 0.7);
      eng.resumeQueue.push(...woken.filter((p) => !eng.resumeQueue.includes(p)));
    }
    wake(eng, plans);
    checkInvariants(eng);
  }
}

describe('the lock model under random facts', () => {
  it('keeps the lock table equal to what the transactions hold (200 seeds × 80 steps)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      try {
        runSeed(seed, 80);
      } catch (e) {
        throw new Error(`seed ${seed}: ${(e as Error).message}`);
      }
    }
  });
});

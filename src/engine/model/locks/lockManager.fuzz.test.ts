/**
 * Seeded fuzz test of the lock table: random acquire / release / releaseAll / cancelWait /
 * checkDeadlock sequences over 4 procs and 3 tags, checking invariants after every step and
 * replaying every step on a copy rebuilt from JSON. Randomness comes from a tiny LCG, so a
 * failing seed reproduces exactly; keep such seeds below as "(regression) seed N".
 */
import { describe, expect, it } from 'vitest';
import { applyLockOp, LockManager, tagKey } from './lockManager';
import type { DeadlockReport, LockOp, LockOpResult } from './lockManager';
import { conflicts, TABLE_LOCK_MODES } from './modes';
import type { LockTag, ProcId, Xid } from './types';

/** Numerical Recipes' 32-bit LCG: deterministic and good enough to pick operations. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PROCS = ['A', 'B', 'C', 'D'] as ProcId[];
const TAGS: LockTag[] = [
  { type: 'relation', relation: 'accounts', oid: 16385 },
  { type: 'relation', relation: 'orders', oid: 16390 },
  { type: 'transactionid', xid: 745 as Xid },
];

type Stats = Record<string, number>;

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)];
}

/** The next operation, chosen the way an engine would issue them (a waiting proc can only check, time out or abort). */
function nextOp(m: LockManager, rand: () => number): LockOp {
  const proc = pick(rand, PROCS);
  const r = rand();
  if (m.waitingFor(proc)) {
    if (r < 0.5) return { op: 'checkDeadlock', proc };
    if (r < 0.8) return { op: 'cancelWait', proc };
    return { op: 'releaseAll', proc };
  }
  const held = m.heldBy(proc);
  if (r < 0.65 || held.length === 0) {
    // Bias towards strong modes on the transaction id so that hard cycles are common.
    const tag = pick(rand, TAGS);
    const mode = tag.type === 'transactionid' && rand() < 0.6 ? 'ExclusiveLock' : pick(rand, TABLE_LOCK_MODES);
    return { op: 'acquire', proc, tag, mode, dontWait: rand() < 0.15 };
  }
  if (r < 0.9) {
    const h = pick(rand, held);
    return { op: 'release', proc, tag: h.tag, mode: h.mode };
  }
  return { op: 'releaseAll', proc };
}

/** Wait-for graph from waitEdges(); `hardOnly` keeps only edges to holders. */
function graph(m: LockManager, hardOnly: boolean): Map<ProcId, Set<ProcId>> {
  const g = new Map<ProcId, Set<ProcId>>();
  for (const e of m.waitEdges()) {
    if (hardOnly && e.kind !== 'hard') continue;
    if (!g.has(e.from)) g.set(e.from, new Set());
    g.get(e.from)!.add(e.to);
  }
  return g;
}

/** Is there a cycle through `start`? (Plain DFS reachability of start from its successors.) */
function cycleThrough(g: Map<ProcId, Set<ProcId>>, start: ProcId): boolean {
  const seen = new Set<ProcId>();
  const stack = [...(g.get(start) ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    if (p === start) return true;
    if (seen.has(p)) continue;
    seen.add(p);
    stack.push(...(g.get(p) ?? []));
  }
  return false;
}

function checkInvariants(m: LockManager): void {
  const raw = m.raw;
  for (const [key, lock] of Object.entries(raw.locks)) {
    // No garbage: a lock exists only while someone holds or awaits it; a proclock likewise.
    expect(lock.procLocks.length).toBeGreaterThan(0);
    for (const pl of lock.procLocks) {
      const holds = Object.keys(pl.hold).length > 0;
      expect(holds || raw.waiting[pl.proc] === key).toBe(true);
    }
    // Granted modes of different procs never conflict.
    const holders = m.holders(lock.tag);
    for (const a of holders)
      for (const b of holders)
        if (a.proc !== b.proc)
          for (const ma of a.modes)
            for (const mb of b.modes) expect(conflicts(ma, mb), `${a.proc}:${ma} vs ${b.proc}:${mb} on ${key}`).toBe(false);
    // Every waiter really conflicts with something: another proc's grant, or a request ahead of it.
    lock.waitQueue.forEach((w, i) => {
      const grant = holders.some((h) => h.proc !== w.proc && h.modes.some((hm) => conflicts(w.mode, hm)));
      const ahead = lock.waitQueue.slice(0, i).some((a) => conflicts(w.mode, a.mode));
      expect(grant || ahead, `${w.proc} waits for ${w.mode} on ${key} for nothing`).toBe(true);
    });
  }
  // A proc waits on at most one lock, and waitingFor agrees with the queues.
  for (const p of PROCS) {
    const queued = TAGS.flatMap((t) =>
      m
        .waiters(t)
        .filter((w) => w.proc === p)
        .map((w) => ({ tag: t, mode: w.mode })),
    );
    expect(queued.length).toBeLessThanOrEqual(1);
    const wf = m.waitingFor(p);
    expect(wf && { key: tagKey(wf.tag), mode: wf.mode }).toEqual(queued[0] ? { key: tagKey(queued[0].tag), mode: queued[0].mode } : null);
  }
  // waitEdges agrees with waitingFor and with the holds / queue order; every waiter has an edge.
  const edges = m.waitEdges();
  for (const e of edges) {
    const wf = m.waitingFor(e.from)!;
    expect(wf).not.toBeNull();
    expect(tagKey(wf.tag)).toBe(tagKey(e.tag));
    expect(wf.mode).toBe(e.mode);
    const blockerHolds = m.holders(e.tag).find((h) => h.proc === e.to)?.modes ?? [];
    const hard = blockerHolds.some((hm) => conflicts(e.mode, hm));
    expect(e.kind).toBe(hard ? 'hard' : 'soft');
    if (!hard) {
      const q = m.waiters(e.tag);
      const iFrom = q.findIndex((w) => w.proc === e.from);
      const iTo = q.findIndex((w) => w.proc === e.to);
      expect(iTo).toBeGreaterThanOrEqual(0);
      expect(iTo).toBeLessThan(iFrom);
      expect(conflicts(e.mode, q[iTo].mode)).toBe(true);
    }
  }
  for (const p of PROCS) if (m.waitingFor(p)) expect(edges.some((e) => e.from === p)).toBe(true);
}

/** A DeadlockReport must describe a real cycle of waits, starting at `start`. */
function checkReport(before: LockManager, report: DeadlockReport, start: ProcId): void {
  const { edges } = report;
  expect(edges.length).toBeGreaterThanOrEqual(2);
  expect(edges[0].waiter).toBe(start);
  const waitEdges = before.waitEdges();
  edges.forEach((e, i) => {
    expect(e.blocker).toBe(edges[(i + 1) % edges.length].waiter);
    if (i === 0) return; // the checker's own edge: for an early deadlock it is not queued yet
    expect(waitEdges.some((w) => w.from === e.waiter && w.to === e.blocker && tagKey(w.tag) === tagKey(e.tag) && w.mode === e.mode)).toBe(
      true,
    );
  });
}

/**
 * The holds and queues of a table, without fast-path marks and with each lock's holders sorted:
 * a strong request moves fast-path locks into the shared table (and to the end of procLocks)
 * before it finds it must fail, and PostgreSQL does not move them back.
 */
function holdsAndQueues(m: LockManager): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, lock] of Object.entries(m.toJSON().locks))
    out[key] = {
      holders: lock.procLocks.map((pl) => ({ proc: pl.proc, hold: pl.hold })).sort((a, b) => a.proc.localeCompare(b.proc)),
      waitQueue: lock.waitQueue,
    };
  return out;
}

function checkOutcome(before: LockManager, after: LockManager, op: LockOp, r: LockOpResult, stats: Stats): void {
  if ('status' in r) {
    stats[r.status] = (stats[r.status] ?? 0) + 1;
    if (r.status === 'deadlock') {
      expect(r.report.edges).toHaveLength(2);
      checkReport(before, r.report, op.proc);
      expect(after.waitingFor(op.proc)).toBeNull();
    }
    if (r.status === 'unavailable') expect(holdsAndQueues(after)).toEqual(holdsAndQueues(before));
    if (r.status === 'waiting') expect(after.waitingFor(op.proc)).not.toBeNull();
    return;
  }
  if ('kind' in r) {
    stats[r.kind] = (stats[r.kind] ?? 0) + 1;
    const full = cycleThrough(graph(before, false), op.proc);
    const hardOnly = cycleThrough(graph(before, true), op.proc);
    // FindLockCycle starts from the checker: no cycle through it means no deadlock …
    if (!full) expect(r.kind).toBe('none');
    // … and a cycle of hard edges cannot be escaped by reordering queues.
    if (hardOnly) expect(r.kind).toBe('hard');
    if (r.kind === 'hard') {
      checkReport(before, r.report, op.proc);
      expect(after.toJSON()).toEqual(before.toJSON()); // the caller decides what to do
    }
    if (r.kind === 'soft') {
      // DS_SOFT_DEADLOCK means some queue was reordered; ProcLockWakeup may still wake nobody
      // (the proc moved ahead can remain blocked by a grant outside the cycle).
      expect(after.toJSON()).not.toEqual(before.toJSON());
      for (const p of r.woken) expect(after.waitingFor(p)).toBeNull();
      // The rearranged configuration has no cycle left through the checker.
      const again = after.clone();
      if (again.waitingFor(op.proc)) expect(again.checkDeadlock(op.proc).kind).toBe('none');
    }
    return;
  }
  for (const p of r.woken) expect(after.waitingFor(p)).toBeNull();
}

function fuzz(seed: number, steps: number, stats: Stats): void {
  const rand = lcg(seed);
  let m = new LockManager();
  for (let i = 0; i < steps; i++) {
    const op = nextOp(m, rand);
    const before = m.clone();
    const shadow = LockManager.fromJSON(JSON.parse(JSON.stringify(m)));
    expect(shadow.toJSON()).toEqual(m.toJSON());
    const r = applyLockOp(m, op);
    const rShadow = applyLockOp(shadow, op);
    expect(rShadow).toEqual(r);
    expect(shadow.toJSON()).toEqual(m.toJSON());
    checkOutcome(before, m, op, r, stats);
    checkInvariants(m);
    // An engine aborts the victim: the early-deadlock requester and the hard-deadlock checker.
    if (('status' in r && r.status === 'deadlock') || ('kind' in r && r.kind === 'hard')) {
      m.releaseAll(op.proc);
      checkInvariants(m);
    }
  }
  // Everything released at the end leaves an empty table.
  for (const p of PROCS) m.releaseAll(p);
  expect(m.entries()).toEqual([]);
  m = LockManager.fromJSON(m.toJSON());
  expect(m.toJSON()).toEqual({ locks: {}, waiting: {}, nextSeq: expect.any(Number) });
}

describe('lock table fuzz', () => {
  const stats: Stats = {};
  // FUZZ_SEEDS=600 widens the search locally; FUZZ_STATS=1 prints how often each outcome occurred.
  const seeds = Array.from({ length: Number(process.env.FUZZ_SEEDS ?? 40) }, (_, i) => i + 1);
  it.each(seeds)('seed %i', (seed) => fuzz(seed, 400, stats));

  // A soft deadlock whose rearrangement wakes nobody (the proc moved ahead stays blocked by a grant).
  it.each([119, 535])('(regression) seed %i', (seed) => fuzz(seed, 400, stats));

  it('exercised every outcome', () => {
    if (process.env.FUZZ_STATS) console.log(stats);
    for (const k of ['granted', 'waiting', 'unavailable', 'deadlock', 'none', 'soft', 'hard']) {
      expect(stats[k] ?? 0, k).toBeGreaterThan(0);
    }
  });
});

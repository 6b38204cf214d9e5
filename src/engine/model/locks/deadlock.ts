/**
 * Port of PostgreSQL 18's deadlock detector (src/backend/storage/lmgr/deadlock.c).
 *
 * The algorithm, as the README in storage/lmgr describes it: starting from the proc whose
 * deadlock_timeout fired, look for a cycle in the waits-for graph. A "hard" edge means the
 * blocker holds a conflicting mode; a "soft" edge means the blocker is merely queued ahead of
 * us with a conflicting request. A cycle of hard edges only is a real deadlock. A cycle with
 * soft edges may be escaped by reordering a wait queue; DeadLockCheckRecurse searches the
 * orderings (constraints → ExpandConstraints → TopoSort) and TestConfiguration checks each.
 *
 * This module is pure: it reads the lock table and returns either the proposed queue orders
 * (the caller applies them and runs ProcLockWakeup) or the hard-deadlock report.
 *
 * Omitted: lock groups (parallel query; every proc is its own group leader here),
 * DS_BLOCKED_BY_AUTOVACUUM (no autovacuum in the simulator), and relation-extension locks.
 */
import { conflictMask, holdMaskOf, lockBit } from './modes';
import type { LockManagerState } from './lockManager';
import type { LockMode, LockTag, ProcId } from './types';

/** One DETAIL line of DeadLockReport: `waiter` waits for `mode` on `tag`; blocked by `blocker`. */
export interface DeadlockEdge {
  waiter: ProcId;
  tag: LockTag;
  mode: LockMode;
  blocker: ProcId;
}

/** The cycle, in the order DeadLockReport prints its DETAIL lines (starting at the checking proc). */
export interface DeadlockReport {
  edges: DeadlockEdge[];
}

/** A proposed new order for one lock's wait queue (deadlock.c WAIT_ORDER). */
export interface WaitOrder {
  lock: string;
  procs: ProcId[];
}

/** DeadLockCheck's outcome, before the caller applies any rearrangement. */
export type DeadLockState =
  | { kind: 'ok'; waitOrders: WaitOrder[] } // DS_NO_DEADLOCK when empty, else DS_SOFT_DEADLOCK
  | { kind: 'hard'; report: DeadlockReport }; // DS_HARD_DEADLOCK

/** deadlock.c EDGE: `waiter` is soft-blocked by `blocker` in the queue of `lock`. */
interface Edge {
  waiter: ProcId;
  blocker: ProcId;
  lock: string;
}

/** deadlock.c DEADLOCK_INFO. */
interface DeadlockInfo {
  tag: LockTag;
  mode: LockMode;
  proc: ProcId;
}

/**
 * MaxBackends bounds the detector's workspace (maxCurConstraints, maxPossibleConstraints).
 * With PostgreSQL's defaults it is over 100; a simulation never has that many sessions, so the
 * bounds exist here only to keep the search finite in the same way.
 */
const MAX_BACKENDS = 128;
const MAX_CUR_CONSTRAINTS = MAX_BACKENDS;
const MAX_POSSIBLE_CONSTRAINTS = MAX_BACKENDS * 4;

/** deadlock.c RememberSimpleDeadLock: the two-line report for a deadlock JoinWaitQueue finds at once. */
export function rememberSimpleDeadLock(
  proc1: ProcId,
  lockmode: LockMode,
  tag: LockTag,
  proc2: ProcId,
  proc2WaitTag: LockTag,
  proc2WaitMode: LockMode,
): DeadlockReport {
  return {
    edges: [
      { waiter: proc1, tag: { ...tag }, mode: lockmode, blocker: proc2 },
      { waiter: proc2, tag: { ...proc2WaitTag }, mode: proc2WaitMode, blocker: proc1 },
    ],
  };
}

/** deadlock.c DeadLockCheck for `proc` (which must be waiting). Does not modify `state`. */
export function deadLockCheck(state: Readonly<LockManagerState>, proc: ProcId): DeadLockState {
  return new DeadlockChecker(state).check(proc);
}

/** The detector's workspace, one instance per DeadLockCheck call (deadlock.c keeps it in statics). */
class DeadlockChecker {
  /** proc → (lock key, mode) it waits for: PGPROC waitLock / waitLockMode. */
  private readonly waitOf = new Map<ProcId, { lock: string; mode: LockMode }>();
  private curConstraints: Edge[] = [];
  private nPossibleConstraints = 0;
  private waitOrders: WaitOrder[] = [];
  private visitedProcs: ProcId[] = [];
  private deadlockDetails: DeadlockInfo[] = [];
  private nDeadlockDetails = 0;

  constructor(private readonly state: Readonly<LockManagerState>) {
    for (const [key, lock] of Object.entries(state.locks)) {
      for (const w of lock.waitQueue) this.waitOf.set(w.proc, { lock: key, mode: w.mode });
    }
  }

  /** DeadLockCheck: search for a deadlock-free configuration; if none, report the base cycle. */
  check(proc: ProcId): DeadLockState {
    this.curConstraints = [];
    this.nPossibleConstraints = 0;
    this.waitOrders = [];
    if (this.deadLockCheckRecurse(proc)) {
      // Call FindLockCycle one more time, to record deadlockDetails for the state with no rearrangements.
      this.waitOrders = [];
      if (!this.findLockCycle(proc)) throw new Error('deadlock seems to have disappeared');
      return { kind: 'hard', report: this.report() };
    }
    return { kind: 'ok', waitOrders: this.waitOrders.map((o) => ({ lock: o.lock, procs: [...o.procs] })) };
  }

  /** DeadLockReport's pairing: entry i waits; it is blocked by the proc of entry i+1 (the last by the first). */
  private report(): DeadlockReport {
    const n = this.nDeadlockDetails;
    const edges: DeadlockEdge[] = [];
    for (let i = 0; i < n; i++) {
      const info = this.deadlockDetails[i];
      const next = i < n - 1 ? this.deadlockDetails[i + 1] : this.deadlockDetails[0];
      edges.push({ waiter: info.proc, tag: { ...info.tag }, mode: info.mode, blocker: next.proc });
    }
    return { edges };
  }

  /** DeadLockCheckRecurse: true if no solution exists; false if waitOrders now holds a deadlock-free configuration. */
  private deadLockCheckRecurse(proc: ProcId): boolean {
    const edges = this.testConfiguration(proc);
    if (edges === null) return true; // hard deadlock: no solution
    if (edges.length === 0) return false; // good configuration found
    if (this.curConstraints.length >= MAX_CUR_CONSTRAINTS) return true; // out of room for active constraints
    const oldPossible = this.nPossibleConstraints;
    this.nPossibleConstraints += edges.length;
    // Try each available soft edge as an addition to the configuration.
    for (const edge of edges) {
      this.curConstraints.push(edge);
      if (!this.deadLockCheckRecurse(proc)) return false; // found a valid solution
      this.curConstraints.pop(); // give up on that added constraint, try again
    }
    this.nPossibleConstraints = oldPossible;
    return true;
  }

  /**
   * TestConfiguration: null for a hard deadlock (or an inconsistent constraint set), [] for a good
   * configuration, else the soft edges of one soft cycle. startProc is checked last so that, if it
   * still has a soft cycle, that one is dealt with first.
   */
  private testConfiguration(startProc: ProcId): Edge[] | null {
    if (this.nPossibleConstraints + MAX_BACKENDS > MAX_POSSIBLE_CONSTRAINTS) return null;
    if (!this.expandConstraints(this.curConstraints)) return null;
    let softFound: Edge[] = [];
    const candidates: ProcId[] = [];
    for (const c of this.curConstraints) candidates.push(c.waiter, c.blocker);
    candidates.push(startProc);
    for (const p of candidates) {
      const soft = this.findLockCycle(p);
      if (soft) {
        if (soft.length === 0) return null; // hard deadlock detected
        softFound = soft;
      }
    }
    return softFound;
  }

  /** FindLockCycle: is there a cycle through checkProc? Returns its soft edges (possibly none) or null. */
  private findLockCycle(checkProc: ProcId): Edge[] | null {
    this.visitedProcs = [];
    this.nDeadlockDetails = 0;
    const softEdges: Edge[] = [];
    return this.findLockCycleRecurse(checkProc, 0, softEdges) ? softEdges : null;
  }

  /** FindLockCycleRecurse: depth-first over waits-for edges; only a return to the start proc counts. */
  private findLockCycleRecurse(checkProc: ProcId, depth: number, softEdges: Edge[]): boolean {
    const seen = this.visitedProcs.indexOf(checkProc);
    if (seen === 0) {
      // Back at the starting point: a deadlock cycle. Outer levels fill deadlockDetails.
      this.nDeadlockDetails = depth;
      return true;
    }
    // A cycle that does not include the start point is "no deadlock" for this check.
    if (seen > 0) return false;
    this.visitedProcs.push(checkProc);
    // A proc that is not waiting has no outgoing waits-for edges.
    if (!this.waitOf.has(checkProc)) return false;
    return this.findLockCycleRecurseMember(checkProc, depth, softEdges);
  }

  /** FindLockCycleRecurseMember: hard edges first (lock->procLocks order), then soft edges (queue order, or the proposed order). */
  private findLockCycleRecurseMember(checkProc: ProcId, depth: number, softEdges: Edge[]): boolean {
    const wait = this.waitOf.get(checkProc)!;
    const lock = this.state.locks[wait.lock];
    const cm = conflictMask(wait.mode);
    const record = () => {
      this.deadlockDetails[depth] = { tag: lock.tag, mode: wait.mode, proc: checkProc };
    };

    // Procs that already hold conflicting locks: hard edges. A proc never blocks itself.
    for (const pl of lock.procLocks) {
      if (pl.proc === checkProc) continue;
      if (holdMaskOf(pl.hold) & cm) {
        if (this.findLockCycleRecurse(pl.proc, depth + 1, softEdges)) {
          record();
          return true;
        }
      }
    }

    // Procs ahead of us in the queue with conflicting requests: soft edges. Done after the
    // hard-edge scan so that a proc that both hard- and soft-blocks counts as hard.
    const proposed = this.waitOrders.find((o) => o.lock === wait.lock);
    const queue = proposed ? proposed.procs : lock.waitQueue.map((w) => w.proc);
    for (const proc of queue) {
      if (proc === checkProc) break; // only those ahead of us
      if (lockBit(this.waitOf.get(proc)!.mode) & cm) {
        if (this.findLockCycleRecurse(proc, depth + 1, softEdges)) {
          record();
          softEdges.push({ waiter: checkProc, blocker: proc, lock: wait.lock });
          return true;
        }
      }
    }
    return false;
  }

  /**
   * ExpandConstraints: turn the constraint list into one proposed order per affected lock.
   * Scanned backwards because the last-added constraint is the only one that could fail.
   */
  private expandConstraints(constraints: readonly Edge[]): boolean {
    this.waitOrders = [];
    for (let i = constraints.length - 1; i >= 0; i--) {
      const lock = constraints[i].lock;
      if (this.waitOrders.some((o) => o.lock === lock)) continue;
      // TopoSort need not examine constraints after this one: they are for other locks.
      const procs = this.topoSort(lock, constraints.slice(0, i + 1));
      if (!procs) return false;
      this.waitOrders.push({ lock, procs });
    }
    return true;
  }

  /**
   * TopoSort: reorder a wait queue so that each constraint's waiter precedes its blocker, moving
   * as little as possible. Output is built from the back: each step emits the last remaining proc
   * that has no pending before-constraints.
   */
  private topoSort(lockKey: string, constraints: readonly Edge[]): ProcId[] | null {
    const topoProcs: (ProcId | null)[] = this.state.locks[lockKey].waitQueue.map((w) => w.proc);
    const n = topoProcs.length;
    const beforeConstraints = new Array<number>(n).fill(0);
    const afterConstraints = new Array<number>(n).fill(0); // list heads: constraint index + 1, 0 = empty
    const pred = new Array<number>(constraints.length).fill(0);
    const link = new Array<number>(constraints.length).fill(0);
    for (let i = 0; i < constraints.length; i++) {
      const jj = topoProcs.lastIndexOf(constraints[i].waiter);
      if (jj < 0) continue; // constraint not relevant to this lock
      const kk = topoProcs.lastIndexOf(constraints[i].blocker);
      if (kk < 0) continue;
      beforeConstraints[jj]++; // waiter must come before
      pred[i] = jj;
      link[i] = afterConstraints[kk];
      afterConstraints[kk] = i + 1;
    }
    const ordering = new Array<ProcId>(n);
    let last = n - 1;
    for (let i = n - 1; i >= 0; i--) {
      while (topoProcs[last] === null) last--;
      let j = last;
      for (; j >= 0; j--) if (topoProcs[j] !== null && beforeConstraints[j] === 0) break;
      if (j < 0) return null; // no available candidate: the constraints contradict each other
      ordering[i] = topoProcs[j]!;
      topoProcs[j] = null;
      for (let k = afterConstraints[j]; k > 0; k = link[k - 1]) beforeConstraints[pred[k - 1]]--;
    }
    return ordering;
  }
}

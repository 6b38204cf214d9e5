/**
 * The heavyweight lock table: a port of PostgreSQL 18's lock.c / proc.c queue rules.
 *
 * State is plain data (LockManagerState) so it clones, serializes and freezes cheaply (a NOWAIT
 * probe tries an acquisition on a clone; undo replays the history instead). Mirrors, by function:
 *   acquire     LockAcquireExtended + LockCheckConflicts + GrantLock + JoinWaitQueue (proc.c)
 *   release     LockRelease → UnGrantLock + CleanUpLock → ProcLockWakeup
 *   releaseAll  LockErrorCleanup (RemoveFromWaitQueue) + LockReleaseAll
 *   cancelWait  RemoveFromWaitQueue + CleanUpLock(wakeupNeeded = true)
 *   checkDeadlock  CheckDeadLock → DeadLockCheck (deadlock.c), applying queue rearrangements
 *
 * Fast-path locks are marked, not kept apart (lock.c's FastPathGrantRelationLock and
 * FastPathTransferRelationLocks): a weak relation lock (AccessShare, RowShare, RowExclusive)
 * taken while no strong one (Share and up) is held or awaited on the relation, and a
 * transaction's own virtualxid lock, show fastpath = t in pg_locks. A weak lock never conflicts
 * with anything another proc holds or awaits while it is on the fast path, so its PROCLOCK can
 * sit in procLocks; its place there is what PostgreSQL gives it when a strong request arrives:
 * the transfer appends the fast-path holders' PROCLOCKs in PGPROC order, which is the order
 * pg_blocking_pids, the server log's "Processes holding the lock" and the deadlock detector
 * walk. Left out: the per-backend slot limit (16 relations per slot group; OIDs, and so groups,
 * differ between PGlite and a server anyway), lock groups (parallel query: every proc here is its own group leader), autovacuum
 * cancellation (DS_BLOCKED_BY_AUTOVACUUM: there is no autovacuum in the simulator), and
 * relation-extension locks.
 */
import { deadLockCheck, rememberSimpleDeadLock } from './deadlock';
import type { DeadlockReport } from './deadlock';
import { conflictMask, holdMaskOf, lockBit, TABLE_LOCK_MODES } from './modes';
import type { LockMode, LockTag, ProcId } from './types';

export type { DeadlockEdge, DeadlockReport } from './deadlock';

/** What LockAcquireExtended ended in, for one request. */
export type AcquireResult =
  | { status: 'granted' }
  /** Queued (JoinWaitQueue returned PROC_WAIT_STATUS_WAITING): the caller must wait. */
  | { status: 'waiting' }
  /** dontWait and it would have to wait (LOCK ... NOWAIT: LOCKACQUIRE_NOT_AVAIL). */
  | { status: 'unavailable' }
  /** Early deadlock found while queueing (RememberSimpleDeadLock); the proc is NOT left queued. */
  | { status: 'deadlock'; report: DeadlockReport };

/** What DeadLockCheck decided, after any queue rearrangement was applied. */
export type DeadlockCheckResult =
  | { kind: 'none' }
  /** DS_SOFT_DEADLOCK: queues were rearranged; procs granted as a result, in wake order. */
  | { kind: 'soft'; woken: ProcId[] }
  /** DS_HARD_DEADLOCK: the checking proc must abort; it is still queued (caller calls cancelWait). */
  | { kind: 'hard'; report: DeadlockReport };

/** One PROCLOCK: a proc's holds on one lock, with a count per mode (the LOCALLOCK nLocks). */
export interface ProcLockState {
  proc: ProcId;
  /** Modes held, each with how many times it was acquired; absent = not held. */
  hold: Partial<Record<LockMode, number>>;
  /** Creation order across the whole table: LockReleaseAll walks a proc's locks in this order. */
  seq: number;
  /** Modes held on the fast path (not yet transferred to the shared table). */
  fast?: Partial<Record<LockMode, true>>;
}

/** One queued request (a PGPROC on lock->waitProcs). */
export interface WaiterState {
  proc: ProcId;
  mode: LockMode;
}

/** One LOCK object. procLocks keeps lock->procLocks order (creation order), which decides the
 *  order in which FindLockCycleRecurseMember follows hard edges. */
export interface LockState {
  tag: LockTag;
  procLocks: ProcLockState[];
  waitQueue: WaiterState[];
}

/** The whole lock table, JSON-serializable. */
export interface LockManagerState {
  /** Keyed by tagKey(); insertion order = lock creation order. */
  locks: Record<string, LockState>;
  /** proc → tagKey of the lock it waits on (PGPROC.waitLock). */
  waiting: Record<string, string>;
  nextSeq: number;
  /** proc → its PGPROC number (connection order): the order a fast-path transfer appends holders in. */
  procNos?: Record<string, number>;
}

/** Stable string key of a lock tag. Relations and tuples are identified by OID, as in LOCKTAG. */
export function tagKey(tag: LockTag): string {
  switch (tag.type) {
    case 'relation':
      return `relation/${tag.oid}`;
    case 'tuple':
      return `tuple/${tag.oid}/${tag.block}/${tag.offset}`;
    case 'transactionid':
      return `transactionid/${tag.xid}`;
    case 'virtualxid':
      return `virtualxid/${tag.vxid}`;
    case 'advisory':
      return `advisory/${tag.key1}/${tag.key2}/${tag.field4}`;
  }
}

/** A proclock's holdMask (LOCKBIT_ON of every held mode). */
export function holdMask(pl: ProcLockState): number {
  return holdMaskOf(pl.hold);
}

function copyTag(tag: LockTag): LockTag {
  return { ...tag };
}

function copyState(s: LockManagerState): LockManagerState {
  const locks: Record<string, LockState> = {};
  for (const [key, lock] of Object.entries(s.locks)) {
    locks[key] = {
      tag: copyTag(lock.tag),
      procLocks: lock.procLocks.map((pl) => ({
        proc: pl.proc,
        hold: { ...pl.hold },
        seq: pl.seq,
        ...(pl.fast ? { fast: { ...pl.fast } } : {}),
      })),
      waitQueue: lock.waitQueue.map((w) => ({ proc: w.proc, mode: w.mode })),
    };
  }
  return { locks, waiting: { ...s.waiting }, nextSeq: s.nextSeq, ...(s.procNos ? { procNos: { ...s.procNos } } : {}) };
}

function fail(msg: string): never {
  throw new Error(`LockManager: ${msg}`);
}

function isLockMode(x: unknown): x is LockMode {
  return typeof x === 'string' && (TABLE_LOCK_MODES as readonly string[]).includes(x);
}

/** Checks the shape and the cross-references of deserialized state, so a bad snapshot fails early. */
function validateState(data: unknown): LockManagerState {
  if (typeof data !== 'object' || data === null) fail('fromJSON: not an object');
  const d = data as Partial<LockManagerState>;
  if (typeof d.locks !== 'object' || d.locks === null) fail('fromJSON: missing locks');
  if (typeof d.waiting !== 'object' || d.waiting === null) fail('fromJSON: missing waiting');
  if (typeof d.nextSeq !== 'number') fail('fromJSON: missing nextSeq');
  for (const [key, lock] of Object.entries(d.locks)) {
    if (!lock || typeof lock.tag !== 'object' || tagKey(lock.tag) !== key) fail(`fromJSON: bad lock ${key}`);
    if (!Array.isArray(lock.procLocks) || !Array.isArray(lock.waitQueue)) fail(`fromJSON: bad lock ${key}`);
    for (const pl of lock.procLocks) {
      for (const [m, n] of Object.entries(pl.hold)) {
        if (!isLockMode(m) || typeof n !== 'number' || n < 1) fail(`fromJSON: bad hold ${m} on ${key}`);
      }
    }
    for (const w of lock.waitQueue) {
      if (!isLockMode(w.mode)) fail(`fromJSON: bad wait mode on ${key}`);
      if (d.waiting[w.proc] !== key) fail(`fromJSON: waiter ${w.proc} of ${key} not in waiting`);
      if (!lock.procLocks.some((pl) => pl.proc === w.proc)) fail(`fromJSON: waiter ${w.proc} has no proclock`);
    }
  }
  for (const [proc, key] of Object.entries(d.waiting)) {
    if (!d.locks[key]?.waitQueue.some((w) => w.proc === proc)) fail(`fromJSON: ${proc} waits on ${key} but is not queued`);
  }
  return copyState(d as LockManagerState);
}

/** The lock table. All methods are synchronous and deterministic. */
export class LockManager {
  private state: LockManagerState;

  constructor(state?: LockManagerState) {
    this.state = state ? copyState(state) : { locks: {}, waiting: {}, nextSeq: 0 };
  }

  /** Records a proc's PGPROC number (backends connect in session order). */
  setProcNumber(proc: ProcId, n: number): void {
    (this.state.procNos ??= {})[proc] = n;
  }

  // ─── acquisition ──────────────────────────────────────────────────────────

  /** LockAcquireExtended: grant, queue (JoinWaitQueue), refuse (dontWait) or report an early deadlock. */
  acquire(proc: ProcId, tag: LockTag, mode: LockMode, opts: { dontWait?: boolean } = {}): AcquireResult {
    if (this.state.waiting[proc] !== undefined) fail(`${proc} is waiting and cannot request another lock`);
    const key = tagKey(tag);
    const existing = this.state.locks[key];
    // LOCALLOCK hit: already holding this very mode just bumps the count, whatever the queue holds.
    const held = existing?.procLocks.find((pl) => pl.proc === proc);
    if (held && (held.hold[mode] ?? 0) > 0) {
      held.hold[mode]! += 1;
      return { status: 'granted' };
    }
    // SetupLockInTable: find or create the LOCK and this proc's PROCLOCK (appended to procLocks).
    const lock = existing ?? (this.state.locks[key] = { tag: copyTag(tag), procLocks: [], waitQueue: [] });
    // A strong request first moves every fast-path lock on the relation into the shared table.
    if (conflictsWithFastPath(tag, mode)) this.transferFastPath(lock);
    let proclock = held;
    if (!proclock) {
      proclock = { proc, hold: {}, seq: this.state.nextSeq++ };
      lock.procLocks.push(proclock);
    }
    // The fast path: a weak lock while nothing strong is held or awaited on the relation.
    if (eligibleForFastPath(tag, mode) && !hasStrongRequest(lock)) {
      grantLock(proclock, mode);
      (proclock.fast ??= {})[mode] = true;
      return { status: 'granted' };
    }

    // Conflicts with waiters' requests force a wait; else check the locks granted to others.
    const foundConflict = (conflictMask(mode) & waitMask(lock)) !== 0 || lockCheckConflicts(lock, proc, mode);
    if (!foundConflict) {
      grantLock(proclock, mode);
      return { status: 'granted' };
    }

    // JoinWaitQueue is called even with dontWait: it may find we can be granted after all.
    const joined = joinWaitQueue(lock, proclock, mode, opts.dontWait ?? false);
    if (joined.status === 'granted') return joined;
    if (joined.status === 'error') {
      // Undo SetupLockInTable: drop a proclock that holds nothing, and an empty lock.
      this.cleanUpProcLock(key, lock, proclock);
      if (opts.dontWait) return { status: 'unavailable' };
      // An early deadlock without dontWait: DeadLockReport() with RememberSimpleDeadLock's info.
      return { status: 'deadlock', report: joined.report };
    }
    this.state.waiting[proc] = key;
    return { status: 'waiting' };
  }

  // ─── release ─────────────────────────────────────────────────────────────

  /** Releases one hold (counts: acquiring the same mode twice needs two releases); returns procs woken, in ProcLockWakeup order. */
  release(proc: ProcId, tag: LockTag, mode: LockMode): ProcId[] {
    const key = tagKey(tag);
    const lock = this.state.locks[key];
    const proclock = lock?.procLocks.find((pl) => pl.proc === proc);
    const count = proclock?.hold[mode] ?? 0;
    // PostgreSQL: WARNING "you don't own a lock of type %s"; for the engine this is a bug.
    if (!lock || !proclock || count === 0) fail(`${proc} does not hold ${mode} on ${key}`);
    if (count > 1) {
      proclock.hold[mode] = count - 1;
      return [];
    }
    const wakeupNeeded = unGrantLock(lock, proclock, mode);
    return this.cleanUpLock(key, lock, proclock, wakeupNeeded);
  }

  /**
   * FastPathTransferRelationLocks: every proc's fast-path locks on the relation join the shared
   * table, each PROCLOCK created then appended in PGPROC order (one already there, for a mode
   * taken the slow way, keeps its place).
   */
  private transferFastPath(lock: LockState): void {
    const fast = lock.procLocks.filter((pl) => pl.fast);
    if (!fast.length) return;
    const no = (p: ProcId) => this.state.procNos?.[p] ?? Number.MAX_SAFE_INTEGER;
    const moved: ProcLockState[] = [];
    for (const pl of fast) {
      const slowHolds = heldModes(pl).some((m) => !pl.fast![m]);
      delete pl.fast;
      if (!slowHolds) moved.push(pl);
    }
    // A stable sort: procs without a number keep their acquisition order.
    moved.sort((a, b) => no(a.proc) - no(b.proc));
    lock.procLocks = [...lock.procLocks.filter((pl) => !moved.includes(pl)), ...moved];
  }

  /** LockReleaseAll for a proc (transaction end), optionally only locks matching a filter (e.g. only non-advisory, or only advisory session locks). Also removes the proc from any wait queue. Returns woken procs in order. */
  releaseAll(proc: ProcId, filter?: (tag: LockTag, mode: LockMode) => boolean): ProcId[] {
    // AbortTransaction runs LockErrorCleanup (leave the wait queue) before LockReleaseAll.
    const woken = this.cancelWait(proc);
    // PostgreSQL walks MyProc->myProcLocks per hash partition; we walk in creation order.
    const mine: { key: string; lock: LockState; proclock: ProcLockState }[] = [];
    for (const [key, lock] of Object.entries(this.state.locks)) {
      const proclock = lock.procLocks.find((pl) => pl.proc === proc);
      if (proclock) mine.push({ key, lock, proclock });
    }
    mine.sort((a, b) => a.proclock.seq - b.proclock.seq);
    for (const { key, lock, proclock } of mine) {
      let wakeupNeeded = false;
      let released = false;
      for (const mode of TABLE_LOCK_MODES) {
        if ((proclock.hold[mode] ?? 0) === 0) continue;
        if (filter && !filter(lock.tag, mode)) continue;
        wakeupNeeded = unGrantLock(lock, proclock, mode) || wakeupNeeded;
        released = true;
      }
      if (released) woken.push(...this.cleanUpLock(key, lock, proclock, wakeupNeeded));
    }
    return woken;
  }

  /** The proc gives up its wait (lock_timeout, statement_timeout, deadlock victim): RemoveFromWaitQueue + ProcLockWakeup. Returns woken procs. */
  cancelWait(proc: ProcId): ProcId[] {
    const key = this.state.waiting[proc];
    if (key === undefined) return [];
    const lock = this.state.locks[key];
    lock.waitQueue = lock.waitQueue.filter((w) => w.proc !== proc);
    delete this.state.waiting[proc];
    const proclock = lock.procLocks.find((pl) => pl.proc === proc)!;
    // RemoveFromWaitQueue always asks CleanUpLock for a wakeup: waiters behind us may now go.
    return this.cleanUpLock(key, lock, proclock, true);
  }

  // ─── deadlock detection ───────────────────────────────────────────────────

  /** DeadLockCheck run by `proc` (which must be waiting), with PostgreSQL's soft-edge queue rearrangement. */
  checkDeadlock(proc: ProcId): DeadlockCheckResult {
    // CheckDeadLock: a proc already granted (unlinked from the queue) has nothing to check.
    if (this.state.waiting[proc] === undefined) return { kind: 'none' };
    const result = deadLockCheck(this.state, proc);
    if (result.kind === 'hard') return { kind: 'hard', report: result.report };
    if (result.waitOrders.length === 0) return { kind: 'none' };
    const woken: ProcId[] = [];
    for (const order of result.waitOrders) {
      const lock = this.state.locks[order.lock];
      const byProc = new Map(lock.waitQueue.map((w) => [w.proc, w]));
      if (byProc.size !== order.procs.length || order.procs.some((p) => !byProc.has(p))) {
        fail(`rearranged queue of ${order.lock} does not match its waiters`);
      }
      lock.waitQueue = order.procs.map((p) => byProc.get(p)!);
      woken.push(...this.procLockWakeup(lock));
    }
    return { kind: 'soft', woken };
  }

  // ─── inspection ───────────────────────────────────────────────────────────

  /** The lock `proc` is queued on, with the requested mode (PGPROC waitLock / waitLockMode), or null. */
  waitingFor(proc: ProcId): { tag: LockTag; mode: LockMode } | null {
    const key = this.state.waiting[proc];
    if (key === undefined) return null;
    const lock = this.state.locks[key];
    const w = lock.waitQueue.find((x) => x.proc === proc)!;
    return { tag: copyTag(lock.tag), mode: w.mode };
  }

  /** Procs holding `tag`, in lock->procLocks order, each with its modes in mode-number order. */
  holders(tag: LockTag): { proc: ProcId; modes: LockMode[] }[] {
    const lock = this.state.locks[tagKey(tag)];
    if (!lock) return [];
    return lock.procLocks.map((pl) => ({ proc: pl.proc, modes: heldModes(pl) })).filter((h) => h.modes.length > 0);
  }

  /** The wait queue of `tag`, in queue order. */
  waiters(tag: LockTag): { proc: ProcId; mode: LockMode }[] {
    const lock = this.state.locks[tagKey(tag)];
    return lock ? lock.waitQueue.map((w) => ({ proc: w.proc, mode: w.mode })) : [];
  }

  /** Every hold of `proc`, in acquisition order of the locks, with counts. */
  heldBy(proc: ProcId): { tag: LockTag; mode: LockMode; count: number }[] {
    const out: { tag: LockTag; mode: LockMode; count: number; seq: number }[] = [];
    for (const lock of Object.values(this.state.locks)) {
      const pl = lock.procLocks.find((x) => x.proc === proc);
      if (!pl) continue;
      for (const mode of heldModes(pl)) out.push({ tag: copyTag(lock.tag), mode, count: pl.hold[mode]!, seq: pl.seq });
    }
    out.sort((a, b) => a.seq - b.seq);
    return out.map(({ tag, mode, count }) => ({ tag, mode, count }));
  }

  /** How many times `proc` holds `mode` on `tag` (0 when not held). */
  holdCount(proc: ProcId, tag: LockTag, mode: LockMode): number {
    const pl = this.state.locks[tagKey(tag)]?.procLocks.find((x) => x.proc === proc);
    return pl?.hold[mode] ?? 0;
  }

  /** Every lock (granted holds and waits), for a pg_locks view: one entry per (proc, tag, mode), with pg_locks' fastpath. */
  entries(): { proc: ProcId; tag: LockTag; mode: LockMode; granted: boolean; fastpath: boolean }[] {
    const out: { proc: ProcId; tag: LockTag; mode: LockMode; granted: boolean; fastpath: boolean }[] = [];
    for (const lock of Object.values(this.state.locks)) {
      for (const pl of lock.procLocks) {
        for (const mode of heldModes(pl))
          out.push({ proc: pl.proc, tag: copyTag(lock.tag), mode, granted: true, fastpath: !!pl.fast?.[mode] });
        const w = lock.waitQueue.find((x) => x.proc === pl.proc);
        if (w) out.push({ proc: pl.proc, tag: copyTag(lock.tag), mode: w.mode, granted: false, fastpath: false });
      }
    }
    return out;
  }

  /** Wait-for edges: hard (blocker holds a conflicting mode) and soft (blocker is queued ahead with a conflicting request), like pg_blocking_pids(). */
  waitEdges(): { from: ProcId; to: ProcId; kind: 'hard' | 'soft'; tag: LockTag; mode: LockMode }[] {
    const out: { from: ProcId; to: ProcId; kind: 'hard' | 'soft'; tag: LockTag; mode: LockMode }[] = [];
    for (const lock of Object.values(this.state.locks)) {
      lock.waitQueue.forEach((w, index) => {
        const cm = conflictMask(w.mode);
        const ahead = lock.waitQueue.slice(0, index);
        // lockfuncs.c GetBlockerStatusData / pg_blocking_pids: one record per proclock, hard first.
        for (const pl of lock.procLocks) {
          if (pl.proc === w.proc) continue;
          let kind: 'hard' | 'soft' | null = null;
          if (holdMask(pl) & cm) kind = 'hard';
          else if (ahead.some((a) => a.proc === pl.proc && (lockBit(a.mode) & cm) !== 0)) kind = 'soft';
          if (kind) out.push({ from: w.proc, to: pl.proc, kind, tag: copyTag(lock.tag), mode: w.mode });
        }
      });
    }
    return out;
  }

  /** Every proc that holds or waits for anything, in first-appearance order. */
  procs(): ProcId[] {
    const seen = new Set<ProcId>();
    for (const lock of Object.values(this.state.locks)) for (const pl of lock.procLocks) seen.add(pl.proc);
    return [...seen];
  }

  // ─── snapshots ────────────────────────────────────────────────────────────

  /** An independent copy (to try an acquisition without changing this table). */
  clone(): LockManager {
    return new LockManager(this.state);
  }

  /** Plain-data snapshot; `LockManager.fromJSON(JSON.parse(JSON.stringify(m)))` round-trips. */
  toJSON(): LockManagerState {
    return copyState(this.state);
  }

  /** Rebuilds a manager from toJSON() output, validating it. */
  static fromJSON(data: unknown): LockManager {
    return new LockManager(validateState(data));
  }

  /** Read-only view of the raw state, for the deadlock detector and debugging views. */
  get raw(): Readonly<LockManagerState> {
    return this.state;
  }

  // ─── internals ────────────────────────────────────────────────────────────

  /** CleanUpLock: drop an empty proclock, drop an unused lock, else ProcLockWakeup if needed. */
  private cleanUpLock(key: string, lock: LockState, proclock: ProcLockState, wakeupNeeded: boolean): ProcId[] {
    this.cleanUpProcLock(key, lock, proclock);
    if (!this.state.locks[key]) return [];
    return wakeupNeeded ? this.procLockWakeup(lock) : [];
  }

  /** Deletes a proclock with no holds (unless its proc still waits on this lock) and the lock once nRequested is 0. */
  private cleanUpProcLock(key: string, lock: LockState, proclock: ProcLockState): void {
    const stillWaiting = this.state.waiting[proclock.proc] === key;
    if (holdMask(proclock) === 0 && !stillWaiting) {
      lock.procLocks = lock.procLocks.filter((pl) => pl !== proclock);
    }
    if (lock.procLocks.length === 0 && lock.waitQueue.length === 0) delete this.state.locks[key];
  }

  /** proc.c ProcLockWakeup: grant, in queue order, every waiter that conflicts neither with requests ahead of it nor with granted locks. */
  private procLockWakeup(lock: LockState): ProcId[] {
    const woken: ProcId[] = [];
    let aheadRequests = 0;
    for (const w of [...lock.waitQueue]) {
      if ((conflictMask(w.mode) & aheadRequests) === 0 && !lockCheckConflicts(lock, w.proc, w.mode)) {
        const proclock = lock.procLocks.find((pl) => pl.proc === w.proc)!;
        grantLock(proclock, w.mode);
        // ProcWakeup: unlink from the queue and clear waitLock.
        lock.waitQueue = lock.waitQueue.filter((x) => x !== w);
        delete this.state.waiting[w.proc];
        woken.push(w.proc);
      } else {
        aheadRequests |= lockBit(w.mode);
      }
    }
    return woken;
  }
}

/** Held modes of a proclock, in lock-mode number order. */
function heldModes(pl: ProcLockState): LockMode[] {
  return TABLE_LOCK_MODES.filter((m) => (pl.hold[m] ?? 0) > 0);
}

/** The weak relation modes (below ShareUpdateExclusiveLock) EligibleForRelationFastPath admits. */
const WEAK_RELATION_MODES: readonly LockMode[] = ['AccessShareLock', 'RowShareLock', 'RowExclusiveLock'];

/**
 * EligibleForRelationFastPath, and VirtualXactLockTableInsert's own fast path: a weak lock on a
 * relation, or a transaction's ExclusiveLock on its own virtualxid.
 */
function eligibleForFastPath(tag: LockTag, mode: LockMode): boolean {
  if (tag.type === 'virtualxid') return mode === 'ExclusiveLock';
  return tag.type === 'relation' && WEAK_RELATION_MODES.includes(mode);
}

/** ConflictsWithRelationFastPath (modes above ShareUpdateExclusiveLock); a wait on a virtualxid transfers it too (VirtualXactLock). */
function conflictsWithFastPath(tag: LockTag, mode: LockMode): boolean {
  if (tag.type === 'virtualxid') return mode !== 'ExclusiveLock';
  return tag.type === 'relation' && mode !== 'ShareUpdateExclusiveLock' && !WEAK_RELATION_MODES.includes(mode);
}

/** FastPathStrongRelationLocks->count > 0 for the relation: a strong mode held or awaited on it. */
function hasStrongRequest(lock: LockState): boolean {
  const strong = (m: LockMode) => conflictsWithFastPath(lock.tag, m);
  return lock.procLocks.some((pl) => heldModes(pl).some(strong)) || lock.waitQueue.some((w) => strong(w.mode));
}

/** lock->waitMask: the modes some queued proc is waiting for. */
export function waitMask(lock: LockState): number {
  let mask = 0;
  for (const w of lock.waitQueue) mask |= lockBit(w.mode);
  return mask;
}

/** lock.c LockCheckConflicts: does `mode` conflict with modes granted to procs other than `proc`? (Own holds never conflict.) */
export function lockCheckConflicts(lock: LockState, proc: ProcId, mode: LockMode): boolean {
  const cm = conflictMask(mode);
  return lock.procLocks.some((pl) => pl.proc !== proc && (holdMask(pl) & cm) !== 0);
}

/** GrantLock + GrantLockLocal for a fresh grant: the hold count starts at 1. */
function grantLock(proclock: ProcLockState, mode: LockMode): void {
  proclock.hold[mode] = 1;
}

/** UnGrantLock: drop the hold entirely; a wakeup is needed only if the mode conflicts with a waiter's request. */
function unGrantLock(lock: LockState, proclock: ProcLockState, mode: LockMode): boolean {
  delete proclock.hold[mode];
  if (proclock.fast) {
    delete proclock.fast[mode];
    if (Object.keys(proclock.fast).length === 0) delete proclock.fast;
  }
  return (conflictMask(mode) & waitMask(lock)) !== 0;
}

type JoinResult = { status: 'granted' } | { status: 'waiting' } | { status: 'error'; report: DeadlockReport };

/**
 * proc.c JoinWaitQueue. Normally append. If we already hold modes that an earlier waiter's
 * request conflicts with, go just before the first such waiter (the deadlock detector would
 * move us there anyway) — unless we also need a mode that waiter holds: that is a deadlock
 * found without waiting (RememberSimpleDeadLock). And if, at that point, nothing granted and
 * nothing requested ahead conflicts with us, grant at once.
 */
function joinWaitQueue(lock: LockState, proclock: ProcLockState, mode: LockMode, dontWait: boolean): JoinResult {
  const myHeldLocks = holdMask(proclock);
  let insertAt = lock.waitQueue.length;
  if (myHeldLocks !== 0 && lock.waitQueue.length > 0) {
    let aheadRequests = 0;
    for (let i = 0; i < lock.waitQueue.length; i++) {
      const other = lock.waitQueue[i];
      // Must he wait for me?
      if (conflictMask(other.mode) & myHeldLocks) {
        // Must I wait for him? (proc->heldLocks: his holds on this lock; they cannot change while he sleeps.)
        const hisProcLock = lock.procLocks.find((pl) => pl.proc === other.proc)!;
        if (conflictMask(mode) & holdMask(hisProcLock)) {
          return {
            status: 'error',
            report: rememberSimpleDeadLock(proclock.proc, mode, lock.tag, other.proc, lock.tag, other.mode),
          };
        }
        if ((conflictMask(mode) & aheadRequests) === 0 && !lockCheckConflicts(lock, proclock.proc, mode)) {
          grantLock(proclock, mode);
          return { status: 'granted' };
        }
        insertAt = i;
        break;
      }
      aheadRequests |= lockBit(other.mode);
    }
  }
  if (dontWait) return { status: 'error', report: { edges: [] } };
  lock.waitQueue.splice(insertAt, 0, { proc: proclock.proc, mode });
  return { status: 'waiting' };
}

/** One lock-table operation as data, for replaying and for table-driven and fuzz tests. */
export type LockOp =
  | { op: 'acquire'; proc: ProcId; tag: LockTag; mode: LockMode; dontWait?: boolean }
  | { op: 'release'; proc: ProcId; tag: LockTag; mode: LockMode }
  | { op: 'releaseAll'; proc: ProcId; onlyAdvisory?: boolean; keepAdvisory?: boolean }
  | { op: 'cancelWait'; proc: ProcId }
  | { op: 'checkDeadlock'; proc: ProcId };

/** What a LockOp returned: the method's result as plain data. */
export type LockOpResult = AcquireResult | DeadlockCheckResult | { woken: ProcId[] };

/** Applies one LockOp to `m` (mutating it) and returns the method's result. */
export function applyLockOp(m: LockManager, op: LockOp): LockOpResult {
  switch (op.op) {
    case 'acquire':
      return m.acquire(op.proc, op.tag, op.mode, { dontWait: op.dontWait });
    case 'release':
      return { woken: m.release(op.proc, op.tag, op.mode) };
    case 'releaseAll': {
      // Transaction end keeps session-level advisory locks; session end releases only those.
      const filter = op.onlyAdvisory
        ? (tag: LockTag) => tag.type === 'advisory'
        : op.keepAdvisory
          ? (tag: LockTag) => tag.type !== 'advisory'
          : undefined;
      return { woken: m.releaseAll(op.proc, filter) };
    }
    case 'cancelWait':
      return { woken: m.cancelWait(op.proc) };
    case 'checkDeadlock':
      return m.checkDeadlock(op.proc);
  }
}

/** Transactions in the model: begin, xids, and releasing what a transaction or a savepoint level holds. */
import { cancelWaitIfAny } from './acquire';
import type { ProcId, Xid } from './locks/types';
import { cancelTimers, event, type ModelState, queueResumes, type Sess } from '../state';
import type { IsolationLevel } from '../types';

/** Opens a transaction (implicit for a single statement) and takes its virtualxid lock. */
export function beginTxn(eng: ModelState, s: Sess, implicit: boolean, isolation?: string, readOnly?: boolean): void {
  s.vxidCounter++;
  s.txn = {
    implicit,
    isolation: (isolation as IsolationLevel | undefined) ?? s.defaultIsolation,
    ...((readOnly ?? s.defaultReadOnly) ? { readOnly: true } : {}),
    xid: null,
    vxid: `${s.index + 3}/${s.vxidCounter}`,
    startMs: eng.clock,
    log: [],
    aborted: false,
    savepoints: [],
    xidHolds: [],
    held: [],
    insertedKeys: [],
    constraintModes: [],
    sets: [],
    localSets: [],
    originOf: new Map(),
  };
  eng.lm.acquire(s.proc, { type: 'virtualxid', vxid: s.txn.vxid }, 'ExclusiveLock');
}

/** What ends: a subtransaction (ROLLBACK TO, a subxact abort), or the whole transaction. */
export type ReleaseOutcome = 'subabort' | 'abort' | 'commit';

/**
 * The one release routine: lets go of what the transaction acquired at savepoint level `depth`
 * and deeper (0: all of it) — heavyweight locks, (sub)transaction xids, row locks, inserted
 * unique keys — and ends or rolls back its SSI state. Returns the sessions to wake, in release
 * order: a whole transaction lets go of its locks newest first, a subtransaction in the order it
 * took them.
 */
export function releaseFrom(eng: ModelState, s: Sess, depth: number, outcome: ReleaseOutcome): ProcId[] {
  const txn = s.txn!;
  const woken: ProcId[] = [];
  for (const h of depth === 0 ? [...txn.held].reverse() : txn.held)
    if (h.depth >= depth) woken.push(...eng.lm.release(s.proc, h.tag, h.mode));
  txn.held = txn.held.filter((h) => h.depth < depth);
  // The ended (sub)transactions' xids end now: their waiters wake (XactLockTableWait on a subxid too).
  for (const x of txn.xidHolds)
    if (x.depth >= depth) woken.push(...eng.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
  txn.xidHolds = txn.xidHolds.filter((h) => h.depth < depth);
  for (let i = Math.max(0, depth - 1); i < txn.savepoints.length; i++) txn.savepoints[i].xid = undefined;
  txn.insertedKeys = txn.insertedKeys.filter((k) => k.depth < depth);
  txn.constraintModes = txn.constraintModes.filter((m) => m.depth < depth);
  if (outcome === 'commit') woken.push(...eng.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock'));
  eng.rows.release(s.name, depth);
  // AbortTransaction releases the predicate locks at once (ReleasePredicateLocks).
  if (txn.sx) {
    if (outcome === 'subabort') eng.ssi.rollbackTo(txn.sx, depth);
    else eng.ssi.finish(txn.sx, outcome === 'commit', eng.nextXid);
  }
  return woken;
}

/** Releases what a subtransaction level (and deeper ones) acquired: ROLLBACK TO / subxact abort. */
export function releaseDepth(eng: ModelState, s: Sess, depth: number): void {
  queueResumes(eng, releaseFrom(eng, s, depth, 'subabort'));
}

/**
 * RELEASE SAVEPOINT: the subtransactions at savepoint depth `depth + 1` and deeper commit into
 * the one at `depth`. Their locks pass to the parent (CommitSubTransaction reassigns them to the
 * parent's resource owner), except the lock on each one's own xid, which it lets go of at once
 * (XactLockTableDelete): a session waiting for that xid wakes, finds it still in progress and
 * waits for the top-level transaction instead (XactLockTableWait, see waitOnXid), so a later
 * ROLLBACK TO an outer savepoint undoes the row but does not wake that waiter.
 */
export function commitSubtransactions(eng: ModelState, s: Sess, depth: number): void {
  const txn = s.txn!;
  for (const h of txn.held) if (h.depth > depth) h.depth = depth;
  for (const k of txn.insertedKeys) if (k.depth > depth) k.depth = depth;
  for (const m of txn.constraintModes) if (m.depth > depth) m.depth = depth;
  eng.rows.merge(s.name, depth);
  const woken: ProcId[] = [];
  for (const x of txn.xidHolds)
    if (x.depth > depth) woken.push(...eng.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
  txn.xidHolds = txn.xidHolds.filter((x) => x.depth <= depth);
  queueResumes(eng, woken);
}

/** An error inside a transaction: PostgreSQL aborts at once and releases the locks. */
export function abortTxnState(eng: ModelState, s: Sess, keepBlock: boolean): void {
  const txn = s.txn;
  if (!txn) return;
  const depth = txn.savepoints.length;
  if (depth > 0 && keepBlock) {
    // Only the innermost subtransaction aborts; the block stays until ROLLBACK TO.
    releaseDepth(eng, s, depth);
    txn.aborted = true;
    return;
  }
  const woken = [...cancelWaitIfAny(eng, s), ...releaseFrom(eng, s, 0, 'abort')];
  txn.aborted = true;
  txn.xid = null;
  queueResumes(eng, woken);
  if (txn.implicit || !keepBlock) {
    eng.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock');
    s.txn = null;
    event(eng, { type: 'rollback', atMs: eng.clock, session: s.name });
  }
}

/**
 * COMMIT or ROLLBACK in the model: everything the transaction holds is released (its vxid too)
 * and the transaction is gone. Returns the sessions to wake and whether it had run SET.
 */
export function endTxnState(eng: ModelState, s: Sess, committed: boolean): { woken: ProcId[]; hadSets: boolean } {
  const txn = s.txn!;
  cancelTimers(eng, s, ['idle_in_transaction_session_timeout']);
  const woken = [...cancelWaitIfAny(eng, s), ...releaseFrom(eng, s, 0, committed ? 'commit' : 'abort')];
  if (!committed) woken.push(...eng.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock'));
  if (committed) {
    s.sets.push(...txn.sets);
    event(eng, { type: 'commit', atMs: eng.clock, session: s.name });
  } else event(eng, { type: 'rollback', atMs: eng.clock, session: s.name });
  s.txn = null;
  return { woken, hadSets: txn.sets.length + txn.localSets.length > 0 };
}

/** Gives the transaction its top-level xid and takes the ExclusiveLock on it. */
export function assignXid(eng: ModelState, s: Sess): void {
  const xid = eng.nextXid++;
  s.txn!.xid = xid;
  s.txn!.xidHolds.push({ xid, depth: 0 });
  eng.lm.acquire(s.proc, { type: 'transactionid', xid: xid as Xid }, 'ExclusiveLock');
}

/** The xid of the current (sub)transaction, assigning parents first as AssignTransactionId does. */
export function currentXid(eng: ModelState, s: Sess): number {
  const txn = s.txn!;
  if (txn.xid === null) assignXid(eng, s);
  txn.savepoints.forEach((sp, i) => {
    if (sp.xid !== undefined) return;
    sp.xid = eng.nextXid++;
    txn.xidHolds.push({ xid: sp.xid, depth: i + 1 });
    eng.lm.acquire(s.proc, { type: 'transactionid', xid: sp.xid as Xid }, 'ExclusiveLock');
  });
  return txn.savepoints.length ? txn.savepoints[txn.savepoints.length - 1].xid! : txn.xid!;
}

/** The xmin a snapshot taken now has: the oldest running transaction id, or the next one. */
export function snapshotXmin(eng: ModelState, me: Sess): number {
  let xmin = eng.nextXid;
  for (const o of eng.sessions.values()) if (o !== me && o.txn && o.txn.xid !== null && !o.txn.aborted) xmin = Math.min(xmin, o.txn.xid);
  return xmin;
}

/** Transactions in the model: begin, xids, and releasing what a transaction or a savepoint level holds. */
import { cancelWaitIfAny } from './acquire';
import type { ProcId, Xid } from './locks/types';
import { event, type HeldLock, type ModelState, queueResumes, type Sess } from '../state';
import type { IsolationLevel } from '../types';

export function beginTxn(eng: ModelState, s: Sess, implicit: boolean, isolation?: string): void {
  s.vxidCounter++;
  s.txn = {
    implicit,
    isolation: (isolation as IsolationLevel | undefined) ?? s.defaultIsolation,
    xid: null,
    vxid: `${s.index + 3}/${s.vxidCounter}`,
    startMs: eng.clock,
    log: [],
    aborted: false,
    savepoints: [],
    xidHolds: [],
    held: [],
    insertedKeys: [],
    sets: [],
    localSets: [],
    originOf: new Map(),
  };
  eng.lm.acquire(s.proc, { type: 'virtualxid', vxid: s.txn.vxid }, 'ExclusiveLock');
}

/** Releases what a subtransaction level (and deeper ones) acquired: ROLLBACK TO / subxact abort. */
export function releaseDepth(eng: ModelState, s: Sess, depth: number): void {
  const txn = s.txn!;
  const keep: HeldLock[] = [];
  const woken: ProcId[] = [];
  for (const h of txn.held) {
    if (h.depth >= depth) woken.push(...eng.lm.release(s.proc, h.tag, h.mode));
    else keep.push(h);
  }
  txn.held = keep;
  // The aborted subtransactions' xids end now: their waiters wake (XactLockTableWait on a subxid).
  for (const x of txn.xidHolds.filter((h) => h.depth >= depth))
    woken.push(...eng.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
  txn.xidHolds = txn.xidHolds.filter((h) => h.depth < depth);
  for (let i = depth - 1; i < txn.savepoints.length; i++) txn.savepoints[i].xid = undefined;
  txn.insertedKeys = txn.insertedKeys.filter((k) => k.depth < depth);
  eng.rows.release(s.name, depth);
  if (txn.sx) eng.ssi.rollbackTo(txn.sx, depth);
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
  const woken: ProcId[] = [];
  woken.push(...cancelWaitIfAny(eng, s));
  for (const h of [...txn.held].reverse()) woken.push(...eng.lm.release(s.proc, h.tag, h.mode));
  txn.held = [];
  for (const x of txn.xidHolds) woken.push(...eng.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
  txn.xidHolds = [];
  for (const sp of txn.savepoints) sp.xid = undefined;
  eng.rows.release(s.name);
  txn.insertedKeys = [];
  // AbortTransaction releases the predicate locks at once (ReleasePredicateLocks).
  if (txn.sx) eng.ssi.finish(txn.sx, false, eng.nextXid);
  txn.aborted = true;
  txn.xid = null;
  queueResumes(eng, woken);
  if (txn.implicit || !keepBlock) {
    eng.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock');
    s.txn = null;
    event(eng, { type: 'rollback', atMs: eng.clock, session: s.name });
  }
}

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

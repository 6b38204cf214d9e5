/** Server log lines the model writes when waits, lock failures, timeouts and step errors happen. */
import { describeLockTag } from './locks/describe';
import { tupleLockMode } from './locks/modes';
import type { LockMode, LockTag, ProcId, RowLockMode, Xid } from './locks/types';
import { presentTag } from './present';
import type { TupleId } from './rowlocks';
import { DATABASE_OID, gucOn, type ModelState, type Sess, sess, type Wait } from '../state';
import type { PgMessage } from '../types';
import {
  holdersAndWaiters,
  holdersDetail,
  lockFailureMessage,
  type LockWaitEvent,
  lockWaitMessage,
  logEntry,
  messageEntry,
} from '../view/serverLog';

/** A timeout's error reaches the server log when it is raised. */
export function timeoutLog(eng: ModelState, s: Sess, error: PgMessage): void {
  eng.loggedErrors.add(error);
  eng.serverLog.push(...messageEntry(eng.clock, s.pid, error, s.query));
}

/** ProcSleep's log_lock_waits entries, for a wait the deadlock check has looked at. */
export function logLockWait(eng: ModelState, s: Sess, w: Wait, event: LockWaitEvent): void {
  if (!gucOn(eng, s, 'log_lock_waits')) return;
  const tag = presentTag(eng, w.tag);
  const text = lockWaitMessage(event, s.pid, w.mode, describeLockTag(tag, DATABASE_OID), eng.clock - w.sinceMs);
  const message = w.position ? `${text} at character ${w.position}` : text;
  const { holders, waiters } = holdersAndWaiters(eng.lm.raw, w.tag);
  const pids = (ps: ProcId[]) => ps.map((p) => sess(eng, p).pid);
  const detail = event === 'acquired' ? undefined : holdersDetail(pids(holders), pids(waiters), '.');
  eng.serverLog.push(...logEntry(eng.clock, s.pid, 'LOG', message, { detail, context: w.context, statement: s.query }));
}

/** log_lock_failures: a NOWAIT row lock found `tag` taken (LockAcquireExtended with dontWait). */
export function logLockFailure(eng: ModelState, s: Sess, tag: LockTag, mode: LockMode): void {
  if (!gucOn(eng, s, 'log_lock_failures')) return;
  const { holders, waiters } = holdersAndWaiters(eng.lm.raw, tag);
  const pids = (ps: ProcId[]) => ps.map((p) => sess(eng, p).pid);
  const message = lockFailureMessage(s.pid, mode, describeLockTag(presentTag(eng, tag), DATABASE_OID));
  eng.serverLog.push(
    ...logEntry(eng.clock, s.pid, 'LOG', message, { detail: holdersDetail(pids(holders), pids(waiters), ','), statement: s.query }),
  );
}

/**
 * heap_lock_tuple under NOWAIT: the tuple lock is tried first (unless the transaction already
 * locks the row), then the locker's xid; the first one not available is the one logged.
 */
export function logRowNowait(eng: ModelState, s: Sess, t: TupleId, mode: RowLockMode, xid: number): void {
  const ttag: LockTag = { type: 'tuple', relation: t.relation, oid: t.oid, block: t.block, offset: t.offset };
  const tmode = tupleLockMode(mode);
  // Tried on a copy of the lock table: the engine itself does not take the tuple lock here.
  const tupleTaken =
    eng.rows.heldMode(t, s.name) === undefined && eng.lm.clone().acquire(s.proc, ttag, tmode, { dontWait: true }).status !== 'granted';
  if (tupleTaken) {
    logLockFailure(eng, s, ttag, tmode);
    return;
  }
  logLockFailure(eng, s, { type: 'transactionid', xid: xid as Xid }, 'ShareLock');
}

/** A finished step's warnings and error reach the server log (log_min_messages = warning), unless logged when raised. */
export function logStepMessages(eng: ModelState, s: Sess): void {
  const step = s.step!;
  for (const n of step.notices)
    if (n.severity === 'WARNING' && !eng.loggedErrors.has(n)) {
      eng.loggedErrors.add(n);
      eng.serverLog.push(...messageEntry(eng.clock, s.pid, n, s.query));
    }
  if (step.error && !eng.loggedErrors.has(step.error)) {
    eng.loggedErrors.add(step.error);
    eng.serverLog.push(...messageEntry(eng.clock, s.pid, step.error, s.query));
  }
}

/**
 * Walking a statement's acquisition plan in the lock model: relation, advisory, tuple and xid
 * locks, waits and deadlock victims, tuple-lock bookkeeping and session-level advisory locks.
 */
import type { DryRun, PlanItem } from './facts';
import { deadlockDetail } from './locks/describe';
import { LockManager } from './locks/lockManager';
import { tupleLockMode } from './locks/modes';
import type { LockMode, LockTag, ProcId, Xid } from './locks/types';
import { logLockWait, logRowNowait } from './logLines';
import { PG, xactWaitContext } from './messages';
import { describe, presentTag, waitReason } from './present';
import type { TupleId } from './rowlocks';
import { SsiFailure } from './ssi';
import { abortTxnState, currentXid } from './txn';
import { epqCovers, epqKey, sameTag } from './util';
import type { ParsedStatement } from '../sql';
import { cancelTimers, DATABASE_OID, event, type ModelState, queueResumes, type Sess, sess, type Wait } from '../state';
import { messageEntry } from '../view/serverLog';
import type { PgMessage } from '../types';

/** A 40001 from SSI: the statement fails and the (sub)transaction aborts. */
export function ssiError(eng: ModelState, s: Sess, e: unknown, context?: string): 'error' {
  if (!(e instanceof SsiFailure)) throw e;
  s.step!.error = { ...PG.serializationRw(e.reason), ...(context ? { context } : {}) };
  abortTxnState(eng, s, true);
  return 'error';
}

/** Whether a WITH query of the statement is an UPDATE or DELETE of `relation`. */
function cteChanges(sql: string, relation: string): boolean {
  if (!/^\s*WITH\b/i.test(sql)) return false;
  const re = /\bAS\s*(?:NOT\s+)?(?:MATERIALIZED\s*)?\(\s*(?:UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?(?:[\w$]+\.)?"?([\w$]+)"?/gi;
  for (const m of sql.matchAll(re)) if (m[1].toLowerCase() === relation.toLowerCase()) return true;
  return false;
}

/** Walks the acquisition plan in the lock model (only the items of `kinds` when given). */
export function walkPlan(
  eng: ModelState,
  s: Sess,
  st: ParsedStatement,
  dry: DryRun,
  kinds?: ReadonlySet<PlanItem['kind']>,
): 'ok' | 'error' | 'wait' {
  const step = s.step!;
  const txn = s.txn!;
  const depth = txn.savepoints.length;
  const cls = st.cls.kind === 'dml' ? st.cls : undefined;
  if (step.caught) releaseCaught(eng, s, dry.plan);
  releaseStaleTupleLocks(eng, s, dry.plan);
  // The keys this walk has found free so far: in the indexes once a later key waits.
  const passed: Extract<PlanItem, { kind: 'key' }>[] = [];
  if (!kinds) {
    step.keysBeforeWait = undefined;
    step.deferredConflicts = undefined;
  }
  const keepPassed = (xid: number) => {
    if (!passed.length) return;
    const table = (k: { index: string; key: string }) => dry.inserted.find((i) => i.index === k.index && i.key === k.key)?.table;
    step.keysBeforeWait = passed.map((k) => {
      const t = table(k);
      return { index: k.index, key: k.key, depth, xid, ...(t ? { table: t } : {}), ...(k.ctid ? { ctid: k.ctid } : {}) };
    });
  };
  for (const item of dry.plan) {
    if (kinds && !kinds.has(item.kind)) continue;
    switch (item.kind) {
      case 'rel':
      case 'adv': {
        if (item.kind === 'adv' && item.sessionLevel) {
          // Taken by this statement before it waited (a re-run after a wake-up): held once.
          const xactHolds = txn.held.filter((h) => sameTag(h.tag, item.tag) && h.mode === item.mode).length;
          if (
            !s.sessionAdvisory.some((a) => sameTag(a.tag, item.tag) && a.mode === item.mode) &&
            eng.lm.holdCount(s.proc, item.tag, item.mode) > xactHolds
          )
            continue;
          const r = eng.lm.acquire(s.proc, item.tag, item.mode);
          if (r.status === 'granted') continue;
          return handleAcquire(eng, s, r, item.tag, item.mode);
        }
        // With wal_level replica or above, LockAcquireExtended assigns the transaction id before
        // it asks for a relation's AccessExclusiveLock (LogAccessExclusiveLockPrepare: the standby
        // releases the lock with that transaction), so a waiting ALTER TABLE already has one.
        if (item.kind === 'rel' && item.mode === 'AccessExclusiveLock' && eng.lm.holdCount(s.proc, item.tag, item.mode) === 0)
          currentXid(eng, s);
        const r = eng.lm.acquire(s.proc, item.tag, item.mode, { dontWait: item.kind === 'rel' && !!cls?.lockNowait });
        if (r.status === 'granted') {
          txn.held.push({ tag: item.tag, mode: item.mode, depth });
          continue;
        }
        if (r.status === 'unavailable' && item.kind === 'rel' && cls?.maintenance?.skipLocked) {
          // VACUUM / ANALYZE (SKIP_LOCKED): the table is skipped with a warning, the command succeeds.
          step.notices.push(PG.warning('01000', cls.maintenance.skipLocked));
          continue;
        }
        if (r.status === 'unavailable' && item.kind === 'rel') {
          step.error = PG.relationNowait(item.tag.relation);
          abortTxnState(eng, s, true);
          return 'error';
        }
        const position = item.kind === 'rel' ? cls?.relationPositions?.[item.tag.relation] : undefined;
        return handleAcquire(eng, s, r, item.tag, item.mode, position ? { position } : {});
      }
      case 'row': {
        if (eng.rows.covers(item.tuple, s.name, item.mode)) continue;
        const conflicting = eng.rows.conflicting(item.tuple, item.mode, s.name);
        // The row's heavyweight tuple lock (README.tuplock), taken before a wait or a contested FOR SHARE.
        const ttag: LockTag = {
          type: 'tuple',
          relation: item.tuple.relation,
          oid: item.tuple.oid,
          block: item.tuple.block,
          offset: item.tuple.offset,
        };
        const tmode = tupleLockMode(item.mode);
        if (!conflicting.length) {
          // heap_lock_tuple's FOR SHARE skips the sleep only when the infomask shows no exclusive
          // lock: a multixact whose bits still say exclusive (its FOR UPDATE member rolled back to
          // a savepoint) makes it take the tuple lock first, behind a waiter that holds it, and
          // NOWAIT fails there. A transaction already holding a lock on the row skips the tuple lock.
          if (
            item.mode === 'ForShare' &&
            eng.rows.multiExclusive(item.tuple) &&
            eng.rows.heldMode(item.tuple, s.name) === undefined &&
            !step.tupleLocks.some((t) => sameTag(t, ttag))
          ) {
            const r = eng.lm.acquire(s.proc, ttag, tmode, { dontWait: cls?.waitPolicy === 'nowait' });
            if (r.status === 'unavailable') {
              logRowNowait(eng, s, item.tuple, item.mode, 0);
              step.error = PG.rowNowait(item.tuple.relation);
              abortTxnState(eng, s, true);
              return 'error';
            }
            if (r.status !== 'granted') return handleAcquire(eng, s, r, ttag, tmode);
            step.tupleLocks.push(ttag);
            txn.held.push({ tag: ttag, mode: tmode, depth });
          }
          // Locking or changing a row needs the transaction's xid (it goes into the tuple header).
          eng.rows.add(item.tuple, s.name, item.mode, depth, currentXid(eng, s));
          (step.rowsBeforeWait ??= []).push({ tuple: item.tuple, mode: item.mode });
          // heap_lock_tuple / heap_update let go of the tuple lock as soon as the row is theirs.
          releaseTupleLock(eng, s, item.tuple);
          continue;
        }
        if (cls?.waitPolicy === 'nowait') {
          logRowNowait(eng, s, item.tuple, item.mode, conflicting[0].xid);
          step.error = PG.rowNowait(item.tuple.relation);
          abortTxnState(eng, s, true);
          return 'error';
        }
        // heap_update / heap_delete take the transaction id before they look at the tuple;
        // heap_lock_tuple only when it writes the lock (a waiting FOR UPDATE has no xid yet),
        // or when its sleep on a row whose xmax held an update (not a delete) ends: it then
        // follows the update chain (heap_lock_updated_tuple) with GetCurrentTransactionId(),
        // before it looks at the row again.
        if (cls?.verb === 'update' || cls?.verb === 'delete' || cls?.verb === 'merge') currentXid(eng, s);
        else if (step.sawUpdaters?.some((u) => eng.sessions.get(u.session)?.txn?.vxid !== u.vxid)) currentXid(eng, s);
        else
          for (const h of eng.rows.conflicting(item.tuple, 'Update', s.name)) {
            const vxid = eng.sessions.get(h.session)?.txn?.vxid;
            if (vxid && updatedRow(eng, h.session, item.tuple) && !step.sawUpdaters?.some((u) => u.vxid === vxid))
              (step.sawUpdaters ??= []).push({ session: h.session, vxid });
          }
        // README.tuplock: take the heavyweight tuple lock first (unless already held), then wait for the holder's xid.
        // INSERT … ON CONFLICT: the rows it inserted before this one's conflict have their index
        // entries in (inProcessingOrder), and a transaction id, while it waits for this row.
        if (passed.length) keepPassed(currentXid(eng, s));
        // The newest version of a row a committed update changed, reached by following the chain
        // (heapam_tuple_lock, FIND_LAST_VERSION): its updater is waited for "while rechecking
        // updated tuple" (XLTW_FetchUpdated), a locker by heap_lock_tuple "while locking tuple".
        const epq = step.epq;
        const followed = epq !== undefined && epqCovers(epq, item.tuple.oid) && epq.followed?.includes(epqKey(epq, item.tuple)) === true;
        const changer = conflicting[0].mode === 'Update' || conflicting[0].mode === 'NoKeyUpdate';
        // heapam.c: no tuple lock when we already hold a lock on the row (we are a multixact
        // member or the single locker): "avoids deadlock". Nor when the wait is the chain walk's
        // for an updater: heapam_tuple_lock's SnapshotDirty fetch waits for its xid directly, so
        // every waiter that follows the chain waits for the updater, none for another waiter.
        const alreadyLocker = eng.rows.heldMode(item.tuple, s.name) !== undefined;
        if (!alreadyLocker && !(followed && changer) && !step.tupleLocks.some((t) => sameTag(t, ttag))) {
          const r = eng.lm.acquire(s.proc, ttag, tmode);
          if (r.status === 'granted') {
            step.tupleLocks.push(ttag);
            txn.held.push({ tag: ttag, mode: tmode, depth });
          } else return handleAcquire(eng, s, r, ttag, tmode);
        }
        // A row a data-modifying CTE updates or deletes waits in heap_update / heap_delete too.
        // (ON CONFLICT DO UPDATE and a foreign-key check lock the row first, whatever comes after.)
        const changes =
          (item.mode === 'NoKeyUpdate' || item.mode === 'Update') && !cls?.onConflict && cteChanges(st.sql, item.tuple.relation)
            ? item.deletes
              ? 'delete'
              : 'update'
            : 'lock';
        const verb = cls?.verb === 'update' ? 'update' : cls?.verb === 'delete' ? 'delete' : changes;
        // ON CONFLICT's pre-check waits for a conflicting row's updater or deleter before the
        // row is locked (a locker only is waited for by heap_lock_tuple, "while locking").
        const precheck = cls?.onConflict === true && conflicting.some((h) => h.mode === 'Update' || h.mode === 'NoKeyUpdate');
        const ctx = xactWaitContext(
          precheck ? 'insert' : followed ? (changer ? 'recheck' : 'lock') : item.mode === 'Update' && verb === 'update' ? 'update' : verb,
          item.tuple.block,
          item.tuple.offset,
          item.tuple.relation,
        );
        return waitOnXid(eng, s, conflicting[0].session, conflicting[0].xid, item.tuple, verb, ctx);
      }
      case 'key': {
        const owner = keyOwner(eng, s, item.index, item.key);
        if (item.deferred) {
          // A deferred unique constraint's index insert (UNIQUE_CHECK_PARTIAL) does not wait: it
          // notes the possible duplicate, and the check at COMMIT waits for its inserter.
          if (owner) (step.deferredConflicts ??= []).push(`${item.index}\u0001${item.key}`);
          passed.push(item);
          continue;
        }
        if (!owner) {
          passed.push(item);
          continue;
        }
        // The heap tuple and its earlier index entries are inserted before the unique check
        // waits; ON CONFLICT without a target waits in its pre-check over every unique index
        // (ExecCheckIndexConstraints), before the speculative insertion: no entry is in yet.
        const xid = currentXid(eng, s);
        if (!(cls?.onConflict && !cls.onConflictTarget)) keepPassed(xid);
        // _bt_check_unique waits naming the new heap tuple and the index (XLTW_InsertIndex); ON
        // CONFLICT's pre-check (check_exclusion_or_unique_constraint) names the conflicting
        // tuple and its table.
        // An exclusion constraint's check names the conflicting tuple and its table too
        // (XLTW_RecheckExclusionConstr).
        const pre = cls?.onConflict === true || item.exclusion === true;
        const at = pre ? owner.ctid : item.ctid;
        const [b, o] = (at ?? '').slice(1, -1).split(',').map(Number);
        const rel = pre ? owner.table : item.index;
        const ctx = at && rel ? xactWaitContext(item.exclusion ? 'exclusion' : 'insert', b, o, rel) : undefined;
        return waitOnXid(eng, s, owner.session, owner.xid, undefined, 'insert', ctx);
      }
    }
  }
  return 'ok';
}

/** Which open transaction has inserted this unique key (PostgreSQL's _bt_check_unique then waits for it). */
export function keyOwner(
  eng: ModelState,
  s: Sess,
  index: string,
  key: string,
): { session: string; xid: number; table?: string; ctid?: string } | undefined {
  for (const o of eng.sessions.values()) {
    if (o === s || !o.txn) continue;
    const before = o.step?.wait ? (o.step.keysBeforeWait ?? []) : [];
    const k = [...o.txn.insertedKeys, ...before].find((k) => k.index === index && k.key === key);
    if (k) return { session: o.name, xid: k.xid, ...(k.table ? { table: k.table } : {}), ...(k.ctid ? { ctid: k.ctid } : {}) };
  }
  return undefined;
}

/**
 * Whether `session`'s open transaction updated the committed row version `tuple`: its xmax is an
 * update and its t_ctid points to a newer version (a delete leaves t_ctid pointing at itself,
 * and heap_lock_tuple then has no update chain to follow).
 */
function updatedRow(eng: ModelState, session: string, tuple: TupleId): boolean {
  const ctid = `(${tuple.block},${tuple.offset})`;
  return (eng.sessions.get(session)?.txn?.log ?? []).some(
    (e) =>
      e.kind === 'image' &&
      e.ops.some((op) => op.op === 'update' && !op.target.own && op.target.rel === tuple.oid && op.target.ctid === ctid),
  );
}

/** Waits for another transaction to end (XactLockTableWait): a ShareLock request on its xid. */
export function waitOnXid(
  eng: ModelState,
  s: Sess,
  holder: string,
  xid: number,
  tuple: TupleId | undefined,
  verb: 'update' | 'delete' | 'lock' | 'insert',
  context?: string,
): 'wait' | 'error' {
  let tag: LockTag = { type: 'transactionid', xid: xid as Xid };
  let r = eng.lm.acquire(s.proc, tag, 'ShareLock');
  if (r.status === 'granted') {
    eng.lm.release(s.proc, tag, 'ShareLock');
    // A subtransaction that committed into its parent (RELEASE SAVEPOINT) no longer holds its
    // xid lock but is still in progress: XactLockTableWait then waits for the topmost transaction.
    const top = eng.sessions.get(holder)?.txn?.xid;
    if (top === null || top === undefined || top === xid) return 'error'; // the holder's xid lock is held while it is open
    tag = { type: 'transactionid', xid: top as Xid };
    r = eng.lm.acquire(s.proc, tag, 'ShareLock');
    if (r.status === 'granted') {
      eng.lm.release(s.proc, tag, 'ShareLock');
      return 'error';
    }
  }
  return handleAcquire(eng, s, r, tag, 'ShareLock', {
    tuple,
    holder,
    context: context ?? (tuple ? xactWaitContext(verb, tuple.block, tuple.offset, tuple.relation) : undefined),
  });
}

/** A lock request that was not granted: the step waits (timers start) or, on an early deadlock, fails. */
export function handleAcquire(
  eng: ModelState,
  s: Sess,
  r: ReturnType<LockManager['acquire']>,
  tag: LockTag,
  mode: LockMode,
  extra: Partial<Wait> = {},
): 'wait' | 'error' {
  const step = s.step!;
  if (r.status === 'deadlock') {
    // ProcSleep's early deadlock check: the request would deadlock at once.
    deadlockVictim(eng, s, r.report, extra.context, extra.position);
    return 'error';
  }
  step.wait = { tag, mode, sinceMs: eng.clock, ...extra };
  const reason = waitReason(eng, s);
  event(eng, { type: 'wait', atMs: eng.clock, session: s.name, reason: reason! });
  eng.timers.set(s.name, 'deadlock_timeout', eng.clock + s.timeouts.deadlock);
  if (s.timeouts.lock > 0) eng.timers.set(s.name, 'lock_timeout', eng.clock + s.timeouts.lock);
  return 'wait';
}

/**
 * Lets go of the relation locks this statement took (from `from` in the transaction's list) that
 * `plan` does not have: locks its dry run took further on than where it waits.
 */
export function releaseRelationLocksBeyond(eng: ModelState, s: Sess, from: number, plan: PlanItem[]): void {
  const txn = s.txn!;
  for (let i = txn.held.length - 1; i >= from; i--) {
    const h = txn.held[i];
    if (h.tag.type !== 'relation') continue;
    if (plan.some((p) => p.kind === 'rel' && sameTag(p.tag, h.tag) && p.mode === h.mode)) continue;
    if (txn.held.some((o, j) => j !== i && sameTag(o.tag, h.tag) && o.mode === h.mode)) continue;
    txn.held.splice(i, 1);
    queueResumes(eng, eng.lm.release(s.proc, h.tag, h.mode));
  }
}

/**
 * A wait that ended in an error an EXCEPTION block caught (catchInBlock): the block's
 * subtransaction rolled back and let go of what it had locked (AbortSubTransaction releases its
 * heavyweight locks; its row locks carry an aborted xid). The statement's plan after the handler
 * holds what the rest of the statement takes; what the statement had taken before that the plan
 * no longer has was the block's.
 */
function releaseCaught(eng: ModelState, s: Sess, plan: PlanItem[]): void {
  const step = s.step!;
  const txn = s.txn!;
  const from = step.caught!.heldFrom;
  step.caught = undefined;
  for (let i = txn.held.length - 1; i >= from; i--) {
    const h = txn.held[i];
    if (h.tag.type !== 'relation' && h.tag.type !== 'advisory') continue;
    if (plan.some((p) => (p.kind === 'rel' || p.kind === 'adv') && sameTag(p.tag, h.tag) && p.mode === h.mode)) continue;
    txn.held.splice(i, 1);
    queueResumes(eng, eng.lm.release(s.proc, h.tag, h.mode));
  }
  const rows = step.rowsBeforeWait ?? [];
  const kept = rows.filter((r) =>
    plan.some(
      (p) => p.kind === 'row' && p.tuple.oid === r.tuple.oid && p.tuple.block === r.tuple.block && p.tuple.offset === r.tuple.offset,
    ),
  );
  const gone = new Set<string>();
  for (const r of rows)
    if (!kept.includes(r)) {
      eng.rows.releaseTuple(r.tuple, s.name);
      gone.add(`${r.tuple.oid}:${r.tuple.block}:${r.tuple.offset}`);
    }
  step.rowsBeforeWait = kept.length ? kept : undefined;
  // Whoever waits for one of those rows waited for the block's subtransaction id, which is no
  // longer in progress: XactLockTableWait returns and the waiter goes on (its wait ends here, the
  // lock model's xid lock being the transaction's).
  for (const o of eng.sessions.values()) {
    const w = o.step?.wait;
    if (!w || w.holder !== s.name || w.tag.type !== 'transactionid' || !w.tuple) continue;
    if (!gone.has(`${w.tuple.oid}:${w.tuple.block}:${w.tuple.offset}`)) continue;
    if (eng.lm.waitingFor(o.proc)) queueResumes(eng, eng.lm.cancelWait(o.proc));
    w.ended = true;
    queueResumes(eng, [o.proc]);
  }
}

/** The error the deadlock victim gets: 40P01 with DeadLockReport's DETAIL, and the cycle. */
export function deadlockError(
  eng: ModelState,
  s: Sess,
  report: Parameters<typeof deadlockDetail>[0],
  context?: string,
  position?: number,
): { error: PgMessage; cycle: string[] } {
  const shown = { edges: report.edges.map((e) => ({ ...e, tag: presentTag(eng, e.tag) })) };
  const detail = deadlockDetail(shown, (p) => sess(eng, p).pid, DATABASE_OID);
  return {
    error: { ...PG.deadlock(detail, context), ...(position ? { position } : {}) },
    cycle: report.edges.map((e) => e.waiter as string),
  };
}

/** The session is the deadlock victim: 40P01 with DeadLockReport's DETAIL, logged, and its wait ends. */
export function deadlockVictim(
  eng: ModelState,
  s: Sess,
  report: Parameters<typeof deadlockDetail>[0],
  context?: string,
  position?: number,
): void {
  const step = s.step!;
  const { error, cycle } = deadlockError(eng, s, report, context, position);
  const detail = error.detail!;
  step.error = error;
  eng.lastDeadlock = { cycle, victim: s.name, atMs: eng.clock };
  event(eng, { type: 'deadlock', atMs: eng.clock, victim: s.name, cycle });
  // DeadLockReport's errdetail_log adds each process's query to the DETAIL the client gets.
  const queries = cycle.map((n) => `Process ${sess(eng, n).pid}: ${sess(eng, n).query}`);
  eng.loggedErrors.add(step.error);
  eng.serverLog.push(...messageEntry(eng.clock, s.pid, { ...step.error, detail: [detail, ...queries].join('\n') }, s.query));
  step.wait = undefined;
  failWaitingStep(eng, s);
}

/** The step of a session that was waiting (or about to) fails with step.error. */
export function failWaitingStep(eng: ModelState, s: Sess): void {
  cancelTimers(eng, s, ['deadlock_timeout', 'lock_timeout', 'statement_timeout', 'pg_sleep']);
  queueResumes(eng, cancelWaitIfAny(eng, s));
  s.step!.wait = undefined;
  s.step!.sleepUntil = undefined;
  abortTxnState(eng, s, true);
}

/** Takes the session off the wait queue it is on, if any; returns the sessions that wake. */
export function cancelWaitIfAny(eng: ModelState, s: Sess): ProcId[] {
  return eng.lm.waitingFor(s.proc) ? eng.lm.cancelWait(s.proc) : [];
}

/** Lets go of the statement's heavyweight tuple lock on `t` (the row is the statement's now). */
export function releaseTupleLock(eng: ModelState, s: Sess, t: TupleId): void {
  const step = s.step!;
  const txn = s.txn!;
  const i = step.tupleLocks.findIndex(
    (tag) => tag.type === 'tuple' && tag.oid === t.oid && tag.block === t.block && tag.offset === t.offset,
  );
  if (i < 0) return;
  const [tag] = step.tupleLocks.splice(i, 1);
  const h = txn.held.findIndex((x) => sameTag(x.tag, tag));
  if (h >= 0) {
    const [held] = txn.held.splice(h, 1);
    queueResumes(eng, eng.lm.release(s.proc, held.tag, held.mode));
  }
}

/**
 * A statement re-run after a wake-up keeps only the tuple lock of the row it has to wait for
 * next. heap_lock_tuple holds the heavyweight tuple lock only while it works on that tuple
 * version: when it wakes and finds the version updated or deleted, it lets go before it follows
 * the update chain or moves on (README.tuplock). Kept, a lock on a dead version would block
 * whoever queues on it, or on a reused line pointer, while this statement waits for a later row.
 */
export function releaseStaleTupleLocks(eng: ModelState, s: Sess, plan: PlanItem[]): void {
  const step = s.step!;
  if (!step.tupleLocks.length) return;
  const next = plan.find(
    (p): p is Extract<PlanItem, { kind: 'row' }> =>
      p.kind === 'row' && !eng.rows.covers(p.tuple, s.name, p.mode) && eng.rows.conflicting(p.tuple, p.mode, s.name).length > 0,
  );
  for (const tag of [...step.tupleLocks]) {
    if (tag.type !== 'tuple') continue;
    if (next && next.tuple.oid === tag.oid && next.tuple.block === tag.block && next.tuple.offset === tag.offset) continue;
    releaseTupleLock(eng, s, { oid: tag.oid, relation: tag.relation, block: tag.block, offset: tag.offset });
  }
}

/** Lets go of every tuple lock the statement still holds (it completed). */
export function releaseTupleLocks(eng: ModelState, s: Sess): void {
  const step = s.step!;
  const txn = s.txn!;
  for (const tag of step.tupleLocks) {
    const i = txn.held.findIndex((h) => sameTag(h.tag, tag));
    if (i >= 0) {
      const [h] = txn.held.splice(i, 1);
      queueResumes(eng, eng.lm.release(s.proc, h.tag, h.mode));
    }
  }
  step.tupleLocks = [];
}

/**
 * A statement failed: the session-level advisory locks it took before the error stay held, as
 * in PostgreSQL (those PGlite still held after the failed run). One that an earlier run of the
 * statement took before it waited is already held in the model; one another session holds is
 * left out (PostgreSQL would have waited for it before failing: a limit in docs/engine.md).
 */
export function keepSessionAdvisory(eng: ModelState, s: Sess, survivors: DryRun['sessionAdvisory']): void {
  if (!survivors) return;
  const same = (tag: LockTag, mode: LockMode) => (x: { tag: LockTag; mode: LockMode }) => sameTag(x.tag, tag) && x.mode === mode;
  const taken: { tag: LockTag; mode: LockMode }[] = [];
  const kept = survivors.filter((a) => {
    const tag: LockTag = { type: 'advisory', key1: a.key1, key2: a.key2, field4: a.field4 };
    if (s.sessionAdvisory.some(same(tag, a.mode))) return true;
    const xactHolds = s.txn?.held.filter(same(tag, a.mode)).length ?? 0;
    if (eng.lm.holdCount(s.proc, tag, a.mode) > xactHolds || eng.lm.acquire(s.proc, tag, a.mode, { dontWait: true }).status === 'granted') {
      taken.push({ tag, mode: a.mode });
      return true;
    }
    return false;
  });
  setSessionAdvisory(eng, s, kept, taken);
}

/** The session-level advisory locks PGlite reports after a statement become the session's set; unlocked ones wake waiters. */
export function setSessionAdvisory(
  eng: ModelState,
  s: Sess,
  now: { key1: number; key2: number; field4: 1 | 2; mode: LockMode; count: number }[],
  acquiredByPlan: { tag: LockTag; mode: LockMode }[],
): void {
  // The lock table holds a lock once per session however often it was taken (PostgreSQL's
  // PROCLOCK); the count (the local lock's nLocks) says how many unlocks release it.
  const next = now.map((a) => ({
    tag: { type: 'advisory' as const, key1: a.key1, key2: a.key2, field4: a.field4 },
    mode: a.mode,
    count: a.count,
  }));
  const same = (a: { tag: LockTag; mode: LockMode }) => (b: { tag: LockTag; mode: LockMode }) => sameTag(a.tag, b.tag) && a.mode === b.mode;
  for (const old of s.sessionAdvisory) if (!next.some(same(old))) queueResumes(eng, eng.lm.release(s.proc, old.tag, old.mode));
  // A session-level lock on a key the transaction already held: pg_locks showed no new row,
  // so the plan took nothing; the session now holds it a second time.
  for (const n of next) if (!s.sessionAdvisory.some(same(n)) && !acquiredByPlan.some(same(n))) eng.lm.acquire(s.proc, n.tag, n.mode);
  s.sessionAdvisory = next;
}

/** The session's awaited lock was granted: it joins what the transaction holds (an xid wait only slept on it), the wait ends. */
export function grantWait(eng: ModelState, s: Sess): Wait {
  const step = s.step!;
  const w = step.wait!;
  step.wait = undefined;
  cancelTimers(eng, s, ['deadlock_timeout', 'lock_timeout']);
  const txn = s.txn!;
  event(eng, { type: 'grant', atMs: eng.clock, session: s.name, description: `${w.mode} on ${describe(eng, w.tag)}` });
  if (w.checked) logLockWait(eng, s, w, 'acquired');
  if (w.tag.type === 'transactionid') {
    // XactLockTableWait takes the ShareLock only to sleep; it lets go at once.
    if (!w.ended) eng.lm.release(s.proc, w.tag, 'ShareLock');
    // Under REPEATABLE READ the re-run imports the transaction's snapshot, so PostgreSQL itself
    // reports 40001 ("concurrent update" / "concurrent delete") for a row changed meanwhile.
  } else if (w.tag.type !== 'tuple') {
    txn.held.push({ tag: w.tag, mode: w.mode, depth: txn.savepoints.length });
  } else {
    step.tupleLocks.push(w.tag);
    txn.held.push({ tag: w.tag, mode: w.mode, depth: txn.savepoints.length });
  }
  return w;
}

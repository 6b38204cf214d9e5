/** Executing one statement of a step: checks, transaction control dispatch, the dry run and the plan walk. */
import type { EngineContext } from './context';
import {
  excludeTuples,
  lockingProbeOf,
  ORDER_COLUMN,
  restrictCte,
  restrictMerge,
  restrictToTuples,
  rewriteCte,
  scanRowsSql,
  type SeenRows,
  tagOrder,
  updatedColumns,
} from './epq';
import { epqCovers, epqKey, epqRow } from './model/util';
import { mainQueryOf } from './mainQuery';
import {
  columnsQuery,
  otherRelations,
  replaceBodies,
  rowsQuery,
  shapeQuery,
  subqueryBodies,
  tableRowsQuery,
  valuesBody,
  valuesTable,
} from './initPlans';
import { restrictSublink, rewriteSublink } from './sublink';
import { EngineInternalError } from './errors';
import {
  keepSessionAdvisory,
  keyOwner,
  releaseRelationLocksBeyond,
  releaseTupleLocks,
  setSessionAdvisory,
  ssiError,
  waitOnXid,
  walkPlan,
} from './model/acquire';
import type { DryRun, PlanItem } from './model/facts';
import type { RowLockMode } from './model/locks/types';
import { conflicts } from './model/locks/modes';
import { PG, xactWaitContext } from './model/messages';
import { hasConflicts, hasRowConflicts, HEAVYWEIGHT_ITEMS } from './model/plan';
import { SsiFailure, type SsiWrite } from './model/ssi';
import { approximate, noteApproximations } from './model/approximate';
import { abortTxnState, beginTxn, currentXid } from './model/txn';
import {
  callsExceptionFunction,
  callsQueryingFunction,
  callsWaitPolicyFunction,
  keyBlocker,
  writesContendedExclusion,
  ownSequences,
  restoreSequences,
  sequenceStates,
  stateSequence,
  statesOf,
  analyzePrepared,
  hasUserFunctions,
} from './pg/catalog';
import { calledFunctionNames, doBlockWithException, modifyingCteCount } from './approximations';
import { dryRun } from './pg/dryRun';
import { afterSet, afterStatementGucs } from './pg/gucs';
import { arbiterBlocker, arbiterKeyOwner, foreignKeyContext, noteLockOrder, referencingRowsCheck } from './pg/probes';
import { advisoryWaitContext, functionWaitContext, triggerWriteContext } from './pg/functionContext';
import { newestOfSnapshotRows, rowChangedByCommit, rowsDeletedSince } from './pg/rowChanged';
import { exportStatementSnapshot, gucSql, relSql } from './pg/replay';
import { insertMarkSql, markCount, noticesBeforeMark, ROW_MARK_FUNCTIONS, waitMarkSql } from './pg/inject';
import { type TupleId, tupleKey } from './model/rowlocks';
import { isSnapshotConflict, type StatementSnapshot, usesStatementSnapshot } from './pg/stmtSnapshot';
import { indexReached, readsHeapPage, uniqueIndexPage } from './pg/ssiProbe';
import { bindPrepared, type Classified, type ParsedStatement, parseStatements } from './sql';
import { cancelTimers, event, type Sess } from './state';
import { execTxnControl, setConstraints } from './transaction';
import type { IsolationLevel, PgMessage, RawResult } from './types';

/** Executes one statement; 'ok' moves to the next one. */
export async function execStatement(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait' | 'sleep'> {
  const step = s.step!;
  const cls = st.cls;
  if (
    s.txn?.aborted &&
    !(cls.kind === 'txn' && (cls.ctl.kind === 'commit' || cls.ctl.kind === 'rollback' || cls.ctl.kind === 'rollback-to'))
  ) {
    step.error = PG.inFailedTransaction();
    return 'error';
  }
  noteApproximations(eng, s, st);
  // An error raised while the statement waits may be caught by its EXCEPTION block (catchInBlock).
  // 'direct': a DO block or a called function has one; 'trigger': a user function with one
  // exists, which a trigger the statement fires may be.
  step.catches =
    cls.kind !== 'dml'
      ? undefined
      : doBlockWithException(st.sql) || (await callsExceptionFunction(eng, st.sql))
        ? 'direct'
        : eng.exceptionFunctions?.size
          ? 'trigger'
          : undefined;
  step.injected = undefined;
  step.caught = undefined;
  step.sentBeforeWait = undefined;
  step.heldFrom = s.txn?.held.length ?? 0;
  if (cls.kind === 'txn') return execTxnControl(eng, s, cls.ctl);
  if (cls.kind === 'prepare' || cls.kind === 'execute' || cls.kind === 'deallocate') return execPrepared(eng, s, cls);
  const refusedInBlock = cls.kind === 'unsupported' ? cls.refusedInBlock : cls.kind === 'dml' ? cls.maintenance?.refusedInBlock : undefined;
  if (refusedInBlock && (s.txn || step.statements.length > 1)) {
    // PreventInTransactionBlock: a query string of several statements is an implicit block too.
    step.error = PG.refusedInBlock(refusedInBlock);
    if (s.txn) abortTxnState(eng, s, true);
    return 'error';
  }
  if (cls.kind === 'unsupported') {
    step.error = PG.unsupported(cls.what);
    if (s.txn) abortTxnState(eng, s, true);
    return 'error';
  }
  // RequireTransactionBlock: a lone LOCK TABLE outside a block (a query string of several
  // statements is an implicit block, where it may run).
  if (cls.kind === 'dml' && cls.verb === 'lock' && !cls.maintenance && !s.txn && step.statements.length === 1) {
    step.error = PG.savepointOutsideBlock('LOCK TABLE');
    return 'error';
  }
  // Any other statement runs inside a transaction: open an implicit block if none is open.
  if (!s.txn) {
    beginTxn(eng, s, true);
  }
  // Every statement but SET, SHOW and LOCK TABLE takes a snapshot (PlannedStmtRequiresSnapshot).
  if (!(cls.kind === 'set' || cls.kind === 'show' || (cls.kind === 'dml' && cls.verb === 'lock'))) s.txn!.snapshotTaken = true;
  if (cls.kind === 'sleep') {
    step.sleepUntil = eng.clock + Math.max(0, cls.seconds * 1000);
    eng.timers.set(s.name, 'pg_sleep', step.sleepUntil);
    startStatementTimer(eng, s);
    return 'sleep';
  }
  // SET SESSION CHARACTERISTICS is a SET of default_transaction_isolation / _read_only: PGlite
  // runs it and the session replays it like any other SET.
  if (cls.kind === 'set' && cls.setTransaction && cls.name === 'transaction') return execSetTransaction(eng, s, cls);
  const memoKey = setMemoKey(eng, s, st);
  const known = memoKey !== undefined ? eng.ex.setMemo.get(memoKey) : undefined;
  if (known) {
    await afterSet(eng, s, st);
    step.results.push(...known.results);
    step.notices.push(...known.notices);
    return 'ok';
  }
  startStatementTimer(eng, s);
  const results = step.results.length;
  const notices = step.notices.length;
  const outcome = await execDml(eng, s, st);
  if (outcome === 'ok' && cls.kind === 'dml' && cls.constraintsSet) {
    // Its command tag goes out once the checks IMMEDIATE runs have passed.
    const tag = step.results.pop();
    const checked = await setConstraints(eng, s, cls.constraintsSet);
    if (checked === 'ok' && tag) step.results.push(tag);
    return checked;
  }
  if (memoKey !== undefined && outcome === 'ok' && !step.error) {
    if (eng.ex.setMemo.size >= SET_MEMO_SIZE) eng.ex.setMemo.clear();
    eng.ex.setMemo.set(memoKey, { results: step.results.slice(results), notices: step.notices.slice(notices) });
  }
  return outcome;
}

/** Settings whose SET touches nothing but their own value: no catalog lookup, no lock, no snapshot. */
const PLAIN_SETTINGS = new Set([
  'deadlock_timeout',
  'lock_timeout',
  'statement_timeout',
  'idle_in_transaction_session_timeout',
  'log_lock_waits',
  'log_lock_failures',
  'default_transaction_isolation',
  'application_name',
  'client_min_messages',
]);
/** Distinct SET statements remembered per executor before the memo starts over. */
const SET_MEMO_SIZE = 512;

/**
 * The memo key of a lone `SET name = value` of a plain setting, run as its own implicit READ
 * COMMITTED transaction: its answer (SET, and any notice) depends only on its text and the
 * session's settings before it, and every explored order and every undo runs the same session
 * setups again. undefined for every other statement, which gets its dry run.
 */
function setMemoKey(eng: EngineContext, s: Sess, st: ParsedStatement): string | undefined {
  const cls = st.cls;
  const t = s.txn;
  if (cls.kind !== 'set' || cls.local || cls.resetAll || cls.setTransaction || !cls.name || !PLAIN_SETTINGS.has(cls.name)) return undefined;
  if (!t?.implicit || t.log.length || t.isolation !== 'read committed' || s.step!.statements.length !== 1) return undefined;
  return `${gucSql(eng, s)}\0${st.sql}`;
}

/**
 * PREPARE / EXECUTE / DEALLOCATE on the session's own namespace (prepare.c). EXECUTE runs the
 * prepared query with its arguments bound in place of the parameters, as the statement itself,
 * so it locks, waits and re-checks as that statement does and answers with its command tag.
 */
export async function execPrepared(
  eng: EngineContext,
  s: Sess,
  cls: Extract<Classified, { kind: 'prepare' | 'execute' | 'deallocate' }>,
): Promise<'ok' | 'error' | 'wait' | 'sleep'> {
  const step = s.step!;
  const fail = (error: PgMessage): 'error' => {
    step.error = error;
    if (s.txn) abortTxnState(eng, s, true);
    return 'error';
  };
  switch (cls.kind) {
    case 'prepare': {
      if (s.prepared.has(cls.name)) return fail(PG.preparedExists(cls.name));
      // Parse analysis happens at PREPARE: PostgreSQL reports a missing table or column there.
      const analyzed = await analyzePrepared(eng, cls.prepared);
      if ('error' in analyzed) return fail(analyzed.error);
      s.prepared.set(cls.name, {
        text: cls.prepared,
        queryString: step.sql,
        atMs: eng.clock,
        ...analyzed,
        customPlans: 0,
        genericPlans: 0,
      });
      step.results.push({ command: 'PREPARE' });
      return 'ok';
    }
    case 'execute': {
      const prepared = s.prepared.get(cls.name);
      if (!prepared) return fail(PG.noSuchPrepared(cls.name));
      const p = prepared.text;
      if (cls.args.length !== p.paramCount) return fail(PG.wrongParamCount(cls.name, p.paramCount, cls.args.length));
      // GetCachedPlan: without parameters the generic plan; with them a custom plan for the first
      // five executions, then (choose_custom_plan's cost comparison, which a simple statement's
      // generic plan wins) the generic one.
      if (p.paramCount > 0 && prepared.customPlans < 5) prepared.customPlans++;
      else prepared.genericPlans++;
      const bound = parseStatements(bindPrepared(p, cls.args))[0];
      // A wait re-runs the statement at step.idx: from now on that is the bound statement.
      step.statements[step.idx] = bound;
      return execStatement(eng, s, bound);
    }
    case 'deallocate':
      if (cls.name === null) s.prepared.clear();
      else if (!s.prepared.delete(cls.name)) return fail(PG.noSuchPrepared(cls.name));
      step.results.push({ command: cls.name === null ? 'DEALLOCATE ALL' : 'DEALLOCATE' });
      return 'ok';
  }
}

/** (Re)starts statement_timeout for the statement about to run. */
export function startStatementTimer(eng: EngineContext, s: Sess): void {
  cancelTimers(eng, s, ['statement_timeout']);
  if (s.timeouts.statement > 0) eng.timers.set(s.name, 'statement_timeout', eng.clock + s.timeouts.statement);
}

/** SET TRANSACTION: the isolation level and READ ONLY / READ WRITE of the open transaction. */
export function execSetTransaction(eng: EngineContext, s: Sess, cls: Extract<Classified, { kind: 'set' }>): 'ok' | 'error' {
  const step = s.step!;
  const txn = s.txn!;
  // check_transaction_isolation / check_transaction_read_only: a change of isolation level, or
  // back to READ WRITE, must come before the transaction's first snapshot and outside a
  // subtransaction; setting the current level again, or READ ONLY, is allowed at any time.
  const tooLate = txn.snapshotTaken === true;
  const inSub = txn.savepoints.length > 0;
  const error =
    cls.isolation && cls.isolation !== txn.isolation && (tooLate || inSub)
      ? tooLate
        ? PG.setTransactionTooLate()
        : PG.setIsolationInSubtransaction()
      : cls.readOnly === false && txn.readOnly && (tooLate || inSub)
        ? inSub
          ? PG.readWriteInSubtransaction()
          : PG.readWriteTooLate()
        : undefined;
  if (error) {
    step.error = error;
    abortTxnState(eng, s, true);
    return 'error';
  }
  if (cls.isolation) txn.isolation = cls.isolation as IsolationLevel;
  if (cls.readOnly !== undefined) txn.readOnly = cls.readOnly;
  step.results.push({ command: 'SET' });
  return 'ok';
}

/** Runs a statement through a dry run and walks its plan: it completes, waits or fails. */
export async function execDml(eng: EngineContext, s: Sess, original: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
  const step = s.step!;
  if (step.cancelled) {
    // The cancel request arrived while this statement executed: it fails and aborts the
    // (sub)transaction, as ProcessInterrupts does; later statements get 25P02 until ROLLBACK.
    step.error = PG.userCancel();
    abortTxnState(eng, s, true);
    return 'error';
  }
  // INSERT … ON CONFLICT under READ COMMITTED starts over instead (ExecOnConflictUpdate): the
  // conflicting row is gone from that partition.
  const retries =
    s.txn?.isolation === 'read committed' &&
    original.cls.kind === 'dml' &&
    original.cls.verb === 'insert' &&
    original.cls.onConflict === true;
  if (step.movedAway && !retries) {
    const context = step.movedAway.context;
    step.movedAway = undefined;
    step.error = {
      ...(s.txn?.isolation === 'read committed' ? PG.movedToOtherPartition() : PG.concurrentUpdate()),
      ...(context ? { context } : {}),
    };
    abortTxnState(eng, s, true);
    return 'error';
  }
  step.movedAway = undefined;
  // The statement a re-run restricts: the original, or it with its subqueries' rows in place
  // once a re-run took a new snapshot (kept for the re-runs after further waits).
  let base = step.epqBase ?? original;
  let st = epqStatement(eng, s, base);
  const seqs = await sequenceStates(eng);
  let dry: DryRun;
  try {
    const kept = usesStatementSnapshot(s.txn!.isolation, step.stmtSnapshot) ? step.stmtSnapshot : undefined;
    // The rows were formed before the row wait: the re-run under the snapshot forms the same
    // ones, with the same sequence values, and consumes nothing more.
    // So were the rows of an INSERT that waited on a duplicate key, at any isolation level.
    // (Only the sequences whose values were formed: the others are taken afresh, see below.)
    // A wait inside a trigger or a foreign-key check came after the statement wrote its rows:
    // they stay as formed even when the re-run needs a new snapshot (a row this transaction
    // locked earlier has a newer version it cannot see).
    const beyond = s.txn!.isolation === 'read committed' && step.stmtSnapshot?.formedBeyondRecheck ? step.stmtSnapshot.formed : undefined;
    const formed = kept?.formed ?? beyond ?? step.keyFormed;
    if (formed) await restoreSequences(eng, formed);
    dry = await dryRun(eng, s, st);
    if (formed) await restoreSequences(eng, statesOf(seqs, formed));
    // A row deleted after the snapshot is passed over, not followed: the scan goes on under the
    // same snapshot without it, and only a row updated meanwhile needs the new one.
    while (kept && isSnapshotConflict(dry.raw.error) && (await deletedSinceSnapshot(eng, s, kept))) {
      st = epqStatement(eng, s, base);
      if (formed) await restoreSequences(eng, formed);
      dry = await dryRun(eng, s, st);
      if (formed) await restoreSequences(eng, statesOf(seqs, formed));
    }
    if (kept && isSnapshotConflict(dry.raw.error)) {
      // A row the statement locks changed after its snapshot: READ COMMITTED follows it, and
      // EvalPlanQual forms its new version again (more sequence values, as in PostgreSQL). When
      // the wait was a trigger's, EvalPlanQual re-forms that trigger's row, not the statement's.
      await noteUpdatedSinceSnapshot(eng, s, original, kept);
      base = step.epqBase = await freezeSubqueries(eng, s, original);
      kept.fresh = true;
      st = epqStatement(eng, s, base);
      const same = kept.formedBeyondRecheck ? kept.formed : undefined;
      if (same) await restoreSequences(eng, same);
      dry = await dryRun(eng, s, st);
      if (same) await restoreSequences(eng, statesOf(seqs, same));
      // PostgreSQL's recheck walks the waited row's chain into the statement's own versions and
      // compares the last one's cmin with its command id (heapam_tuple_lock, TM_SelfModified);
      // the re-run with a new snapshot meets the version the statement updated itself instead.
      if (dry.remodified) approximate(eng, s, 'self-modified-recheck');
      // The check that waited looks again with the snapshot it started with, where the re-run sees
      // rows committed during the wait.
      if (step.fkCheckWait) approximate(eng, s, 'fk-check-snapshot');
      // EvalPlanQual forms only the waited row again; the re-run forms every row, drawing anew.
      if (step.rowsBeforeWait?.length && calledFunctionNames(original.sql).includes('nextval')) approximate(eng, s, 'sequence-recheck');
    }
    // Formed with a new snapshot, the rows of the main query are read again under the kept one.
    const reads = dry.raw.error ? undefined : await mainQueryReads(eng, s, original);
    if (reads) dry.raw.results = reads;
    // A function's own queries in a re-run under the kept snapshot read under it too.
    if (kept && !kept.fresh && (await callsQueryingFunction(eng, calledFunctionNames(original.sql))))
      approximate(eng, s, 'function-snapshot');
  } catch (e) {
    if (!(e instanceof EngineInternalError)) throw e;
    step.error = PG.engine(e.message);
    event(eng, { type: 'engine-error', atMs: eng.clock, session: s.name, message: e.message });
    // An error before execution aborts the block like any other error.
    abortTxnState(eng, s, true);
    return 'error';
  }
  // A transaction snapshot after a row wait: a row the holder updated or deleted fails the lock.
  const waited = step.xactRowWait;
  step.xactRowWait = undefined;
  // The row changed after the transaction's snapshot, but a locker of the version it waited for
  // is still running in a conflicting mode: heap_lock_tuple waits for it (the multixact) first.
  if (waited?.mode && (isConcurrentChange(dry.raw.error) || (await rowChangedByCommit(eng, waited.tuple)))) {
    const locker = eng.rows.carriedConflicting(waited.tuple, waited.mode, s.name)[0];
    if (locker && st.cls.kind === 'dml') {
      const verb = st.cls.verb === 'update' ? 'update' : st.cls.verb === 'delete' ? 'delete' : 'lock';
      const t = waited.tuple;
      const outcome = waitOnXid(eng, s, locker.session, locker.xid, t, verb, xactWaitContext(verb, t.block, t.offset, t.relation));
      if (outcome === 'wait') step.xactRowWait = waited;
      return outcome;
    }
  }
  if (waited && dry.raw.error?.sqlstate !== '40001' && (await rowChangedByCommit(eng, waited.tuple))) {
    step.error = PG.concurrentUpdate(waited.context);
    keepSessionAdvisory(eng, s, dry.sessionAdvisory);
    abortTxnState(eng, s, true);
    return 'error';
  }
  if (dry.raw.error) {
    // A duplicate key whose committed owner is being deleted by an open transaction: PostgreSQL waits for it.
    const wait = dry.raw.error.sqlstate === '23505' ? await keyBlocker(eng, s, dry.raw.error) : undefined;
    if (wait) {
      currentXid(eng, s);
      // The row was formed (its BEFORE triggers ran) before the unique check waits: what the run
      // raised up to the duplicate key reached the client before the wait.
      sendBeforeWait(s, dry.raw.notices);
      const outcome = waitOnXid(eng, s, wait.session, wait.xid, undefined, 'insert');
      // The new row, with its sequence values, is formed before the unique check waits; after the
      // wait PostgreSQL inserts that same row: the values stay taken, and the re-run forms them again.
      if (outcome === 'wait') await formedBeforeKeyWait(eng, s, st, seqs);
      return outcome;
    }
    // SERIALIZABLE: before reporting a duplicate key, _bt_check_unique checks the index page for
    // rw-conflicts in, so that a serialization failure is not masked by the unique violation.
    // A doomed transaction's write fails first, in heap_insert's CheckForSerializableConflictIn.
    if (dry.raw.error.sqlstate === '23505' && s.txn?.sx?.doomed && step.ssiHeapBeforeWait) {
      step.ssiHeapBeforeWait = undefined;
      return ssiError(eng, s, new SsiFailure('Canceled on identification as a pivot, during conflict in checking.'), dry.raw.error.context);
    }
    step.ssiHeapBeforeWait = undefined;
    if (dry.raw.error.sqlstate === '23505' && s.txn?.sx && !s.txn.sx.doomed) {
      const page = await uniqueIndexPage(eng, /unique constraint "((?:[^"]|"")+)"/.exec(dry.raw.error.message)?.[1]?.replace(/""/g, '"'));
      if (page)
        try {
          eng.ssi.write(s.txn.sx, [page], s.txn.savepoints.length, s.txn.xid);
        } catch (e) {
          // Raised where the duplicate key was found: inside the function that inserted, if one did.
          return ssiError(eng, s, e, dry.raw.error.context);
        }
    }
    // SERIALIZABLE: a foreign-key trigger fails at the end of the statement, after the scan read
    // its rows and heap_insert / heap_update / heap_delete checked each write for rw-conflicts
    // in: a serialization failure there comes first.
    const sx = s.txn?.sx;
    if (
      (dry.raw.error.sqlstate === '23503' || dry.raw.error.sqlstate === '23001') &&
      sx &&
      !step.ssiBeforeWait &&
      st.cls.kind === 'dml' &&
      (st.cls.verb === 'delete' || st.cls.verb === 'update' || st.cls.verb === 'insert')
    ) {
      const probe = await triggerlessRun(eng, s, st);
      if (!probe.raw.error && (await ssiReads(eng, s, st, probe)) === 'error') return 'error';
      if (!probe.raw.error && probe.ssi?.writes.length) {
        if (probe.assignsXid) currentXid(eng, s);
        try {
          eng.ssi.write(sx, probe.ssi.writes, s.txn!.savepoints.length, s.txn!.xid);
        } catch (e) {
          return ssiError(eng, s, e);
        }
      }
    }
    // A foreign-key trigger fails at the end of the statement, after the statement has locked
    // its rows: a row another session holds is waited for first (PostgreSQL's order).
    if (
      (dry.raw.error.sqlstate === '23503' || dry.raw.error.sqlstate === '23001') &&
      s.txn &&
      !s.txn.sx &&
      st.cls.kind === 'dml' &&
      st.cls.waitPolicy !== 'skip' &&
      (st.cls.verb === 'delete' || st.cls.verb === 'update' || st.cls.verb === 'insert')
    ) {
      const first = await lockBeforeTriggers(eng, s, st, dry.raw.error);
      // After the wait the whole statement reads with a new snapshot, not only its check.
      if (first === 'wait') approximate(eng, s, 'fk-wait-rerun');
      if (first !== 'ok') return first;
    }
    // A view's WITH CHECK OPTION is checked after the row is written, so after its lock.
    if (dry.raw.error.sqlstate === '44000' && s.txn && st.cls.kind === 'dml' && st.cls.waitPolicy !== 'skip') {
      const first = await lockBeforeViewCheck(eng, s, st, dry.raw.error);
      if (first !== 'ok') return first;
    }
    // A locking SELECT whose LockRows fails at a row (a transaction snapshot's 40001: the row
    // changed after it) has locked the rows before it: one of those another transaction holds is
    // waited for first. (An error in the scan's quals may come before any lock, below a Sort.)
    if (
      dry.rowsBeforeError &&
      isConcurrentChange(dry.raw.error) &&
      st.cls.kind === 'dml' &&
      st.cls.lockingSelect &&
      st.cls.waitPolicy !== 'skip'
    ) {
      const first = await lockBeforeRowError(eng, s, st, dry.rowsBeforeError);
      if (first !== 'ok') return first;
    }
    // So does an UPDATE or DELETE, which changes its rows one by one.
    if (isConcurrentChange(dry.raw.error) && s.txn && s.txn.isolation !== 'read committed') {
      const first = await lockBeforeChangeError(eng, s, st);
      if (first !== 'ok') return first;
    }
    const opened = await relationLocksBeforeError(eng, s, st);
    if (opened !== 'ok') return opened;
    // MERGE's cardinality error comes after it changed (and waited for) the row's first match;
    // the dry run fails at once, without the rows it locked before: said on screen when another
    // transaction holds rows it could have waited for.
    // So does INSERT … ON CONFLICT DO UPDATE's, for a row it would change a second time.
    if (
      dry.raw.error.sqlstate === '21000' &&
      st.cls.kind === 'dml' &&
      (st.cls.verb === 'merge' || st.cls.onConflict) &&
      [...eng.sessions.values()].some((o) => o !== s && eng.rows.heldBy(o.name).length > 0)
    )
      approximate(eng, s, st.cls.verb === 'merge' ? 'merge-cardinality-wait' : 'upsert-cardinality-wait');
    step.notices.push(...unsentNotices(eng, s, dry.raw.notices, st));
    step.error = dry.raw.error;
    keepSessionAdvisory(eng, s, dry.sessionAdvisory);
    abortTxnState(eng, s, true);
    return 'error';
  }
  // ON CONFLICT's pre-check, after the statement has opened (and locked) its tables, waits for
  // an open transaction that updated or deleted a row its new row conflicts with, or, going
  // through the arbiter indexes in order, for one whose new key in an earlier index comes before
  // a later index's conflict that would skip the row.
  const arbiter = await preCheckWait(eng, s, st, dry);
  if (arbiter) {
    const first = walkPlan(eng, s, st, dry, HEAVYWEIGHT_ITEMS);
    if (first !== 'ok') return first;
    const outcome = waitOnXid(eng, s, arbiter.session, arbiter.xid, undefined, 'insert', arbiter.context);
    // The row was formed before the check waited: after the wait it is checked and inserted as formed.
    if (outcome === 'wait') await formedBeforeKeyWait(eng, s, st, seqs);
    return outcome;
  }
  if (st !== base) lockRecheckedVersions(eng, s, st, dry);
  if (st.orderTag) {
    const reordered = recheckReordered(s, dry);
    // Rows back in the scan's order; row triggers (an audit table's serial numbers) still ran in the re-run's.
    const restored = restoreScanOrder(s, dry);
    const relname = st.cls.kind === 'dml' ? st.cls.target?.relname : undefined;
    const target = relname ? eng.catalog.find((c) => c.name === relname) : undefined;
    if (reordered && (!restored || target?.triggersOrRules)) approximate(eng, s, 'recheck-order');
  } else if (st !== base && recheckReordered(s, dry)) approximate(eng, s, 'recheck-order');
  const sx = s.txn?.sx;
  // The scan reads before it could wait for a row: rw-conflicts out (or a doomed transaction's
  // error) come first. A statement waiting for a row of its own runs its triggers (foreign-key
  // checks and their reads) only after the wait: what it reads before is what a dry run without
  // them reads. One waiting in a foreign-key check has read that row and written its own rows
  // (heap_insert / heap_update / heap_delete checked them for rw-conflicts in) before the wait,
  // and after it reads and writes nothing more.
  if (sx && dry.ssi && !step.ssiBeforeWait) {
    const inCheck = waitsInForeignKeyCheck(eng, s, st, dry.plan);
    const ownRow = !inCheck && st.cls.kind === 'dml' && hasRowConflicts(eng, s, dry.plan);
    const beforeWait = ownRow ? await triggerlessRun(eng, s, st) : undefined;
    const reads = beforeWait && !beforeWait.raw.error && beforeWait.ssi ? beforeWait : dry;
    if ((await ssiReads(eng, s, st, reads)) === 'error') return 'error';
    if (inCheck && dry.ssi.writes.length) {
      if (dry.assignsXid) currentXid(eng, s);
      try {
        eng.ssi.write(sx, dry.ssi.writes, s.txn!.savepoints.length, s.txn!.xid);
      } catch (e) {
        return ssiError(eng, s, e);
      }
    }
    if (inCheck) step.ssiBeforeWait = true;
  }
  // heap_insert checks the table for rw-conflicts in before the row's unique index entry is
  // checked: an INSERT that will wait on another transaction's duplicate key has written (for
  // SSI) before the wait, so that transaction's commit can doom it (read-write-unique).
  if (
    sx &&
    !step.ssiHeapBeforeWait &&
    dry.ssi?.writes.length &&
    st.cls.kind === 'dml' &&
    st.cls.verb === 'insert' &&
    !st.cls.onConflict &&
    dry.plan.some((p) => p.kind === 'key' && keyOwner(eng, s, p.index, p.key))
  ) {
    const heap = dry.ssi.writes.filter((w) => w.kind !== 'index');
    if (dry.assignsXid) currentXid(eng, s);
    try {
      eng.ssi.write(sx, heap, s.txn!.savepoints.length, s.txn!.xid);
    } catch (e) {
      return ssiError(eng, s, e);
    }
    step.ssiHeapBeforeWait = true;
  }
  let outcome: 'ok' | 'error' | 'wait' | undefined;
  if (st.cls.kind === 'dml' && st.cls.waitPolicy === 'skip' && hasRowConflicts(eng, s, dry.plan)) {
    // SKIP LOCKED passes over rows only: the staged sessions hold their relation and advisory
    // locks in PGlite too, where a conflicting one would block its single backend for good.
    // The lock model decides the locks the statement takes before it locks rows first; the
    // staged dry run runs only once they are granted.
    const first = walkPlan(eng, s, st, dry, HEAVYWEIGHT_ITEMS);
    if (first !== 'ok') outcome = first;
    else {
      await restoreSequences(eng, seqs);
      dry = await dryRun(eng, s, st, true);
      if (dry.raw.error) {
        step.error = dry.raw.error;
        keepSessionAdvisory(eng, s, dry.sessionAdvisory);
        abortTxnState(eng, s, true);
        return 'error';
      }
    }
  }
  outcome ??= walkPlan(eng, s, st, dry);
  // A wait for a lock taken before the statement reaches its rows (a relation lock, an advisory
  // lock in the WHERE clause) comes before any nextval of theirs: give back what the dry run
  // took. A wait for a row comes after the row's new values were computed, and EvalPlanQual
  // computes them again: PostgreSQL consumes both. A duplicate key's wait keeps the row it
  // formed for after the wait: the values stay taken and the re-run forms the same ones.
  const rowWait = step.wait?.tag.type === 'tuple' || (step.wait?.tag.type === 'transactionid' && step.wait.tuple !== undefined);
  const keyWait = step.wait?.tag.type === 'transactionid' && step.wait.tuple === undefined;
  if (outcome === 'wait' && keyWait) await formedBeforeKeyWait(eng, s, st, seqs);
  if (outcome === 'wait' && !rowWait && !keyWait) await restoreSequences(eng, seqs);
  if (outcome === 'wait' && rowWait) await noteLockOrder(eng, s, st, dry.plan);
  // An exclusion constraint is checked against committed rows only: said on screen.
  if (outcome !== 'error' && dry.entry?.kind === 'image' && (await writesContendedExclusion(eng, s, dry.entry.ops)))
    approximate(eng, s, 'exclusion-constraint');
  // A function's NOWAIT or SKIP LOCKED (on its rows, or its LOCK TABLE) is not this statement's wait policy: said on screen.
  if (outcome === 'wait' && (rowWait || step.wait?.tag.type === 'relation') && (await callsWaitPolicyFunction(eng, original.sql)))
    approximate(eng, s, 'function-wait-policy');
  // Several data-modifying CTEs run in the plan's order, not in the order of their rows' places.
  if (outcome === 'wait' && rowWait && modifyingCteCount(original.sql) > 1) approximate(eng, s, 'cte-lock-order');
  // A wait inside the statement's own foreign-key check: its snapshot is older than the wait.
  if (outcome === 'wait' && rowWait && waitsInForeignKeyCheck(eng, s, st, dry.plan)) step.fkCheckWait = true;
  if (outcome === 'wait' && rowWait) await foreignKeyContext(eng, s, st);
  if (outcome === 'wait' && rowWait) await functionWaitContext(eng, s, st);
  if (outcome === 'wait' && step.wait?.tag.type === 'advisory') await advisoryWaitContext(eng, s, st);
  if (outcome === 'wait' && step.wait?.tuple && s.txn?.isolation !== 'read committed') {
    const context = step.wait.context?.split('\n').slice(1).join('\n');
    const t = step.wait.tuple;
    const mode = dry.plan.flatMap((p) => (p.kind === 'row' && tupleKey(p.tuple) === tupleKey(t) ? [p.mode] : []))[0];
    step.xactRowWait = { tuple: t, ...(context ? { context } : {}), ...(mode ? { mode } : {}) };
  }
  // The statement's snapshot is the one its dry run just used: keep it for the re-runs after the
  // wait. A relation lock is waited for before the statement takes its snapshot.
  if (outcome === 'wait' && step.wait?.tag.type !== 'relation' && s.txn?.isolation === 'read committed') {
    step.stmtSnapshot ??= { content: await exportStatementSnapshot(eng) };
    if (rowWait && seqs) await formedBeforeWait(eng, s, st, step.stmtSnapshot, seqs);
  }
  if (outcome === 'wait' && rowWait) await afterTriggerLocksLater(eng, s, st);
  // The scan that locks: a locking CTE's or subquery's (it locks before the outer statement sees
  // its rows), or the target's.
  const scanned = st.cls.kind === 'dml' ? (st.cls.lockingCte ?? st.cls.lockingSublink ?? st.cls.target ?? st.cls.mergeTarget) : undefined;
  // A relation lock is taken while the statement is parsed, before its snapshot: after that
  // wait it scans afresh, unrestricted.
  if (outcome === 'wait' && !step.epq && step.wait?.tag.type !== 'relation' && st.cls.kind === 'dml' && scanned) {
    const oid = eng.catalog.find((c) => c.name === scanned.relname)?.oid;
    if (oid !== undefined) {
      // An inheritance parent's scan (an Append over it and its children) finds the children's
      // rows: each is then known by its table and ctid.
      const rowOids = new Set(dry.plan.flatMap((p) => (p.kind === 'row' ? [p.tuple.oid] : [])));
      const family = !st.cls.currentOf && [...rowOids].some((o) => o !== oid) ? await inheritanceFamily(eng, oid) : [oid];
      const scope = { oid, ctids: [], ...(family.length > 1 ? { children: family } : {}) };
      // The rows the scan found: those it is locking now, and those this session already held.
      const found = dry.plan.flatMap((p) => (p.kind === 'row' && epqCovers(scope, p.tuple.oid) ? [epqKey(scope, p.tuple)] : []));
      const held = eng.rows.heldBy(s.name).flatMap((h) => (epqCovers(scope, h.tuple.oid) ? [epqKey(scope, h.tuple)] : []));
      // A locking SELECT's scan may have stopped early (LIMIT): it goes on over the rows its snapshot saw.
      // A MERGE's join saw the target as its snapshot did (restrictMerge).
      const horizon =
        st.cls.verb === 'select' || st.cls.verb === 'merge' || st.cls.lockingCte || st.cls.lockingSublink ? dry.horizon : undefined;
      const modes: Record<string, RowLockMode> = {};
      for (const p of dry.plan) if (p.kind === 'row' && epqCovers(scope, p.tuple.oid)) modes[epqKey(scope, p.tuple)] ??= p.mode;
      // WHERE CURRENT OF targets the cursor's row alone.
      const ctids = st.cls.currentOf ? found : [...new Set([...found, ...held])];
      // The rows the scan locked, in its order, are all the rows it returned only when the
      // transaction had not touched the table before: its own rows take no new lock.
      const touched = s.txn!.log.some(
        (e) =>
          e.kind === 'sql' || e.ops.some((op) => (op.op === 'insert' ? op.rel === oid : op.op !== 'advisory' && op.target.rel === oid)),
      );
      // Rows this statement locked before it waited are in `found`, in the scan's order.
      const mine = new Set((step.rowsBeforeWait ?? []).map((r) => `${r.tuple.oid}:(${r.tuple.block},${r.tuple.offset})`));
      const ordered = !scope.children && !touched && held.every((c) => mine.has(`${oid}:${c}`));
      step.epq = {
        oid,
        ctids,
        modes,
        ...(scope.children ? { children: scope.children } : {}),
        ...(horizon !== undefined ? { horizon } : {}),
        ...(ordered ? { ordered } : {}),
        ...(st.cls.verb !== 'select' && dry.horizon !== undefined ? { seenBefore: dry.horizon } : {}),
      };
    }
  }
  // The found row the statement waits for: before the wait its scan raised the notices of the rows before it.
  const waitedTuple = step.wait?.tuple ?? (step.wait?.tag.type === 'tuple' ? step.wait.tag : undefined);
  if (outcome === 'wait' && rowWait && step.epq && waitedTuple && epqCovers(step.epq, waitedTuple.oid) && !step.epq.children) {
    const key = epqKey(step.epq, { oid: waitedTuple.oid, block: waitedTuple.block, offset: waitedTuple.offset });
    step.epq.waitedAt = step.epq.origin?.[key] ?? key;
  }
  // Notices raised before a row wait reach the client at once in PostgreSQL (after the snapshot
  // export above, which must follow the dry run directly).
  if (outcome === 'wait' && step.wait?.tag.type !== 'relation' && dry.raw.notices.length) {
    const before = rowWait ? await noticesBeforeRowWait(eng, s, st) : keyWait ? await noticesBeforeKeyWait(eng, s, st) : undefined;
    if (before) sendBeforeWait(s, before);
    else approximate(eng, s, 'notices-wait');
  }
  if (outcome !== 'ok') return outcome;
  const notices = unsentNotices(eng, s, dry.raw.notices, st);
  step.epq = undefined;
  step.epqBase = undefined;
  step.rowsBeforeWait = undefined;
  step.fkCheckWait = undefined;
  step.stmtSnapshot = undefined;
  step.keyFormed = undefined;
  // Granted: the statement joins the session's transaction.
  const txn = s.txn!;
  const writtenBeforeWait = step.ssiBeforeWait;
  step.ssiBeforeWait = undefined;
  const heapBeforeWait = step.ssiHeapBeforeWait;
  step.ssiHeapBeforeWait = undefined;
  if (sx && dry.ssi?.writes.length && !writtenBeforeWait) {
    // Writes check the other transactions' SIREAD locks once the rows are theirs (heap_update after the wait).
    if (dry.assignsXid) currentXid(eng, s);
    let at: SsiWrite | undefined;
    try {
      for (const w of dry.ssi.writes) {
        if (heapBeforeWait && w.kind !== 'index') continue;
        at = w;
        eng.ssi.write(sx, [w], txn.savepoints.length, txn.xid);
      }
    } catch (e) {
      const context = e instanceof SsiFailure ? await triggerWriteContext(eng, s, st, at) : undefined;
      return ssiError(eng, s, e, context);
    }
  }
  if (dry.entry) {
    txn.log.push(dry.entry);
    if (dry.entry.kind === 'image')
      for (const op of dry.entry.ops) {
        if (op.op !== 'update') continue;
        const [b, o] = op.target.ctid.slice(1, -1).split(',').map(Number);
        const origin = op.target.own
          ? txn.originOf.get(`${op.target.rel}:${op.target.ctid}`)
          : { oid: op.target.rel, relation: op.target.relation, block: b, offset: o };
        if (origin) txn.originOf.set(`${op.target.rel}:${op.newCtid}`, origin);
      }
  }
  const depth = txn.savepoints.length;
  const xid = dry.assignsXid ? currentXid(eng, s) : (txn.xid ?? 0);
  const deferred = new Set(dry.plan.flatMap((p) => (p.kind === 'key' && p.deferred ? [`${p.index}\u0001${p.key}`] : [])));
  for (const k of dry.inserted) {
    const id = `${k.index}\u0001${k.key}`;
    txn.insertedKeys.push({
      index: k.index,
      key: k.key,
      depth,
      xid,
      table: k.table,
      ...(k.ctid ? { ctid: k.ctid } : {}),
      ...(deferred.has(id) ? { pending: true as const } : {}),
      ...(step.deferredConflicts?.includes(id) ? { openConflict: true as const } : {}),
    });
  }
  step.deferredConflicts = undefined;
  if (dry.sessionAdvisory)
    setSessionAdvisory(
      eng,
      s,
      dry.sessionAdvisory,
      dry.plan.flatMap((p) => (p.kind === 'adv' && p.sessionLevel ? [p] : [])),
    );
  if (st.cls.kind === 'set' || st.cls.kind === 'show') await afterSet(eng, s, st);
  else if (dry.gucsAfter && (await afterStatementGucs(eng, s, st, dry.gucsAfter)) && dry.entry?.kind === 'sql') dry.entry.setsGucs = true;
  const maintenance = st.cls.kind === 'dml' ? st.cls.maintenance : undefined;
  step.results.push(...(maintenance ? dry.raw.results.map((r) => ({ ...r, command: maintenance.command })) : dry.raw.results));
  step.notices.push(...notices);
  if (dry.signals) eng.signals.push(...dry.signals);
  releaseTupleLocks(eng, s);
  cancelTimers(eng, s, ['statement_timeout']);
  return 'ok';
}

/**
 * Whether the first lock the statement would wait for is a row its foreign-key check locks (FOR
 * KEY SHARE in another table; any row of a plain INSERT), with its relation and advisory locks
 * free: PostgreSQL has written the statement's rows by then.
 */
function waitsInForeignKeyCheck(eng: EngineContext, s: Sess, st: ParsedStatement, plan: PlanItem[]): boolean {
  const cls = st.cls.kind === 'dml' ? st.cls : undefined;
  if (!cls || cls.lockingCte || cls.lockingSublink || cls.onConflict) return false;
  if (cls.verb !== 'insert' && cls.verb !== 'update' && cls.verb !== 'delete') return false;
  if (
    hasConflicts(
      eng,
      s,
      plan.filter((p) => p.kind === 'rel' || p.kind === 'adv'),
    )
  )
    return false;
  const first = plan.find((p) => p.kind === 'row' && eng.rows.conflicting(p.tuple, p.mode, s.name).length > 0);
  if (first?.kind !== 'row') return false;
  return cls.verb === 'insert' || (first.mode === 'ForKeyShare' && first.tuple.relation !== cls.target?.relname);
}

/** A dry run with the triggers off, giving back the sequence values it takes (the statement took its own already). */
/**
 * An UPDATE or DELETE waiting for a row of its own target has not reached the end of the
 * statement, where its AFTER triggers run (a foreign key's checks and actions, through SPI): the
 * relation locks they take (ROW SHARE on the other table and its key index, a parent's for the
 * check of a key update) are not held while it waits. What a run with the triggers off locks
 * stays; the others go back, and the re-run after the wait takes them. With user functions
 * around (a BEFORE trigger runs right after the row lock, a function in the WHERE clause during
 * the scan) the run without triggers cannot tell which came first: all stay.
 */
async function afterTriggerLocksLater(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<void> {
  const cls = st.cls;
  const step = s.step!;
  if (cls.kind !== 'dml' || (cls.verb !== 'update' && cls.verb !== 'delete') || !cls.target || !s.txn || step.heldFrom === undefined)
    return;
  const w = step.wait;
  const waited = w?.tuple?.relation ?? (w?.tag.type === 'tuple' ? w.tag.relation : undefined);
  if (waited !== cls.target.relname) return;
  if (!eng.catalog.find((c) => c.name === cls.target!.relname)?.triggersOrRules || (await hasUserFunctions(eng))) return;
  const probe = await triggerlessRun(eng, s, st);
  if (probe.raw.error) return;
  releaseRelationLocksBeyond(eng, s, step.heldFrom, probe.plan);
}

/**
 * A dry run that only asks what a statement would lock or send (a probe): the sequence values it
 * takes are given back, and null when the engine cannot stage it (the caller then reports the
 * statement's own outcome).
 */
async function probeRun(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  prelude?: { sql: string; count: number },
): Promise<DryRun | null> {
  const seqs = await sequenceStates(eng);
  try {
    return await dryRun(eng, s, st, false, false, prelude);
  } catch (e) {
    if (e instanceof EngineInternalError) return null;
    throw e;
  } finally {
    await restoreSequences(eng, seqs);
  }
}

async function triggerlessRun(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<DryRun> {
  const seqs = await sequenceStates(eng);
  try {
    return await dryRun(eng, s, st, false, true);
  } finally {
    await restoreSequences(eng, seqs);
  }
}

/**
 * SERIALIZABLE: what the statement's scan read, checked against the other transactions' writes
 * (rw-conflicts out), and a doomed transaction's failure at its next read or write.
 */
async function ssiReads(eng: EngineContext, s: Sess, st: ParsedStatement, dry: DryRun): Promise<'error' | undefined> {
  const sx = s.txn?.sx;
  if (!sx || !dry.ssi) return undefined;
  const candidates = eng.ssi.indexCandidates(sx, dry.ssi.scope);
  const reached = candidates.length ? await indexReached(eng, st, candidates) : undefined;
  try {
    eng.ssi.read(sx, dry.ssi.scope, dry.ssi.added, reached, sx.doomed ? readsHeapPage(eng, dry.ssi, reached) : true);
    if (sx.doomed && dry.ssi.writes.length) throw new SsiFailure('Canceled on identification as a pivot, during conflict in checking.');
  } catch (e) {
    return ssiError(eng, s, e);
  }
  return undefined;
}

/**
 * A statement that fails while it executes (a duplicate key, a CHECK, a division by zero) has
 * opened its tables first: parse analysis and the planner lock them (RowExclusiveLock on an
 * INSERT's, UPDATE's or DELETE's target, AccessShareLock on what it reads), so a conflicting lock
 * another session holds is waited for before the error (PostgreSQL's order), and the statement
 * runs again once they are granted. EXPLAIN without ANALYZE takes exactly those locks: its dry run
 * finds them. An error EXPLAIN raises too (an unknown column, a missing right) comes from parse
 * analysis or the executor's start, and is reported as it is.
 */
async function relationLocksBeforeError(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
  const cls = st.cls;
  if (cls.kind === 'dml' && cls.locksBeforeCheck) return lockedBeforeCheck(eng, s, st, cls.locksBeforeCheck);
  if (cls.kind !== 'dml' || !['select', 'insert', 'update', 'delete', 'merge'].includes(cls.verb)) return 'ok';
  // Only a relation lock stronger than ROW EXCLUSIVE can make these wait: without one, nothing to probe.
  const strong = eng.lm
    .entries()
    .some(
      (e) =>
        e.proc !== s.proc && e.tag.type === 'relation' && (conflicts('RowExclusiveLock', e.mode) || conflicts('AccessShareLock', e.mode)),
    );
  if (!strong) return 'ok';
  const explain = parseStatements(`EXPLAIN (COSTS OFF) ${st.sql}`)[0];
  if (!explain) return 'ok';
  const seqs = await sequenceStates(eng);
  let probe: DryRun;
  try {
    probe = await dryRun(eng, s, explain);
  } finally {
    await restoreSequences(eng, seqs);
  }
  if (probe.raw.error || !hasConflicts(eng, s, probe.plan)) return 'ok';
  return walkPlan(eng, s, st, probe, HEAVYWEIGHT_ITEMS);
}

/**
 * The locks a statement takes before a view's WITH CHECK OPTION fails (44000): ExecUpdate and
 * ExecInsert check the view's conditions on the new row after they wrote it (after the row's lock,
 * and after any wait for it), where a CHECK constraint is checked before. A dry run with that
 * view's check option reset finds the rows; when one conflicts, the statement waits for it and
 * runs again once granted, checking the row the holder left. 'ok' reports the error at once.
 */
async function lockBeforeViewCheck(eng: EngineContext, s: Sess, st: ParsedStatement, error: PgMessage): Promise<'ok' | 'error' | 'wait'> {
  const view = /^new row violates check option for view "(.+)"$/s.exec(error.message)?.[1];
  if (!view) return 'ok';
  const prelude = { sql: `ALTER VIEW "${view.replace(/"/g, '""')}" RESET (check_option);\n`, count: 1 };
  // Null when the view is not on the search_path under that name: the error is reported as it is.
  const probe = await probeRun(eng, s, st, prelude);
  if (!probe || probe.raw.error || !hasConflicts(eng, s, probe.plan)) return 'ok';
  return walkPlan(eng, s, st, probe);
}

/**
 * The rows a locking SELECT locked before it failed at the next one: the same statement under a
 * LIMIT of that many rows (its LockRows, inside the subquery, locks only the rows the LIMIT pulls)
 * finds them. 'ok' when none conflicts (the error is reported at once); otherwise the statement
 * waits (or fails) on them, and runs again once they are granted.
 */
async function lockBeforeRowError(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  rows: number,
  waiting: ParsedStatement = st,
): Promise<'ok' | 'error' | 'wait'> {
  const limited: ParsedStatement = {
    sql: `SELECT * FROM (${st.sql.replace(/;\s*$/, '')}) AS lockstep_rows LIMIT ${Math.trunc(rows)}`,
    cls: st.cls,
  };
  const probe = await probeRun(eng, s, limited);
  if (!probe || probe.raw.error || !hasConflicts(eng, s, probe.plan)) return 'ok';
  return walkPlan(eng, s, waiting, probe);
}

/** A transaction snapshot's 40001 at a row changed after it (not SSI's read/write dependencies). */
function isConcurrentChange(e: PgMessage | undefined): boolean {
  return e?.sqlstate === '40001' && e.message.startsWith('could not serialize access due to concurrent ');
}

/**
 * A single-table UPDATE or DELETE under a transaction snapshot that failed with 40001 at a row
 * changed after the snapshot: ExecUpdate / ExecDelete change the rows in scan order, so a row
 * before that one another transaction holds is waited for first. The statement's rows, locked in
 * its order and mode (FOR UPDATE for a DELETE or a key change, FOR NO KEY UPDATE otherwise) by a
 * locking SELECT of the same target and WHERE clause, tell how many come before the failing one
 * (its cursor), and lockBeforeRowError takes those. 'ok' when there is nothing to wait for.
 */
async function lockBeforeChangeError(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
  if (st.cls.kind !== 'dml' || !st.cls.target || st.cls.relations.length !== 1) return 'ok';
  const verb = st.cls.verb;
  const relname = st.cls.target.relname;
  if (verb !== 'update' && verb !== 'delete') return 'ok';
  const table = eng.catalog.find((c) => c.name === relname);
  const keys = new Set((table?.uniqueIndexes ?? []).filter((ix) => !ix.pred && !ix.deferrable).flatMap((ix) => ix.columns));
  const mode = verb === 'delete' || updatedColumns(st.sql).some((c) => keys.has(c)) ? 'UPDATE' : 'NO KEY UPDATE';
  const sql = lockingProbeOf(st.sql, verb, mode);
  const probe = sql ? parseStatements(sql)[0] : undefined;
  if (!probe || probe.cls.kind !== 'dml' || !probe.cls.lockingSelect) return 'ok';
  const run = await probeRun(eng, s, probe);
  if (!run || run.raw.error?.sqlstate !== '40001' || !run.rowsBeforeError) return 'ok';
  return lockBeforeRowError(eng, s, probe, run.rowsBeforeError, st);
}

/**
 * TRUNCATE or DROP TABLE that fails its check (a referencing foreign key, a dependent object)
 * has locked the tables it names first: a lock another session holds on one of them is waited
 * for before the error, and the statement runs again once it is granted. The probe is the LOCK
 * TABLE of those locks; when the probe itself fails (a table that does not exist), the
 * statement's own error stands.
 */
async function lockedBeforeCheck(eng: EngineContext, s: Sess, st: ParsedStatement, lockSql: string): Promise<'ok' | 'error' | 'wait'> {
  const free = !eng.lm.entries().some((e) => e.proc !== s.proc && e.tag.type === 'relation');
  if (free) return 'ok';
  const lock = parseStatements(lockSql)[0];
  if (!lock) return 'ok';
  const probe = await dryRun(eng, s, lock);
  if (probe.raw.error || !hasConflicts(eng, s, probe.plan)) return 'ok';
  return walkPlan(eng, s, st, probe, HEAVYWEIGHT_ITEMS);
}

/**
 * The locks a statement takes before its foreign-key trigger fails (its rows, and the relation and
 * advisory locks of its scan): a dry run with the triggers off (session_replication_role =
 * replica) finds them. A referenced row's NO ACTION / RESTRICT check then locks the referencing
 * rows it finds FOR KEY SHARE (referencingRowsCheck). 'ok' when none of these conflicts (the
 * trigger's error is reported at once); otherwise the statement waits (or fails) on them, and runs
 * again, triggers and all, once they are granted: the trigger's check then takes a new snapshot,
 * as READ COMMITTED's does, and no longer finds a referencing row the holder deleted.
 */
export async function lockBeforeTriggers(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  error: PgMessage,
): Promise<'ok' | 'error' | 'wait'> {
  const probe = await dryRun(eng, s, st, false, true);
  if (probe.raw.error) return 'ok';
  const check = await referencingRowsCheck(eng, error);
  const checkSt = check ? parseStatements(check.probe)[0] : undefined;
  const checkRun = checkSt ? await dryRun(eng, s, checkSt) : undefined;
  const checkWaits = !!checkRun && !checkRun.raw.error && hasRowConflicts(eng, s, checkRun.plan);
  if (!checkWaits && !hasConflicts(eng, s, probe.plan)) return 'ok';
  // The statement's own rows are locked (and changed) before its AFTER triggers run the check.
  const own = walkPlan(eng, s, st, probe);
  if (own !== 'ok' || !checkWaits) return own;
  const outcome = walkPlan(eng, s, checkSt!, checkRun!);
  const w = s.step?.wait;
  if (outcome !== 'wait' || !w?.tuple) return outcome;
  const query = `SQL statement "${check!.query}"`;
  if (w.context) w.context += `\n${query}`;
  // Under a transaction snapshot the check fails with 40001 when the holder changed the row.
  if (s.txn?.isolation !== 'read committed') s.step!.xactRowWait = { tuple: w.tuple, context: query };
  return outcome;
}

/**
 * After an EvalPlanQual re-run with a new snapshot: the rows the statement's main query returns,
 * read under the snapshot the statement kept (mainQuery.ts), as PostgreSQL's main query reads
 * them. Undefined when the statement runs under its own snapshot, or its main query cannot be
 * separated from the rows formed from the newest versions.
 */
async function mainQueryReads(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<RawResult['results'] | undefined> {
  const snap = s.step?.stmtSnapshot;
  if (s.txn?.isolation !== 'read committed' || !snap?.fresh) return undefined;
  const sql = mainQueryOf(st.sql);
  const main = sql === null ? undefined : parseStatements(sql)[0];
  if (!main) return undefined;
  // The main query ran once, in the re-run: whatever sequence values it takes here are given back.
  const seqs = await sequenceStates(eng);
  snap.fresh = false;
  try {
    const r = await dryRun(eng, s, main);
    return r.raw.error ? undefined : r.raw.results;
  } finally {
    snap.fresh = true;
    await restoreSequences(eng, seqs);
  }
}

/**
 * Before an EvalPlanQual re-run with a new snapshot: the statement with each uncorrelated
 * subquery replaced by the rows it reads under the snapshot the statement kept (initPlans.ts),
 * as PostgreSQL's recheck reuses its InitPlans' values and the rows its semi-joins found.
 */
async function freezeSubqueries(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<ParsedStatement> {
  const bodies = subqueryBodies(st.sql);
  const read = async (sql: string) => {
    const q = parseStatements(sql)[0];
    if (!q) return undefined;
    const r = await dryRun(eng, s, q);
    return r.raw.error ? undefined : r.raw.results.at(-1);
  };
  // The subqueries ran once, before the wait: sequence values they take here are given back.
  const seqs = await sequenceStates(eng);
  const replacements: { start: number; end: number; text: string }[] = [];
  try {
    for (const b of bodies) {
      if (replacements.some((r) => b.start >= r.start && b.end <= r.end)) continue;
      // A subquery that refers to the outer query does not run alone: it is a correlated SubPlan.
      const columns = (await read(shapeQuery(b.body)))?.columns?.length;
      if (!columns) continue;
      const rows = (await read(rowsQuery(b.body, columns)))?.rows;
      if (rows?.length) replacements.push({ start: b.start, end: b.end, text: valuesBody(rows, columns) });
    }
  } finally {
    await restoreSequences(eng, seqs);
  }
  let sql = replacements.length ? replaceBodies(st.sql, replacements) : st.sql;
  // The other tables an UPDATE or DELETE reads (FROM / USING, correlated subqueries) are read
  // as the statement's snapshot saw them; a locking scan of its own rechecks its rows instead,
  // and a system column cannot be read from a copy.
  const cls = st.cls;
  if (cls.kind === 'dml' && !cls.lockingCte && !cls.lockingSublink && !/\b(ctid|xmin|xmax|cmin|cmax|tableoid)\b/i.test(sql)) {
    const tables: { start: number; end: number; text: string }[] = [];
    for (const r of otherRelations(sql)) {
      const shape = (await read(columnsQuery(r.name)))?.rows ?? [];
      if (!shape.length || shape.some((c) => c[0] === null || c[1] === null)) continue;
      const columns = shape.map((c) => c[0]!);
      const rows = (await read(tableRowsQuery(r.name, columns)))?.rows;
      if (rows)
        tables.push({
          start: r.start,
          end: r.end,
          text: valuesTable(
            r.ref,
            columns,
            shape.map((c) => c[1]!),
            rows,
          ),
        });
    }
    if (tables.length) sql = replaceBodies(sql, tables);
  }
  if (sql === st.sql) return st;
  const parsed = parseStatements(sql);
  return parsed.length === 1 && parsed[0].cls.kind === st.cls.kind ? parsed[0] : st;
}

/**
 * EvalPlanQual locks the newest version of a row a committed update changed before it rechecks
 * the statement's quals on it (table_tuple_lock with TUPLE_LOCK_FLAG_FIND_LAST_VERSION in
 * ExecUpdate, ExecDelete and nodeLockRows): when the recheck fails, the row stays locked until
 * the transaction ends, in the mode the statement asked for (an UPDATE's lock mode, FOR UPDATE
 * for a DELETE, the locking clause's). The re-run that passed over such a row takes that lock.
 */
function lockRecheckedVersions(eng: EngineContext, s: Sess, st: ParsedStatement, dry: DryRun): void {
  const epq = s.step?.epq;
  if (!epq?.followed?.length || s.txn?.isolation !== 'read committed' || dry.entry?.kind === 'sql') return;
  const entry = dry.entry ?? { kind: 'image' as const, ops: [], command: dry.raw.results.at(-1)?.command ?? '', sql: st.sql };
  const at = dry.plan.findIndex((p) => p.kind === 'row');
  for (const key of epq.followed) {
    // An inheritance parent's rows are keyed by their table too (epqKey).
    const { oid: rel, ctid } = epqRow(epq, key);
    const relation = eng.catalog.find((c) => c.oid === rel)?.name;
    if (relation === undefined) continue;
    const [block, offset] = ctid.slice(1, -1).split(',').map(Number);
    if (dry.plan.some((p) => p.kind === 'row' && p.tuple.oid === rel && p.tuple.block === block && p.tuple.offset === offset)) continue;
    const asked = epq.modes?.[key];
    if (!asked) continue;
    const mode: RowLockMode = asked === 'NoKeyUpdate' ? 'ForNoKeyUpdate' : asked === 'Update' ? 'ForUpdate' : asked;
    const item = { kind: 'row' as const, tuple: { oid: rel, relation, block, offset }, mode };
    dry.plan.splice(at < 0 ? dry.plan.length : at, 0, item);
    entry.ops.unshift({ op: 'lock', target: { rel, relation, ctid, own: false }, mode });
    dry.entry = entry;
  }
}

/**
 * Whether the re-run met the rows its scan first found in another order than the scan did: a row
 * a committed update moved to a later page position comes where it lies now, where PostgreSQL's
 * scan goes on with the new version at the old one's place.
 */
function recheckReordered(s: Sess, dry: DryRun): boolean {
  const epq = s.step?.epq;
  if (!epq?.followed?.length) return false;
  const order = dry.plan.flatMap((p) => (p.kind === 'row' && epqCovers(epq, p.tuple.oid) ? [epq.ctids.indexOf(epqKey(epq, p.tuple))] : []));
  const known = order.filter((i) => i >= 0);
  return known.some((i, k) => k > 0 && i < known[k - 1]);
}

/**
 * A statement waits for a row under READ COMMITTED: which of the sequence values its dry run took
 * PostgreSQL took before the wait. A wait for a row of the table the statement writes comes
 * before that row's new version is written and before the row's triggers run (GetTupleForTrigger
 * locks the row before a BEFORE trigger): the values of the statement's own columns are formed
 * (kept for the re-run), while a trigger's (an audit row's serial) are taken after the wait, so
 * they are given back now and taken afresh then. A wait inside a trigger, a cascade or a
 * foreign-key check comes after the statement formed and wrote its rows: their values are kept
 * through EvalPlanQual too; the trigger chain's go back (an audit row written by the waiting
 * UPDATE's trigger, or by a cascade's AFTER triggers, which fire at the end of its statement).
 */
async function formedBeforeWait(eng: EngineContext, s: Sess, st: ParsedStatement, snap: StatementSnapshot, seqs: string[]): Promise<void> {
  const cls = st.cls;
  const w = s.step?.wait;
  const waited = w?.tuple?.relation ?? (w?.tag.type === 'tuple' ? w.tag.relation : undefined);
  const written = cls.kind === 'dml' ? (cls.target?.relname ?? (cls.verb === 'insert' ? cls.relations[0] : undefined)) : undefined;
  const onTarget = waited !== undefined && waited === written;
  if (snap.formed) {
    // A later wait of the same statement: what this run took for triggers goes back again.
    await restoreSequences(eng, statesOf(seqs, snap.formed, true));
    return;
  }
  if (!onTarget) snap.formedBeyondRecheck = true;
  snap.formed = await ownFormed(eng, st, written, seqs);
}

/**
 * The statement's own values among those its run took (ownSequences of the table it writes), kept
 * for the re-run; the others, a trigger's, go back now, to be taken afresh after the wait.
 */
async function ownFormed(eng: EngineContext, st: ParsedStatement, written: string | undefined, seqs: string[]): Promise<string[]> {
  const own = await ownSequences(eng, st.sql, eng.catalog.find((c) => c.name === written)?.oid);
  await restoreSequences(
    eng,
    seqs.filter((x) => !own.has(stateSequence(x))),
  );
  return seqs.filter((x) => own.has(stateSequence(x)));
}

/**
 * An INSERT waits on a duplicate key (the unique check, or ON CONFLICT's pre-check): its row was
 * formed (and, for the unique check, written) before the wait, its AFTER triggers run after it.
 */
async function formedBeforeKeyWait(eng: EngineContext, s: Sess, st: ParsedStatement, seqs: string[] | null): Promise<void> {
  const step = s.step!;
  if (!seqs) return;
  // A later wait of the same statement: what this run took for triggers goes back again.
  if (step.keyFormed) return restoreSequences(eng, statesOf(seqs, step.keyFormed, true));
  const written = st.cls.kind === 'dml' && st.cls.verb === 'insert' ? st.cls.relations[0] : undefined;
  step.keyFormed = await ownFormed(eng, st, written, seqs);
}

/** Whom ON CONFLICT's pre-check waits for (arbiterBlocker, then arbiterKeyOwner), with the wait's CONTEXT line. */
async function preCheckWait(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  dry: DryRun,
): Promise<{ session: string; xid: number; context?: string } | undefined> {
  const blocker = await arbiterBlocker(eng, s, st, dry);
  if (blocker) {
    const { block, offset, relation } = blocker.tuple;
    return { ...blocker, context: xactWaitContext('insert', block, offset, relation) };
  }
  const owner = await arbiterKeyOwner(eng, s, st);
  if (!owner?.ctid || !owner.table) return owner;
  const [block, offset] = owner.ctid.slice(1, -1).split(',').map(Number);
  return { ...owner, context: xactWaitContext('insert', block, offset, owner.table) };
}

/** A table and the tables that inherit from it, at any depth (pg_inherits; partitions too). */
async function inheritanceFamily(eng: EngineContext, oid: number): Promise<number[]> {
  const rows = await eng.ex.must(
    `WITH RECURSIVE f(oid) AS (SELECT ${Math.trunc(oid)}::oid UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN f ON i.inhparent = f.oid) SELECT oid::int FROM f`,
  );
  return rows.map((r) => Number(r[0]));
}

/**
 * Whether a committed transaction deleted rows of the statement's scan that its re-runs under the
 * kept snapshot do not yet pass over: they join `kept.gone` (true), or there are none (false).
 */
async function deletedSinceSnapshot(eng: EngineContext, s: Sess, kept: StatementSnapshot): Promise<boolean> {
  const epq = s.step?.epq;
  if (!epq) return false;
  const known = new Set(kept.gone ?? []);
  const fresh = (await rowsDeletedSince(eng, kept.content, epq.children ?? [epq.oid]))
    .map((t) => epqKey(epq, t))
    .filter((k) => !known.has(k));
  if (!fresh.length) return false;
  kept.gone = [...known, ...fresh];
  return true;
}

/**
 * A scan that goes on past the rows it found (`horizon`) met, under its snapshot, rows whose quals
 * that snapshot's versions pass and that a committed update replaced since: PostgreSQL locks each
 * one, follows its update chain and rechecks the newest version, which the re-run with a new
 * snapshot sees in its place (`epq.beyond`). The rows are read by the scan's own FROM list and
 * WHERE clause under the kept snapshot; a scan that calls functions other than a few pure
 * built-ins is not read again (its calls could take locks or change state), and goes on over the
 * rows committed before it started only.
 */
async function noteUpdatedSinceSnapshot(eng: EngineContext, s: Sess, st: ParsedStatement, kept: StatementSnapshot): Promise<void> {
  const epq = s.step?.epq;
  if (!epq || epq.horizon === undefined || st.cls.kind !== 'dml') return;
  let body: string | undefined;
  const capture = (b: string) => {
    body = b;
    return b;
  };
  const cte = st.cls.lockingCte;
  const scan = cte ?? st.cls.lockingSublink ?? (st.cls.verb === 'select' ? st.cls.target : undefined);
  if (!scan) return;
  if (cte) rewriteCte(st.sql, cte.name, capture);
  else if (st.cls.lockingSublink) rewriteSublink(st.sql, capture);
  else body = st.sql;
  const sql = body === undefined ? null : scanRowsSql(body, scan.ref);
  if (!sql || calledFunctionNames(sql).some((f) => !PURE_BUILTINS.has(f.toLowerCase()))) return;
  const found = new Set(epq.ctids);
  const rows = await newestOfSnapshotRows(eng, kept.content, sql, epq.children ?? [epq.oid]);
  const beyond = rows.map((t) => epqKey(epq, t)).filter((k) => !found.has(k));
  if (beyond.length) epq.beyond = beyond;
}

/** Built-in functions a scan's quals may call and still be read again under the kept snapshot: no locks, no side effects. */
const PURE_BUILTINS = new Set([
  'lower',
  'upper',
  'length',
  'char_length',
  'abs',
  'mod',
  'substr',
  'substring',
  'btrim',
  'trim',
  'concat',
  'now',
]);

/** The statement with the rows a committed transaction deleted after its kept snapshot left out of its locking scan. */
function withoutGone(st: ParsedStatement, gone: string[]): ParsedStatement {
  if (st.cls.kind !== 'dml') return st;
  const cte = st.cls.lockingCte;
  const sub = st.cls.lockingSublink;
  const target = st.cls.target;
  const verb = st.cls.verb;
  const sql = cte
    ? rewriteCte(st.sql, cte.name, (body) => excludeTuples(body, 'select', cte.ref, gone))
    : sub
      ? rewriteSublink(st.sql, (body) => excludeTuples(body, 'select', sub.ref, gone))
      : target && (verb === 'select' || verb === 'update' || verb === 'delete')
        ? excludeTuples(st.sql, verb, target.ref, gone)
        : null;
  return sql ? { ...st, sql } : st;
}

/** After a wait under READ COMMITTED: the statement restricted to the rows it first found (EvalPlanQual). */
export function epqStatement(eng: EngineContext, s: Sess, st: ParsedStatement): ParsedStatement {
  const epq = s.step?.epq;
  if (!epq || s.txn?.isolation !== 'read committed' || st.cls.kind !== 'dml') return st;
  // Under the statement's own snapshot the scan is the first run's: nothing to restrict, only
  // the rows deleted since then to pass over.
  const kept = s.step?.stmtSnapshot;
  if (usesStatementSnapshot(s.txn.isolation, kept)) return kept.gone?.length ? withoutGone(st, kept.gone) : st;
  // With a new snapshot, only the target is restricted: the other tables are read afresh.
  if (st.cls.relations.length > 1) approximate(eng, s, 'join-recheck');
  const seen: SeenRows | undefined =
    epq.horizon !== undefined ? { horizon: epq.horizon, ...(epq.beyond ? { beyond: epq.beyond } : {}) } : undefined;
  const cte = st.cls.lockingCte;
  if (cte) {
    const sql = restrictCte(st.sql, cte.name, cte.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], seen, epq.ordered);
    return sql ? { sql, cls: st.cls } : st;
  }
  const sub = st.cls.lockingSublink;
  if (sub) {
    const sql = restrictSublink(st.sql, sub.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], seen, epq.ordered);
    return sql ? { sql, cls: st.cls } : st;
  }
  const merge = st.cls.mergeTarget;
  if (merge && !st.cls.target && seen && !epq.children) {
    const sql = restrictMerge(st.sql, merge.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], seen);
    return sql ? { sql, cls: st.cls } : st;
  }
  if (!st.cls.target) return st;
  const verb = st.cls.verb;
  if (verb !== 'select' && verb !== 'update' && verb !== 'delete') return st;
  // An UPDATE or DELETE whose quals call a user's function or whose table has triggers can raise
  // notices for each row it scans: its rows' notices are marked and put in the scan's order.
  const target = eng.catalog.find((c) => c.oid === epq.oid);
  const marked =
    verb !== 'select' &&
    epq.seenBefore !== undefined &&
    !epq.children &&
    !st.cls.currentOf &&
    st.cls.relations.length === 1 &&
    (target?.triggersOrRules || calledFunctionNames(st.sql).length > 0);
  const sql = marked
    ? restrictToTuples(st.sql, verb, st.cls.target.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], epq.seenBefore, false, ROW_MARK_FUNCTIONS)
    : restrictToTuples(st.sql, verb, st.cls.target.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], seen, epq.ordered);
  if (!sql) return st;
  const rowMarks =
    marked && target && sql.includes(ROW_MARK_FUNCTIONS.row)
      ? { rowMarks: { table: target.name, origin: epq.origin ?? {}, ...(epq.waitedAt ? { waitedAt: epq.waitedAt } : {}) } }
      : {};
  // One target table, scanned in its own order: the rows can be put back where the scan met them.
  const tagged =
    st.cls.relations.length === 1 && !st.cls.currentOf && st.cls.waitPolicy !== 'skip'
      ? tagOrder(sql, verb, st.cls.target.ref, epq.children !== undefined)
      : null;
  return tagged ? { sql: tagged, cls: st.cls, orderTag: true, ...rowMarks } : { sql, cls: st.cls, ...rowMarks };
}

/**
 * An order-tagged re-run's rows (epq.ts, tagOrder): the tag column comes off, and when every row
 * is one the scan first found, rows and plan go back to the order the scan met them in. Returns
 * whether that order is now the first scan's.
 */
function restoreScanOrder(s: Sess, dry: DryRun): boolean {
  const result = dry.raw.results.at(-1);
  const epq = s.step?.epq;
  if (!result?.columns?.length || result.columns.at(-1) !== ORDER_COLUMN) return false;
  result.columns = result.columns.slice(0, -1);
  const rows = result.rows ?? [];
  const tags = rows.map((r) => r.at(-1) ?? '');
  result.rows = rows.map((r) => r.slice(0, -1));
  if (!epq) return false;
  const rank = (ctid: string) => epq.ctids.indexOf(ctid);
  if (tags.some((c) => rank(c) < 0)) return false;
  const order = result.rows.map((_, i) => i).sort((a, b) => rank(tags[a]) - rank(tags[b]));
  result.rows = order.map((i) => result.rows![i]);
  // The plan's rows of the target, too: later waits come in the scan's order.
  const slots = dry.plan.flatMap((p, i) => (p.kind === 'row' && epqCovers(epq, p.tuple.oid) ? [i] : []));
  const items = slots.map((i) => dry.plan[i] as Extract<PlanItem, { kind: 'row' }>);
  const key = (p: Extract<PlanItem, { kind: 'row' }>) => {
    const r = rank(epqKey(epq, p.tuple));
    return r < 0 ? Number.MAX_SAFE_INTEGER : r;
  };
  const sorted = items.map((p, i) => ({ p, i })).sort((a, b) => key(a.p) - key(b.p) || a.i - b.i);
  slots.forEach((slot, k) => (dry.plan[slot] = sorted[k].p));
  return true;
}

/**
 * The notices a statement raised before the row it now waits for (noticesBeforeRowWait) go to
 * the client at once, as PostgreSQL sends them: the step's notices grow while it waits. The part
 * an earlier wait of the same statement sent already is not sent twice.
 */
function sendBeforeWait(s: Sess, before: readonly PgMessage[]): void {
  const step = s.step!;
  const sent = step.sentBeforeWait ?? [];
  const fresh = startsWith(before, sent) ? before.slice(sent.length) : before;
  step.notices.push(...fresh);
  step.sentBeforeWait = [...sent, ...fresh];
}

/**
 * A run's notices less those the statement sent before its waits. A re-run under the statement's
 * own snapshot (and an INSERT's, which forms the same row again) raises them again first: the
 * scan PostgreSQL goes on with had raised them once. So does a re-run with a new snapshot
 * (EvalPlanQual emulated, pg/stmtSnapshot.ts) when what ran before the scan raised them (a DO
 * block's earlier RAISE); but PostgreSQL's recheck of the waited row's newest version raises its
 * quals' notices again, and the re-run cannot tell those apart: said on screen.
 */
function unsentNotices(eng: EngineContext, s: Sess, notices: readonly PgMessage[], st?: ParsedStatement): PgMessage[] {
  const sent = s.step?.sentBeforeWait;
  if (!sent?.length) return [...notices];
  // A row-marked re-run's notices are already those raised after the wait (orderRowNotices).
  if (st?.rowMarks?.waitedAt !== undefined) return [...notices];
  if (s.step?.stmtSnapshot?.fresh) approximate(eng, s, 'notices-wait');
  return startsWith(notices, sent) ? notices.slice(sent.length) : [...notices];
}

function startsWith(all: readonly PgMessage[], prefix: readonly PgMessage[]): boolean {
  return prefix.length <= all.length && prefix.every((n, i) => JSON.stringify(n) === JSON.stringify(all[i]));
}

/**
 * The notices an UPDATE or DELETE (or an upsert) raised before it reached the row it waits for: a dry run again
 * (same snapshot, nothing changed since), with a marker at that row (pg/inject.ts, waitMarkSql).
 * Undefined when the wait is not at a row the statement updates or deletes (a locking SELECT, a
 * foreign-key check, a trigger's own statement), or the marker was not reached.
 */
async function noticesBeforeRowWait(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<PgMessage[] | undefined> {
  const w = s.step?.wait;
  const tuple: TupleId | undefined =
    w?.tuple ??
    (w?.tag.type === 'tuple' ? { oid: w.tag.oid, relation: w.tag.relation, block: w.tag.block, offset: w.tag.offset } : undefined);
  if (!tuple || st.cls.kind !== 'dml' || st.cls.lockingSelect) return undefined;
  // ON CONFLICT DO UPDATE locks the conflicting row (ExecOnConflictUpdate) right after the new
  // row's BEFORE INSERT triggers, before its own WHERE clause runs.
  if (st.cls.verb === 'insert') return noticesBeforeKeyWait(eng, s, st);
  const marked = await markedRun(
    eng,
    s,
    st,
    waitMarkSql(tuple, (n) => relSql(eng, n)),
  );
  return marked && noticesBeforeMark(marked);
}

/**
 * The notices a one-row INSERT raised before its unique check waited on a duplicate key: up to
 * the end of its BEFORE triggers (a dry run again, with a marker there: pg/inject.ts,
 * insertMarkSql). Undefined for an INSERT of several rows (which one waited is not marked).
 */
async function noticesBeforeKeyWait(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<PgMessage[] | undefined> {
  const relation = st.cls.kind === 'dml' && st.cls.verb === 'insert' ? st.cls.relations[0] : undefined;
  if (!relation) return undefined;
  const marked = await markedRun(
    eng,
    s,
    st,
    insertMarkSql(relation, (n) => relSql(eng, n)),
  );
  return marked && markCount(marked) === 1 ? noticesBeforeMark(marked) : undefined;
}

/**
 * The notices of a dry run again with `marks` (pg/inject.ts) run first, giving back the sequence
 * values it takes; undefined when the engine cannot stage it.
 */
async function markedRun(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  marks: { sql: string; count: number },
): Promise<PgMessage[] | undefined> {
  return (await probeRun(eng, s, st, marks))?.raw.notices;
}

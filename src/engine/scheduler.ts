/** Running steps, waking waiters and firing timers on the virtual clock. */
import type { EngineContext } from './context';
import {
  cancelWaitIfAny,
  deadlockError,
  deadlockVictim,
  failWaitingStep,
  grantWait,
  releaseTupleLocks,
  setSessionAdvisory,
} from './model/acquire';
import { logLockWait, logStepMessages, timeoutLog } from './model/logLines';
import { PG } from './model/messages';
import type { TimerKind } from './model/timers';
import { maybeUnpin } from './pg/replay';
import { cancelTimers, event, queueResumes, type Sess, sess } from './state';
import { epqStatement, execDml, execStatement } from './statement';
import { approximate } from './model/approximate';
import { EngineInternalError } from './errors';
import type { TupleId } from './model/rowlocks';
import { restoreSequences, sequenceStates } from './pg/catalog';
import { dryRun } from './pg/dryRun';
import { isInjectedError } from './pg/inject';
import type { PgMessage } from './types';
import { commitTxn, endTxn, execTxnControl, setConstraints } from './transaction';
import type { ParsedStatement } from './sql';
import { logEntry } from './view/serverLog';

/** Runs the step's statements from the current one until one waits, sleeps or fails, then ends the step. */
export async function runStep(eng: EngineContext, s: Sess): Promise<void> {
  const step = s.step!;
  while (!step.done && step.idx < step.statements.length) {
    const st = step.statements[step.idx];
    const outcome = await execStatement(eng, s, st);
    if (outcome === 'wait' || outcome === 'sleep') return;
    if (outcome === 'error') {
      step.done = true;
      break;
    }
    step.idx++;
  }
  if (!step.done || step.error) {
    step.done = true;
  }
  await endOfStep(eng, s);
}

/** End of a simple-protocol query: commit or roll back an implicit block; report. */
export async function endOfStep(eng: EngineContext, s: Sess): Promise<void> {
  const step = s.step!;
  // A COMMIT that failed while its deferred checks waited (a deadlock, a timeout, a cancel)
  // rolls the whole transaction back, savepoints and all.
  if (step.error && (step.deferredWait === 'commit' || step.deferredWait === 'implicit') && s.txn) await endTxn(eng, s, false);
  step.deferredWait = undefined;
  if (s.txn?.implicit) {
    if (step.error || s.txn.aborted) await endTxn(eng, s, false);
    else {
      const err = await commitTxn(eng, s);
      if (err === 'wait') {
        // The step is not over: it waits in its commit.
        step.done = false;
        step.deferredWait = 'implicit';
        return;
      }
      if (err) {
        step.error = err;
        // The last statement's command tag goes out after the commit (exec_simple_query's
        // finish_xact_command comes before EndCommand): a failed commit sends none.
        if (step.results.length >= step.statements.length) step.results.pop();
      }
    }
  }
  finishStep(eng, s);
}

/** The step is done: its messages reach the server log, the session's history gets it, idle timers start. */
export function finishStep(eng: EngineContext, s: Sess): void {
  const step = s.step!;
  step.done = true;
  logStepMessages(eng, s);
  s.last = { step: step.name, results: step.results, notices: step.notices, ...(step.error ? { error: step.error } : {}) };
  s.history.push({
    ...s.last,
    sql: step.sql,
    startedMs: step.startedMs,
    endedMs: eng.clock,
    ...(step.approximations ? { approximations: [...step.approximations] } : {}),
  });
  s.stateChangeMs = eng.clock;
  event(eng, {
    type: 'step-done',
    atMs: eng.clock,
    session: s.name,
    step: step.name,
    ok: !step.error,
    ...(step.error ? { sqlstate: step.error.sqlstate } : {}),
  });
  if (s.txn && !s.txn.implicit && s.timeouts.idle > 0 && !s.terminated)
    eng.timers.set(s.name, 'idle_in_transaction_session_timeout', eng.clock + s.timeouts.idle);
}

/** Resumes every woken session whose lock is now granted, in wake order. */
export async function drainResumes(eng: EngineContext): Promise<void> {
  await maybeUnpin(eng);
  while (eng.resumeQueue.length || eng.signals.length) {
    const signal = eng.signals.shift();
    if (signal) {
      await deliverSignal(eng, signal);
      continue;
    }
    const name = eng.resumeQueue.shift()!;
    const s = sess(eng, name);
    const step = s.step;
    if (!step || step.done || !step.wait) continue;
    if (eng.lm.waitingFor(s.proc)) continue; // still queued (e.g. woken by a partial release)
    await resume(eng, s);
  }
}

/**
 * A pg_cancel_backend / pg_terminate_backend call reaches its session once the calling statement
 * is done (the signal is handled at the target's next CHECK_FOR_INTERRUPTS). A cancel fails the
 * running step, as a client's cancel request does, and does nothing to an idle session; a
 * terminate ends the backend: its running step fails with the FATAL (an idle session's next
 * command reads it), its transaction aborts, and its session-level advisory locks go.
 */
async function deliverSignal(eng: EngineContext, signal: { kind: 'cancel' | 'terminate'; pid: number }): Promise<void> {
  const t = [...eng.sessions.values()].find((x) => x.pid === signal.pid && !x.terminated);
  if (!t) return;
  const running = !!t.step && !t.step.done;
  if (signal.kind === 'cancel') {
    if (!running) return;
    const error = PG.userCancel(t.step!.wait?.context);
    if (await catchInBlock(eng, t, error)) return;
    t.step!.error = error;
    failWaitingStep(eng, t);
    await endOfStep(eng, t);
    return;
  }
  const fatal = PG.adminTerminate();
  t.terminated = fatal;
  t.terminatedAtMs = eng.clock;
  cancelTimers(eng, t, ['idle_in_transaction_session_timeout']);
  if (running) {
    const context = t.step!.wait?.context;
    t.step!.error = { ...fatal, ...(context ? { context } : {}) };
    t.terminationReported = true;
    failWaitingStep(eng, t);
    await endOfStep(eng, t);
  } else eng.serverLog.push(...logEntry(eng.clock, t.pid, 'FATAL', fatal.message));
  if (t.txn) await endTxn(eng, t, false);
  setSessionAdvisory(eng, t, [], []);
}

/**
 * An error raised while the statement waits (`error`: a deadlock, a timeout, a cancel), when the
 * statement runs a PL/pgSQL block with an EXCEPTION clause and waits for a row it updates or
 * deletes: PostgreSQL raises the error inside the block, where a handler may catch it. A dry run
 * that raises the same error at that row (pg/inject.ts) tells whether one does. Caught, the
 * block's subtransaction rolls back (its locks go at the next plan walk, releaseCaught), the wait
 * ends without an error in the server log (a caught error is never reported), and the statement
 * goes on as after a wake-up, its later dry runs raising the error again at that row. Returns
 * false when the statement fails with the error as usual: no such block, another kind of wait
 * (said on screen), or no handler for the error.
 */
async function catchInBlock(eng: EngineContext, s: Sess, error: PgMessage, caught?: () => void): Promise<boolean> {
  const step = s.step;
  if (!step?.catches || step.done || !step.wait) return false;
  const w = step.wait;
  const tuple: TupleId | undefined =
    w.tuple ??
    (w.tag.type === 'tuple' ? { oid: w.tag.oid, relation: w.tag.relation, block: w.tag.block, offset: w.tag.offset } : undefined);
  const st = step.statements[step.idx];
  // Only a block the statement runs itself is known to be around the wait: a trigger's may not be.
  if (!tuple) {
    if (step.catches === 'direct') approximate(eng, s, 'exception-block');
    return false;
  }
  const injected = [...(step.injected ?? []), { tuple, error }];
  const before = step.injected;
  step.injected = injected;
  const seqs = await sequenceStates(eng);
  let verdict: 'caught' | 'uncaught' | 'unknown';
  try {
    const dry = await dryRun(eng, s, epqStatement(eng, s, st));
    verdict = !dry.injectedFired ? 'unknown' : isInjectedError(dry.raw, error) ? 'uncaught' : 'caught';
  } catch (e) {
    if (!(e instanceof EngineInternalError)) throw e;
    verdict = 'unknown';
  } finally {
    await restoreSequences(eng, seqs);
  }
  if (verdict !== 'caught') {
    step.injected = before;
    if (verdict === 'unknown' && step.catches === 'direct') approximate(eng, s, 'exception-block');
    return false;
  }
  caught?.();
  step.caught = { heldFrom: step.heldFrom ?? 0 };
  cancelTimers(eng, s, ['deadlock_timeout', 'lock_timeout']);
  queueResumes(eng, cancelWaitIfAny(eng, s));
  releaseTupleLocks(eng, s);
  step.wait = undefined;
  const outcome = await execDml(eng, s, st);
  if (outcome === 'wait') return true;
  if (outcome === 'error') {
    step.done = true;
    await endOfStep(eng, s);
    return true;
  }
  step.idx++;
  await runStep(eng, s);
  return true;
}

/** The session's lock was granted: continue its statement. */
export async function resume(eng: EngineContext, s: Sess): Promise<void> {
  const step = s.step!;
  grantWait(eng, s);
  const st = step.statements[step.idx];
  const deferred = step.deferredWait;
  step.deferredWait = undefined;
  // A wait in deferred constraint checks: they run again (the implicit commit, COMMIT, or SET CONSTRAINTS).
  if (deferred === 'implicit') return endOfStep(eng, s);
  // Re-execute the statement against the new state (READ COMMITTED re-check; rows already locked stay locked).
  const outcome = deferred ? await deferredAgain(eng, s, st) : await execDml(eng, s, st);
  if (outcome === 'wait') return;
  if (outcome === 'error') {
    step.done = true;
    await endOfStep(eng, s);
    return;
  }
  step.idx++;
  await runStep(eng, s);
}

/** A COMMIT or SET CONSTRAINTS … IMMEDIATE whose deferred checks waited: the checks again. */
async function deferredAgain(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
  const cls = st.cls;
  if (cls.kind === 'txn') return execTxnControl(eng, s, cls.ctl);
  if (cls.kind !== 'dml' || !cls.constraintsSet) throw new EngineInternalError(`a deferred check waited in "${st.sql}"`);
  const outcome = await setConstraints(eng, s, cls.constraintsSet, true);
  if (outcome === 'ok') s.step!.results.push({ command: 'SET CONSTRAINTS' });
  return outcome;
}

/** A timer fired: pg_sleep ends, the deadlock check runs, or a timeout fails the step. */
export async function fire(eng: EngineContext, name: string, kind: TimerKind): Promise<void> {
  const s = sess(eng, name);
  const step = s.step;
  switch (kind) {
    case 'pg_sleep': {
      if (!step || step.sleepUntil === undefined) return;
      step.sleepUntil = undefined;
      cancelTimers(eng, s, ['statement_timeout']);
      step.results.push({ command: 'SELECT 1', columns: ['pg_sleep'], rows: [['']] });
      step.idx++;
      await runStep(eng, s);
      return;
    }
    case 'deadlock_timeout': {
      if (!step?.wait) return;
      const r = eng.lm.checkDeadlock(s.proc);
      event(eng, {
        type: 'deadlock-check',
        atMs: eng.clock,
        session: name,
        result: r.kind,
        cycle: r.kind === 'hard' ? r.report.edges.map((e) => e.waiter as string) : [],
      });
      const w = step.wait;
      w.checked = true;
      if (r.kind === 'hard') {
        // CheckDeadLock takes the victim off the queue (waking those behind it) before ProcSleep logs.
        queueResumes(eng, eng.lm.cancelWait(s.proc));
        logLockWait(eng, s, w, 'detected-deadlock');
        const found = deadlockError(eng, s, r.report, w.context, w.position);
        if (
          await catchInBlock(eng, s, found.error, () => {
            eng.lastDeadlock = { cycle: found.cycle, victim: s.name, atMs: eng.clock };
            event(eng, { type: 'deadlock', atMs: eng.clock, victim: s.name, cycle: found.cycle });
          })
        )
          return;
        deadlockVictim(eng, s, r.report, w.context, w.position);
        await endOfStep(eng, s);
        return;
      }
      if (r.kind === 'soft') {
        logLockWait(eng, s, w, 'avoided-deadlock');
        queueResumes(eng, r.woken);
      }
      if (eng.lm.waitingFor(s.proc)) logLockWait(eng, s, w, 'still-waiting');
      return;
    }
    case 'lock_timeout': {
      if (!step?.wait) return;
      const error = { ...PG.lockTimeout(step.wait.context), ...(step.wait.position ? { position: step.wait.position } : {}) };
      if (await catchInBlock(eng, s, error, () => event(eng, { type: 'timeout', atMs: eng.clock, session: name, kind }))) return;
      step.error = error;
      timeoutLog(eng, s, step.error);
      event(eng, { type: 'timeout', atMs: eng.clock, session: name, kind });
      failWaitingStep(eng, s);
      await endOfStep(eng, s);
      return;
    }
    case 'statement_timeout': {
      if (!step || step.done) return;
      const error = PG.statementTimeout(step.wait?.context);
      if (await catchInBlock(eng, s, error, () => event(eng, { type: 'timeout', atMs: eng.clock, session: name, kind }))) return;
      step.error = error;
      timeoutLog(eng, s, step.error);
      event(eng, { type: 'timeout', atMs: eng.clock, session: name, kind });
      failWaitingStep(eng, s);
      await endOfStep(eng, s);
      return;
    }
    case 'idle_in_transaction_session_timeout': {
      if (!s.txn || (step && !step.done)) return;
      event(eng, { type: 'timeout', atMs: eng.clock, session: name, kind });
      const fatal = PG.idleInTransactionTimeout();
      eng.serverLog.push(...logEntry(eng.clock, s.pid, 'FATAL', fatal.message));
      s.terminated = fatal;
      s.terminatedAtMs = eng.clock;
      await endTxn(eng, s, false);
      // The backend exits: after aborting its transaction it lets go of its session-level
      // advisory locks too (ShutdownPostgres's LockReleaseAll(USER_LOCKMETHOD, true)).
      setSessionAdvisory(eng, s, [], []);
      return;
    }
  }
}

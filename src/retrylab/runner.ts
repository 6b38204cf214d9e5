/**
 * The lab's scheduler: N workers, each a client running the course's WithRetry loop over one
 * engine session. Every statement goes through the real engine (PGlite + lock model); time is
 * the engine's virtual clock: think time and backoff sleeps advance it, and lock waits end
 * when other workers commit or when the engine's timers (deadlock_timeout, lock_timeout) fire.
 * Deterministic for a seed: no wall clock and no Math.random decide anything.
 */
import { Engine, PgliteExecutor } from '../engine';
import type { StepResult } from '../scenario/types';
import { backoffMs, hasNextAttempt, isRetryable, outcomeOf } from './policy';
import { createRng, type Rng } from './prng';
import { mixSeed, percentiles } from './stats';
import type { AttemptOutcome, AttemptRecord, LabConfig, LabProgress, LabResult, ScheduledStatement } from './types';
import { workloadOf, type StepContext, type TxPlan } from './workloads';

/** Options that do not change the outcome of a run. */
export interface RunOptions {
  /** Reuse a PGlite executor (it is reset first); otherwise one is created and closed. */
  executor?: PgliteExecutor;
  onProgress?: (p: LabProgress) => void;
  /** Report progress every this many finished transactions (default 10). */
  progressEvery?: number;
  /** Checked between statements; a cancelled run returns its partial result. */
  signal?: { readonly aborted: boolean };
  /** Awaited at each progress report (a Worker yields here so it can receive "cancel"). */
  yieldToHost?: () => Promise<void>;
  /** Keep the statement schedule (for replaying as an isolation spec). */
  recordSchedule?: boolean;
  /** Attempts kept for the timeline (default 400). */
  timelineLimit?: number;
  /** Wall clock for wallMs only (default performance.now). */
  wallClock?: () => number;
}

type Pending = { kind: 'set' | 'begin' | 'body' | 'commit' | 'rollback'; sql: string };

interface Worker {
  index: number;
  name: string;
  phase: 'ready' | 'waiting' | 'finished';
  readyAt: number;
  pending: Pending;
  planRng: Rng;
  timeRng: Rng;
  setups: string[];
  tx: number;
  plan: TxPlan | null;
  attempt: number;
  stepIdx: number;
  ctx: StepContext;
  empty: boolean;
  txStart: number;
  attemptStart: number;
  attemptStatements: number;
  waitStart: number | null;
  waits: [number, number][];
  failed: { sqlstate?: string } | null;
  scheduleIdx: number;
}

/** Runs one lab configuration to the end (or until cancelled) and measures it. */
export async function runLab(cfg: LabConfig, opts: RunOptions = {}): Promise<LabResult> {
  const workload = workloadOf(cfg.workload);
  if (!workload.strategies.includes(cfg.strategy))
    throw new Error(`strategy ${cfg.strategy} does not apply to workload ${cfg.workload} (use one of ${workload.strategies.join(', ')})`);
  if (!(cfg.workers >= 1 && cfg.workers <= 8)) throw new Error('workers must be from 1 to 8');
  const wall = opts.wallClock ?? (() => performance.now());
  const wallStart = wall();
  const ownExecutor = !opts.executor;
  const ex = opts.executor ?? (await PgliteExecutor.create());
  if (!ownExecutor) await ex.reset();
  const names = Array.from({ length: cfg.workers }, (_, i) => `w${i + 1}`);
  const engine = await Engine.create({ sessions: names, executor: ex });
  const setup = await engine.setup(workload.setup(cfg));
  if (setup.error) throw new Error(`workload setup failed: ${setup.error.message}`);
  // Start-up (PGlite, parser, setup) is reported apart: wallMs measures the workers only.
  const startupMs = wall() - wallStart;
  const loopStart = wall();

  const sessionSets: string[] = [];
  if (cfg.deadlockTimeoutMs !== 1000) sessionSets.push(`SET deadlock_timeout = '${cfg.deadlockTimeoutMs}ms'`);
  if (cfg.lockTimeoutMs > 0) sessionSets.push(`SET lock_timeout = '${cfg.lockTimeoutMs}ms'`);

  const stats = {
    committed: 0,
    emptyCommits: 0,
    deadlocks: 0,
    serializationFailures: 0,
    lockTimeouts: 0,
    otherErrors: 0,
    retries: 0,
    giveUps: 0,
    attempts: 0,
    statements: 0,
    wastedStatements: 0,
    wastedMs: 0,
    lockWaitMs: 0,
    backoffMs: 0,
  };
  const latencies: number[] = [];
  const timeline: AttemptRecord[] = [];
  const timelineLimit = opts.timelineLimit ?? 400;
  const schedule: ScheduledStatement[] = [];
  const total = cfg.workers * cfg.transactions;
  let finished = 0;
  let nextReport = opts.progressEvery ?? 10;

  const workers: Worker[] = names.map((name, index) => ({
    index,
    name,
    phase: 'ready',
    readyAt: 0,
    pending: { kind: 'begin', sql: '' },
    planRng: createRng(mixSeed(cfg.seed, index, 1)),
    timeRng: createRng(mixSeed(cfg.seed, index, 2)),
    setups: [...sessionSets],
    tx: 0,
    plan: null,
    attempt: 0,
    stepIdx: 0,
    ctx: { results: [] },
    empty: false,
    txStart: 0,
    attemptStart: 0,
    attemptStatements: 0,
    waitStart: null,
    waits: [],
    failed: null,
    scheduleIdx: -1,
  }));

  const think = (w: Worker) => (cfg.thinkMs > 0 ? Math.round(cfg.thinkMs * (0.5 + w.timeRng())) : 0);
  const beginSql = cfg.isolation === 'read committed' ? 'BEGIN' : `BEGIN ISOLATION LEVEL ${cfg.isolation.toUpperCase()}`;
  const setPending = (w: Worker, p: Pending, at: number) => {
    w.pending = p;
    w.readyAt = at;
    w.phase = 'ready';
  };

  const startTx = (w: Worker, at: number) => {
    if (w.setups.length) return setPending(w, { kind: 'set', sql: w.setups.shift()! }, at);
    if (w.tx >= cfg.transactions) {
      w.phase = 'finished';
      return;
    }
    w.plan = workload.plan(cfg, w.planRng, w.index, w.tx);
    w.attempt = 0;
    w.txStart = at;
    startAttempt(w, at);
  };
  const startAttempt = (w: Worker, at: number) => {
    w.stepIdx = 0;
    w.ctx = { results: [] };
    w.empty = false;
    w.waits = [];
    w.attemptStatements = 0;
    w.attemptStart = at;
    stats.attempts++;
    setPending(w, { kind: 'begin', sql: beginSql }, at);
  };
  const nextBody = (w: Worker, now: number) => {
    const steps = w.plan!.steps;
    const sql = w.stepIdx < steps.length ? steps[w.stepIdx](w.ctx) : null;
    if (sql === null) {
      w.empty = w.stepIdx < steps.length;
      return setPending(w, { kind: 'commit', sql: 'COMMIT' }, now + think(w));
    }
    setPending(w, { kind: 'body', sql }, now + think(w));
  };
  const record = (w: Worker, outcome: AttemptOutcome, now: number, sqlstate?: string, backoff?: number) => {
    if (outcome !== 'commit') {
      stats.wastedStatements += w.attemptStatements;
      stats.wastedMs += now - w.attemptStart;
    }
    if (timeline.length >= timelineLimit) return;
    timeline.push({
      worker: w.index,
      tx: w.tx,
      attempt: w.attempt,
      startMs: w.attemptStart,
      endMs: now,
      outcome,
      ...(sqlstate ? { sqlstate } : {}),
      waits: w.waits,
      ...(backoff !== undefined ? { backoffMs: backoff } : {}),
    });
  };
  const countError = (sqlstate: string | undefined) => {
    const o = outcomeOf(sqlstate);
    if (o === 'deadlock') stats.deadlocks++;
    else if (o === 'serialization') stats.serializationFailures++;
    else if (o === 'lock-not-available') stats.lockTimeouts++;
    else stats.otherErrors++;
  };
  const endTx = (w: Worker, at: number, committed: boolean, now: number) => {
    if (committed) {
      stats.committed++;
      if (w.empty) stats.emptyCommits++;
      latencies.push(now - w.txStart);
    } else stats.giveUps++;
    finished++;
    w.tx++;
    startTx(w, at);
  };
  // WithRetry's decision after a failed run (body or COMMIT): a retryable error sleeps the
  // backoff and runs again while attempts remain; the last run gives up without sleeping.
  const afterFailure = (w: Worker, sqlstate: string | undefined, retryable: boolean, now: number) => {
    if (retryable && hasNextAttempt(cfg.policy, w.attempt)) {
      const sleep = backoffMs(cfg.policy, w.attempt, w.timeRng);
      stats.backoffMs += sleep;
      stats.retries++;
      record(w, outcomeOf(sqlstate), now, sqlstate, sleep);
      w.attempt++;
      return startAttempt(w, now + sleep);
    }
    record(w, outcomeOf(sqlstate), now, sqlstate);
    return endTx(w, now + think(w), false, now);
  };

  const onDone = (w: Worker, r: StepResult, now: number) => {
    if (w.waitStart !== null) {
      w.waits.push([w.waitStart, now]);
      stats.lockWaitMs += now - w.waitStart;
      w.waitStart = null;
    }
    if (opts.recordSchedule && w.scheduleIdx >= 0) {
      const s = schedule[w.scheduleIdx];
      s.outcome = r.error ? 'error' : 'ok';
      if (r.error) s.sqlstate = r.error.sqlstate;
    }
    const err = r.error?.sqlstate;
    switch (w.pending.kind) {
      case 'set':
        if (r.error) throw new Error(`${w.pending.sql} failed: ${r.error.message}`);
        return startTx(w, now);
      case 'begin':
        if (r.error) throw new Error(`BEGIN failed: ${r.error.message}`);
        return nextBody(w, now);
      case 'body':
        if (r.error) {
          // fn(tx) failed: count it, roll back at once (tx.Rollback), then decide.
          countError(err);
          w.failed = { sqlstate: err };
          return setPending(w, { kind: 'rollback', sql: 'ROLLBACK' }, now);
        }
        w.ctx.results.push(r.results.at(-1)?.rows ?? []);
        w.stepIdx++;
        return nextBody(w, now);
      case 'commit': {
        if (!r.error) {
          record(w, 'commit', now);
          return endTx(w, now + think(w), true, now);
        }
        // A failed COMMIT ends the transaction in PostgreSQL: no ROLLBACK needed. Checked, it
        // takes the same path as a failed body (same backoff); unchecked, it is returned as is.
        countError(err);
        return afterFailure(w, err, cfg.policy.checkCommit && isRetryable(cfg.policy, err), now);
      }
      case 'rollback': {
        const failedState = w.failed?.sqlstate;
        w.failed = null;
        return afterFailure(w, failedState, isRetryable(cfg.policy, failedState), now);
      }
    }
  };

  const send = async (w: Worker) => {
    const now = engine.now();
    if (w.pending.kind !== 'set') w.attemptStatements++;
    stats.statements++;
    if (opts.recordSchedule) {
      w.scheduleIdx = schedule.length;
      schedule.push({ worker: w.index, sql: w.pending.sql, atMs: now, status: 'done' });
    }
    const status = await engine.submit(w.name, w.pending.sql);
    if (status === 'done') return onDone(w, engine.takeResult(w.name)!, engine.now());
    if (status !== 'waiting') throw new Error(`unexpected engine status ${status} for ${w.pending.sql}`);
    if (opts.recordSchedule) schedule[w.scheduleIdx].status = 'waiting';
    w.phase = 'waiting';
    w.waitStart = now;
  };
  const collect = () => {
    for (const w of workers) {
      if (w.phase !== 'waiting' || engine.statusOf(w.name) !== 'done') continue;
      onDone(w, engine.takeResult(w.name)!, engine.now());
    }
  };

  for (const w of workers) startTx(w, 0);
  let cancelled = false;
  for (;;) {
    if (opts.signal?.aborted) {
      cancelled = true;
      break;
    }
    let next: Worker | null = null;
    let anyWaiting = false;
    for (const w of workers) {
      if (w.phase === 'waiting') anyWaiting = true;
      if (w.phase === 'ready' && (!next || w.readyAt < next.readyAt)) next = w;
    }
    if (!next && !anyWaiting) break;
    const timer = engine.nextTimerAt();
    if (next && (timer === null || next.readyAt < timer)) {
      if (next.readyAt > engine.now()) await engine.advance(next.readyAt - engine.now());
      await send(next);
    } else if (timer !== null) {
      await engine.advanceToNextTimer();
    } else {
      throw new Error('lab stalled: every worker waits on a lock and no timer is pending');
    }
    collect();
    if (finished >= nextReport) {
      nextReport = finished + (opts.progressEvery ?? 10);
      opts.onProgress?.({
        finished,
        total,
        committed: stats.committed,
        deadlocks: stats.deadlocks,
        virtualMs: engine.now(),
        wallMs: wall() - loopStart,
      });
      await opts.yieldToHost?.();
    }
  }

  const inv = await ex.run(workload.invariantSql);
  const verdict = inv.error
    ? { holds: false, detail: `invariant query failed: ${inv.error.message}` }
    : workload.checkInvariant(inv.results.at(-1)?.rows ?? [], cfg, stats.committed - stats.emptyCommits);
  const virtualMs = engine.now();
  const wallMs = wall() - loopStart;
  if (ownExecutor) await ex.close();
  opts.onProgress?.({ finished, total, committed: stats.committed, deadlocks: stats.deadlocks, virtualMs, wallMs });
  return {
    config: cfg,
    ...stats,
    virtualMs,
    wallMs: Math.round(wallMs),
    startupMs: Math.round(startupMs),
    throughput: virtualMs > 0 ? (stats.committed * 1000) / virtualMs : 0,
    latency: percentiles(latencies),
    invariant: { holds: verdict.holds, description: workload.invariant, detail: verdict.detail },
    cancelled,
    timeline,
    ...(opts.recordSchedule ? { schedule } : {}),
  };
}

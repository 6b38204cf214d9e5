/**
 * The Lockstep engine: several PostgreSQL sessions on one PGlite. This class is the thin async
 * orchestrator: it sequences pg/ (PGlite works out facts about each statement in a rolled-back
 * dry run) and model/ (the pure lock model decides grants, waits and deadlock victims on a
 * virtual clock) over one EngineContext. See docs/engine.md for the map and the protocol.
 */
import { newContext, type EngineContext } from './context';
import { failWaitingStep } from './model/acquire';
import { PG } from './model/messages';
import { vOid } from './model/present';
import { abortTxnState } from './model/txn';
import { refreshCatalog } from './pg/catalog';
import { refreshSessionGucs } from './pg/gucs';
import { PgliteExecutor } from './pg/executor';
import { drainResumes, endOfStep, finishStep, fire, runStep } from './scheduler';
import { loadParser, ParseFailure, parseStatements } from './sql';
import { addSession, cancelTimers, event, type RunningStep, sess, statusOf, type StepStatus } from './state';
import type { EngineSnapshot, PgMessage, RawResult, StepResult } from './types';
import { snapshotOf } from './view/snapshot';
import { refreshTablesOf } from './pg/tables';

/** The catalog an engine read after its setup (Engine.setupState). */
export interface SetupState {
  readonly catalog: EngineContext['catalog'];
  readonly relations: EngineContext['relations'];
  readonly sequences: readonly string[];
  readonly oidBase: number | null;
  readonly exceptionFunctions?: ReadonlySet<string>;
  readonly userFunctions?: boolean;
}

/** Options for Engine.create. */
export interface EngineOptions {
  sessions: string[];
  executor?: PgliteExecutor;
}

export type { StepStatus } from './state';

/** The multi-session engine. All methods must be awaited one at a time. */
export class Engine {
  private readonly eng: EngineContext;

  private constructor(ex: PgliteExecutor) {
    this.eng = newContext(ex);
  }

  /** Creates an engine with named sessions (2 to 8 in the app; any number here). */
  static async create(opts: EngineOptions): Promise<Engine> {
    await loadParser();
    const ex = opts.executor ?? (await PgliteExecutor.create());
    const e = new Engine(ex);
    opts.sessions.forEach((name, index) => addSession(e.eng, name, index));
    await refreshSessionGucs(e.eng);
    return e;
  }

  /** The executor (for tools that need raw access, e.g. table views). */
  get executor(): PgliteExecutor {
    return this.eng.ex;
  }

  /** Runs committed setup SQL outside any session (isolationtester "setup" blocks). */
  async setup(sql: string, opts: { refreshCatalog?: boolean } = {}): Promise<RawResult> {
    this.eng.beyondRows = true;
    const r = await this.eng.ex.run(sql);
    if (opts.refreshCatalog === false) return r;
    await refreshCatalog(this.eng);
    // User objects are numbered for display from the first table the scenario created.
    if (this.eng.oidBase === null && this.eng.catalog.length) this.eng.oidBase = Math.min(...this.eng.catalog.map((c) => c.oid));
    return r;
  }

  /**
   * What the engine read of the catalog after a setup, for `adoptSetup` of a later engine on
   * the same PGlite once the same tables are back (sim/simDriver.ts). A copy.
   */
  setupState(): SetupState {
    const e = this.eng;
    return {
      catalog: structuredClone(e.catalog),
      relations: new Map(e.relations),
      sequences: [...e.sequences],
      oidBase: e.oidBase,
      // Both are read from the committed catalog (outside any dry run), so the setup's catalog gives the same answers.
      ...(e.exceptionFunctions ? { exceptionFunctions: new Set(e.exceptionFunctions) } : {}),
      ...(typeof e.userFunctions === 'boolean' ? { userFunctions: e.userFunctions } : {}),
    };
  }

  /**
   * Takes `state` as this engine's catalog instead of running setup SQL: its caller has put
   * PGlite's tables back to the state `state` was read in (same OIDs, names, columns, indexes).
   */
  adoptSetup(state: SetupState): void {
    const e = this.eng;
    e.catalog = structuredClone(state.catalog);
    e.relations = new Map(state.relations);
    e.sequences = [...state.sequences];
    e.oidBase = state.oidBase;
    e.relNames = null;
    e.exceptionFunctions = state.exceptionFunctions ? new Set(state.exceptionFunctions) : null;
    e.userFunctions = state.userFunctions ?? null;
    e.cascadingTables = null;
  }

  /** The setup is over: `onlyRowsWritten` counts from here. */
  setupDone(): void {
    this.eng.beyondRows = false;
  }

  /** True while PGlite has seen nothing from this engine but row writes to user tables (no DDL, VACUUM or setup SQL). */
  onlyRowsWritten(): boolean {
    return !this.eng.beyondRows;
  }

  /** pid → session name, for normalizing DETAIL texts. */
  pidNames(): Map<number, string> {
    return new Map([...this.eng.sessions.values()].map((s) => [s.pid, s.name]));
  }

  /** Relation OID (as shown, text) → name, for user tables and indexes. */
  async relationNames(): Promise<Map<string, string>> {
    this.eng.relNames ??= new Map([...this.eng.relations].map(([oid, r]) => [String(vOid(this.eng, oid)), r.name]));
    return this.eng.relNames;
  }

  /** Session names in order. */
  sessionNames(): string[] {
    return [...this.eng.sessions.keys()];
  }

  /** Current virtual time in ms. */
  now(): number {
    return this.eng.clock;
  }

  /**
   * Sends a step's SQL on a session and runs it until it completes, waits or sleeps. With
   * `cancelled`, the client cancelled it while it ran (a runaway the learner stopped): its first
   * statement that reaches the executor fails with 57014 instead of running.
   */
  async submit(session: string, sql: string, stepName = '', opts: { cancelled?: boolean } = {}): Promise<StepStatus> {
    const s = sess(this.eng, session);
    if (s.step && !s.step.done) throw new Error(`session ${session} is busy with step ${s.step.name}`);
    cancelTimers(this.eng, s, ['idle_in_transaction_session_timeout']);
    s.query = sql;
    s.stateChangeMs = this.eng.clock;
    event(this.eng, { type: 'step-start', atMs: this.eng.clock, session, step: stepName, sql });
    const step: RunningStep = {
      name: stepName,
      sql,
      statements: [],
      idx: 0,
      results: [],
      notices: [],
      startedMs: this.eng.clock,
      tupleLocks: [],
      done: false,
      ...(opts.cancelled ? { cancelled: true } : {}),
    };
    s.step = step;
    if (s.terminated) {
      // libpq reads the server's FATAL with the next command; after that the connection is closed.
      step.error = s.terminationReported ? PG.noConnection() : { ...s.terminated };
      s.terminationReported = true;
      step.done = true;
      finishStep(this.eng, s);
      return 'done';
    }
    try {
      step.statements = parseStatements(sql);
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      // Let PostgreSQL word the syntax error: nothing executes when a query string fails to parse.
      const r = await this.eng.ex.run(sql);
      step.error = r.error ?? PG.engine(e.message);
      // The open block aborts as at any error (a subtransaction only, under a savepoint), and
      // releases its locks at once; its waiters wake now, not at the ROLLBACK.
      if (s.txn && !s.txn.implicit) abortTxnState(this.eng, s, true);
      step.done = true;
      finishStep(this.eng, s);
      await drainResumes(this.eng);
      return 'done';
    }
    await runStep(this.eng, s);
    await drainResumes(this.eng);
    return statusOf(this.eng, s);
  }

  /** Where a session's current step stands. */
  statusOf(name: string): StepStatus {
    return statusOf(this.eng, name);
  }

  /** True when the session's step waits on a lock held or awaited by another session (isolationtester's notion of blocked). */
  isBlocked(name: string): boolean {
    const s = sess(this.eng, name);
    return !!s.step && !s.step.done && !!s.step.wait;
  }

  /** Cancels a session's running step, as pg_cancel_backend / a client cancel request does. */
  async cancel(name: string): Promise<void> {
    const s = sess(this.eng, name);
    if (!s.step || s.step.done) return;
    // A cancel during a lock wait reports the wait's CONTEXT, as the error callback is still set.
    s.step.error = PG.userCancel(s.step.wait?.context);
    failWaitingStep(this.eng, s);
    await endOfStep(this.eng, s);
    await drainResumes(this.eng);
  }

  /** The notices the session's current step has raised so far (a waiting step's too). */
  stepNotices(name: string): readonly PgMessage[] {
    return sess(this.eng, name).step?.notices ?? [];
  }

  /** Takes the finished step's result (isolationtester reads it once). */
  takeResult(name: string): StepResult | undefined {
    const s = sess(this.eng, name);
    if (!s.step?.done) return undefined;
    const r: StepResult = { results: s.step.results, notices: s.step.notices };
    if (s.step.error) r.error = s.step.error;
    s.step = null;
    return r;
  }

  /** Virtual time of the next timer, if any. */
  nextTimerAt(): number | null {
    return this.eng.timers.peek()?.atMs ?? null;
  }

  /** Advances the clock to the next timer and fires it; false when no timer is pending. */
  async advanceToNextTimer(): Promise<boolean> {
    const t = this.eng.timers.shift();
    if (!t) return false;
    this.eng.clock = Math.max(this.eng.clock, t.atMs);
    await fire(this.eng, t.session, t.kind);
    await drainResumes(this.eng);
    return true;
  }

  /** Advances the clock by `ms`, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    const until = this.eng.clock + ms;
    for (let t = this.eng.timers.peek(); t && t.atMs <= until; t = this.eng.timers.peek()) await this.advanceToNextTimer();
    this.eng.clock = until;
  }

  /**
   * Reads table contents for the data view (async: asks PGlite): the committed rows with their
   * row-lock owners, and for every session in a transaction what a plain SELECT would show it
   * now (its own uncommitted changes, and — under REPEATABLE READ — its snapshot).
   */
  async refreshTables(): Promise<void> {
    await refreshTablesOf(this.eng);
  }

  /** The server log lines written so far (PostgreSQL's format, virtual-clock timestamps). */
  serverLogLines(): string[] {
    return [...this.eng.serverLog];
  }

  /** The immutable, JSON-serializable view of everything. */
  snapshot(): EngineSnapshot {
    return snapshotOf(this.eng);
  }

  /** Releases PGlite. */
  async close(): Promise<void> {
    await this.eng.ex.close();
  }
}

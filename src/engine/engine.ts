/**
 * The Lockstep engine: several PostgreSQL sessions on one PGlite.
 *
 * PGlite executes (dry runs inside rolled-back transactions) and reports what each statement
 * locks; the pure lock model (./locks) decides grants, waits and deadlock victims on a
 * virtual clock. See docs/engine.md for the protocol and its known limits.
 */
import { LockManager, deadlockDetail, describeLockTag, tupleLockMode } from './locks';
import type { LockMode, LockTag, ProcId, RowLockMode, Xid } from './locks/types';
import { PgliteExecutor, EngineInternalError, CTID_MAP, OTHERS_ADVISORY, SHADOW_SCHEMA, type RawResult } from './executor/pglite';
import { INTERNAL_SCHEMA } from './executor/names';
import {
  LOCK_SAMPLE_SQL,
  decodeTuples,
  parseLockSample,
  parseCatalog,
  parseRelations,
  TUPLE_SCAN_SQL,
  type RelationInfo,
  uniqueKeysSql,
  indexPagesSql,
  SEQUENCES_SQL,
  type CatalogTable,
  type LockSample,
} from './executor/footprint';
import { PG, xactWaitContext } from './messages';
import {
  holdersAndWaiters,
  holdersDetail,
  lockFailureMessage,
  lockWaitMessage,
  logEntry,
  messageEntry,
  type LockWaitEvent,
} from './serverLog';
import { restrictCte, restrictToTuples } from './epq';
import {
  APPROXIMATION_TEXT,
  asksReadOnlyOrDeferrable,
  createsTempTable,
  indexOrderedRelations,
  type ApproximationTopic,
} from './approximations';
import {
  EXPORT_SNAPSHOT_SQL,
  importSnapshotBegin,
  isSnapshotConflict,
  usesStatementSnapshot,
  type StatementSnapshot,
} from './stmtSnapshot';
import { SHADOW_SCHEMA as DIAG_SCHEMA, diagnosticsDataSql, type DiagnosticsInput } from './diagnostics';
import { advisorySql, ident, literal, replaySql, type ImageOp, type LogEntry, type TupleRef } from './images';
import { RowLockTable, type TupleId } from './rowlocks';
import { Timers, type TimerKind } from './timers';
import { Ssi, SsiFailure, targetKey, type PredTarget, type SsiWrite, type Sxact } from './ssi';
import { ParseFailure, bindPrepared, loadParser, parseStatements, type Classified, type ParsedStatement, type PreparedText } from './sql';
import type {
  EngineEvent,
  EngineSnapshot,
  FinishedStep,
  IsolationLevel,
  LockRow,
  SessionSnapshot,
  SessionState,
  SsiSnapshot,
  RowSnapshot,
  TableSnapshot,
  WaitEdge,
  WaitReason,
} from './types';
import type { PgMessage, StatementResult, StepResult } from '../scenario/types';

/** PGlite's database OID (postgres), used in lock descriptions as PostgreSQL prints them. */
const DATABASE_OID = 5;
const FIRST_XID = 750;
const FIRST_PID = 4101;
/** FirstNormalObjectId: where a fresh cluster's user objects start. */
const FIRST_USER_OID = 16384;
/** The prepared transaction that keeps the xmin horizon behind every exported snapshot. */
const PIN_GID = 'lockstep_snapshot_pin';

interface HeldLock {
  tag: LockTag;
  mode: LockMode;
  depth: number;
}

interface UniqueKey {
  index: string;
  key: string;
  depth: number;
  xid: number;
  /** The heap tuple that holds the key (its table and ctid in the dry run), named by a waiter's CONTEXT. */
  table?: string;
  ctid?: string;
}

interface Txn {
  implicit: boolean;
  isolation: IsolationLevel;
  xid: number | null;
  vxid: string;
  startMs: number;
  log: LogEntry[];
  aborted: boolean;
  savepoints: { name: string; logLen: number; xid?: number }[];
  /** ExclusiveLock on each (sub)transaction id, with the savepoint depth it belongs to. */
  xidHolds: { xid: number; depth: number }[];
  held: HeldLock[];
  insertedKeys: UniqueKey[];
  /** SET statements run in this transaction (undone at rollback), and SET LOCAL ones. */
  sets: string[];
  localSets: string[];
  /** For each version this transaction created by updating a row: the committed tuple it descends from. */
  originOf: Map<string, TupleId>;
  /** REPEATABLE READ / SERIALIZABLE: the exported snapshot file of the first statement, and the pin holding xmin. */
  snapshot?: string;
  /** SERIALIZABLE: the transaction's SSI state (from its first snapshot on). */
  sx?: Sxact;
}

type PlanItem =
  | { kind: 'rel'; tag: LockTag & { type: 'relation' }; mode: LockMode; name: string }
  | { kind: 'row'; tuple: TupleId; mode: RowLockMode }
  | { kind: 'key'; index: string; key: string; ctid?: string }
  | { kind: 'adv'; tag: LockTag & { type: 'advisory' }; mode: LockMode; sessionLevel: boolean };

interface Wait {
  tag: LockTag;
  mode: LockMode;
  sinceMs: number;
  /** The xid wait is on behalf of this tuple (for CONTEXT and RR checks). */
  tuple?: TupleId;
  /** The session whose xid we wait for, and whether it had changed the tuple. */
  holder?: string;
  context?: string;
  /** parser_errposition of a table lock taken in parse analysis: "at character N" on the wait's log lines and errors. */
  position?: number;
  /** The deadlock check ran during this wait (ProcSleep's deadlock_state != DS_NOT_YET_CHECKED): a grant is logged. */
  checked?: boolean;
}

interface RunningStep {
  name: string;
  sql: string;
  statements: ParsedStatement[];
  idx: number;
  results: StatementResult[];
  notices: PgMessage[];
  startedMs: number;
  wait?: Wait;
  sleepUntil?: number;
  /** Tuple locks (heavyweight) this statement holds while it waits for a row. */
  tupleLocks: LockTag[];
  /** EvalPlanQual: the target rows the current statement's scan first found (followed through committed updates). */
  epq?: { oid: number; ctids: string[]; horizon?: number };
  /** READ COMMITTED: the snapshot the current statement started with, kept across its waits (stmtSnapshot.ts). */
  stmtSnapshot?: StatementSnapshot;
  /** Where this step touched something the simulator approximates (approximations.ts). */
  approximations?: ApproximationTopic[];
  done: boolean;
  error?: PgMessage;
  /** The client cancelled the step while it executed: see submit. */
  cancelled?: boolean;
}

interface Sess {
  name: string;
  proc: ProcId;
  pid: number;
  index: number;
  sets: string[];
  gucs: Record<string, string>;
  timeouts: { deadlock: number; lock: number; statement: number; idle: number };
  defaultIsolation: IsolationLevel;
  txn: Txn | null;
  step: RunningStep | null;
  last: SessionSnapshot['last'];
  query: string;
  stateChangeMs: number;
  /** Session-level advisory locks, with counts (pg_advisory_lock is re-entrant). */
  sessionAdvisory: { tag: LockTag & { type: 'advisory' }; mode: LockMode }[];
  terminated: PgMessage | null;
  terminatedAtMs: number;
  /** The client has read the FATAL (with its next command): later commands find no connection. */
  terminationReported: boolean;
  /** Every finished step, oldest first (SessionSnapshot.history). */
  history: FinishedStep[];
  vxidCounter: number;
  /** The session's prepared statements (PREPARE), by name: each backend has its own. */
  prepared: Map<string, PreparedText>;
}

/** A dry run's findings. */
interface DryRun {
  raw: RawResult;
  plan: PlanItem[];
  assignsXid: boolean;
  inserted: { table: string; key: string; index: string; ctid?: string }[];
  /** The session's session-level advisory locks after the statement (null: unchanged). */
  sessionAdvisory: { key1: number; key2: number; field4: 1 | 2; mode: LockMode }[] | null;
  /** What to append to the session's transaction log (null: nothing to replay). */
  entry: LogEntry | null;
  /** SERIALIZABLE: what the statement's scan examined (its SIREAD targets), which of them are new, and what it wrote. */
  ssi?: { scope: PredTarget[]; added: PredTarget[]; writes: SsiWrite[]; indexEntriesRead?: number; emptyTables?: Set<number> };
  /** The PGlite xid of this run's transaction (row versions committed earlier have smaller xmins). */
  horizon?: number;
}

/** Options for Engine.create. */
export interface EngineOptions {
  sessions: string[];
  executor?: PgliteExecutor;
}

/** Result of submitting a step: done (with result), waiting on a lock, or sleeping on the virtual clock. */
export type StepStatus = 'done' | 'waiting' | 'sleeping' | 'idle';

/** The multi-session engine. All methods must be awaited one at a time. */
export class Engine {
  private readonly lm = new LockManager();
  private readonly rows = new RowLockTable();
  private readonly timers = new Timers();
  private readonly ssi = new Ssi();
  private readonly sessions = new Map<string, Sess>();
  private clock = 0;
  private nextXid = FIRST_XID;
  private events: EngineEvent[] = [];
  private serverLog: string[] = [];
  /** Errors already written to the server log when they were raised (deadlocks, timeouts). */
  private loggedErrors = new WeakSet<PgMessage>();
  private lastDeadlock: EngineSnapshot['deadlock'] = null;
  private catalog: CatalogTable[] = [];
  private resumeQueue: string[] = [];
  private tables: TableSnapshot[] = [];

  private constructor(private readonly ex: PgliteExecutor) {}

  /** Creates an engine with named sessions (2 to 8 in the app; any number here). */
  static async create(opts: EngineOptions): Promise<Engine> {
    await loadParser();
    const ex = opts.executor ?? (await PgliteExecutor.create());
    const e = new Engine(ex);
    opts.sessions.forEach((name, index) => e.addSession(name, index));

    await e.refreshSessionGucs();
    return e;
  }

  private addSession(name: string, index: number): void {
    this.sessions.set(name, {
      name,
      proc: name as ProcId,
      pid: FIRST_PID + index,
      index,
      sets: [],
      gucs: {},
      timeouts: { deadlock: 1000, lock: 0, statement: 0, idle: 0 },
      defaultIsolation: 'read committed',
      txn: null,
      step: null,
      last: null,
      query: '',
      stateChangeMs: 0,
      sessionAdvisory: [],
      terminated: null,
      terminatedAtMs: 0,
      terminationReported: false,
      history: [],
      vxidCounter: 0,
      prepared: new Map(),
    });
  }

  /** The executor (for tools that need raw access, e.g. table views). */
  get executor(): PgliteExecutor {
    return this.ex;
  }

  /** Runs committed setup SQL outside any session (isolationtester "setup" blocks). */
  async setup(sql: string, opts: { refreshCatalog?: boolean } = {}): Promise<RawResult> {
    const r = await this.ex.run(sql);
    if (opts.refreshCatalog === false) return r;
    await this.refreshCatalog();
    // User objects are numbered for display from the first table the scenario created.
    if (this.oidBase === null && this.catalog.length) this.oidBase = Math.min(...this.catalog.map((c) => c.oid));
    return r;
  }

  /** pid → session name, for normalizing DETAIL texts. */
  pidNames(): Map<number, string> {
    return new Map([...this.sessions.values()].map((s) => [s.pid, s.name]));
  }

  /** Relation OID (as shown, text) → name, for user tables and indexes. */
  async relationNames(): Promise<Map<string, string>> {
    this.relNames ??= new Map([...this.relations].map(([oid, r]) => [String(this.vOid(oid)), r.name]));
    return this.relNames;
  }

  private relNames: Map<string, string> | null = null;

  private async refreshCatalog(): Promise<void> {
    const r = await this.ex.run('EXECUTE lockstep_catalog; EXECUTE lockstep_relations');
    this.catalog = parseCatalog(r.results[0]?.rows ?? []);
    this.relations = parseRelations(r.results[1]?.rows ?? []);
    this.relNames = null;
    this.sequences = ((await this.ex.run(SEQUENCES_SQL)).results[0]?.rows ?? []).map((row) => row[0]!);
  }

  /** The user sequences (regclass text), from the last catalog refresh. */
  private sequences: string[] = [];

  /**
   * The sequences' states (last_value, is_called), to undo what a dry run consumed when the
   * statement does not happen yet (it waits and runs again later): nextval is not transactional,
   * and PostgreSQL's statement consumes its values once, when it runs.
   */
  private async sequenceStates(): Promise<string[] | null> {
    if (!this.sequences.length) return null;
    const sql = this.sequences.map((q) => `SELECT ${literal(q)}, last_value::text, is_called::text FROM ${q}`).join(' UNION ALL ');
    const r = await this.ex.run(sql);
    return r.error ? null : (r.results[0]?.rows ?? []).map((row) => `SELECT pg_catalog.setval(${literal(row[0]!)}, ${row[1]}, ${row[2]})`);
  }

  /** Puts the sequences back as sequenceStates found them. */
  private async restoreSequences(states: string[] | null): Promise<void> {
    if (states?.length) await this.ex.run(states.join(';\n'));
  }

  private relations = new Map<number, RelationInfo>();

  private commitsSinceVacuum = 0;

  /**
   * Rolled-back dry runs leave dead tuples behind, and every dry run scans the pages: vacuum the
   * user tables now and then, between transactions (live tuples never move, so ctids hold).
   */
  private async maybeVacuum(): Promise<void> {
    if (++this.commitsSinceVacuum < 20) return;
    this.commitsSinceVacuum = 0;
    // The engine's own tables too: every replay writes the ctid map and rolls back (or deletes
    // its rows at COMMIT), so it only ever holds dead rows between transactions, and replays of
    // own versions read it.
    const tables = [...this.catalog.map((c) => ident(c.name)), CTID_MAP, OTHERS_ADVISORY];
    await this.ex.run(`VACUUM ${tables.join(', ')}`);
  }

  /** Session names in order. */
  sessionNames(): string[] {
    return [...this.sessions.keys()];
  }

  /** Current virtual time in ms. */
  now(): number {
    return this.clock;
  }

  private sess(name: string): Sess {
    const s = this.sessions.get(name);
    if (!s) throw new Error(`unknown session "${name}"`);
    return s;
  }

  // ───────────────────────────── stepping ─────────────────────────────

  /**
   * Sends a step's SQL on a session and runs it until it completes, waits or sleeps. With
   * `cancelled`, the client cancelled it while it ran (a runaway the learner stopped): its first
   * statement that reaches the executor fails with 57014 instead of running.
   */
  async submit(session: string, sql: string, stepName = '', opts: { cancelled?: boolean } = {}): Promise<StepStatus> {
    const s = this.sess(session);
    if (s.step && !s.step.done) throw new Error(`session ${session} is busy with step ${s.step.name}`);
    this.cancelTimers(s, ['idle_in_transaction_session_timeout']);
    s.query = sql;
    s.stateChangeMs = this.clock;
    this.event({ type: 'step-start', atMs: this.clock, session, step: stepName, sql });
    const step: RunningStep = {
      name: stepName,
      sql,
      statements: [],
      idx: 0,
      results: [],
      notices: [],
      startedMs: this.clock,
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
      this.finishStep(s);
      return 'done';
    }
    try {
      step.statements = parseStatements(sql);
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      // Let PostgreSQL word the syntax error: nothing executes when a query string fails to parse.
      const r = await this.ex.run(sql);
      step.error = r.error ?? PG.engine(e.message);
      // The open block aborts as at any error (a subtransaction only, under a savepoint), and
      // releases its locks at once; its waiters wake now, not at the ROLLBACK.
      if (s.txn && !s.txn.implicit) this.abortTxnState(s, true);
      step.done = true;
      this.finishStep(s);
      await this.drainResumes();
      return 'done';
    }
    await this.runStep(s);
    await this.drainResumes();
    return this.statusOf(s);
  }

  /** Where a session's current step stands. */
  statusOf(name: string | Sess): StepStatus {
    const s = typeof name === 'string' ? this.sess(name) : name;
    if (!s.step) return 'idle';
    if (s.step.done) return 'done';
    if (s.step.sleepUntil !== undefined) return 'sleeping';
    return 'waiting';
  }

  /** True when the session's step waits on a lock held or awaited by another session (isolationtester's notion of blocked). */
  isBlocked(name: string): boolean {
    const s = this.sess(name);
    return !!s.step && !s.step.done && !!s.step.wait;
  }

  /** Cancels a session's running step, as pg_cancel_backend / a client cancel request does. */
  async cancel(name: string): Promise<void> {
    const s = this.sess(name);
    if (!s.step || s.step.done) return;
    s.step.error = PG.userCancel();
    this.failWaitingStep(s);
    await this.endOfStep(s);
    await this.drainResumes();
  }

  /** The notices the session's current step has raised so far (a waiting step's too). */
  stepNotices(name: string): readonly PgMessage[] {
    return this.sess(name).step?.notices ?? [];
  }

  /** Takes the finished step's result (isolationtester reads it once). */
  takeResult(name: string): StepResult | undefined {
    const s = this.sess(name);
    if (!s.step?.done) return undefined;
    const r: StepResult = { results: s.step.results, notices: s.step.notices };
    if (s.step.error) r.error = s.step.error;
    s.step = null;
    return r;
  }

  /** Virtual time of the next timer, if any. */
  nextTimerAt(): number | null {
    return this.timers.peek()?.atMs ?? null;
  }

  /** Advances the clock to the next timer and fires it; false when no timer is pending. */
  async advanceToNextTimer(): Promise<boolean> {
    const t = this.timers.shift();
    if (!t) return false;
    this.clock = Math.max(this.clock, t.atMs);
    await this.fire(t.session, t.kind);
    await this.drainResumes();
    return true;
  }

  /** Advances the clock by `ms`, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    const until = this.clock + ms;
    for (let t = this.timers.peek(); t && t.atMs <= until; t = this.timers.peek()) await this.advanceToNextTimer();
    this.clock = until;
  }

  private async runStep(s: Sess): Promise<void> {
    const step = s.step!;
    while (!step.done && step.idx < step.statements.length) {
      const st = step.statements[step.idx];
      const outcome = await this.execStatement(s, st);
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
    await this.endOfStep(s);
  }

  /** End of a simple-protocol query: commit or roll back an implicit block; report. */
  private async endOfStep(s: Sess): Promise<void> {
    const step = s.step!;
    if (s.txn?.implicit) {
      if (step.error || s.txn.aborted) await this.endTxn(s, false);
      else {
        const err = await this.commitTxn(s);
        if (err) step.error = err;
      }
    }
    this.finishStep(s);
  }

  private finishStep(s: Sess): void {
    const step = s.step!;
    step.done = true;
    this.logStepMessages(s);
    s.last = { step: step.name, results: step.results, notices: step.notices, ...(step.error ? { error: step.error } : {}) };
    s.history.push({
      ...s.last,
      sql: step.sql,
      startedMs: step.startedMs,
      endedMs: this.clock,
      ...(step.approximations ? { approximations: [...step.approximations] } : {}),
    });
    s.stateChangeMs = this.clock;
    this.event({
      type: 'step-done',
      atMs: this.clock,
      session: s.name,
      step: step.name,
      ok: !step.error,
      ...(step.error ? { sqlstate: step.error.sqlstate } : {}),
    });
    if (s.txn && !s.txn.implicit && s.timeouts.idle > 0 && !s.terminated)
      this.timers.set(s.name, 'idle_in_transaction_session_timeout', this.clock + s.timeouts.idle);
  }

  /** Executes one statement; 'ok' moves to the next one. */
  private async execStatement(s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait' | 'sleep'> {
    const step = s.step!;
    const cls = st.cls;
    if (
      s.txn?.aborted &&
      !(cls.kind === 'txn' && (cls.ctl.kind === 'commit' || cls.ctl.kind === 'rollback' || cls.ctl.kind === 'rollback-to'))
    ) {
      step.error = PG.inFailedTransaction();
      return 'error';
    }
    this.noteApproximations(s, st);
    if (cls.kind === 'txn') return this.execTxnControl(s, cls.ctl);
    if (cls.kind === 'prepare' || cls.kind === 'execute' || cls.kind === 'deallocate') return this.execPrepared(s, cls);
    if (cls.kind === 'unsupported' && cls.refusedInBlock && (s.txn || step.statements.length > 1)) {
      // PreventInTransactionBlock: a query string of several statements is an implicit block too.
      step.error = PG.refusedInBlock(cls.refusedInBlock);
      if (s.txn) this.abortTxnState(s, true);
      return 'error';
    }
    if (cls.kind === 'unsupported') {
      step.error = PG.unsupported(cls.what);
      if (s.txn) this.abortTxnState(s, true);
      return 'error';
    }
    // RequireTransactionBlock: a lone LOCK TABLE outside a block (a query string of several
    // statements is an implicit block, where it may run).
    if (cls.kind === 'dml' && cls.verb === 'lock' && !s.txn && step.statements.length === 1) {
      step.error = PG.savepointOutsideBlock('LOCK TABLE');
      return 'error';
    }
    // Any other statement runs inside a transaction: open an implicit block if none is open.
    if (!s.txn) {
      this.beginTxn(s, true);
    }
    if (cls.kind === 'sleep') {
      step.sleepUntil = this.clock + Math.max(0, cls.seconds * 1000);
      this.timers.set(s.name, 'pg_sleep', step.sleepUntil);
      this.startStatementTimer(s);
      return 'sleep';
    }
    if (cls.kind === 'set' && cls.setTransaction) return this.execSetTransaction(s, cls);
    this.startStatementTimer(s);
    return this.execDml(s, st);
  }

  /**
   * PREPARE / EXECUTE / DEALLOCATE on the session's own namespace (prepare.c). EXECUTE runs the
   * prepared query with its arguments bound in place of the parameters, as the statement itself,
   * so it locks, waits and re-checks as that statement does and answers with its command tag.
   */
  private async execPrepared(
    s: Sess,
    cls: Extract<Classified, { kind: 'prepare' | 'execute' | 'deallocate' }>,
  ): Promise<'ok' | 'error' | 'wait' | 'sleep'> {
    const step = s.step!;
    const fail = (error: PgMessage): 'error' => {
      step.error = error;
      if (s.txn) this.abortTxnState(s, true);
      return 'error';
    };
    switch (cls.kind) {
      case 'prepare': {
        if (s.prepared.has(cls.name)) return fail(PG.preparedExists(cls.name));
        // Parse analysis happens at PREPARE: PostgreSQL reports a missing table or column there.
        const probe = `${INTERNAL_SCHEMA}_probe`;
        const p = cls.prepared;
        const types = p.types.length ? ` (${p.types.join(', ')})` : '';
        const query = p.parts.map((x) => (typeof x === 'string' ? x : `$${x}`)).join('');
        const r = await this.ex.run(`PREPARE ${probe}${types} AS ${query}`);
        if (r.error) return fail(r.error);
        await this.ex.must(`DEALLOCATE ${probe}`);
        s.prepared.set(cls.name, p);
        step.results.push({ command: 'PREPARE' });
        return 'ok';
      }
      case 'execute': {
        const p = s.prepared.get(cls.name);
        if (!p) return fail(PG.noSuchPrepared(cls.name));
        if (cls.args.length !== p.paramCount) return fail(PG.wrongParamCount(cls.name, p.paramCount, cls.args.length));
        const bound = parseStatements(bindPrepared(p, cls.args))[0];
        // A wait re-runs the statement at step.idx: from now on that is the bound statement.
        step.statements[step.idx] = bound;
        return this.execStatement(s, bound);
      }
      case 'deallocate':
        if (cls.name === null) s.prepared.clear();
        else if (!s.prepared.delete(cls.name)) return fail(PG.noSuchPrepared(cls.name));
        step.results.push({ command: cls.name === null ? 'DEALLOCATE ALL' : 'DEALLOCATE' });
        return 'ok';
    }
  }

  /** Says so on the step when a statement touches something the simulator approximates (approximations.ts). */
  private approximate(s: Sess, topic: ApproximationTopic): void {
    const step = s.step;
    if (!step || step.approximations?.includes(topic)) return;
    (step.approximations ??= []).push(topic);
    this.event({ type: 'approximation', atMs: this.clock, session: s.name, topic, message: APPROXIMATION_TEXT[topic] });
  }

  /** The approximations a statement's text alone shows: a temporary table, SERIALIZABLE READ ONLY / DEFERRABLE. */
  private noteApproximations(s: Sess, st: ParsedStatement): void {
    const cls = st.cls;
    if (cls.kind === 'dml' && cls.verb === 'other' && /\btemp(orary)?\b/i.test(st.sql) && createsTempTable(st.sql))
      this.approximate(s, 'temp-table');
    const isolation =
      cls.kind === 'txn' && cls.ctl.kind === 'begin'
        ? (cls.ctl.isolation ?? (s.txn?.implicit ? s.txn.isolation : s.defaultIsolation))
        : cls.kind === 'set' && cls.setTransaction
          ? (cls.isolation ?? s.txn?.isolation ?? s.defaultIsolation)
          : undefined;
    if (isolation === 'serializable' && /read\s+only|deferrable/i.test(st.sql) && asksReadOnlyOrDeferrable(st.sql))
      this.approximate(s, 'serializable-read-only');
  }

  /**
   * An UPDATE / DELETE that waits for a row after locking others: PostgreSQL meets its rows in its
   * plan's order, the simulator in ctid order. Said only when the plan is an ordered index scan.
   */
  private async noteLockOrder(s: Sess, st: ParsedStatement, plan: PlanItem[]): Promise<void> {
    const cls = st.cls;
    if (cls.kind !== 'dml' || (cls.verb !== 'update' && cls.verb !== 'delete') || !cls.target) return;
    if (plan.filter((p) => p.kind === 'row' && p.tuple.relation === cls.target!.relname).length < 2) return;
    // The session's settings (enable_seqscan, …) choose the plan too; the block undoes them.
    const r = await this.ex.run(`BEGIN;\n${this.gucSql(s)}EXPLAIN (FORMAT JSON) ${st.sql}`);
    await this.ex.run('ROLLBACK');
    const explained = r.error ? undefined : r.results[1 + this.gucCount(s)]?.rows?.[0]?.[0];
    if (indexOrderedRelations(explained).has(cls.target.relname)) this.approximate(s, 'index-order');
  }

  /**
   * A row wait on a table the statement does not name, with one foreign key from a table it does:
   * the lock is the referential check's (ri_triggers.c), whose query PostgreSQL's CONTEXT shows
   * after the tuple ("SQL statement "SELECT 1 FROM ONLY … FOR KEY SHARE OF x"").
   */
  private async foreignKeyContext(s: Sess, st: ParsedStatement): Promise<void> {
    const w = s.step?.wait;
    const cls = st.cls;
    if (!w?.tuple || !w.context || cls.kind !== 'dml' || cls.relations.includes(w.tuple.relation)) return;
    const from = cls.relations.flatMap((r) => this.catalog.filter((c) => c.name === r).map((c) => c.oid));
    if (!from.length) return;
    const rows = await this.ex.must(
      `SELECT 'SELECT 1 FROM ONLY ' || '"' || pg_catalog.replace(pn.nspname, '"', '""') || '"' || '.' || '"' || pg_catalog.replace(pc.relname, '"', '""') || '"' || ' x WHERE ' ||
        pg_catalog.string_agg('"' || pg_catalog.replace(pa.attname, '"', '""') || '"' || ' OPERATOR(' || opn.nspname || '.' || op.oprname || ') $' || k.i, ' AND ' ORDER BY k.i) ||
        ' FOR KEY SHARE OF x'
       FROM pg_catalog.pg_constraint con
       JOIN pg_catalog.pg_class pc ON pc.oid = con.confrelid JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
       CROSS JOIN LATERAL unnest(con.confkey, con.conpfeqop) WITH ORDINALITY AS k(att, opr, i)
       JOIN pg_catalog.pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = k.att
       JOIN pg_catalog.pg_operator op ON op.oid = k.opr JOIN pg_catalog.pg_namespace opn ON opn.oid = op.oprnamespace
       WHERE con.contype = 'f' AND con.confrelid = ${Number(w.tuple.oid)} AND con.conrelid = ANY('{${from.join(',')}}'::oid[])
       GROUP BY con.oid, pn.nspname, pc.relname`,
    );
    // Names always quoted, as ri_triggers.c's quoteOneName does.
    if (rows.length === 1 && rows[0][0]) w.context += `\nSQL statement "${rows[0][0]}"`;
  }

  /** COMMIT of a transaction that changed a table with deferrable constraints or triggers: they do not run again here. */
  private async noteDeferred(s: Sess): Promise<void> {
    const rels = new Set<number>();
    for (const e of s.txn?.log ?? [])
      if (e.kind === 'image') for (const op of e.ops) if (op.op !== 'advisory') rels.add(op.op === 'insert' ? op.rel : op.target.rel);
    const candidates = [...rels].filter((oid) => this.catalog.find((c) => c.oid === oid)?.triggersOrRules);
    if (!candidates.length) return;
    const rows = await this.ex.must(
      `SELECT 1 FROM pg_catalog.pg_trigger WHERE tgdeferrable AND tgrelid = ANY('{${candidates.join(',')}}'::oid[]) LIMIT 1`,
    );
    if (rows.length) this.approximate(s, 'deferred-commit');
  }

  private startStatementTimer(s: Sess): void {
    this.cancelTimers(s, ['statement_timeout']);
    if (s.timeouts.statement > 0) this.timers.set(s.name, 'statement_timeout', this.clock + s.timeouts.statement);
  }

  private execSetTransaction(s: Sess, cls: Extract<Classified, { kind: 'set' }>): 'ok' | 'error' {
    const step = s.step!;
    if (cls.name === 'session characteristics') {
      if (cls.isolation) s.defaultIsolation = cls.isolation as IsolationLevel;
      step.results.push({ command: 'SET' });
      return 'ok';
    }
    if (s.txn!.log.length > 0) {
      step.error = PG.setTransactionTooLate();
      this.abortTxnState(s, true);
      return 'error';
    }
    if (cls.isolation) s.txn!.isolation = cls.isolation as IsolationLevel;
    step.results.push({ command: 'SET' });
    return 'ok';
  }

  // ───────────────────────────── transactions ─────────────────────────────

  private beginTxn(s: Sess, implicit: boolean, isolation?: string): void {
    s.vxidCounter++;
    s.txn = {
      implicit,
      isolation: (isolation as IsolationLevel | undefined) ?? s.defaultIsolation,
      xid: null,
      vxid: `${s.index + 3}/${s.vxidCounter}`,
      startMs: this.clock,
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
    this.lm.acquire(s.proc, { type: 'virtualxid', vxid: s.txn.vxid }, 'ExclusiveLock');
  }

  private async execTxnControl(s: Sess, ctl: Extract<Classified, { kind: 'txn' }>['ctl']): Promise<'ok' | 'error'> {
    const step = s.step!;
    switch (ctl.kind) {
      case 'begin':
        if (s.txn && !s.txn.implicit) {
          step.notices.push(PG.warning('25001', 'there is already a transaction in progress'));
        } else if (s.txn?.implicit) {
          s.txn.implicit = false;
          if (ctl.isolation) s.txn.isolation = ctl.isolation as IsolationLevel;
        } else this.beginTxn(s, false, ctl.isolation);
        step.results.push({ command: ctl.command });
        return 'ok';
      case 'commit': {
        if (!s.txn) {
          step.notices.push(PG.warning('25P01', 'there is no transaction in progress'));
          step.results.push({ command: 'COMMIT' });
          return 'ok';
        }
        if (s.txn.aborted) {
          await this.endTxn(s, false);
          step.results.push({ command: 'ROLLBACK' });
          return 'ok';
        }
        const err = await this.commitTxn(s);
        if (err) {
          step.error = err;
          return 'error';
        }
        step.results.push({ command: 'COMMIT' });
        return 'ok';
      }
      case 'rollback':
        if (!s.txn) step.notices.push(PG.warning('25P01', 'there is no transaction in progress'));
        else await this.endTxn(s, false);
        step.results.push({ command: 'ROLLBACK' });
        return 'ok';
      case 'savepoint': {
        if (!s.txn || s.txn.implicit) {
          // PostgreSQL: SAVEPOINT outside a block is an error (inside an implicit block too).
          step.error = PG.savepointOutsideBlock('SAVEPOINT');
          return 'error';
        }
        s.txn.savepoints.push({ name: ctl.name, logLen: s.txn.log.length + 1 });
        s.txn.log.push({ kind: 'sql', sql: `SAVEPOINT ${ident(ctl.name)}`, command: 'SAVEPOINT' });
        step.results.push({ command: 'SAVEPOINT' });
        return 'ok';
      }
      case 'release':
      case 'rollback-to': {
        const cmd = ctl.kind === 'release' ? 'RELEASE' : 'ROLLBACK';
        if (!s.txn || s.txn.implicit) {
          step.error = PG.savepointOutsideBlock(ctl.kind === 'release' ? 'RELEASE SAVEPOINT' : 'ROLLBACK TO SAVEPOINT');
          return 'error';
        }
        const i = findLastIndex(s.txn.savepoints, (p) => p.name === ctl.name);
        if (i < 0) {
          step.error = PG.noSuchSavepoint(ctl.name);
          if (!s.txn.aborted) this.abortTxnState(s, true);
          return 'error';
        }
        const depth = i + 1;
        if (ctl.kind === 'rollback-to') {
          const sp = s.txn.savepoints[i];
          s.txn.savepoints.length = depth;
          s.txn.log.length = sp.logLen;
          s.txn.aborted = false;
          this.releaseDepth(s, depth);
        } else {
          s.txn.savepoints.length = i;
          s.txn.log.push({ kind: 'sql', sql: `RELEASE SAVEPOINT ${ident(ctl.name)}`, command: 'RELEASE' });
          for (const h of s.txn.held) if (h.depth > i) h.depth = i;
          for (const h of s.txn.xidHolds) if (h.depth > i) h.depth = i;
          for (const k of s.txn.insertedKeys) if (k.depth > i) k.depth = i;
          this.rows.merge(s.name, i);
        }
        step.results.push({ command: cmd });
        return 'ok';
      }
    }
  }

  /** Releases what a subtransaction level (and deeper ones) acquired: ROLLBACK TO / subxact abort. */
  private releaseDepth(s: Sess, depth: number): void {
    const txn = s.txn!;
    const keep: HeldLock[] = [];
    const woken: ProcId[] = [];
    for (const h of txn.held) {
      if (h.depth >= depth) woken.push(...this.lm.release(s.proc, h.tag, h.mode));
      else keep.push(h);
    }
    txn.held = keep;
    // The aborted subtransactions' xids end now: their waiters wake (XactLockTableWait on a subxid).
    for (const x of txn.xidHolds.filter((h) => h.depth >= depth))
      woken.push(...this.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
    txn.xidHolds = txn.xidHolds.filter((h) => h.depth < depth);
    for (let i = depth - 1; i < txn.savepoints.length; i++) txn.savepoints[i].xid = undefined;
    txn.insertedKeys = txn.insertedKeys.filter((k) => k.depth < depth);
    this.rows.release(s.name, depth);
    if (txn.sx) this.ssi.rollbackTo(txn.sx, depth);
    this.queueResumes(woken);
  }

  /** Commits for real in PGlite; returns an error if COMMIT fails. */
  private async commitTxn(s: Sess): Promise<PgMessage | undefined> {
    const txn = s.txn!;
    // SERIALIZABLE: the dangerous-structure check at commit comes before anything is made durable.
    let ssiCommit: (() => void) | undefined;
    if (txn.sx) {
      try {
        ssiCommit = this.ssi.preCommit(txn.sx);
      } catch (e) {
        if (!(e instanceof SsiFailure)) throw e;
        await this.endTxn(s, false);
        return PG.serializationRw(e.reason);
      }
    }
    if (txn.log.length) {
      await this.noteDeferred(s);
      const replay = replaySql(txn.log, { replica: this.replayNeedsReplica(s) });
      const begin = await this.beginSql(s, false);
      const sql = `${begin.sql}${this.gucSql(s)}${replay.sql}SELECT rel::int, orig::text, cur::text FROM ${CTID_MAP};\nDELETE FROM ${CTID_MAP};\nCOMMIT;\nSELECT pg_catalog.pg_advisory_unlock_all()`;
      const r = await this.ex.run(sql);
      if (r.error) {
        await this.ex.run('ROLLBACK');
        await this.endTxn(s, false);
        return r.error;
      }
      this.verifyReplay(s, r, begin.count + this.gucCount(s), replay.checks);
      const mapRows = r.results[begin.count + this.gucCount(s) + replay.checks.length]?.rows ?? [];
      this.followUpdates(s, new Map(mapRows.map(([rel, orig, cur]) => [`${rel}:${orig}`, cur!])));
      // The catalog changes only when the transaction ran DDL (replayed as SQL text).
      const ddl = txn.log.some((e) => e.kind === 'sql' && !/^(SAVEPOINT|RELEASE)\b/.test(e.command));
      if (ddl) await this.refreshCatalog();
      await this.maybeVacuum();
    }
    ssiCommit?.();
    await this.endTxn(s, true);
    return undefined;
  }

  /**
   * A committed update moves the row to a new version. Other sessions' FOR KEY SHARE locks on
   * the old version (the only ones a non-key update is compatible with) live on in the new
   * version's header, so the model and their row images follow the update chain.
   */
  private followUpdates(s: Sess, committed: Map<string, string>): void {
    const moved = new Map<string, string>();
    for (const e of s.txn!.log) {
      if (e.kind !== 'image') continue;
      for (const op of e.ops) {
        if (op.op !== 'update') continue;
        const cur = committed.get(`${op.target.rel}:${op.newCtid}`);
        if (!cur) continue;
        // An update of an own version continues a chain that started at a committed tuple.
        const start = op.target.own
          ? [...moved].find(([, v]) => v === `${op.target.rel}:${op.target.ctid}`)?.[0]
          : `${op.target.rel}:${op.target.ctid}`;
        if (start) moved.set(start, `${op.target.rel}:${op.newCtid}`);
      }
    }
    for (const [from, viaOrig] of moved) {
      const cur = committed.get(viaOrig);
      if (!cur) continue;
      const [rel, oldCtid] = from.split(':');
      const [b, o] = cur.slice(1, -1).split(',').map(Number);
      const [ob, oo] = oldCtid.slice(1, -1).split(',').map(Number);
      this.rows.relocate({ oid: Number(rel), block: ob, offset: oo }, { block: b, offset: o });
      for (const other of this.sessions.values()) {
        const epq = other.step?.epq;
        if (epq && epq.oid === Number(rel)) epq.ctids = epq.ctids.map((c) => (c === oldCtid ? cur : c));
      }
      for (const other of this.sessions.values()) {
        if (other === s || !other.txn) continue;
        // A REPEATABLE READ / SERIALIZABLE locker's snapshot predates this commit: the new version
        // is invisible to its replay, the old one is not, and locking the old one follows the
        // update chain (heap_lock_updated_tuple), as its original lock did.
        const snapshotLocker = other.txn.isolation !== 'read committed';
        for (const e of other.txn.log)
          if (e.kind === 'image')
            for (const op of e.ops)
              if (
                (op.op === 'lock' || op.op === 'update' || op.op === 'delete') &&
                !op.target.own &&
                op.target.rel === Number(rel) &&
                op.target.ctid === oldCtid
              )
                if (!(snapshotLocker && op.op === 'lock')) {
                  op.target = { ...op.target, ctid: cur };
                  // The new version is invisible to a statement snapshot it keeps: its re-run takes a new one.
                  if (other.step?.stmtSnapshot) other.step.stmtSnapshot.fresh = true;
                }
      }
    }
  }

  /** Ends the transaction in the model: releases every lock, wakes waiters. */
  private async endTxn(s: Sess, committed: boolean): Promise<void> {
    const txn = s.txn;
    if (!txn) return;
    const woken: ProcId[] = [];
    this.cancelTimers(s, ['idle_in_transaction_session_timeout']);
    woken.push(...this.cancelWaitIfAny(s));
    for (const h of [...txn.held].reverse()) woken.push(...this.lm.release(s.proc, h.tag, h.mode));
    for (const x of txn.xidHolds) woken.push(...this.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
    woken.push(...this.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock'));
    this.rows.release(s.name);
    if (txn.sx) this.ssi.finish(txn.sx, committed, this.nextXid);
    if (committed) {
      s.sets.push(...txn.sets);
      this.event({ type: 'commit', atMs: this.clock, session: s.name });
    } else this.event({ type: 'rollback', atMs: this.clock, session: s.name });
    const hadSets = txn.sets.length + txn.localSets.length > 0;
    s.txn = null;
    await this.maybeUnpin();
    this.queueResumes(woken);
    if (hadSets) await this.refreshSessionGucs(s);
  }

  /** An error inside a transaction: PostgreSQL aborts at once and releases the locks. */
  private abortTxnState(s: Sess, keepBlock: boolean): void {
    const txn = s.txn;
    if (!txn) return;
    const depth = txn.savepoints.length;
    if (depth > 0 && keepBlock) {
      // Only the innermost subtransaction aborts; the block stays until ROLLBACK TO.
      this.releaseDepth(s, depth);
      txn.aborted = true;
      return;
    }
    const woken: ProcId[] = [];
    woken.push(...this.cancelWaitIfAny(s));
    for (const h of [...txn.held].reverse()) woken.push(...this.lm.release(s.proc, h.tag, h.mode));
    txn.held = [];
    for (const x of txn.xidHolds) woken.push(...this.lm.release(s.proc, { type: 'transactionid', xid: x.xid as Xid }, 'ExclusiveLock'));
    txn.xidHolds = [];
    for (const sp of txn.savepoints) sp.xid = undefined;
    this.rows.release(s.name);
    txn.insertedKeys = [];
    // AbortTransaction releases the predicate locks at once (ReleasePredicateLocks).
    if (txn.sx) this.ssi.finish(txn.sx, false, this.nextXid);
    txn.aborted = true;
    txn.xid = null;
    this.queueResumes(woken);
    if (txn.implicit || !keepBlock) {
      this.lm.release(s.proc, { type: 'virtualxid', vxid: txn.vxid }, 'ExclusiveLock');
      s.txn = null;
      this.event({ type: 'rollback', atMs: this.clock, session: s.name });
    }
  }

  // ───────────────────────────── statements through PGlite ─────────────────────────────

  /**
   * How a replay transaction starts. READ COMMITTED: a plain BEGIN. REPEATABLE READ and
   * SERIALIZABLE: the session's snapshot from its first statement is imported, so later steps
   * see the database as that statement did (and PostgreSQL itself raises 40001 on conflicts);
   * the first statement exports it. Returns the SQL and how many results it produces.
   */
  private async beginSql(s: Sess, takeSnapshot: boolean): Promise<{ sql: string; count: number; exporting: boolean }> {
    const txn = s.txn!;
    const begin = `BEGIN ISOLATION LEVEL ${txn.isolation.toUpperCase()};\n`;
    if (txn.isolation === 'read committed') {
      const kept = s.step?.stmtSnapshot;
      if (takeSnapshot && usesStatementSnapshot(txn.isolation, kept))
        return { ...importSnapshotBegin(await this.ex.stageSnapshotImport(kept.content)), exporting: false };
      return { sql: begin, count: 1, exporting: false };
    }
    if (txn.snapshot) {
      const id = await this.ex.stageSnapshotImport(txn.snapshot);
      return { sql: `${begin}SET TRANSACTION SNAPSHOT '${id}';\n`, count: 2, exporting: false };
    }
    if (!takeSnapshot) return { sql: begin, count: 1, exporting: false };
    // One pin, older than every exported snapshot, for as long as any session holds one: the
    // importing backend's xmin must not pass the snapshot's xmin.
    if (!this.pinned) {
      await this.ex.must(`BEGIN; SELECT pg_catalog.pg_current_xact_id(); PREPARE TRANSACTION '${PIN_GID}'`);
      this.pinned = true;
    }
    return { sql: `${begin}SELECT pg_catalog.pg_export_snapshot();\n`, count: 2, exporting: true };
  }

  private pinned = false;
  private oidBase: number | null = null;

  /** Releases the pin once no session keeps a snapshot. */
  private async maybeUnpin(): Promise<void> {
    if (!this.pinned || [...this.sessions.values()].some((o) => o.txn?.snapshot || o.step?.stmtSnapshot)) return;
    await this.ex.run(`ROLLBACK PREPARED '${PIN_GID}'`);
    this.pinned = false;
  }

  /** Exports a snapshot of PGlite's state now (the one the statement's dry run saw) and returns the file's content. */
  private async exportStatementSnapshot(): Promise<string> {
    // The pin keeps the xmin horizon behind the snapshot; taken now, it is older than every later change.
    if (!this.pinned) {
      await this.ex.must(`BEGIN; SELECT pg_catalog.pg_current_xact_id(); PREPARE TRANSACTION '${PIN_GID}'`);
      this.pinned = true;
    }
    const r = await this.ex.run(EXPORT_SNAPSHOT_SQL);
    const id = r.results[1]?.rows?.[0]?.[0];
    const content = !r.error && id ? this.ex.readExportedSnapshot(id) : undefined;
    await this.ex.run('ROLLBACK');
    if (!content) throw new EngineInternalError(`could not export the statement's snapshot: ${r.error?.message ?? 'no snapshot'}`);
    return content;
  }

  private gucSql(s: Sess): string {
    const t = s.txn;
    const all = [...s.sets, ...(t?.sets ?? []), ...(t?.localSets ?? [])];
    return all.map((x) => x + ';\n').join('');
  }

  /**
   * Whether replaying the session's row images needs session_replication_role = replica (so
   * that triggers, foreign-key checks and rules do not fire a second time). Setting that GUC
   * resets PostgreSQL's plan cache, so every prepared footprint query would be planned again in
   * each dry run; without triggers or rules on the tables the images change (and no DDL or GUC of
   * the session that could add or matter to them) the replay is the same without it.
   */
  private replayNeedsReplica(s: Sess): boolean {
    if (/session_replication_role/i.test(this.gucSql(s))) return true;
    for (const e of s.txn?.log ?? []) {
      if (e.kind === 'sql') {
        if (e.command !== 'SAVEPOINT' && e.command !== 'RELEASE') return true;
        continue;
      }
      for (const op of e.ops) {
        if (op.op === 'lock' || op.op === 'advisory') continue; // row locks and advisory locks fire nothing
        const oid = op.op === 'insert' ? op.rel : op.target.rel;
        if (this.catalog.find((c) => c.oid === oid)?.triggersOrRules !== false) return true;
      }
    }
    return false;
  }

  private gucCount(s: Sess): number {
    const t = s.txn;
    return s.sets.length + (t?.sets.length ?? 0) + (t?.localSets.length ?? 0);
  }

  /** Replay must reproduce every recorded effect; anything else is a visible engine error. */
  private verifyReplay(s: Sess, r: RawResult, offset: number, checks: ((tag: string | undefined) => string | null)[]): void {
    for (let i = 0; i < checks.length; i++) {
      const problem = checks[i](r.results[offset + i]?.command);
      if (problem)
        throw new EngineInternalError(`replay of session ${s.name} diverged: ${problem}${r.error ? ` (${r.error.message})` : ''}`);
    }
  }

  private async execDml(s: Sess, original: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
    const step = s.step!;
    if (step.cancelled) {
      // The cancel request arrived while this statement executed: it fails and aborts the
      // (sub)transaction, as ProcessInterrupts does; later statements get 25P02 until ROLLBACK.
      step.error = PG.userCancel();
      this.abortTxnState(s, true);
      return 'error';
    }
    let st = this.epqStatement(s, original);
    const seqs = await this.sequenceStates();
    let dry: DryRun;
    try {
      const kept = usesStatementSnapshot(s.txn!.isolation, step.stmtSnapshot) ? step.stmtSnapshot : undefined;
      // The rows were formed before the row wait: the re-run under the snapshot forms the same
      // ones, with the same sequence values, and consumes nothing more.
      if (kept?.formed) await this.restoreSequences(kept.formed);
      dry = await this.dryRun(s, st);
      if (kept?.formed) await this.restoreSequences(seqs);
      if (kept && isSnapshotConflict(dry.raw.error)) {
        // A row the statement locks changed after its snapshot: READ COMMITTED follows it, and
        // EvalPlanQual forms its new version again (more sequence values, as in PostgreSQL).
        kept.fresh = true;
        st = this.epqStatement(s, original);
        dry = await this.dryRun(s, st);
      }
    } catch (e) {
      if (!(e instanceof EngineInternalError)) throw e;
      step.error = PG.engine(e.message);
      this.event({ type: 'engine-error', atMs: this.clock, session: s.name, message: e.message });
      // An error before execution aborts the block like any other error.
      this.abortTxnState(s, true);
      return 'error';
    }
    if (dry.raw.error) {
      // A duplicate key whose committed owner is being deleted by an open transaction: PostgreSQL waits for it.
      const wait = dry.raw.error.sqlstate === '23505' ? await this.keyBlocker(s, dry.raw.error) : undefined;
      if (wait) {
        this.currentXid(s);
        const outcome = this.waitOnXid(s, wait.session, wait.xid, undefined, 'insert');
        // The new row, with its sequence values, is formed before the unique check waits; after the
        // wait PostgreSQL inserts that same row: the re-run takes the values again.
        if (outcome === 'wait') await this.restoreSequences(seqs);
        return outcome;
      }
      // SERIALIZABLE: before reporting a duplicate key, _bt_check_unique checks the index page for
      // rw-conflicts in, so that a serialization failure is not masked by the unique violation.
      if (dry.raw.error.sqlstate === '23505' && s.txn?.sx && !s.txn.sx.doomed) {
        const page = await this.uniqueIndexPage(/unique constraint "((?:[^"]|"")+)"/.exec(dry.raw.error.message)?.[1]?.replace(/""/g, '"'));
        if (page)
          try {
            this.ssi.write(s.txn.sx, [page], s.txn.savepoints.length, s.txn.xid);
          } catch (e) {
            return this.ssiError(s, e);
          }
      }
      // A foreign-key trigger fails at the end of the statement, after the statement has locked
      // its rows: a row another session holds is waited for first (PostgreSQL's order).
      if (
        dry.raw.error.sqlstate === '23503' &&
        s.txn &&
        !s.txn.sx &&
        st.cls.kind === 'dml' &&
        st.cls.waitPolicy === 'block' &&
        (st.cls.verb === 'delete' || st.cls.verb === 'update')
      ) {
        const first = await this.lockBeforeTriggers(s, st);
        if (first !== 'ok') return first;
      }
      step.notices.push(...dry.raw.notices);
      step.error = dry.raw.error;
      this.keepSessionAdvisory(s, dry.sessionAdvisory);
      this.abortTxnState(s, true);
      return 'error';
    }
    const sx = s.txn?.sx;
    if (sx && dry.ssi) {
      // The scan reads before it could wait for a row: rw-conflicts out (or a doomed transaction's error) come first.
      const candidates = this.ssi.indexCandidates(sx, dry.ssi.scope);
      const reached = candidates.length ? await this.indexReached(st, candidates) : undefined;
      try {
        this.ssi.read(sx, dry.ssi.scope, dry.ssi.added, reached, sx.doomed ? this.readsHeapPage(dry.ssi, reached) : true);
        if (sx.doomed && dry.ssi.writes.length) throw new SsiFailure('Canceled on identification as a pivot, during conflict in checking.');
      } catch (e) {
        return this.ssiError(s, e);
      }
    }
    let outcome: 'ok' | 'error' | 'wait' | undefined;
    if (st.cls.kind === 'dml' && st.cls.waitPolicy === 'skip' && this.hasRowConflicts(s, dry.plan)) {
      // SKIP LOCKED passes over rows only: the staged sessions hold their relation and advisory
      // locks in PGlite too, where a conflicting one would block its single backend for good.
      // The lock model decides the locks the statement takes before it locks rows first; the
      // staged dry run runs only once they are granted.
      const first = this.walkPlan(s, st, dry, HEAVYWEIGHT_ITEMS);
      if (first !== 'ok') outcome = first;
      else {
        await this.restoreSequences(seqs);
        dry = await this.dryRun(s, st, true);
        if (dry.raw.error) {
          step.error = dry.raw.error;
          this.keepSessionAdvisory(s, dry.sessionAdvisory);
          this.abortTxnState(s, true);
          return 'error';
        }
      }
    }
    outcome ??= this.walkPlan(s, st, dry);
    // A wait for a lock taken before the statement reaches its rows (a relation lock, an advisory
    // lock in the WHERE clause) comes before any nextval of theirs, and a duplicate key's wait
    // keeps the row it formed for after the wait: either way the re-run takes the values again, so
    // give back what the dry run took. A wait for a row comes after the row's new values were
    // computed, and EvalPlanQual computes them again: PostgreSQL consumes both.
    const rowWait = step.wait?.tag.type === 'tuple' || (step.wait?.tag.type === 'transactionid' && step.wait.tuple !== undefined);
    if (outcome === 'wait' && !rowWait) await this.restoreSequences(seqs);
    if (outcome === 'wait' && rowWait) await this.noteLockOrder(s, st, dry.plan);
    if (outcome === 'wait' && rowWait) await this.foreignKeyContext(s, st);
    // The statement's snapshot is the one its dry run just used: keep it for the re-runs after the
    // wait. A relation lock is waited for before the statement takes its snapshot.
    if (outcome === 'wait' && step.wait?.tag.type !== 'relation' && s.txn?.isolation === 'read committed') {
      step.stmtSnapshot ??= { content: await this.exportStatementSnapshot() };
      if (rowWait) step.stmtSnapshot.formed ??= seqs ?? undefined;
    }
    // The scan that locks: a locking CTE's (it locks before the outer statement sees its rows), or the target's.
    const scanned = st.cls.kind === 'dml' ? (st.cls.lockingCte ?? st.cls.target) : undefined;
    // A relation lock is taken while the statement is parsed, before its snapshot: after that
    // wait it scans afresh, unrestricted.
    if (outcome === 'wait' && !step.epq && step.wait?.tag.type !== 'relation' && st.cls.kind === 'dml' && scanned) {
      const oid = this.catalog.find((c) => c.name === scanned.relname)?.oid;
      if (oid !== undefined) {
        // The rows the scan found: those it is locking now, and those this session already held.
        const found = dry.plan.flatMap((p) => (p.kind === 'row' && p.tuple.oid === oid ? [`(${p.tuple.block},${p.tuple.offset})`] : []));
        const held = this.rows.heldBy(s.name).flatMap((h) => (h.tuple.oid === oid ? [`(${h.tuple.block},${h.tuple.offset})`] : []));
        // A locking SELECT's scan may have stopped early (LIMIT): it goes on over the rows its snapshot saw.
        const horizon = st.cls.verb === 'select' || st.cls.lockingCte ? dry.horizon : undefined;
        step.epq = { oid, ctids: [...new Set([...found, ...held])], ...(horizon !== undefined ? { horizon } : {}) };
      }
    }
    if (outcome !== 'ok') return outcome;
    step.epq = undefined;
    step.stmtSnapshot = undefined;
    // Granted: the statement joins the session's transaction.
    const txn = s.txn!;
    if (sx && dry.ssi?.writes.length) {
      // Writes check the other transactions' SIREAD locks once the rows are theirs (heap_update after the wait).
      if (dry.assignsXid) this.currentXid(s);
      try {
        this.ssi.write(sx, dry.ssi.writes, txn.savepoints.length, txn.xid);
      } catch (e) {
        return this.ssiError(s, e);
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
    const xid = dry.assignsXid ? this.currentXid(s) : (txn.xid ?? 0);
    for (const k of dry.inserted)
      txn.insertedKeys.push({ index: k.index, key: k.key, depth, xid, table: k.table, ...(k.ctid ? { ctid: k.ctid } : {}) });
    if (dry.sessionAdvisory)
      this.setSessionAdvisory(
        s,
        dry.sessionAdvisory,
        dry.plan.flatMap((p) => (p.kind === 'adv' && p.sessionLevel ? [p] : [])),
      );
    if (st.cls.kind === 'set' || st.cls.kind === 'show') await this.afterSet(s, st);
    step.results.push(...dry.raw.results);
    step.notices.push(...dry.raw.notices);
    this.releaseTupleLocks(s);
    this.cancelTimers(s, ['statement_timeout']);
    return 'ok';
  }

  private assignXid(s: Sess): void {
    const xid = this.nextXid++;
    s.txn!.xid = xid;
    s.txn!.xidHolds.push({ xid, depth: 0 });
    this.lm.acquire(s.proc, { type: 'transactionid', xid: xid as Xid }, 'ExclusiveLock');
  }

  /** The xid of the current (sub)transaction, assigning parents first as AssignTransactionId does. */
  private currentXid(s: Sess): number {
    const txn = s.txn!;
    if (txn.xid === null) this.assignXid(s);
    txn.savepoints.forEach((sp, i) => {
      if (sp.xid !== undefined) return;
      sp.xid = this.nextXid++;
      txn.xidHolds.push({ xid: sp.xid, depth: i + 1 });
      this.lm.acquire(s.proc, { type: 'transactionid', xid: sp.xid as Xid }, 'ExclusiveLock');
    });
    return txn.savepoints.length ? txn.savepoints[txn.savepoints.length - 1].xid! : txn.xid!;
  }

  /**
   * The row locks a statement takes before its foreign-key triggers run: a dry run with the
   * triggers off (session_replication_role = replica) finds them. 'ok' when none conflicts (the
   * trigger's error is reported at once); otherwise the statement waits (or fails) on them, and
   * runs again, triggers and all, once they are granted.
   */
  private async lockBeforeTriggers(s: Sess, st: ParsedStatement): Promise<'ok' | 'error' | 'wait'> {
    const probe = await this.dryRun(s, st, false, true);
    if (probe.raw.error || !this.hasRowConflicts(s, probe.plan)) return 'ok';
    return this.walkPlan(s, st, probe);
  }

  /** After a wait under READ COMMITTED: the statement restricted to the rows it first found (EvalPlanQual). */
  private epqStatement(s: Sess, st: ParsedStatement): ParsedStatement {
    const epq = s.step?.epq;
    if (!epq || s.txn?.isolation !== 'read committed' || st.cls.kind !== 'dml') return st;
    // Under the statement's own snapshot the scan is the first run's: nothing to restrict.
    if (usesStatementSnapshot(s.txn.isolation, s.step?.stmtSnapshot)) return st;
    // With a new snapshot, only the target is restricted: the other tables are read afresh.
    if (st.cls.relations.length > 1) this.approximate(s, 'join-recheck');
    const cte = st.cls.lockingCte;
    if (cte) {
      const sql = restrictCte(st.sql, cte.name, cte.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], epq.horizon);
      return sql ? { sql, cls: st.cls } : st;
    }
    if (!st.cls.target) return st;
    const verb = st.cls.verb;
    if (verb !== 'select' && verb !== 'update' && verb !== 'delete') return st;
    const sql = restrictToTuples(st.sql, verb, st.cls.target.ref, epq.ctids.length ? epq.ctids : ['(0,0)'], epq.horizon);
    return sql ? { sql, cls: st.cls } : st;
  }

  /** Replays the session's open work, runs the statement in a savepoint, reads what it locked, rolls back. */
  private async dryRun(s: Sess, st: ParsedStatement, stageOthers = false, triggersOff = false): Promise<DryRun> {
    const staged: string[] = [];
    if (stageOthers) {
      for (const o of this.sessions.values()) {
        if (o === s || !o.txn || !o.txn.log.length || o.txn.aborted) continue;
        const gid = `lockstep_${o.index}`;
        const begin = await this.beginSql(o, false);
        const r = await this.ex.run(
          `${begin.sql}${this.gucSql(o)}${replaySql(o.txn.log, { replica: this.replayNeedsReplica(o) }).sql}PREPARE TRANSACTION '${gid}'`,
        );
        if (r.error) {
          await this.ex.run('ROLLBACK');
          for (const g of staged) await this.ex.run(`ROLLBACK PREPARED '${g}'`);
          throw new EngineInternalError(`could not stage session ${o.name}: ${r.error.message}`);
        }
        staged.push(gid);
      }
    }
    try {
      return await this.dryRunInner(s, st, triggersOff);
    } finally {
      for (const g of staged) await this.ex.run(`ROLLBACK PREPARED '${g}'`);
    }
  }

  /** `triggersOff`: the statement runs with session_replication_role = replica (after the replay, which sets it itself). */
  private async dryRunInner(s: Sess, st: ParsedStatement, triggersOff = false): Promise<DryRun> {
    const txn = s.txn!;
    const advisoryPrefix = s.sessionAdvisory.map((a) => advisorySql(a.tag, a.mode, 'session') + ';\n').join('');
    const replay = replaySql(txn.log, { replica: this.replayNeedsReplica(s) });
    const begin = await this.beginSql(s, true);
    const shadow = this.shadowSql(s, st);
    if (triggersOff) {
      shadow.sql = `SET LOCAL session_replication_role = replica;\n${shadow.sql}`;
      shadow.count++;
    }
    // With nothing replayed (no open work, no session-level advisory lock, no shadow data) the
    // transaction holds no lock the sample reads before the statement runs: it is not taken.
    const sampleBefore = txn.log.length > 0 || advisoryPrefix !== '' || shadow.sql !== '' || txn.isolation === 'serializable';
    // A doomed serializable transaction: how many index entries user-index scans returned so far
    // in this transaction (the replay's own), to tell what the statement itself returns.
    const entriesSql = txn.sx?.doomed ? this.indexEntriesSql() : '';
    const prefix = `${begin.sql}${this.gucSql(s)}${advisoryPrefix}${replay.sql}${shadow.sql}${entriesSql ? `${this.indexEntriesSql(true)};\n` : ''}SAVEPOINT lockstep_q${sampleBefore ? `;\n${LOCK_SAMPLE_SQL}` : ''}`;
    const prefixCount =
      begin.count +
      this.gucCount(s) +
      s.sessionAdvisory.length +
      replay.checks.length +
      shadow.count +
      (entriesSql ? 1 : 0) +
      (sampleBefore ? 2 : 1);
    // One round trip for the usual case: replay, the statement, and what it locked. A locking
    // SELECT runs row by row as a cursor, in the same round trip (cursorSql, runStatement).
    const merged = !(st.cls.kind === 'dml' && st.cls.lockingSelect);
    // A plain SELECT (or SET/SHOW) locks and writes no rows unless a function in it does: its
    // tuple scan runs only if the sample shows that it took a transaction id.
    const scanAlong =
      st.cls.kind === 'dml' ? st.cls.verb !== 'select' || st.cls.lockingSelect : st.cls.kind !== 'set' && st.cls.kind !== 'show';
    const all = await this.ex.run(
      merged ? `${prefix};\n${st.sql};\n${LOCK_SAMPLE_SQL}${scanAlong ? `;\n${TUPLE_SCAN_SQL}` : ''}` : `${prefix};\n${cursorSql(st.sql)}`,
    );
    const pre: RawResult = all.results.length >= prefixCount ? { results: all.results.slice(0, prefixCount), notices: [] } : all;
    if (pre.error) {
      await this.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
      throw new EngineInternalError(`replay of session ${s.name} failed: ${pre.error.message}`);
    }
    if (begin.exporting) txn.snapshot = this.ex.readExportedSnapshot(pre.results[1]!.rows![0][0]!);
    if (begin.exporting && txn.isolation === 'serializable' && !txn.sx) {
      txn.sx = this.ssi.begin(s.name, this.snapshotXmin(s));
      txn.sx.vxid = txn.vxid;
    }
    try {
      this.verifyReplay(s, pre, begin.count + this.gucCount(s) + s.sessionAdvisory.length, replay.checks);
    } catch (e) {
      await this.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
      throw e;
    }
    const before = parseLockSample(sampleBefore ? (pre.results.at(-1)!.rows ?? []) : [], this.relations);
    let raw: RawResult;
    let order = false;
    let afterRows: (string | null)[][] | undefined;
    let scanRows: (string | null)[][] | undefined;
    if (merged) {
      const mine = (i: number) => (all.noticeAt?.[i] ?? 0) >= prefixCount;
      const notices = all.notices.filter((_, i) => mine(i));
      raw = all.error ? { results: [], error: all.error, notices } : { results: [all.results[prefixCount]], notices };
      afterRows = all.results[prefixCount + 1]?.rows;
      scanRows = scanAlong ? all.results[prefixCount + 2]?.rows : undefined;
    } else ({ raw, order, afterRows, scanRows } = await this.runStatement(st, all, prefixCount));
    let after: LockSample = before;
    let plan: PlanItem[] = [];
    const inserted: DryRun['inserted'] = [];
    let assignsXid = false;
    let ops: ImageOp[] = [];
    let ssi: DryRun['ssi'];
    if (!raw.error) {
      if (!afterRows) {
        const a = await this.ex.run(`${LOCK_SAMPLE_SQL};\n${TUPLE_SCAN_SQL}`);
        afterRows = a.results[0]?.rows;
        scanRows = a.results[1]?.rows;
      }
      after = parseLockSample(afterRows ?? [], this.relations);
      const stmtXids = new Set([...after.xids].filter((x) => !before.xids.has(x)));
      assignsXid = stmtXids.size > 0;
      const ownXids = new Set([...before.xids]);
      let touched: Awaited<ReturnType<typeof decodeTuples>> = { touched: [], inserted: [] };
      if (stmtXids.size && !scanRows) scanRows = (await this.ex.run(TUPLE_SCAN_SQL)).results[0]?.rows;
      if (stmtXids.size) touched = await decodeTuples(this.ex, scanRows ?? [], stmtXids, ownXids);
      const byTable = groupBy(touched.inserted, (t) => t.relation);
      // The rest of the dry run's reads in one round trip; the rollback rides along unless
      // SERIALIZABLE still reads the dry run (ssiFootprint).
      const end = txn.sx ? undefined : dryRunEnd(s.sessionAdvisory.length > 0 || after.advisory.length > 0);
      await this.prefetch(
        st,
        byTable,
        touched.touched.some((t) => t.own),
        end,
      );
      // Unique keys of the tuples this statement created (new row versions included).
      for (const [table, list] of byTable) {
        const cat = this.catalog.find((c) => c.name === table);
        const sql =
          cat &&
          uniqueKeysSql(
            cat,
            list.map((t) => t.ctid),
          );
        if (!sql) continue;
        for (const row of await this.must(sql))
          for (const k of row.slice(1)) if (k) inserted.push({ ...splitKey(table, k), ctid: row[0]! });
      }
      const others = touched.touched.filter((t) => !t.own);
      // Changing its own new version of a committed row is, for everyone else, a change of that
      // row: README.tuplock lockers follow the update chain (a later key update of the own
      // version conflicts with another session's FOR KEY SHARE on the row).
      const ownTouched = touched.touched.filter((t) => t.own);
      if (ownTouched.length && txn.originOf.size) {
        const back = await this.ctidBackMap();
        for (const t of ownTouched) {
          const orig = back.get(`${t.oid}:(${t.block},${t.offset})`) ?? `(${t.block},${t.offset})`;
          const origin = txn.originOf.get(`${t.oid}:${orig}`);
          if (origin) others.push({ ...t, block: origin.block, offset: origin.offset, own: false, newCtid: undefined });
        }
      }
      // Rows are locked in processing order: for a locking SELECT, the order its cursor returned them.
      // Subtransaction ids are handed out in FETCH order, so they sort the rows by processing order.
      if (order) others.sort((a, b) => a.xid - b.xid);
      plan = this.buildPlan(st, before, after, others);
      // Under the kept statement snapshot a lock can land on an old version (stmtSnapshot.ts).
      if (recordsImage(st))
        ops = await this.imageOps(touched.touched, touched.inserted, plan, usesStatementSnapshot(txn.isolation, s.step?.stmtSnapshot));
      if (txn.sx) {
        ssi = await this.ssiFootprint(before, after, touched);
        // A doomed transaction fails at its first heap fetch: count the index entries its index
        // scans returned (each leads to one), from this transaction's own statistics.
        if (entriesSql) {
          const n = await this.ex.must(entriesSql);
          const [beforeN, empty] = pre.results[prefixCount - (sampleBefore ? 3 : 2)]?.rows?.[0] ?? [];
          ssi.indexEntriesRead = Number(n[0]?.[0] ?? 0) - Number(beforeN ?? 0);
          ssi.emptyTables = new Set((empty ?? '').split(',').filter(Boolean).map(Number));
        }
      }
    }
    // A failed statement may have taken session-level advisory locks before its error: they
    // survive the rollback, so read them (and release them in PGlite) then too.
    const needSessionAdvisory = s.sessionAdvisory.length > 0 || after.advisory.length > 0 || !!raw.error;
    const end = this.rolledBack ?? (await this.ex.run(dryRunEnd(needSessionAdvisory)));
    this.prefetched.clear();
    this.rolledBack = null;
    let sessionAdvisory: DryRun['sessionAdvisory'] = null;
    if (needSessionAdvisory) {
      sessionAdvisory = (end.results[1]?.rows ?? []).map(([k1, k2, f4, mode]) => ({
        key1: Number(k1),
        key2: Number(k2),
        field4: Number(f4) as 1 | 2,
        mode: mode as LockMode,
      }));
      // Advisory locks that survived the rollback are session-level: they are not replayed as part of the transaction.
      for (const a of sessionAdvisory) {
        const item = plan.find(
          (p) => p.kind === 'adv' && p.tag.key1 === a.key1 && p.tag.key2 === a.key2 && p.tag.field4 === a.field4 && p.mode === a.mode,
        );
        if (item && item.kind === 'adv') item.sessionLevel = true;
      }
      ops = ops.filter(
        (o) => !(o.op === 'advisory' && plan.some((p) => p.kind === 'adv' && p.sessionLevel && sameTag(p.tag, o.tag) && p.mode === o.mode)),
      );
    }
    for (const k of inserted) plan.push({ kind: 'key', index: k.index, key: k.key, ...(k.ctid ? { ctid: k.ctid } : {}) });
    let entry: LogEntry | null = null;
    if (!raw.error && st.cls.kind !== 'set' && st.cls.kind !== 'show') {
      const command = raw.results.at(-1)?.command ?? '';
      if (recordsImage(st)) entry = ops.length ? { kind: 'image', ops, command, sql: st.sql } : null;
      else entry = { kind: 'sql', sql: st.sql, command };
    }
    // The dry run's own (top-level) xid: every version committed before it ran has a smaller xmin.
    const horizon = !raw.error && after.xids.size ? Math.min(...after.xids) : undefined;
    return {
      raw,
      plan,
      assignsXid,
      inserted,
      sessionAdvisory,
      entry,
      ...(ssi ? { ssi } : {}),
      ...(horizon !== undefined ? { horizon } : {}),
    };
  }

  /**
   * SERIALIZABLE: the statement's SIREAD targets (as PostgreSQL took them in the dry run; the
   * ones already there before it ran came from replaying the session's own work) and its writes.
   */
  private async ssiFootprint(
    before: LockSample,
    after: LockSample,
    touched: {
      touched: { oid: number; block: number; offset: number; mode: RowLockMode; own: boolean }[];
      inserted: { oid: number; relation: string; ctid: string }[];
    },
  ): Promise<NonNullable<DryRun['ssi']>> {
    const had = new Set(before.predicate.map(targetKey));
    const writes = new Map<string, SsiWrite>();
    const add = (w: SsiWrite, key: string) => writes.set(key, w);
    for (const t of touched.touched)
      if (t.mode === 'NoKeyUpdate' || t.mode === 'Update')
        if (t.own) add({ kind: 'relation', rel: t.oid }, `r${t.oid}`);
        else add({ kind: 'tuple', rel: t.oid, block: t.block, offset: t.offset }, `t${t.oid}:${t.block}:${t.offset}`);
    for (const t of touched.inserted) add({ kind: 'relation', rel: t.oid }, `r${t.oid}`);
    if (touched.inserted.length) {
      // Index entries: an index insert checks the leaf page it lands on, and a later reader whose
      // index scan reaches the entry has a conflict out to this transaction.
      const tables = new Set(touched.inserted.map((t) => t.relation));
      const indexes = [...this.relations].filter(([, r]) => r.isIndex && tables.has(r.table)).map(([oid]) => oid);
      const entries = indexes.length
        ? await this.ex.must(
            indexPagesSql(
              indexes,
              touched.inserted.map((t) => t.ctid),
            ),
          )
        : [];
      // The rows behind the entries, to match them against a later reader's index condition.
      const rows = new Map<string, string>();
      for (const table of tables) {
        const ctids = touched.inserted.filter((t) => t.relation === table).map((t) => `"${t.ctid}"`);
        for (const [ctid, json] of await this.ex.must(
          `SELECT ctid::text, pg_catalog.row_to_json(t)::text FROM ${ident(table)} t WHERE ctid = ANY('{${ctids.join(',')}}'::tid[])`,
        ))
          rows.set(`${table}:${ctid}`, json!);
      }
      for (const [oid, blk, tid] of entries) {
        const table = this.relations.get(Number(oid))!.table;
        const json = rows.get(`${table}:${tid}`);
        add({ kind: 'index', rel: Number(oid), block: Number(blk), ...(json ? { row: { table, json } } : {}) }, `i${oid}:${blk}:${tid}`);
      }
    }
    return { scope: after.predicate, added: after.predicate.filter((t) => !had.has(targetKey(t))), writes: [...writes.values()] };
  }

  /**
   * The leaf page a key of a unique index would go to. Exact while the index is a single leaf
   * page (its root); for deeper indexes the root stands in (docs/engine.md).
   */
  private async uniqueIndexPage(index: string | undefined): Promise<SsiWrite | undefined> {
    const oid = [...this.relations].find(([, r]) => r.isIndex && r.name === index)?.[0];
    if (oid === undefined) return undefined;
    const rows = await this.ex.run(`SELECT root FROM ${INTERNAL_SCHEMA}.bt_metap(${oid}::regclass::text)`);
    const root = rows.results[0]?.rows?.[0]?.[0];
    return root ? { kind: 'index', rel: oid, block: Number(root) } : { kind: 'relation', rel: oid };
  }

  /**
   * Which of another transaction's index entries (on pages this statement's index scans locked)
   * the scans reached: the plan's Index Cond for that index, evaluated on the entry's row. A
   * condition that cannot be evaluated alone (joins, parameters, subplans) counts as reached, as
   * does an index the plan does not show (a function's own queries): both err on PostgreSQL's
   * side of a page-level conflict.
   */
  private async indexReached(st: ParsedStatement, candidates: (SsiWrite & { kind: 'index' })[]): Promise<Set<SsiWrite>> {
    const reached = new Set<SsiWrite>();
    const plan = await this.ex.run(`EXPLAIN (FORMAT JSON) ${st.sql}`);
    const scans: { index: string; alias: string; cond?: string }[] = [];
    const walk = (node: Record<string, unknown>, alias: string | undefined) => {
      const a = (node['Alias'] as string | undefined) ?? alias;
      if (typeof node['Index Name'] === 'string')
        scans.push({
          index: node['Index Name'],
          alias: a ?? '',
          ...(typeof node['Index Cond'] === 'string' ? { cond: node['Index Cond'] } : {}),
        });
      for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child, a);
    };
    const text = plan.results[0]?.rows?.[0]?.[0];
    if (plan.error || !text) return new Set(candidates);
    for (const top of JSON.parse(text) as { Plan: Record<string, unknown> }[]) walk(top.Plan, undefined);
    for (const c of candidates) {
      const name = this.relations.get(c.rel)?.name;
      const uses = scans.filter((x) => x.index === name);
      if (!c.row || !uses.length || uses.some((u) => !u.cond || !u.alias)) {
        reached.add(c);
        continue;
      }
      const probes = uses.map(
        (u) =>
          `EXISTS (SELECT 1 FROM pg_catalog.json_populate_record(NULL::${ident(c.row!.table)}, ${literal(c.row!.json)}::json) AS ${ident(u.alias)} WHERE ${u.cond})`,
      );
      const r = await this.ex.run(`SELECT ${probes.join(' OR ')}`);
      if (r.error || r.results[0]?.rows?.[0]?.[0] === 't') reached.add(c);
    }
    return reached;
  }

  /**
   * Did the scan look at a heap page (where a doomed transaction's conflict-out check raises)?
   * A tuple or page lock says so; a relation lock only if the table has a page (on real
   * PostgreSQL, one holding committed rows or another session's open writes); an index scan
   * only if it returned an entry (its own rows included, which take no SIRead lock).
   */
  private readsHeapPage(dry: NonNullable<DryRun['ssi']>, reached: ReadonlySet<SsiWrite> | undefined): boolean {
    if ((reached?.size ?? 0) > 0 || (dry.indexEntriesRead ?? 0) > 0) return true;
    for (const t of dry.scope) {
      if (this.relations.get(t.rel)?.isIndex) continue;
      if (t.kind !== 'relation') return true;
      if (this.ssi.all().some((o) => o.writes.some((x) => x.w.rel === t.rel))) return true;
      if (!dry.emptyTables?.has(t.rel)) return true;
    }
    return false;
  }

  /** Index entries returned by scans of user indexes in the current transaction (and, `withEmpty`, the user tables with no page yet). */
  private indexEntriesSql(withEmpty = false): string {
    const oids = (index: boolean) => [...this.relations].filter(([, r]) => r.isIndex === index).map(([oid]) => oid);
    const empty = `, (SELECT coalesce(string_agg(c::text, ','), '') FROM pg_catalog.unnest('{${oids(false).join(',')}}'::oid[]) c WHERE pg_catalog.pg_relation_size(c) = 0)`;
    return `SELECT coalesce(sum(pg_catalog.pg_stat_get_xact_tuples_returned(c)), 0)::int${withEmpty ? empty : ''} FROM pg_catalog.unnest('{${oids(true).join(',')}}'::oid[]) c`;
  }

  /** The xmin a snapshot taken now has: the oldest running transaction id, or the next one. */
  private snapshotXmin(me: Sess): number {
    let xmin = this.nextXid;
    for (const o of this.sessions.values()) if (o !== me && o.txn && o.txn.xid !== null && !o.txn.aborted) xmin = Math.min(xmin, o.txn.xid);
    return xmin;
  }

  /** A 40001 from SSI: the statement fails and the (sub)transaction aborts. */
  private ssiError(s: Sess, e: unknown): 'error' {
    if (!(e instanceof SsiFailure)) throw e;
    s.step!.error = PG.serializationRw(e.reason);
    this.abortTxnState(s, true);
    return 'error';
  }

  /**
   * Runs the statement being tried. A locking SELECT runs as a cursor, one row per FETCH, each
   * FETCH in its own savepoint: every row's lock then carries a distinct subtransaction id, which
   * tells the order PostgreSQL locked the rows in (what ORDER BY … FOR UPDATE is about).
   */
  private async runStatement(
    st: ParsedStatement,
    all: RawResult,
    at: number,
  ): Promise<{ raw: RawResult; order: boolean; afterRows?: (string | null)[][]; scanRows?: (string | null)[][] }> {
    const order = true;
    if (st.cls.kind !== 'dml' || !st.cls.lockingSelect) return { raw: await this.ex.run(st.sql), order: false };
    // The dry run's first round trip declared the cursor and ran a first batch of fetches and, in
    // a savepoint, the footprint queries (cursorSql): results from `at` on.
    const res = all.results.slice(at);
    const notices = all.notices.filter((_, i) => (all.noticeAt?.[i] ?? 0) >= at);
    if (res.length < 2) {
      await this.ex.run('ROLLBACK TO SAVEPOINT lockstep_c');
      return { raw: await this.ex.run(st.sql), order: false };
    }
    const rows: (string | null)[][] = [];
    let columns: string[] | undefined;
    // FETCH results of one batch from `from` on (SAVEPOINT, FETCH pairs); true once the cursor is exhausted.
    const take = (batch: StatementResult[], from: number): boolean | 'error' => {
      for (let k = 0; k < CURSOR_BATCH; k++) {
        const fetched = batch[from + 2 * k + 1];
        if (!fetched) return 'error';
        columns ??= fetched.columns;
        if (!fetched.rows?.length) return true;
        rows.push(...fetched.rows);
      }
      return false;
    };
    let done = take(res, 2);
    if (done === 'error' && !all.error) throw new EngineInternalError('a FETCH of a locking SELECT returned nothing');
    if (done === 'error') return { raw: { results: [], error: all.error, notices }, order };
    const result = () => ({ results: [{ command: `SELECT ${rows.length}`, ...(columns ? { columns } : {}), rows }], notices });
    if (all.error) {
      await this.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
      throw new EngineInternalError(`footprint of a locking SELECT failed: ${all.error.message}`);
    }
    const tail = 2 + 2 * CURSOR_BATCH;
    if (done) return { raw: result(), order, afterRows: res[tail + 1]?.rows, scanRows: res[tail + 2]?.rows };
    // More rows than one batch: undo the footprint queries' own locks and go on fetching; the
    // dry run then samples and scans on its own.
    let undo = 'ROLLBACK TO SAVEPOINT lockstep_s;\n';
    while (!done) {
      const f = await this.ex.run(`${undo}${FETCH_PAIR.repeat(CURSOR_BATCH)}`);
      notices.push(...f.notices);
      done = take(f.results, undo ? 1 : 0);
      if (done === 'error') return { raw: { results: [], error: f.error, notices }, order };
      undo = '';
    }
    return { raw: result(), order };
  }

  /**
   * SQL run just before the statement so that unqualified diagnostics (pg_locks,
   * pg_stat_activity, pg_blocking_pids, pg_backend_pid) show the simulated sessions and
   * pg_try_advisory_* sees the other sessions' advisory locks (search_path shadowing).
   */
  private shadowSql(s: Sess, st: ParsedStatement): { sql: string; count: number } {
    if (st.cls.kind !== 'dml') return { sql: '', count: 0 };
    const schemas: string[] = [];
    let sql = '';
    let count = 0;
    if (st.cls.mentionsDiagnostics) {
      schemas.push(DIAG_SCHEMA);
      sql += diagnosticsDataSql(this.diagnosticsInput(s)) + ';\n';
      count++;
    }
    if (/pg_try_advisory/i.test(st.sql)) {
      schemas.push(SHADOW_SCHEMA);
      const rows = this.lm
        .entries()
        .filter((e) => e.granted && e.proc !== s.proc && e.tag.type === 'advisory')
        .map((e) => {
          const t = e.tag as LockTag & { type: 'advisory' };
          return `(${t.key1 | 0}, ${t.key2 | 0}, ${t.field4}, '${e.mode}')`;
        });
      if (rows.length) {
        sql += `INSERT INTO ${OTHERS_ADVISORY} VALUES ${rows.join(', ')};\n`;
        count++;
      }
    }
    if (!schemas.length) return { sql: '', count: 0 };
    // pg_catalog must be listed after the shadows explicitly, or it is searched first.
    const path = `pg_catalog.current_setting('search_path')`;
    const tail = `CASE WHEN ${path} ~ '(^|[ ,])pg_catalog([ ,]|$)' THEN ${path} ELSE 'pg_catalog, ' || ${path} END`;
    return { sql: sql + `SELECT pg_catalog.set_config('search_path', '${schemas.join(', ')}, ' || ${tail}, true);\n`, count: count + 1 };
  }

  private diagnosticsInput(me: Sess): DiagnosticsInput {
    const snap = this.snapshot();
    const live = new Set([...this.sessions.values()].filter((x) => !x.terminated).map((x) => x.name));
    const blocking: Record<string, string[]> = {};
    for (const e of this.lm.waitEdges()) {
      const list = (blocking[e.from] ??= []);
      if (!list.includes(e.to)) list.push(e.to);
    }
    return {
      sessions: snap.sessions.filter((x) => live.has(x.name)),
      me: me.name,
      locks: snap.locks.filter((l) => live.has(l.session)),
      blocking,
      clockMs: this.clock,
      relationOids: Object.fromEntries(this.catalog.map((c) => [c.name, c.oid])),
      predicateLocks: this.ssi.all().flatMap((x) => {
        const pid = this.sessions.get(x.session)?.pid ?? 0;
        return [...x.locks.values()].map((l) => ({
          locktype: l.kind,
          relation: l.rel,
          page: l.kind === 'relation' ? null : l.block,
          tuple: l.kind === 'tuple' ? l.offset : null,
          virtualtransaction: x.vxid,
          pid,
        }));
      }),
      databaseOid: DATABASE_OID,
      databaseName: 'postgres',
      userName: 'postgres',
    };
  }

  /** This replay's own versions: "rel:current ctid" → the ctid they were recorded under. */
  private versionSeq = 0;
  private readonly versionIds = new Map<string, string>();

  private async ctidBackMap(): Promise<Map<string, string>> {
    const back = new Map<string, string>();
    for (const [rel, orig, cur] of await this.must(CTID_BACK_SQL)) back.set(`${rel}:${cur}`, orig!);
    return back;
  }

  /** Rows read inside the current dry run in one round trip ahead of use (see prefetch). */
  private prefetched = new Map<string, (string | null)[][]>();
  /** Set when prefetch also rolled the dry run back: what the end of the dry run returned. */
  private rolledBack: RawResult | null = null;

  /**
   * Reads what the rest of a dry run asks of it once the tuple scan is in — the values of the
   * versions the statement created and their unique keys, the ctid map of the session's own
   * versions — in one round trip instead of one each, and with it, when given, the end of the
   * dry run (`end`: its ROLLBACK). The queries are the very ones `must` is asked later; the
   * unique keys ("index\u0001(cols)=(values)", uniqueKeysSql) are built from the values when
   * every key column is one of them. Without `end`, anything not read here runs on its own;
   * after the rollback, a read not prepared here is an engine error.
   */
  private async prefetch(st: ParsedStatement, created: Map<string, { ctid: string }[]>, ownTouched: boolean, end?: string): Promise<void> {
    this.prefetched.clear();
    this.rolledBack = null;
    const sqls: string[] = [];
    const derived: { keys: string; values: string; cat: CatalogTable }[] = [];
    for (const [table, list] of created) {
      const cat = this.catalog.find((c) => c.name === table);
      if (!cat) continue;
      const keys = uniqueKeysSql(
        cat,
        list.map((t) => t.ctid),
      );
      const values = recordsImage(st) ? valuesSql(cat, list) : null;
      if (keys && values && cat.uniqueIndexes.every((ix) => ix.pred === undefined && ix.columns.every((c) => cat.writable.includes(c))))
        derived.push({ keys, values, cat });
      else if (keys) sqls.push(keys);
      if (values) sqls.push(values);
    }
    if (ownTouched) sqls.push(CTID_BACK_SQL);
    if (!sqls.length || (sqls.length < 2 && !end)) return;
    const r = await this.ex.run(sqls.join(';\n') + (end ? `;\n${end}` : ''));
    if (r.error || r.results.length < sqls.length) {
      if (!end) return;
      await this.ex.run(`ROLLBACK;\nSELECT pg_catalog.pg_advisory_unlock_all()`);
      throw new EngineInternalError(`reading a dry run's footprint failed: ${r.error?.message ?? 'no result'}`);
    }
    sqls.forEach((sql, i) => this.prefetched.set(sql, r.results[i].rows ?? []));
    for (const d of derived) {
      const rows = this.prefetched.get(d.values)!;
      const at = d.cat.uniqueIndexes.map((ix) => ix.columns.map((c) => d.cat.writable.indexOf(c) + 1));
      this.prefetched.set(
        d.keys,
        rows.map((row) => [
          row[0],
          ...d.cat.uniqueIndexes.map((ix, k) => {
            const vals = at[k].map((i) => row[i]);
            return vals.some((v) => v === null) ? null : `${ix.name}\u0001(${ix.columns.join(', ')})=(${vals.join(', ')})`;
          }),
        ]),
      );
    }
    if (end) this.rolledBack = { results: r.results.slice(sqls.length), notices: [] };
  }

  /** `ex.must`, answered from the dry run's prefetched rows when it was read ahead. */
  private async must(sql: string): Promise<(string | null)[][]> {
    const rows = this.prefetched.get(sql);
    if (rows) return rows;
    if (this.rolledBack) throw new EngineInternalError(`a dry run read after its rollback: ${sql.slice(0, 200)}`);
    return this.ex.must(sql);
  }

  /** What the statement did to tuples, as replayable row images (see images.ts). */
  private async imageOps(
    touched: {
      oid: number;
      relation: string;
      block: number;
      offset: number;
      mode: RowLockMode;
      newCtid?: string;
      next?: string;
      own: boolean;
    }[],
    created: { oid: number; relation: string; ctid: string }[],
    plan: PlanItem[],
    newestVisible = false,
  ): Promise<ImageOp[]> {
    // Own versions are named by the ctid they had when recorded: map this run's ctids back.
    const back = touched.some((t) => t.own) ? await this.ctidBackMap() : new Map<string, string>();
    const ref = (t: { oid: number; relation: string; block: number; offset: number; own: boolean }): TupleRef => {
      const ctid = `(${t.block},${t.offset})`;
      return { rel: t.oid, relation: t.relation, ctid: t.own ? (back.get(`${t.oid}:${ctid}`) ?? ctid) : ctid, own: t.own };
    };
    // Every version the statement created gets a version id: ctids of own versions are not stable
    // between replays (line pointers freed by VACUUM or pruning are reused).
    const idOf = (oid: number, ctid: string) => {
      const k = `${oid}:${ctid}`;
      let id = this.versionIds.get(k);
      if (!id) this.versionIds.set(k, (id = `v${++this.versionSeq}`));
      return id;
    };
    this.versionIds.clear();
    // Values of every version the statement created.
    const values = new Map<string, (string | null)[]>();
    const cols = new Map<number, string[]>();
    for (const [table, list] of groupBy(created, (c) => c.relation)) {
      const cat = this.catalog.find((c) => c.name === table);
      if (!cat) throw new EngineInternalError(`no catalog entry for table ${table}`);
      cols.set(cat.oid, cat.writable);
      const rows = await this.must(valuesSql(cat, list));
      for (const r of rows) values.set(`${cat.oid}:${r[0]}`, r.slice(1));
    }
    const ops: ImageOp[] = [];
    const updatedNew = new Set<string>();
    for (const t of touched) {
      if (t.mode === 'NoKeyUpdate' || t.mode === 'Update') {
        if (t.newCtid) {
          const k = `${t.oid}:${t.newCtid}`;
          const v = values.get(k);
          if (!v) throw new EngineInternalError(`new version ${t.newCtid} of ${t.relation} not found`);
          updatedNew.add(k);
          ops.push({ op: 'update', target: ref(t), columns: cols.get(t.oid)!, values: v, newCtid: idOf(t.oid, t.newCtid) });
        } else ops.push({ op: 'delete', target: ref(t) });
      } else {
        // A later version locked only because the statement locked an updated one before it
        // (heap_lock_updated_tuple follows the chain): replaying the first lock locks it again,
        // and under a snapshot that cannot see it, locking it by ctid would find nothing.
        const ctid = `(${t.block},${t.offset})`;
        // READ COMMITTED replays with a new snapshot, which sees only the newest version: the lock
        // is recorded there (a statement that kept its snapshot locked the old one, stmtSnapshot.ts).
        const later = (u: (typeof touched)[number]) => u !== t && u.oid === t.oid && !u.own && u.mode === t.mode;
        if (newestVisible) {
          if (!t.own && t.next && touched.some((u) => later(u) && `(${u.block},${u.offset})` === t.next)) continue;
        } else if (!t.own && touched.some((u) => later(u) && u.next === ctid)) continue;
        ops.push({ op: 'lock', target: ref(t), mode: t.mode });
      }
    }
    for (const c of created) {
      const k = `${c.oid}:${c.ctid}`;
      if (updatedNew.has(k)) continue;
      ops.push({
        op: 'insert',
        rel: c.oid,
        relation: c.relation,
        columns: cols.get(c.oid)!,
        values: values.get(k)!,
        newCtid: idOf(c.oid, c.ctid),
      });
    }
    for (const p of plan) if (p.kind === 'adv') ops.push({ op: 'advisory', tag: p.tag, mode: p.mode });
    return ops;
  }

  /** Orders what the statement acquired the way PostgreSQL acquires it. */
  private buildPlan(
    st: ParsedStatement,
    before: LockSample,
    after: LockSample,
    touched: { oid: number; relation: string; block: number; offset: number; mode: RowLockMode }[],
  ): PlanItem[] {
    const order = st.cls.kind === 'dml' ? st.cls.relations : [];
    const rank = (name: string) => {
      const i = order.indexOf(name);
      return i < 0 ? order.length : i;
    };
    const had = new Set(before.relations.map((r) => `${r.oid}/${r.mode}`));
    const rels = after.relations
      .filter((r) => !had.has(`${r.oid}/${r.mode}`))
      .sort((a, b) => Number(a.isIndex) - Number(b.isIndex) || rank(a.table) - rank(b.table) || a.oid - b.oid);
    const plan: PlanItem[] = rels.map((r) => ({
      kind: 'rel',
      tag: { type: 'relation', relation: r.name, oid: r.oid },
      mode: r.mode,
      name: r.name,
    }));
    const hadAdv = new Map<string, number>();
    for (const a of before.advisory)
      hadAdv.set(`${a.key1}/${a.key2}/${a.field4}/${a.mode}`, (hadAdv.get(`${a.key1}/${a.key2}/${a.field4}/${a.mode}`) ?? 0) + 1);
    for (const a of after.advisory) {
      const k = `${a.key1}/${a.key2}/${a.field4}/${a.mode}`;
      const n = hadAdv.get(k) ?? 0;
      if (n > 0) {
        hadAdv.set(k, n - 1);
        continue;
      }
      plan.push({
        kind: 'adv',
        tag: { type: 'advisory', key1: a.key1, key2: a.key2, field4: a.field4 },
        mode: a.mode,
        sessionLevel: false,
      });
    }
    // Advisory locks taken by functions in the WHERE clause or target list are evaluated while the
    // scan finds a row, before that row is locked (isolation spec tuplelock-update relies on it).
    for (const t of touched)
      plan.push({ kind: 'row', tuple: { oid: t.oid, relation: t.relation, block: t.block, offset: t.offset }, mode: t.mode });
    return plan;
  }

  private hasRowConflicts(s: Sess, plan: PlanItem[]): boolean {
    return plan.some((p) => p.kind === 'row' && this.rows.conflicting(p.tuple, p.mode, s.name).length > 0);
  }

  /** Walks the acquisition plan in the lock model (only the items of `kinds` when given). */
  private walkPlan(s: Sess, st: ParsedStatement, dry: DryRun, kinds?: ReadonlySet<PlanItem['kind']>): 'ok' | 'error' | 'wait' {
    const step = s.step!;
    const txn = s.txn!;
    const depth = txn.savepoints.length;
    const cls = st.cls.kind === 'dml' ? st.cls : undefined;
    this.releaseStaleTupleLocks(s, dry.plan);
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
              this.lm.holdCount(s.proc, item.tag, item.mode) > xactHolds
            )
              continue;
            const r = this.lm.acquire(s.proc, item.tag, item.mode);
            if (r.status === 'granted') continue;
            return this.handleAcquire(s, r, item.tag, item.mode);
          }
          const r = this.lm.acquire(s.proc, item.tag, item.mode, { dontWait: item.kind === 'rel' && !!cls?.lockNowait });
          if (r.status === 'granted') {
            txn.held.push({ tag: item.tag, mode: item.mode, depth });
            continue;
          }
          if (r.status === 'unavailable' && item.kind === 'rel') {
            step.error = PG.relationNowait(item.tag.relation);
            this.abortTxnState(s, true);
            return 'error';
          }
          const position = item.kind === 'rel' ? cls?.relationPositions?.[item.tag.relation] : undefined;
          return this.handleAcquire(s, r, item.tag, item.mode, position ? { position } : {});
        }
        case 'row': {
          if (this.rows.covers(item.tuple, s.name, item.mode)) continue;
          const conflicting = this.rows.conflicting(item.tuple, item.mode, s.name);
          if (!conflicting.length) {
            // Locking or changing a row needs the transaction's xid (it goes into the tuple header).
            this.rows.add(item.tuple, s.name, item.mode, depth, this.currentXid(s));
            // heap_lock_tuple / heap_update let go of the tuple lock as soon as the row is theirs.
            this.releaseTupleLock(s, item.tuple);
            continue;
          }
          if (cls?.waitPolicy === 'nowait') {
            this.logRowNowait(s, item.tuple, item.mode, conflicting[0].xid);
            step.error = PG.rowNowait(item.tuple.relation);
            this.abortTxnState(s, true);
            return 'error';
          }
          // heap_update / heap_delete take the transaction id before they look at the tuple;
          // heap_lock_tuple only when it writes the lock (a waiting FOR UPDATE has no xid yet).
          if (cls?.verb === 'update' || cls?.verb === 'delete' || cls?.verb === 'merge') this.currentXid(s);
          // README.tuplock: take the heavyweight tuple lock first (unless already held), then wait for the holder's xid.
          const ttag: LockTag = {
            type: 'tuple',
            relation: item.tuple.relation,
            oid: item.tuple.oid,
            block: item.tuple.block,
            offset: item.tuple.offset,
          };
          const tmode = tupleLockMode(item.mode);
          // heapam.c: no tuple lock when we already hold a lock on the row (we are a multixact
          // member or the single locker): "avoids deadlock".
          const alreadyLocker = this.rows.heldMode(item.tuple, s.name) !== undefined;
          if (!alreadyLocker && !step.tupleLocks.some((t) => sameTag(t, ttag))) {
            const r = this.lm.acquire(s.proc, ttag, tmode);
            if (r.status === 'granted') {
              step.tupleLocks.push(ttag);
              txn.held.push({ tag: ttag, mode: tmode, depth });
            } else return this.handleAcquire(s, r, ttag, tmode);
          }
          const verb = cls?.verb === 'update' ? 'update' : cls?.verb === 'delete' ? 'delete' : 'lock';
          // ON CONFLICT's pre-check waits for a conflicting row's updater or deleter before the
          // row is locked (a locker only is waited for by heap_lock_tuple, "while locking").
          const precheck = cls?.onConflict === true && conflicting.some((h) => h.mode === 'Update' || h.mode === 'NoKeyUpdate');
          const ctx = xactWaitContext(
            precheck ? 'insert' : item.mode === 'Update' && verb === 'update' ? 'update' : verb,
            item.tuple.block,
            item.tuple.offset,
            item.tuple.relation,
          );
          return this.waitOnXid(s, conflicting[0].session, conflicting[0].xid, item.tuple, verb, ctx);
        }
        case 'key': {
          const owner = this.keyOwner(s, item.index, item.key);
          if (owner) this.currentXid(s); // the heap tuple is inserted before the unique check waits
          if (!owner) continue;
          // _bt_check_unique waits naming the new heap tuple and the index (XLTW_InsertIndex); ON
          // CONFLICT's pre-check (check_exclusion_or_unique_constraint) names the conflicting
          // tuple and its table.
          const pre = cls?.onConflict === true;
          const at = pre ? owner.ctid : item.ctid;
          const [b, o] = (at ?? '').slice(1, -1).split(',').map(Number);
          const rel = pre ? owner.table : item.index;
          const ctx = at && rel ? xactWaitContext('insert', b, o, rel) : undefined;
          return this.waitOnXid(s, owner.session, owner.xid, undefined, 'insert', ctx);
        }
      }
    }
    return 'ok';
  }

  /** Which open transaction has inserted this unique key (PostgreSQL's _bt_check_unique then waits for it). */
  private keyOwner(s: Sess, index: string, key: string): { session: string; xid: number; table?: string; ctid?: string } | undefined {
    for (const o of this.sessions.values()) {
      if (o === s || !o.txn) continue;
      const k = o.txn.insertedKeys.find((k) => k.index === index && k.key === key);
      if (k) return { session: o.name, xid: k.xid, ...(k.table ? { table: k.table } : {}), ...(k.ctid ? { ctid: k.ctid } : {}) };
    }
    return undefined;
  }

  /** For a 23505 from the dry run: an open transaction deleting the conflicting committed key. */
  /**
   * For a 23505 from the dry run: is the conflicting committed key being updated or deleted by
   * an open transaction? Then PostgreSQL's _bt_check_unique waits for it. The keys of the rows
   * other sessions changed are read only here, when a duplicate actually shows up.
   */
  private async keyBlocker(s: Sess, e: PgMessage): Promise<{ session: string; xid: number } | undefined> {
    const m = /^Key (.*) already exists\.$/.exec(e.detail ?? '');
    if (!m) return undefined;
    for (const { tuple, holders } of this.rows.all()) {
      const h = holders.find((x) => x.session !== s.name && (x.mode === 'Update' || x.mode === 'NoKeyUpdate'));
      if (!h) continue;
      const cat = this.catalog.find((c) => c.oid === tuple.oid);
      const sql = cat && uniqueKeysSql(cat, [`(${tuple.block},${tuple.offset})`]);
      if (!sql) continue;
      for (const row of await this.ex.must(sql))
        for (const k of row.slice(1)) if (k && splitKey(cat!.name, k).key === m[1]) return { session: h.session, xid: h.xid };
    }
    return undefined;
  }

  private waitOnXid(
    s: Sess,
    holder: string,
    xid: number,
    tuple: TupleId | undefined,
    verb: 'update' | 'delete' | 'lock' | 'insert',
    context?: string,
  ): 'wait' | 'error' {
    const tag: LockTag = { type: 'transactionid', xid: xid as Xid };
    const r = this.lm.acquire(s.proc, tag, 'ShareLock');
    if (r.status === 'granted') {
      // Cannot happen while the holder's transaction is open; release to keep counts right.
      this.lm.release(s.proc, tag, 'ShareLock');
      return 'error';
    }
    return this.handleAcquire(s, r, tag, 'ShareLock', {
      tuple,
      holder,
      context: context ?? (tuple ? xactWaitContext(verb, tuple.block, tuple.offset, tuple.relation) : undefined),
    });
  }

  private handleAcquire(
    s: Sess,
    r: ReturnType<LockManager['acquire']>,
    tag: LockTag,
    mode: LockMode,
    extra: Partial<Wait> = {},
  ): 'wait' | 'error' {
    const step = s.step!;
    if (r.status === 'deadlock') {
      // ProcSleep's early deadlock check: the request would deadlock at once.
      this.deadlockVictim(s, r.report, extra.context, extra.position);
      return 'error';
    }
    step.wait = { tag, mode, sinceMs: this.clock, ...extra };
    const reason = this.waitReason(s);
    this.event({ type: 'wait', atMs: this.clock, session: s.name, reason: reason! });
    this.timers.set(s.name, 'deadlock_timeout', this.clock + s.timeouts.deadlock);
    if (s.timeouts.lock > 0) this.timers.set(s.name, 'lock_timeout', this.clock + s.timeouts.lock);
    return 'wait';
  }

  private deadlockVictim(s: Sess, report: Parameters<typeof deadlockDetail>[0], context?: string, position?: number): void {
    const step = s.step!;
    const shown = { edges: report.edges.map((e) => ({ ...e, tag: this.presentTag(e.tag) })) };
    const detail = deadlockDetail(shown, (p) => this.sess(p).pid, DATABASE_OID);
    step.error = { ...PG.deadlock(detail, context), ...(position ? { position } : {}) };
    const cycle = report.edges.map((e) => e.waiter as string);
    this.lastDeadlock = { cycle, victim: s.name, atMs: this.clock };
    this.event({ type: 'deadlock', atMs: this.clock, victim: s.name, cycle });
    // DeadLockReport's errdetail_log adds each process's query to the DETAIL the client gets.
    const queries = cycle.map((n) => `Process ${this.sess(n).pid}: ${this.sess(n).query}`);
    this.loggedErrors.add(step.error);
    this.serverLog.push(...messageEntry(this.clock, s.pid, { ...step.error, detail: [detail, ...queries].join('\n') }, s.query));
    step.wait = undefined;
    this.failWaitingStep(s);
  }

  /** The step of a session that was waiting (or about to) fails with step.error. */
  private failWaitingStep(s: Sess): void {
    this.cancelTimers(s, ['deadlock_timeout', 'lock_timeout', 'statement_timeout', 'pg_sleep']);
    this.queueResumes(this.cancelWaitIfAny(s));
    s.step!.wait = undefined;
    s.step!.sleepUntil = undefined;
    this.abortTxnState(s, true);
  }

  private cancelWaitIfAny(s: Sess): ProcId[] {
    return this.lm.waitingFor(s.proc) ? this.lm.cancelWait(s.proc) : [];
  }

  private releaseTupleLock(s: Sess, t: TupleId): void {
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
      this.queueResumes(this.lm.release(s.proc, held.tag, held.mode));
    }
  }

  /**
   * A statement re-run after a wake-up keeps only the tuple lock of the row it has to wait for
   * next. heap_lock_tuple holds the heavyweight tuple lock only while it works on that tuple
   * version: when it wakes and finds the version updated or deleted, it lets go before it follows
   * the update chain or moves on (README.tuplock). Kept, a lock on a dead version would block
   * whoever queues on it, or on a reused line pointer, while this statement waits for a later row.
   */
  private releaseStaleTupleLocks(s: Sess, plan: PlanItem[]): void {
    const step = s.step!;
    if (!step.tupleLocks.length) return;
    const next = plan.find(
      (p): p is Extract<PlanItem, { kind: 'row' }> =>
        p.kind === 'row' && !this.rows.covers(p.tuple, s.name, p.mode) && this.rows.conflicting(p.tuple, p.mode, s.name).length > 0,
    );
    for (const tag of [...step.tupleLocks]) {
      if (tag.type !== 'tuple') continue;
      if (next && next.tuple.oid === tag.oid && next.tuple.block === tag.block && next.tuple.offset === tag.offset) continue;
      this.releaseTupleLock(s, { oid: tag.oid, relation: tag.relation, block: tag.block, offset: tag.offset });
    }
  }

  private releaseTupleLocks(s: Sess): void {
    const step = s.step!;
    const txn = s.txn!;
    for (const tag of step.tupleLocks) {
      const i = txn.held.findIndex((h) => sameTag(h.tag, tag));
      if (i >= 0) {
        const [h] = txn.held.splice(i, 1);
        this.queueResumes(this.lm.release(s.proc, h.tag, h.mode));
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
  private keepSessionAdvisory(s: Sess, survivors: DryRun['sessionAdvisory']): void {
    if (!survivors) return;
    const same = (tag: LockTag, mode: LockMode) => (x: { tag: LockTag; mode: LockMode }) => sameTag(x.tag, tag) && x.mode === mode;
    const taken: { tag: LockTag; mode: LockMode }[] = [];
    const kept = survivors.filter((a) => {
      const tag: LockTag = { type: 'advisory', key1: a.key1, key2: a.key2, field4: a.field4 };
      if (s.sessionAdvisory.some(same(tag, a.mode))) return true;
      const xactHolds = s.txn?.held.filter(same(tag, a.mode)).length ?? 0;
      if (
        this.lm.holdCount(s.proc, tag, a.mode) > xactHolds ||
        this.lm.acquire(s.proc, tag, a.mode, { dontWait: true }).status === 'granted'
      ) {
        taken.push({ tag, mode: a.mode });
        return true;
      }
      return false;
    });
    this.setSessionAdvisory(s, kept, taken);
  }

  /** The session-level advisory locks PGlite reports after a statement become the session's set; unlocked ones wake waiters. */
  private setSessionAdvisory(
    s: Sess,
    now: { key1: number; key2: number; field4: 1 | 2; mode: LockMode }[],
    acquiredByPlan: { tag: LockTag; mode: LockMode }[],
  ): void {
    const next = now.map((a) => ({ tag: { type: 'advisory' as const, key1: a.key1, key2: a.key2, field4: a.field4 }, mode: a.mode }));
    const same = (a: { tag: LockTag; mode: LockMode }) => (b: { tag: LockTag; mode: LockMode }) =>
      sameTag(a.tag, b.tag) && a.mode === b.mode;
    for (const old of s.sessionAdvisory) if (!next.some(same(old))) this.queueResumes(this.lm.release(s.proc, old.tag, old.mode));
    // A session-level lock on a key the transaction already held: pg_locks showed no new row,
    // so the plan took nothing; the session now holds it a second time.
    for (const n of next) if (!s.sessionAdvisory.some(same(n)) && !acquiredByPlan.some(same(n))) this.lm.acquire(s.proc, n.tag, n.mode);
    s.sessionAdvisory = next;
  }

  /** After a SET/RESET/SHOW: record it for replay and refresh the values the engine needs. */
  private async afterSet(s: Sess, st: ParsedStatement): Promise<void> {
    if (st.cls.kind !== 'set') return;
    const txn = s.txn!;
    // GUC statements are replayed from their own lists, not from the data log.
    if (st.cls.local) txn.localSets.push(st.sql);
    else if (txn.implicit) s.sets.push(st.sql);
    else txn.sets.push(st.sql);
    await this.refreshSessionGucs(s);
  }

  /** Reads the effective timeouts and isolation default of a session (or all sessions) from PGlite. */
  private async refreshSessionGucs(only?: Sess): Promise<void> {
    for (const s of only ? [only] : this.sessions.values()) {
      // A session with no SET of its own has the server defaults (read once by the executor).
      const rows = !this.gucSql(s)
        ? this.ex.defaultGucs
        : ((await this.ex.run(`BEGIN;\n${this.gucSql(s)}EXECUTE lockstep_gucs;\nROLLBACK`)).results.find((x) => x.columns?.length === 4)
            ?.rows ?? []);
      for (const [name, setting, unit, shown] of rows) {
        s.gucs[name!] = shown!;
        const ms = Number(setting) * (unit === 's' ? 1000 : unit === 'min' ? 60000 : 1);
        if (name === 'deadlock_timeout') s.timeouts.deadlock = ms;
        else if (name === 'lock_timeout') s.timeouts.lock = ms;
        else if (name === 'statement_timeout') s.timeouts.statement = ms;
        else if (name === 'idle_in_transaction_session_timeout') s.timeouts.idle = ms;
        else if (name === 'default_transaction_isolation') s.defaultIsolation = setting as IsolationLevel;
      }
    }
  }

  // ───────────────────────────── waking, timers ─────────────────────────────

  private queueResumes(procs: ProcId[]): void {
    for (const p of procs) if (!this.resumeQueue.includes(p)) this.resumeQueue.push(p);
  }

  private async drainResumes(): Promise<void> {
    await this.maybeUnpin();
    while (this.resumeQueue.length) {
      const name = this.resumeQueue.shift()!;
      const s = this.sess(name);
      const step = s.step;
      if (!step || step.done || !step.wait) continue;
      if (this.lm.waitingFor(s.proc)) continue; // still queued (e.g. woken by a partial release)
      await this.resume(s);
    }
  }

  /** The session's lock was granted: continue its statement. */
  private async resume(s: Sess): Promise<void> {
    const step = s.step!;
    const w = step.wait!;
    step.wait = undefined;
    this.cancelTimers(s, ['deadlock_timeout', 'lock_timeout']);
    const txn = s.txn!;
    this.event({ type: 'grant', atMs: this.clock, session: s.name, description: `${w.mode} on ${this.describe(w.tag)}` });
    if (w.checked) this.logLockWait(s, w, 'acquired');
    if (w.tag.type === 'transactionid') {
      // XactLockTableWait takes the ShareLock only to sleep; it lets go at once.
      this.lm.release(s.proc, w.tag, 'ShareLock');
      // Under REPEATABLE READ the re-run imports the transaction's snapshot, so PostgreSQL itself
      // reports 40001 ("concurrent update" / "concurrent delete") for a row changed meanwhile.
    } else if (w.tag.type !== 'tuple') {
      txn.held.push({ tag: w.tag, mode: w.mode, depth: txn.savepoints.length });
    } else {
      step.tupleLocks.push(w.tag);
      txn.held.push({ tag: w.tag, mode: w.mode, depth: txn.savepoints.length });
    }
    // Re-execute the statement against the new state (READ COMMITTED re-check; rows already locked stay locked).
    const st = step.statements[step.idx];
    const outcome = await this.execDml(s, st);
    if (outcome === 'wait') return;
    if (outcome === 'error') {
      step.done = true;
      await this.endOfStep(s);
      return;
    }
    step.idx++;
    await this.runStep(s);
  }

  private async fire(name: string, kind: TimerKind): Promise<void> {
    const s = this.sess(name);
    const step = s.step;
    switch (kind) {
      case 'pg_sleep': {
        if (!step || step.sleepUntil === undefined) return;
        step.sleepUntil = undefined;
        this.cancelTimers(s, ['statement_timeout']);
        step.results.push({ command: 'SELECT 1', columns: ['pg_sleep'], rows: [['']] });
        step.idx++;
        await this.runStep(s);
        return;
      }
      case 'deadlock_timeout': {
        if (!step?.wait) return;
        const r = this.lm.checkDeadlock(s.proc);
        this.event({
          type: 'deadlock-check',
          atMs: this.clock,
          session: name,
          result: r.kind,
          cycle: r.kind === 'hard' ? r.report.edges.map((e) => e.waiter as string) : [],
        });
        const w = step.wait;
        w.checked = true;
        if (r.kind === 'hard') {
          // CheckDeadLock takes the victim off the queue (waking those behind it) before ProcSleep logs.
          this.queueResumes(this.lm.cancelWait(s.proc));
          this.logLockWait(s, w, 'detected-deadlock');
          this.deadlockVictim(s, r.report, w.context, w.position);
          await this.endOfStep(s);
          return;
        }
        if (r.kind === 'soft') {
          this.logLockWait(s, w, 'avoided-deadlock');
          this.queueResumes(r.woken);
        }
        if (this.lm.waitingFor(s.proc)) this.logLockWait(s, w, 'still-waiting');
        return;
      }
      case 'lock_timeout': {
        if (!step?.wait) return;
        step.error = { ...PG.lockTimeout(step.wait.context), ...(step.wait.position ? { position: step.wait.position } : {}) };
        this.timeoutLog(s, step.error);
        this.event({ type: 'timeout', atMs: this.clock, session: name, kind });
        this.failWaitingStep(s);
        await this.endOfStep(s);
        return;
      }
      case 'statement_timeout': {
        if (!step || step.done) return;
        step.error = PG.statementTimeout(step.wait?.context);
        this.timeoutLog(s, step.error);
        this.event({ type: 'timeout', atMs: this.clock, session: name, kind });
        this.failWaitingStep(s);
        await this.endOfStep(s);
        return;
      }
      case 'idle_in_transaction_session_timeout': {
        if (!s.txn || (step && !step.done)) return;
        this.event({ type: 'timeout', atMs: this.clock, session: name, kind });
        const fatal = PG.idleInTransactionTimeout();
        this.serverLog.push(...logEntry(this.clock, s.pid, 'FATAL', fatal.message));
        s.terminated = fatal;
        s.terminatedAtMs = this.clock;
        await this.endTxn(s, false);
        return;
      }
    }
  }

  private timeoutLog(s: Sess, error: PgMessage): void {
    this.loggedErrors.add(error);
    this.serverLog.push(...messageEntry(this.clock, s.pid, error, s.query));
  }

  private gucOn(s: Sess, name: string): boolean {
    return s.gucs[name] === 'on';
  }

  /** ProcSleep's log_lock_waits entries, for a wait the deadlock check has looked at. */
  private logLockWait(s: Sess, w: Wait, event: LockWaitEvent): void {
    if (!this.gucOn(s, 'log_lock_waits')) return;
    const tag = this.presentTag(w.tag);
    const text = lockWaitMessage(event, s.pid, w.mode, describeLockTag(tag, DATABASE_OID), this.clock - w.sinceMs);
    const message = w.position ? `${text} at character ${w.position}` : text;
    const { holders, waiters } = holdersAndWaiters(this.lm.raw, w.tag);
    const pids = (ps: ProcId[]) => ps.map((p) => this.sess(p).pid);
    const detail = event === 'acquired' ? undefined : holdersDetail(pids(holders), pids(waiters), '.');
    this.serverLog.push(...logEntry(this.clock, s.pid, 'LOG', message, { detail, context: w.context, statement: s.query }));
  }

  /** log_lock_failures: a NOWAIT row lock found `tag` taken (LockAcquireExtended with dontWait). */
  private logLockFailure(s: Sess, tag: LockTag, mode: LockMode): void {
    if (!this.gucOn(s, 'log_lock_failures')) return;
    const { holders, waiters } = holdersAndWaiters(this.lm.raw, tag);
    const pids = (ps: ProcId[]) => ps.map((p) => this.sess(p).pid);
    const message = lockFailureMessage(s.pid, mode, describeLockTag(this.presentTag(tag), DATABASE_OID));
    this.serverLog.push(
      ...logEntry(this.clock, s.pid, 'LOG', message, { detail: holdersDetail(pids(holders), pids(waiters), ','), statement: s.query }),
    );
  }

  /**
   * heap_lock_tuple under NOWAIT: the tuple lock is tried first (unless the transaction already
   * locks the row), then the locker's xid; the first one not available is the one logged.
   */
  private logRowNowait(s: Sess, t: TupleId, mode: RowLockMode, xid: number): void {
    const ttag: LockTag = { type: 'tuple', relation: t.relation, oid: t.oid, block: t.block, offset: t.offset };
    const tmode = tupleLockMode(mode);
    // Tried on a copy of the lock table: the engine itself does not take the tuple lock here.
    const tupleTaken =
      this.rows.heldMode(t, s.name) === undefined && this.lm.clone().acquire(s.proc, ttag, tmode, { dontWait: true }).status !== 'granted';
    if (tupleTaken) {
      this.logLockFailure(s, ttag, tmode);
      return;
    }
    this.logLockFailure(s, { type: 'transactionid', xid: xid as Xid }, 'ShareLock');
  }

  /** A finished step's warnings and error reach the server log (log_min_messages = warning), unless logged when raised. */
  private logStepMessages(s: Sess): void {
    const step = s.step!;
    for (const n of step.notices)
      if (n.severity === 'WARNING' && !this.loggedErrors.has(n)) {
        this.loggedErrors.add(n);
        this.serverLog.push(...messageEntry(this.clock, s.pid, n, s.query));
      }
    if (step.error && !this.loggedErrors.has(step.error)) {
      this.loggedErrors.add(step.error);
      this.serverLog.push(...messageEntry(this.clock, s.pid, step.error, s.query));
    }
  }

  private cancelTimers(s: Sess, kinds: TimerKind[]): void {
    this.timers.cancel(s.name, kinds);
  }

  // ───────────────────────────── views ─────────────────────────────

  private describe(tag: LockTag): string {
    return describeLockTag(this.presentTag(tag), DATABASE_OID);
  }

  /**
   * Relation OIDs as shown to people: PGlite's own OIDs grow every time the scenario is rebuilt
   * (undo), so they are shifted to start where a fresh cluster's user objects start (16384),
   * keeping DETAIL texts and lock tags identical between a run and its replay.
   */
  private vOid(real: number): number {
    return this.oidBase === null ? real : real - this.oidBase + FIRST_USER_OID;
  }

  private presentTag(tag: LockTag): LockTag {
    return tag.type === 'relation' || tag.type === 'tuple' ? { ...tag, oid: this.vOid(tag.oid) } : tag;
  }

  /** A wait in words with names instead of OIDs: "ExclusiveLock on tuple (0,1) of relation accounts". */
  private friendly(tag: LockTag): string {
    switch (tag.type) {
      case 'relation':
        return `relation ${tag.relation}`;
      case 'tuple':
        return `tuple (${tag.block},${tag.offset}) of relation ${tag.relation}`;
      default:
        return this.describe(tag);
    }
  }

  private waitReason(s: Sess): WaitReason | undefined {
    const w = s.step?.wait;
    if (!w) return undefined;
    const edges = this.lm.waitEdges().filter((e) => e.from === s.proc);
    return {
      tag: this.presentTag(w.tag),
      mode: w.mode,
      description: `${w.mode} on ${this.friendly(w.tag)}`,
      blockers: edges.map((e) => ({
        session: e.to as string,
        kind: e.kind,
        mode: this.lm.holders(e.tag).find((h) => h.proc === e.to)?.modes[0] ?? e.mode,
      })),
      sinceMs: w.sinceMs,
    };
  }

  private stateOf(s: Sess): SessionState {
    if (s.step && !s.step.done) return s.step.wait ? 'waiting' : 'active';
    if (s.txn && !s.txn.implicit) return s.txn.aborted ? 'idle in transaction (aborted)' : 'idle in transaction';
    return 'idle';
  }

  /**
   * Reads table contents for the data view (async: asks PGlite): the committed rows with their
   * row-lock owners, and for every session in a transaction what a plain SELECT would show it
   * now (its own uncommitted changes, and — under REPEATABLE READ — its snapshot).
   */
  async refreshTables(): Promise<void> {
    const selects = this.catalog.map((t) => `SELECT ctid::text AS ctid, * FROM ${ident(t.name)} ORDER BY ctid LIMIT 200`);
    if (!selects.length) {
      this.tables = [];
      this.views = {};
      return;
    }
    const locks = this.rows.all();
    const toTables = (results: StatementResult[], withLocks: boolean): TableSnapshot[] =>
      this.catalog.flatMap((t, i) => {
        const res = results[i];
        if (!res?.columns) return [];
        return [
          {
            name: t.name,
            columns: res.columns.slice(1),
            rows: (res.rows ?? []).map((row) => {
              const ctid = row[0]!;
              const holders = withLocks
                ? (locks.find((l) => l.tuple.oid === t.oid && `(${l.tuple.block},${l.tuple.offset})` === ctid)?.holders ?? [])
                : [];
              return { ctid, values: row.slice(1), lockers: holders.map((h) => ({ session: h.session, mode: h.mode })) };
            }),
          },
        ];
      });
    const committed = await this.ex.run(selects.join(';\n'));
    this.tables = toTables(committed.results, true);
    // A session's view is computed, not replayed: a replay would leave dead tuples behind and
    // change where later row versions go, so undo would no longer restore identical ctids.
    const views: Record<string, TableSnapshot[]> = {};
    for (const s of this.sessions.values()) {
      if (!s.txn || s.txn.aborted || (!s.txn.log.length && !s.txn.snapshot)) continue;
      let base = this.tables;
      if (s.txn.snapshot) {
        // REPEATABLE READ: the rows its snapshot sees (a read-only transaction writes nothing).
        const begin = await this.beginSql(s, false);
        const r = await this.ex.run(`${begin.sql}${selects.join(';\n')};\nROLLBACK`);
        if (r.error) {
          await this.ex.run('ROLLBACK');
          continue;
        }
        base = toTables(r.results.slice(begin.count, begin.count + selects.length), false);
      }
      views[s.name] = applyImages(base, this.catalog, s.txn.log);
    }
    this.views = views;
  }

  private views: Record<string, TableSnapshot[]> = {};

  /** The server log lines written so far (PostgreSQL's format, virtual-clock timestamps). */
  serverLogLines(): string[] {
    return [...this.serverLog];
  }

  /** The immutable, JSON-serializable view of everything. */
  snapshot(): EngineSnapshot {
    const sessions: SessionSnapshot[] = [...this.sessions.values()].map((s) => {
      const step = s.step && !s.step.done ? s.step : null;
      const reason = this.waitReason(s);
      return {
        name: s.name,
        pid: s.pid,
        state: this.stateOf(s),
        isolation: s.txn?.isolation ?? s.defaultIsolation,
        xid: s.txn?.xid ?? null,
        vxid: s.txn?.vxid ?? null,
        xactStartMs: s.txn?.startMs ?? null,
        stateChangeMs: s.stateChangeMs,
        query: s.query,
        gucs: { ...s.gucs },
        pending: step
          ? {
              step: step.name,
              sql: step.sql,
              startedMs: step.startedMs,
              results: [...step.results],
              ...(reason ? { wait: reason } : {}),
              ...(step.sleepUntil !== undefined ? { sleepUntilMs: step.sleepUntil } : {}),
            }
          : null,
        last: s.last,
        history: [...s.history],
        ...(s.terminated ? { terminated: { atMs: s.terminatedAtMs, message: { ...s.terminated } } } : {}),
      };
    });
    const bySession = new Map([...this.sessions.values()].map((s) => [s.proc as string, s]));
    const locks: LockRow[] = this.lm.entries().map((e) => {
      const s = bySession.get(e.proc)!;
      const t = e.tag;
      const row: LockRow = {
        locktype: t.type,
        database: t.type === 'relation' || t.type === 'tuple' || t.type === 'advisory' ? DATABASE_OID : null,
        relation: t.type === 'relation' || t.type === 'tuple' ? t.relation : null,
        page: t.type === 'tuple' ? t.block : null,
        tuple: t.type === 'tuple' ? t.offset : null,
        virtualxid: t.type === 'virtualxid' ? t.vxid : null,
        transactionid: t.type === 'transactionid' ? t.xid : null,
        classid: t.type === 'advisory' ? t.key1 : null,
        objid: t.type === 'advisory' ? t.key2 : null,
        objsubid: t.type === 'advisory' ? t.field4 : null,
        virtualtransaction: s.txn?.vxid ?? `${s.index + 3}/0`,
        pid: s.pid,
        session: s.name,
        mode: e.mode,
        granted: e.granted,
        fastpath: false,
        waitstart: e.granted ? null : (s.step?.wait?.sinceMs ?? null),
      };
      return row;
    });
    locks.sort((a, b) => Number(a.granted) - Number(b.granted));
    const cycle = new Set<string>();
    if (this.lastDeadlock) {
      const c = this.lastDeadlock.cycle;
      c.forEach((n, i) => cycle.add(`${n}->${c[(i + 1) % c.length]}`));
    }
    const edges: WaitEdge[] = this.lm.waitEdges().map((e) => ({
      from: e.from,
      to: e.to,
      kind: e.kind,
      tag: this.presentTag(e.tag),
      mode: e.mode,
      label: `${e.mode} on ${this.friendly(e.tag)}`,
      inCycle: false,
    }));
    markCycles(edges);
    return structuredClone({
      clockMs: this.clock,
      sessions,
      locks,
      edges,
      deadlock: this.lastDeadlock,
      tables: this.tables,
      views: this.views,
      timers: this.timers.all().map((t) => ({ session: t.session, kind: t.kind, atMs: t.atMs })),
      events: this.events,
      serverLog: this.serverLog,
      ...this.ssiSnapshot(),
    });
  }

  private ssiSnapshot(): { ssi?: SsiSnapshot } {
    const all = this.ssi.all();
    if (!all.length) return {};
    const name = (rel: number) => this.relations.get(rel)?.name ?? String(rel);
    return {
      ssi: {
        transactions: all.map((x) => ({
          session: x.session,
          state: x.committed ? 'committed' : 'active',
          doomed: x.doomed,
          sireadLocks: [...x.locks.values()].map((l) => ({
            relation: name(l.rel),
            page: l.kind === 'relation' ? null : l.block,
            tuple: l.kind === 'tuple' ? l.offset : null,
          })),
        })),
        conflicts: all.flatMap((r) =>
          [...r.outConflicts].map((w) => ({ from: r.session, to: w.session, fromCommitted: r.committed, toCommitted: w.committed })),
        ),
      },
    };
  }

  private event(e: EngineEvent): void {
    this.events.push(e);
  }

  /** Releases PGlite. */
  async close(): Promise<void> {
    await this.ex.close();
  }
}

/** A session's own uncommitted changes (its row images) applied over the rows it can see. */
function applyImages(base: TableSnapshot[], catalog: CatalogTable[], log: LogEntry[]): TableSnapshot[] {
  const tables = base.map((t) => ({
    ...t,
    rows: t.rows.map((r) => ({ ...r, lockers: [] as RowSnapshot['lockers'], values: [...r.values] })),
  }));
  const own = new Map<string, RowSnapshot>();
  const byOid = (oid: number) => {
    const name = catalog.find((c) => c.oid === oid)?.name;
    return tables.find((t) => t.name === name);
  };
  const find = (ref: { rel: number; ctid: string; own: boolean }) =>
    ref.own ? own.get(`${ref.rel}:${ref.ctid}`) : byOid(ref.rel)?.rows.find((r) => r.ctid === ref.ctid);
  const setValues = (t: TableSnapshot, row: RowSnapshot, cols: string[], vals: (string | null)[]) =>
    cols.forEach((c, i) => {
      const at = t.columns.indexOf(c);
      if (at >= 0) row.values[at] = vals[i];
    });
  for (const e of log) {
    if (e.kind !== 'image') continue;
    for (const op of e.ops) {
      if (op.op === 'lock' || op.op === 'advisory') continue;
      const t = byOid(op.op === 'insert' ? op.rel : op.target.rel);
      if (!t) continue;
      if (op.op === 'insert') {
        const row: RowSnapshot = { ctid: '', values: t.columns.map(() => null), lockers: [] };
        setValues(t, row, op.columns, op.values);
        t.rows.push(row);
        own.set(`${op.rel}:${op.newCtid}`, row);
        continue;
      }
      const row = find(op.target);
      if (!row) continue;
      if (op.op === 'delete') t.rows = t.rows.filter((r) => r !== row);
      else {
        setValues(t, row, op.columns, op.values);
        row.ctid = '';
        own.set(`${op.target.rel}:${op.newCtid}`, row);
      }
    }
  }
  return tables;
}

/** Marks edges that lie on a cycle of the current wait-for graph. */
function markCycles(edges: WaitEdge[]): void {
  const adj = new Map<string, string[]>();
  for (const e of edges) adj.set(e.from, [...(adj.get(e.from) ?? []), e.to]);
  const reach = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) {
      const n = stack.pop()!;
      if (n === to) return true;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(adj.get(n) ?? []));
    }
    return false;
  };
  for (const e of edges) e.inCycle = reach(e.to, e.from);
}

const ADVISORY_SESSION_SQL = `SELECT classid::int, objid::int, objsubid::int, mode FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND pid = pg_catalog.pg_backend_pid() AND granted`;

/** FETCHes a locking SELECT's cursor runs per round trip (each in its own savepoint, see runStatement). */
const CURSOR_BATCH = 8;
const FETCH_PAIR = 'SAVEPOINT lockstep_f;\nFETCH 1 FROM lockstep_cursor;\n';

/**
 * A locking SELECT as a cursor (decision 2), with a first batch of fetches and the footprint
 * queries, in a savepoint of their own (their AccessShareLocks are undone if more rows follow).
 * Fetches past the end return nothing and lock nothing.
 */
function cursorSql(sql: string): string {
  return `SAVEPOINT lockstep_c;\nDECLARE lockstep_cursor NO SCROLL CURSOR FOR ${sql};\n${FETCH_PAIR.repeat(CURSOR_BATCH)}SAVEPOINT lockstep_s;\n${LOCK_SAMPLE_SQL};\n${TUPLE_SCAN_SQL}`;
}

/** The plan items a statement takes before it locks rows: its relation locks and advisory locks. */
const HEAVYWEIGHT_ITEMS: ReadonlySet<PlanItem['kind']> = new Set(['rel', 'adv']);

/** The end of a dry run: ROLLBACK, and the session-level advisory locks that survive it (then released). */
function dryRunEnd(needSessionAdvisory: boolean): string {
  return `ROLLBACK${needSessionAdvisory ? `;\n${ADVISORY_SESSION_SQL};\nSELECT pg_catalog.pg_advisory_unlock_all()` : ''}`;
}

/** The replay's ctid map: own versions' current ctids and the version ids they were recorded under. */
const CTID_BACK_SQL = `SELECT rel::text, orig::text, cur::text FROM ${CTID_MAP}`;

/** The values of the given versions of a table (the columns a row image sets), by ctid. */
function valuesSql(cat: CatalogTable, list: { ctid: string }[]): string {
  const sel = cat.writable.map((c) => `${ident(c)}::text`).join(', ');
  return `SELECT ctid::text, ${sel} FROM ${ident(cat.name)} WHERE ctid = ANY('{${list.map((c) => `"${c.ctid}"`).join(',')}}'::tid[])`;
}

/** Statements whose effects are replayed as row images rather than as SQL text. */
function recordsImage(st: ParsedStatement): boolean {
  return (
    st.cls.kind === 'dml' &&
    (st.cls.verb === 'select' ||
      st.cls.verb === 'update' ||
      st.cls.verb === 'delete' ||
      st.cls.verb === 'insert' ||
      st.cls.verb === 'merge')
  );
}

function findLastIndex<T>(a: T[], f: (x: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (f(a[i])) return i;
  return -1;
}

function groupBy<T>(a: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of a) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

function splitKey(table: string, k: string): { table: string; index: string; key: string } {
  const [index, key] = k.split('\u0001');
  return { table, index, key };
}

function sameTag(a: LockTag, b: LockTag): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

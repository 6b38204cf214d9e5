/**
 * The engine's plain-data state: sessions, their transactions and running steps, waits, and the
 * lock model's tables. Everything here is synchronous and PGlite-free; pg/ and the orchestrator
 * add the executor on top (context.ts).
 */
import type { ApproximationTopic } from './approximations';
import type { CatalogTable, RelationInfo } from './model/facts';
import { LockManager } from './model/locks/lockManager';
import type { LockMode, LockTag, ProcId, RowLockMode } from './model/locks/types';
import type { LogEntry } from './model/log';
import { RowLockTable, type TupleId } from './model/rowlocks';
import { Ssi, Sxact } from './model/ssi';
import { type TimerKind, Timers } from './model/timers';
import type { StatementSnapshot } from './pg/stmtSnapshot';
import type { ParsedStatement, PreparedText } from './sql';
import type {
  EngineEvent,
  EngineSnapshot,
  FinishedStep,
  IsolationLevel,
  PgMessage,
  SessionSnapshot,
  StatementResult,
  TableSnapshot,
} from './types';

/** PGlite's database OID (postgres), used in lock descriptions as PostgreSQL prints them. */
export const DATABASE_OID = 5;
export const FIRST_XID = 750;
export const FIRST_PID = 4101;
/** FirstNormalObjectId: where a fresh cluster's user objects start. */
export const FIRST_USER_OID = 16384;
/** The prepared transaction that keeps the xmin horizon behind every exported snapshot. */
export const PIN_GID = 'lockstep_snapshot_pin';

export interface HeldLock {
  tag: LockTag;
  mode: LockMode;
  depth: number;
}

export interface UniqueKey {
  index: string;
  key: string;
  depth: number;
  xid: number;
  /** The heap tuple that holds the key (its table and ctid in the dry run), named by a waiter's CONTEXT. */
  table?: string;
  ctid?: string;
  /** In a deferred unique constraint's index: checked at COMMIT or SET CONSTRAINTS … IMMEDIATE (unique_key_recheck). */
  pending?: true;
  /** Another open transaction had inserted the same key when this one went in: the check waits for it if it is still open. */
  openConflict?: true;
}

/** A SET CONSTRAINTS of the transaction: the constraints it names (null: ALL), the mode, and its savepoint depth. */
export interface ConstraintsMode {
  names: string[] | null;
  deferred: boolean;
  depth: number;
}

export interface Txn {
  implicit: boolean;
  isolation: IsolationLevel;
  /** BEGIN … READ ONLY / SET TRANSACTION READ ONLY (XactReadOnly; SSI treats such a transaction apart). */
  readOnly?: boolean;
  xid: number | null;
  vxid: string;
  startMs: number;
  log: LogEntry[];
  aborted: boolean;
  /** Open savepoints: the data log's length and the SET / SET LOCAL lists' lengths when each was taken. */
  savepoints: { name: string; logLen: number; setsLen: number; localSetsLen: number; xid?: number }[];
  /** ExclusiveLock on each (sub)transaction id, with the savepoint depth it belongs to. */
  xidHolds: { xid: number; depth: number }[];
  held: HeldLock[];
  insertedKeys: UniqueKey[];
  /** SET CONSTRAINTS statements, in order (a subtransaction's are undone with it, AfterTriggerEndSubXact). */
  constraintModes: ConstraintsMode[];
  /** SET statements run in this transaction (undone at rollback), and SET LOCAL ones. */
  sets: string[];
  localSets: string[];
  /** For each version this transaction created by updating a row: the committed tuple it descends from. */
  originOf: Map<string, TupleId>;
  /** REPEATABLE READ / SERIALIZABLE: the exported snapshot file of the first statement, and the pin holding xmin. */
  snapshot?: string;
  /** A statement took a snapshot (FirstSnapshotSet): the isolation level and READ WRITE can no longer be set. */
  snapshotTaken?: boolean;
  /** SERIALIZABLE: the transaction's SSI state (from its first snapshot on). */
  sx?: Sxact;
}
export interface Wait {
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
  /**
   * The xid waited for was a subtransaction's that rolled back (releaseCaught): the wait ended
   * without the lock being granted.
   */
  ended?: boolean;
  /** The deadlock check ran during this wait (ProcSleep's deadlock_state != DS_NOT_YET_CHECKED): a grant is logged. */
  checked?: boolean;
}

export interface RunningStep {
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
  /**
   * A locking SELECT that went to sleep on a row some open transaction had updated:
   * those transactions (by vxid). Once one has ended, heap_lock_tuple follows the update chain
   * with GetCurrentTransactionId(), so the statement has a transaction id if it sleeps again.
   */
  sawUpdaters?: { session: string; vxid: string }[];
  /** SERIALIZABLE: the current statement's reads and writes were checked before it waited in a foreign-key check. */
  ssiBeforeWait?: boolean;
  /** An INSERT about to wait on a duplicate key applied its table's SSI writes before the wait (heap_insert). */
  ssiHeapBeforeWait?: boolean;
  /** Rows the current statement locked before it waited: they stay locked, and another session's SKIP LOCKED passes over them. */
  rowsBeforeWait?: { tuple: TupleId; mode: RowLockMode }[];
  /** The statement waits for a row in its own foreign-key check (its check's snapshot is older than the wait). */
  fkCheckWait?: boolean;
  /**
   * A deferred foreign-key check at COMMIT waits for the referenced row `row` ("oid (block,offset)")
   * of the referencing row `orig` under `constraint`: when it looks again, only that row version
   * can satisfy it (its query's snapshot is older than the wait).
   */
  deferredFkWait?: { constraint: string; orig: string; row: string };
  /** The row this step waits for was moved to another partition by the update that committed: the re-run fails. */
  movedAway?: { context?: string };
  /** EvalPlanQual: the target rows the current statement's scan first found (followed through committed updates). */
  epq?: {
    oid: number;
    ctids: string[];
    horizon?: number;
    /** The row-lock mode the statement asked for on each found row (by ctid, followed through updates). */
    modes?: Record<string, RowLockMode>;
    /** Found rows whose newest version a committed update made (EvalPlanQual locks it before its recheck). */
    followed?: string[];
    /**
     * An inheritance parent's scan: the child tables (the parent among them) whose rows it found;
     * `ctids`, `modes` and `followed` then key each row as "oid:(block,offset)" (model/util.ts, epqKey).
     */
    children?: number[];
    /** `ctids` are exactly the rows the scan locked, in the order it locked them (none was held before). */
    ordered?: boolean;
    /** The first scan's ctid of each found row whose newest version a committed update made (by that version's key). */
    origin?: Record<string, string>;
    /** The found row (the first scan's ctid) the statement last waited for. */
    waitedAt?: string;
    /** An UPDATE's or DELETE's first run's transaction id: row versions older than it are those its scan saw. */
    seenBefore?: number;
    /**
     * With `horizon`: the newest versions (epqKey) of the rows the statement's snapshot saw that a
     * committed update replaced after it, read when a re-run first needs a new snapshot; its scan
     * goes on over them, where PostgreSQL's follows the old version's update chain.
     */
    beyond?: string[];
  };
  /** READ COMMITTED: the snapshot the current statement started with, kept across its waits (pg/stmtSnapshot.ts). */
  stmtSnapshot?: StatementSnapshot;
  /**
   * The current statement with its uncorrelated subqueries' rows, read under its kept snapshot,
   * in their place (initPlans.ts): what its EvalPlanQual re-runs with a new snapshot restrict.
   */
  epqBase?: ParsedStatement;
  /**
   * The sequence states before the run that formed the current statement's rows and then waited
   * on a duplicate key: PostgreSQL inserts the rows it formed (their values) after the wait.
   */
  keyFormed?: string[];
  /**
   * The unique keys a multi-row INSERT put in its indexes before it waited on a later key (each
   * row's index entries go in before the next row is formed): another insert of one of them
   * waits for this transaction, as _bt_check_unique does.
   */
  keysBeforeWait?: UniqueKey[];
  /**
   * Keys of deferred unique constraints the current statement inserted while another open
   * transaction had the same key ("index\u0001key"): their check waits for it.
   */
  deferredConflicts?: string[];
  /**
   * The step waits in deferred constraint checks: a COMMIT (or the implicit commit at the end of
   * the step), or a SET CONSTRAINTS … IMMEDIATE; the wake-up runs those checks again.
   */
  deferredWait?: 'commit' | 'implicit' | 'set-constraints';
  /**
   * REPEATABLE READ / SERIALIZABLE: the row the current statement waited for, and the CONTEXT of
   * a failure to lock it (the wait's, past its XactLockTableWait line): pg/rowChanged.ts.
   */
  xactRowWait?: { tuple: TupleId; context?: string; mode?: RowLockMode };
  /**
   * The current statement runs a PL/pgSQL block with an EXCEPTION clause: an error raised while
   * it waits (a deadlock, a timeout, a cancel) may be caught there (catchInBlock).
   */
  catches?: 'direct' | 'trigger';
  /**
   * Errors the current statement's EXCEPTION blocks caught, each at the row it was waiting for:
   * its dry runs raise each one again the first time the statement reaches that row, so PGlite
   * takes the handler's path (pg/inject.ts).
   */
  injected?: { tuple: TupleId; error: PgMessage }[];
  /**
   * The statement's wait ended in a caught error: its next plan walk lets go of the locks it took
   * that its new plan no longer has (the failed block's, released with its subtransaction).
   */
  caught?: { heldFrom: number };
  /**
   * The notices the current statement raised before its waits, sent to the client while it
   * waited (statement.ts, sendBeforeWait): its re-runs raise them again, and they are not sent twice.
   */
  sentBeforeWait?: PgMessage[];
  /** How many of the transaction's held locks there were when the current statement started. */
  heldFrom?: number;
  /** Where this step touched something the simulator approximates (approximations.ts). */
  approximations?: ApproximationTopic[];
  done: boolean;
  error?: PgMessage;
  /** The client cancelled the step while it executed: see submit. */
  cancelled?: boolean;
}

export interface Sess {
  name: string;
  proc: ProcId;
  pid: number;
  index: number;
  sets: string[];
  gucs: Record<string, string>;
  timeouts: { deadlock: number; lock: number; statement: number; idle: number };
  defaultIsolation: IsolationLevel;
  /** default_transaction_read_only (SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY): new transactions are READ ONLY. */
  defaultReadOnly: boolean;
  txn: Txn | null;
  step: RunningStep | null;
  last: SessionSnapshot['last'];
  query: string;
  stateChangeMs: number;
  /** Session-level advisory locks, with counts (pg_advisory_lock is re-entrant). */
  sessionAdvisory: { tag: LockTag & { type: 'advisory' }; mode: LockMode; count: number }[];
  terminated: PgMessage | null;
  terminatedAtMs: number;
  /** The client has read the FATAL (with its next command): later commands find no connection. */
  terminationReported: boolean;
  /** Every finished step, oldest first (SessionSnapshot.history). */
  history: FinishedStep[];
  vxidCounter: number;
  /** The session's prepared statements (PREPARE), by name: each backend has its own. */
  prepared: Map<string, PreparedStatement>;
}

/** A prepared statement as the session's pg_prepared_statements row shows it, with its text. */
export interface PreparedStatement {
  text: PreparedText;
  /** The whole query string the PREPARE came in (PostgreSQL keeps the client's string as sent). */
  queryString: string;
  /** Virtual time of the PREPARE, ms. */
  atMs: number;
  /** regtype[] texts from PostgreSQL's own analysis ('{integer,integer}'; result: null for no result rows). */
  parameterTypes: string;
  resultTypes: string | null;
  /** Plans GetCachedPlan made so far: custom ones for the first five executions with parameters, then generic. */
  customPlans: number;
  genericPlans: number;
}

/** The state the pure model reads and changes: lock tables, sessions, clock, log lines, events. */
export interface ModelState {
  readonly lm: LockManager;
  readonly rows: RowLockTable;
  readonly timers: Timers;
  readonly ssi: Ssi;
  readonly sessions: Map<string, Sess>;
  clock: number;
  nextXid: number;
  events: EngineEvent[];
  serverLog: string[];
  /** Errors already written to the server log when they were raised (deadlocks, timeouts). */
  loggedErrors: WeakSet<PgMessage>;
  lastDeadlock: EngineSnapshot['deadlock'];
  catalog: CatalogTable[];
  relations: Map<number, RelationInfo>;
  resumeQueue: string[];
  /** pg_cancel_backend / pg_terminate_backend requests a finished statement sent, delivered in order. */
  signals: { kind: 'cancel' | 'terminate'; pid: number }[];
  tables: TableSnapshot[];
  views: Record<string, TableSnapshot[]>;
  /** The first user OID the scenario created: OIDs are shown shifted from it (present.ts vOid). */
  oidBase: number | null;
}

/** Result of submitting a step: done (with result), waiting on a lock, or sleeping on the virtual clock. */
export type StepStatus = 'done' | 'waiting' | 'sleeping' | 'idle';

/** A fresh model state with no sessions. */
export function newModelState(): ModelState {
  return {
    lm: new LockManager(),
    rows: new RowLockTable(),
    timers: new Timers(),
    ssi: new Ssi(),
    sessions: new Map(),
    clock: 0,
    nextXid: FIRST_XID,
    events: [],
    serverLog: [],
    loggedErrors: new WeakSet(),
    lastDeadlock: null,
    catalog: [],
    relations: new Map(),
    resumeQueue: [],
    signals: [],
    tables: [],
    views: {},
    oidBase: null,
  };
}

/** Adds a named session (its pid and vxid prefix follow its index). */
export function addSession(eng: ModelState, name: string, index: number): void {
  eng.lm.setProcNumber(name as ProcId, index);
  eng.sessions.set(name, {
    name,
    proc: name as ProcId,
    pid: FIRST_PID + index,
    index,
    sets: [],
    gucs: {},
    timeouts: { deadlock: 1000, lock: 0, statement: 0, idle: 0 },
    defaultIsolation: 'read committed',
    defaultReadOnly: false,
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

/** The named session (an unknown name is a caller bug). */
export function sess(eng: ModelState, name: string): Sess {
  const s = eng.sessions.get(name);
  if (!s) throw new Error(`unknown session "${name}"`);
  return s;
}

/** Where a session's current step stands. */
export function statusOf(eng: ModelState, name: string | Sess): StepStatus {
  const s = typeof name === 'string' ? sess(eng, name) : name;
  if (!s.step) return 'idle';
  if (s.step.done) return 'done';
  if (s.step.sleepUntil !== undefined) return 'sleeping';
  return 'waiting';
}

/** Queues woken sessions for drainResumes, once each. */
export function queueResumes(eng: ModelState, procs: ProcId[]): void {
  for (const p of procs) if (!eng.resumeQueue.includes(p)) eng.resumeQueue.push(p);
}

/** Whether a boolean GUC is on for the session. */
export function gucOn(eng: ModelState, s: Sess, name: string): boolean {
  return s.gucs[name] === 'on';
}

/** Cancels the session's timers of these kinds. */
export function cancelTimers(eng: ModelState, s: Sess, kinds: TimerKind[]): void {
  eng.timers.cancel(s.name, kinds);
}

/** Appends an event to the engine's event log. */
export function event(eng: ModelState, e: EngineEvent): void {
  eng.events.push(e);
}

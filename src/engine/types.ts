/**
 * The engine's public, JSON-serializable state: what the UI renders after every event.
 * Snapshots are immutable plain data; history is a list of them (undo moves an index).
 */
import type { LockMode, LockTag, RowLockMode } from './model/locks/types';

export type { LockMode, LockTag, RowLockMode } from './model/locks/types';

/** A PostgreSQL error or notice as the wire protocol reports it (ErrorResponse / NoticeResponse). */
export interface PgMessage {
  severity: string;
  sqlstate: string;
  message: string;
  detail?: string;
  hint?: string;
  context?: string;
  position?: number;
}

/** One statement's result inside a step (simple query protocol: one per statement). */
export interface StatementResult {
  /** The CommandComplete tag, e.g. "UPDATE 1", "SELECT 2", "BEGIN". */
  command: string;
  columns?: string[];
  rows?: (string | null)[][];
}

/** What a step produced once it is done. */
export interface StepResult {
  results: StatementResult[];
  error?: PgMessage;
  notices: PgMessage[];
}

/** The outcome of one simple-protocol query string. */
export interface RawResult {
  results: StatementResult[];
  error?: PgMessage;
  notices: PgMessage[];
  /** For each notice, how many statements had completed before it (which statement raised it). */
  noticeAt?: number[];
}
import type { ApproximationTopic } from './approximations';
export type { ApproximationTopic } from './approximations';

/** pg_stat_activity.state, plus 'waiting' (active and blocked on a lock). */
export type SessionState = 'idle' | 'active' | 'waiting' | 'idle in transaction' | 'idle in transaction (aborted)';

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

/** Why a session waits: the lock it requested and who holds it or is queued ahead. */
export interface WaitReason {
  tag: LockTag;
  mode: LockMode;
  /** PostgreSQL's words, e.g. "ShareLock on transaction 745", "ExclusiveLock on tuple (0,1) of relation accounts". */
  description: string;
  blockers: { session: string; kind: 'hard' | 'soft'; mode: LockMode }[];
  /** Virtual time the wait started. */
  sinceMs: number;
}

/** One edge of the wait-for graph. Hard: `to` holds a conflicting lock; soft: `to` is queued ahead with a conflicting request. */
export interface WaitEdge {
  from: string;
  to: string;
  kind: 'hard' | 'soft';
  tag: LockTag;
  mode: LockMode;
  label: string;
  inCycle: boolean;
}

/** A row of pg_locks as PostgreSQL would show it for the simulated sessions. */
export interface LockRow {
  locktype: 'relation' | 'tuple' | 'transactionid' | 'virtualxid' | 'advisory';
  database: number | null;
  relation: string | null;
  page: number | null;
  tuple: number | null;
  virtualxid: string | null;
  transactionid: number | null;
  classid: number | null;
  objid: number | null;
  objsubid: number | null;
  virtualtransaction: string;
  pid: number;
  session: string;
  mode: LockMode;
  granted: boolean;
  fastpath: boolean;
  waitstart: number | null;
}

export interface PendingStep {
  step: string;
  sql: string;
  startedMs: number;
  /** Statements of the step already completed. */
  results: StatementResult[];
  /** Set while the step waits on a lock. */
  wait?: WaitReason;
  /** Set while the step runs pg_sleep on the virtual clock: when it wakes up. */
  sleepUntilMs?: number;
}

export interface SessionSnapshot {
  name: string;
  pid: number;
  state: SessionState;
  isolation: IsolationLevel;
  /** Simulated transaction id, once assigned (first write or row lock). */
  xid: number | null;
  vxid: string | null;
  xactStartMs: number | null;
  stateChangeMs: number;
  /** Last query text (pg_stat_activity.query). */
  query: string;
  /** Effective GUC values that matter for locking, as SHOW prints them. */
  gucs: Record<string, string>;
  pending: PendingStep | null;
  /** The result of the last finished step. */
  last: { step: string; results: StatementResult[]; error?: PgMessage; notices: PgMessage[] } | null;
  /** Every finished step of the session, oldest first: its scrollback (the engine always sets it). */
  history?: FinishedStep[];
  /** Set once the server terminated the backend (FATAL): when, and the message it sent. */
  terminated?: { atMs: number; message: PgMessage };
}

/** One finished step as a client saw it: what was sent, when, and what came back. */
export interface FinishedStep {
  step: string;
  sql: string;
  startedMs: number;
  endedMs: number;
  results: StatementResult[];
  notices: PgMessage[];
  error?: PgMessage;
  /** Lockstep's own notes on the step (not from PostgreSQL): what it touched that the simulator approximates. */
  approximations?: ApproximationTopic[];
}

export interface RowSnapshot {
  ctid: string;
  values: (string | null)[];
  lockers: { session: string; mode: RowLockMode }[];
}

export interface TableSnapshot {
  name: string;
  columns: string[];
  rows: RowSnapshot[];
}

export interface TimerSnapshot {
  session: string;
  kind: 'deadlock_timeout' | 'lock_timeout' | 'statement_timeout' | 'idle_in_transaction_session_timeout' | 'pg_sleep';
  atMs: number;
}

export type EngineEvent =
  | { type: 'step-start'; atMs: number; session: string; step: string; sql: string }
  | { type: 'wait'; atMs: number; session: string; reason: WaitReason }
  | { type: 'grant'; atMs: number; session: string; description: string }
  | { type: 'step-done'; atMs: number; session: string; step: string; ok: boolean; sqlstate?: string }
  | { type: 'deadlock-check'; atMs: number; session: string; result: 'none' | 'soft' | 'hard'; cycle: string[] }
  | { type: 'deadlock'; atMs: number; victim: string; cycle: string[] }
  | { type: 'timeout'; atMs: number; session: string; kind: TimerSnapshot['kind'] }
  | { type: 'commit'; atMs: number; session: string }
  | { type: 'rollback'; atMs: number; session: string }
  | { type: 'engine-error'; atMs: number; session: string; message: string }
  /** Lockstep's own note: the step touched something the simulator approximates (engine/approximations.ts). */
  | { type: 'approximation'; atMs: number; session: string; topic: ApproximationTopic; message: string };

/** SERIALIZABLE bookkeeping (SSI), as predicate.c keeps it. */
export interface SsiSnapshot {
  /** Serializable transactions still tracked: running ones, and committed ones a running transaction overlapped. */
  transactions: {
    session: string;
    state: 'active' | 'committed';
    /** Marked to be canceled: its next statement or COMMIT fails with 40001. */
    doomed: boolean;
    /** Its SIRead (predicate) locks: what it read, by relation (an index or a table), page and tuple. */
    sireadLocks: { relation: string; page: number | null; tuple: number | null }[];
  }[];
  /** rw-antidependencies: `from` read something `to` wrote, so `from` must come first in any serial order. */
  conflicts: { from: string; to: string; fromCommitted: boolean; toCommitted: boolean }[];
}

export interface EngineSnapshot {
  clockMs: number;
  sessions: SessionSnapshot[];
  locks: LockRow[];
  edges: WaitEdge[];
  /** The last deadlock found, if any: the cycle in the order the detector reported it and the victim. */
  deadlock: { cycle: string[]; victim: string; atMs: number } | null;
  tables: TableSnapshot[];
  /** What each session in a transaction would see with a plain SELECT now (MVCC), by session name. */
  views?: Record<string, TableSnapshot[]>;
  timers: TimerSnapshot[];
  events: EngineEvent[];
  /** PostgreSQL-format server log lines (deadlocks, lock timeouts). */
  serverLog: string[];
  /** SERIALIZABLE transactions' SSI state; absent while there is none. */
  ssi?: SsiSnapshot;
}

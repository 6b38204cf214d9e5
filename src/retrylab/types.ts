/** The retry lab's data model: configuration in, measurements out. Plain JSON-serializable data. */

/** Transaction templates the lab can run. */
export const WORKLOADS = ['transfer', 'queue', 'inventory', 'fk'] as const;
export type WorkloadId = (typeof WORKLOADS)[number];

/** How a transaction takes its locks. */
export const STRATEGIES = ['unordered', 'ordered', 'nowait-retry', 'skip-locked', 'advisory'] as const;
export type StrategyId = (typeof STRATEGIES)[number];

export const ISOLATION_LEVELS = ['read committed', 'repeatable read', 'serializable'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/** SQLSTATEs the course's WithRetry can treat as retryable. */
export const RETRYABLE_CODES = ['40P01', '40001', '55P03'] as const;
export type RetryableCode = (typeof RETRYABLE_CODES)[number];

/**
 * The course's Go WithRetry (the `retry-backoff` lesson), as parameters: at most maxAttempts
 * runs of the whole transaction; after a failed run n (0-based) with a listed SQLSTATE, sleep
 * ceiling/2 + rand[0, ceiling/2] with ceiling = min(baseMs << n, maxMs), never after the last
 * run. checkCommit: a retryable error from COMMIT takes the same path, with the same backoff.
 */
export interface RetryPolicy {
  retryOn: RetryableCode[];
  /** Total runs, the first one included. */
  maxAttempts: number;
  /** Backoff ceiling before the second run. */
  baseMs: number;
  /** Cap for any single backoff. */
  maxMs: number;
  /** Half the ceiling random (on) or the whole ceiling fixed (off). */
  jitter: boolean;
  checkCommit: boolean;
}

/** The lesson's DefaultRetry: 40P01 and 40001, 5 attempts, 100 ms base, 2 s cap, jitter, COMMIT checked. */
export const COURSE_POLICY: RetryPolicy = {
  retryOn: ['40P01', '40001'],
  maxAttempts: 5,
  baseMs: 100,
  maxMs: 2000,
  jitter: true,
  checkCommit: true,
};

/**
 * The course's policy for a strategy. NOWAIT exists to fail at once with 55P03 and try again
 * ("NOWAIT — не ждать … сразу ошибка 55P03"), so NOWAIT + retry also retries 55P03; every other
 * strategy keeps WithRetry's isRetryable (40P01, 40001).
 */
export function coursePolicyFor(strategy: StrategyId): RetryPolicy {
  const retryOn: RetryableCode[] = strategy === 'nowait-retry' ? [...COURSE_POLICY.retryOn, '55P03'] : [...COURSE_POLICY.retryOn];
  return { ...COURSE_POLICY, retryOn };
}

/** One lab run. */
export interface LabConfig {
  workload: WorkloadId;
  strategy: StrategyId;
  isolation: IsolationLevel;
  policy: RetryPolicy;
  /** Engine sessions, 2 to 8. */
  workers: number;
  /** Logical transactions per worker (each may take several attempts). */
  transactions: number;
  /** Rows contended for: accounts, items, parents (fewer rows, hotter rows); jobs queued for `queue`. */
  rows: number;
  /** Client think time between statements, in virtual ms (each pause is drawn in [0.5, 1.5] × this). */
  thinkMs: number;
  seed: number;
  /** deadlock_timeout per session (PostgreSQL's default: 1000). */
  deadlockTimeoutMs: number;
  /** lock_timeout per session; 0 = off. */
  lockTimeoutMs: number;
}

/** Defaults for everything but workload and strategy. */
export const DEFAULT_CONFIG: LabConfig = {
  workload: 'transfer',
  strategy: 'unordered',
  isolation: 'read committed',
  policy: COURSE_POLICY,
  workers: 4,
  transactions: 10,
  rows: 10,
  thinkMs: 5,
  seed: 1,
  deadlockTimeoutMs: 1000,
  lockTimeoutMs: 0,
};

/** How one attempt ended. */
export type AttemptOutcome = 'commit' | 'deadlock' | 'serialization' | 'lock-not-available' | 'error' | 'cancelled';

/** One attempt of one logical transaction, for the timeline. */
export interface AttemptRecord {
  worker: number;
  tx: number;
  attempt: number;
  startMs: number;
  endMs: number;
  outcome: AttemptOutcome;
  sqlstate?: string;
  /** Intervals this attempt spent waiting on locks. */
  waits: [number, number][];
  /** Backoff slept after this attempt (none after the last one), if any. */
  backoffMs?: number;
}

/** One statement as the lab sent it: the schedule a replay follows. */
export interface ScheduledStatement {
  worker: number;
  sql: string;
  atMs: number;
  /** The engine's answer when it was sent; the final outcome comes later for waits. */
  status: 'done' | 'waiting';
  outcome?: 'ok' | 'error';
  sqlstate?: string;
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** The measurements of one run. */
export interface LabResult {
  config: LabConfig;
  committed: number;
  /** Committed transactions whose work was empty (a FOR UPDATE queue that found no job). */
  emptyCommits: number;
  deadlocks: number;
  serializationFailures: number;
  /** 55P03: lock_timeout expiries and NOWAIT refusals. */
  lockTimeouts: number;
  otherErrors: number;
  retries: number;
  giveUps: number;
  attempts: number;
  statements: number;
  /** Statements of attempts that did not commit. */
  wastedStatements: number;
  /** Virtual ms spent inside attempts that did not commit, summed over workers. */
  wastedMs: number;
  lockWaitMs: number;
  backoffMs: number;
  virtualMs: number;
  /** Wall-clock ms of the workers' loop (start-up excluded). */
  wallMs: number;
  /** Wall-clock ms to start PGlite and the engine and run the workload's setup. */
  startupMs: number;
  /** Committed transactions per virtual second. */
  throughput: number;
  /** Latency of committed logical transactions (first BEGIN to successful COMMIT, retries included), virtual ms. */
  latency: Percentiles;
  invariant: { holds: boolean; description: string; detail: string };
  cancelled: boolean;
  timeline: AttemptRecord[];
  schedule?: ScheduledStatement[];
}

/** Reported while a run progresses. */
export interface LabProgress {
  finished: number;
  total: number;
  committed: number;
  deadlocks: number;
  virtualMs: number;
  wallMs: number;
}

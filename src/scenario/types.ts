/**
 * Scenario model shared by the .spec parser/writer, the lesson format, the isolationtester
 * algorithm and both drivers (simulator and real PostgreSQL). Pure data.
 */
import type { PgMessage, StepResult } from '../engine/types';

/** One step of a session: a name and the SQL text sent as one simple-protocol query. */
export interface SpecStep {
  name: string;
  sql: string;
}

/**
 * One item of a compiled script as a player steps through it: a session's step, a pause, or a
 * clock advance. The UI's ScriptItem (ui/backend.ts) adds the lesson's narration, predicts and code.
 */
export interface ScriptItem {
  index: number;
  kind: 'step' | 'pause' | 'advance';
  session?: string;
  /** The spec step name ("a2"). */
  step?: string;
  sql?: string;
  label: string;
}

/** One session (isolationtester: "session"): optional setup/teardown SQL and its steps. */
export interface SpecSession {
  name: string;
  /** `conninfo "..."` after the session name (newest isolationtester grammar); drivers may ignore it. */
  conninfo?: string;
  setup?: string;
  teardown?: string;
  steps: SpecStep[];
}

/**
 * A marker on a permutation step, as in isolationtester:
 *  - `(*)`                 : the step is considered blocked as soon as it is launched (blocker '*');
 *  - `(otherstep)`         : the step is considered blocked until `otherstep` has completed;
 *  - `(otherstep notices N)`: ... until `otherstep` has completed and emitted N notices.
 */
export type StepBlocker = { kind: 'star' } | { kind: 'step'; step: string; notices?: number };

export interface PermutationStep {
  step: string;
  blockers: StepBlocker[];
}

export interface Permutation {
  steps: PermutationStep[];
}

/** A whole isolationtester spec. `setup` may hold several blocks (each run as one query). */
export interface Spec {
  /** `conninfo "..."` at the top of the spec (newest isolationtester grammar); drivers may ignore it. */
  conninfo?: string;
  setup: string[];
  teardown?: string;
  sessions: SpecSession[];
  /** Explicit permutations; when empty, every interleaving is run (isolationtester rule). */
  permutations: Permutation[];
}

/** One printed outcome of the isolationtester, as JSON (`npm run play -- X --json`). */
export interface TraceEvent {
  step: string;
  session: string;
  outcome: 'ok' | 'waiting' | 'error';
  sqlstate?: string;
  message?: string;
  /** Normalized: pids → session names, relation OIDs → names, xids → "transaction ?". */
  detail?: string;
  /**
   * The error's CONTEXT (psql prints it; isolationtester does not), normalized like `detail`:
   * what the session pane shows under the error, so the differential compares it too.
   */
  context?: string;
  /** Command tags of the statements that completed, e.g. ["BEGIN"], ["UPDATE 1"]. */
  commands?: string[];
  /** Column names and rows (PostgreSQL text values, null for NULL) of the last result set with columns. */
  columns?: string[];
  rows?: (string | null)[][];
  /** For a step that waited: the name of the step after which its completion was seen. */
  completedAfterStep?: string;
  /**
   * Notices and warnings isolationtester prints before this line, in its order, as it prints
   * them ("s1: WARNING:  there is already a transaction in progress", then DETAIL / HINT lines).
   */
  notices?: string[];
}

export interface PermutationTrace {
  permutation: string;
  events: TraceEvent[];
  /** The server log lines the permutation wrote, when the driver can read them (the simulator does). */
  serverLog?: string[];
  /** Notices printed after the last step line (before the teardown's output). */
  trailingNotices?: string[];
  /** The driver failed during the permutation (the simulator's engine error): what it said. */
  failed?: string;
  /**
   * The simulator's own word that a step met one of its known limits (docs/engine.md, "Approximations
   * said on screen"), as the session pane says it; never from a real server, and not compared.
   */
  approximations?: ApproximationNote[];
}

/** One approximation the simulator said: which session's step, its topic, and the English sentence. */
export interface ApproximationNote {
  session: string;
  topic: string;
  message: string;
}

export type { PgMessage, StatementResult, StepResult } from '../engine/types';

/**
 * The isolationtester algorithm (src/scenario/isolation.ts) drives sessions through this
 * interface. The simulator and the real-PostgreSQL oracle each implement it.
 */
export interface SessionDriver {
  /**
   * Runs the spec's setup blocks, then each session's setup; called once per permutation.
   * May return what isolationtester prints for them (see SetupOutput); a failure throws.
   */
  begin(spec: Spec): Promise<void | SetupOutput[]>;
  /** Sends a step's SQL on its session, like PQsendQuery; returns without waiting. */
  send(session: string, sql: string): Promise<void>;
  /**
   * Checks the session's running step.
   * - `wait: false` (isolationtester STEP_NONBLOCK): lets time pass until the step is done
   *   ('done' with the result) or is waiting on a lock held by another session
   *   (pg_isolation_test_session_is_blocked), then 'blocked'.
   * - `wait: true`: lets time pass until the step is done.
   * On the simulator, "time passes" means the virtual clock advances to the next timer.
   */
  poll(session: string, wait: boolean): Promise<PollResult>;
  /** Maps process ids, relation OIDs and xids in a DETAIL text to stable names (see TraceEvent.detail). */
  normalizeDetail(detail: string): string;
  /** The server log lines written since begin() (one element per field, as in the log file); optional. */
  serverLog?(): string[];
  /** The approximations the simulator said since begin(), in order; optional (the simulator has them). */
  approximations?(): ApproximationNote[];
  /** Runs each session's teardown, then the spec's teardown, and closes sessions. Never throws on SQL errors. */
  end(spec: Spec): Promise<void | SetupOutput[]>;
}

/**
 * The outcome of SessionDriver.poll. `result.notices` holds every notice of the step; a
 * 'blocked' answer may carry the notices that arrived since the previous poll of that step
 * (isolationtester prints notices as they arrive and counts them for `(step notices N)`).
 */
export type PollResult = { status: 'done'; result: StepResult } | { status: 'blocked'; notices?: PgMessage[] };

/**
 * What isolationtester prints for one setup or teardown block: PQexec keeps only the last
 * statement's result, printed when it has columns; per-session notices are printed too.
 * `session` is undefined for the spec-level (control connection) blocks, whose notices are hidden.
 */
export interface SetupOutput {
  session?: string;
  result: StepResult;
}

/**
 * The main-thread side of the engine Worker, with a watchdog. Every request has a time limit.
 * PGlite cannot be interrupted, so a statement past its limit is either heavy work or a runaway,
 * and only the learner can tell: with `onOverdue`, the client reports the overrun and counts
 * down (`graceMs`); the learner may keep waiting (`keepMs` more each time) or stop at once. A
 * stopped request gets the worker terminated and replaced, and the new worker is rebuilt from
 * the last history the old one confirmed. A stopped statement (a step or an ad-hoc one) then
 * joins that history as cancelled, as a client's cancel request ends it in PostgreSQL (57014):
 * the player moves past it and never runs it again. Any other stopped action, and an action
 * whose worker crashed, is left out.
 * Without `onOverdue` a request is stopped as soon as it overruns its limit.
 */
import type { PlayerAction, PlayerFrame } from '../sim/player';
import { isResponse, type Command, type LocksAnswer, type Response, type ScenarioSource, type Timing } from './protocol';

/** What a 'locks' request came to: the worker's answer, or the watchdog stopping it (the worker was replaced). */
export type LocksOutcome =
  | { kind: 'answer'; answer: LocksAnswer }
  | { kind: 'stopped'; limitMs: number; afterMs?: number; byLearner: boolean }
  | { kind: 'crashed'; reason: string };

/** The part of the Worker API the client uses (a fake in tests). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
}

/** Time limits in ms. */
export interface WatchdogLimits {
  /** One action: a step, an ad-hoc statement, a clock move. */
  actionMs: number;
  /** Starting a worker and opening a scenario (PGlite start-up included). */
  openMs: number;
  /** Added per replayed or stepped action when rebuilding or jumping. */
  perActionMs: number;
  /** Past the limit: how long the countdown runs before the request is stopped. */
  graceMs: number;
  /** What each "keep waiting" adds to the countdown. */
  keepMs: number;
}

export const DEFAULT_LIMITS: WatchdogLimits = { actionMs: 3000, openMs: 30_000, perActionMs: 1000, graceMs: 10_000, keepMs: 30_000 };

/** A request past its time limit and still running: the learner sees a countdown and decides. */
export interface Overdue {
  /** What runs, in the learner's terms: a statement, a clock move, or the engine (open, jump, undo). */
  what: 'statement' | 'clock' | 'engine';
  limitMs: number;
  /** performance.now() when the request was sent. */
  startedAt: number;
  /** performance.now() when it will be stopped unless the learner keeps waiting. */
  stopAt: number;
  /** Extends the countdown by `keepMs`. */
  keepWaiting(): void;
  /** Stops the request now (the worker is replaced and the scenario rebuilt). */
  stop(): void;
}

/** Something the client reports for logging and measurements. */
export type ClientEvent =
  | { type: 'answer'; command: Command['type']; roundTripMs: number; timing: Timing }
  | { type: 'watchdog'; command: Command['type']; limitMs: number; reason: string }
  | { type: 'rebuilt'; actions: number; ms: number };

export interface ClientOptions {
  createWorker: () => WorkerLike;
  limits?: Partial<WatchdogLimits>;
  onEvent?: (e: ClientEvent) => void;
  /** Called with the overrun when a request passes its limit, and with null when it settles. */
  onOverdue?: (o: Overdue | null) => void;
}

/** The worker did not answer in time, crashed, or reported its engine unusable. */
class WorkerLost extends Error {
  constructor(
    message: string,
    /** How long the request ran before it was stopped, when it was stopped past its limit. */
    readonly afterMs?: number,
    /** The client stopped it for running past its limit (not a crash). */
    readonly stopped = false,
  ) {
    super(message);
  }
}

/** Engine client: one request at a time, watchdog on each. */
export class EngineClient {
  private readonly limits: WatchdogLimits;
  private worker: WorkerLike;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private source: ScenarioSource | null = null;
  private history: PlayerAction[] = [];
  private cursor = 0;
  private overdueShown = false;
  /** The worker has answered a 'locks' request: its PGlite is up. */
  private warm = false;
  private cancelled: number[] = [];
  /** What each confirmed action took in the worker (ms; 0 when unknown): a rebuild replays that work again. */
  private costs: number[] = [];

  constructor(private readonly opts: ClientOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.worker = opts.createWorker();
  }

  /** Opens a scenario; the start of its script. `cancelledSteps`: script items stopped before, run as cancelled. */
  open(source: ScenarioSource, cancelledSteps: readonly number[] = []): Promise<PlayerFrame> {
    return this.serial(async () => {
      this.source = source;
      this.history = [];
      this.costs = [];
      this.cancelled = [...cancelledSteps];
      return this.call(this.openCommand(), this.limits.openMs);
    });
  }

  /**
   * What `sql` locks on a fresh database holding `schema` (the #/locks page). The worker's first
   * request also starts PGlite, so it gets the open limit. A request past its limit is stopped
   * like any other; the worker is replaced (and an open scenario rebuilt).
   */
  locks(schema: string, sql: string): Promise<LocksOutcome> {
    return this.serial(async () => {
      const cmd: Command = { type: 'locks', schema, sql };
      const limitMs = this.warm ? this.limits.actionMs + this.limits.perActionMs : this.limits.openMs;
      try {
        const r = await this.send(cmd, limitMs, !!this.opts.onOverdue);
        if (!r.ok) throw new Error(r.message);
        if (!('locks' in r)) throw new Error('unexpected answer from the engine worker');
        this.warm = true;
        return { kind: 'answer', answer: r.locks };
      } catch (e) {
        if (!(e instanceof WorkerLost)) throw e;
        this.opts.onEvent?.({ type: 'watchdog', command: cmd.type, limitMs, reason: e.message });
        this.warm = false;
        if (this.source) await this.recover(e.message).catch(() => undefined);
        else {
          this.worker.terminate();
          this.worker = this.opts.createWorker();
        }
        return e.stopped
          ? {
              kind: 'stopped',
              limitMs,
              ...(e.afterMs !== undefined ? { afterMs: e.afterMs } : {}),
              byLearner: e.message.startsWith('stopped at'),
            }
          : { kind: 'crashed', reason: e.message };
      }
    });
  }

  /** Script items of the open scenario that the learner stopped (they run as cancelled from then on). */
  get cancelledSteps(): readonly number[] {
    return this.cancelled;
  }

  /** Performs one action (next step, ad-hoc SQL, clock move). */
  act(action: PlayerAction): Promise<PlayerFrame> {
    return this.serial(() => this.call({ type: 'action', action }, this.limits.actionMs));
  }

  /** Restores the state at a script cursor (undo, or steps forward), or a moment `atMs` inside that step. */
  goto(cursor: number, atMs?: number): Promise<PlayerFrame> {
    return this.serial(() => {
      const forward = cursor > this.cursor;
      const limit = forward ? this.rebuildLimit(cursor - this.cursor) : this.rebuildLimit(this.history.length) + this.replayCost();
      return this.call({ type: 'goto', cursor, ...(atMs !== undefined ? { atMs } : {}) }, limit);
    });
  }

  /** Back to the start of the script. */
  reset(): Promise<PlayerFrame> {
    return this.serial(() => this.call({ type: 'reset' }, this.rebuildLimit(0)));
  }

  /** The history the worker last confirmed. */
  get confirmedHistory(): readonly PlayerAction[] {
    return this.history;
  }

  /** Stops the worker (and withdraws a countdown it showed). */
  dispose(): void {
    this.worker.terminate();
    if (this.overdueShown) this.opts.onOverdue?.(null);
    this.overdueShown = false;
  }

  private openCommand(): Command {
    if (!this.source) throw new Error('no scenario is open');
    return { type: 'open', source: this.source, ...(this.cancelled.length ? { cancelledSteps: [...this.cancelled] } : {}) };
  }

  /** The time the confirmed history took when it was done (heavy work the learner waited for takes it again). */
  private replayCost(): number {
    return this.costs.reduce((a, b) => a + b, 0);
  }

  private rebuildLimit(actions: number): number {
    return this.limits.actionMs + actions * this.limits.perActionMs;
  }

  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Sends a command; on a lost worker, restarts it, rebuilds, and explains in `error`. */
  private async call(cmd: Command, limitMs: number): Promise<PlayerFrame> {
    let r: Response;
    try {
      r = await this.send(cmd, limitMs, !!this.opts.onOverdue);
    } catch (e) {
      if (!(e instanceof WorkerLost)) throw e;
      this.opts.onEvent?.({ type: 'watchdog', command: cmd.type, limitMs, reason: e.message });
      // Only a statement stopped for running too long is a cancel; after a crash it is left out.
      return this.recover(explain(cmd, limitMs, e.message, e.afterMs), e.stopped ? cancelledAction(cmd) : undefined);
    }
    return this.accept(r, cmd.type === 'action');
  }

  /** Takes the worker's state and history; `oneAction`: the answer to a single action, whose cost is then known. */
  private accept(r: Response, oneAction = false): PlayerFrame {
    if (!r.ok) throw new Error(r.message);
    if (!('state' in r)) throw new Error('unexpected answer from the engine worker');
    const costs = this.costs.slice(0, r.history.length);
    while (costs.length < r.history.length) costs.push(0);
    if (oneAction && r.history.length === this.history.length + 1) costs[costs.length - 1] = r.timing.workMs ?? r.timing.handleMs;
    this.costs = costs;
    this.history = r.history;
    this.cursor = r.state.cursor;
    return r.state;
  }

  /** A new worker, the scenario reopened, the confirmed history replayed (then `cancelled`, if given). */
  private async recover(error: string, cancelled?: PlayerAction): Promise<PlayerFrame> {
    const t0 = performance.now();
    this.worker.terminate();
    this.worker = this.opts.createWorker();
    this.warm = false;
    if (!this.source) throw new Error(error);
    const history = cancelled ? [...this.history, cancelled] : this.history;
    // The stopped step is the script item at the confirmed cursor.
    if (cancelled?.type === 'step' && !this.cancelled.includes(this.cursor)) this.cancelled = [...this.cancelled, this.cursor];
    try {
      await this.send(this.openCommand(), this.limits.openMs);
      const r = await this.send({ type: 'replay', history }, this.rebuildLimit(history.length) + this.replayCost());
      const state = this.accept(r);
      this.opts.onEvent?.({ type: 'rebuilt', actions: history.length, ms: performance.now() - t0 });
      return { ...state, error };
    } catch (e) {
      throw new Error(`${error} Rebuilding failed too: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * One request/answer with a time limit; WorkerLost when the worker is gone or stopped. With
   * `countdown`, passing the limit reports an Overdue and stops only when the countdown ends or
   * the learner says so.
   */
  private send(cmd: Command, limitMs: number, countdown = false): Promise<Response> {
    const id = this.nextId++;
    const worker = this.worker;
    const t0 = performance.now();
    const onOverdue = countdown ? this.opts.onOverdue : undefined;
    return new Promise<Response>((resolve, reject) => {
      let overdue = false;
      let hard: ReturnType<typeof setTimeout> | undefined;
      const done = (): void => {
        clearTimeout(timer);
        clearTimeout(hard);
        worker.onmessage = null;
        worker.onerror = null;
        if (overdue) onOverdue?.(null);
        overdue = false;
        this.overdueShown = false;
      };
      const stop = (how: string): void => {
        const afterMs = performance.now() - t0;
        done();
        reject(new WorkerLost(`${how} after ${Math.round(afterMs)} ms`, afterMs, true));
      };
      const report = (stopAt: number): void => {
        clearTimeout(hard);
        this.overdueShown = true;
        hard = setTimeout(() => stop('no answer within the countdown'), Math.max(0, stopAt - performance.now()));
        onOverdue?.({
          what: whatRuns(cmd),
          limitMs,
          startedAt: t0,
          stopAt,
          keepWaiting: () => overdue && report(performance.now() + this.limits.keepMs),
          stop: () => overdue && stop("stopped at the learner's request"),
        });
      };
      const timer = setTimeout(() => {
        if (!onOverdue) {
          done();
          reject(new WorkerLost(`no answer within ${limitMs} ms`, undefined, true));
          return;
        }
        overdue = true;
        report(performance.now() + this.limits.graceMs);
      }, limitMs);
      worker.onmessage = (ev) => {
        const m: unknown = ev.data;
        if (!isResponse(m) || m.id !== id) return;
        done();
        if (!m.ok && m.kind === 'fatal') return reject(new WorkerLost(m.message));
        if (m.ok) this.opts.onEvent?.({ type: 'answer', command: cmd.type, roundTripMs: performance.now() - t0, timing: m.timing });
        resolve(m);
      };
      worker.onerror = (ev) => {
        done();
        reject(new WorkerLost(`the worker crashed: ${ev.message || 'unknown error'}`));
      };
      worker.postMessage({ ...cmd, id });
    });
  }
}

/** The stopped statement as it joins the history (cancelled), or undefined for any other command. */
function cancelledAction(cmd: Command): PlayerAction | undefined {
  if (cmd.type !== 'action') return undefined;
  const a = cmd.action;
  if (a.type === 'step') return { type: 'step', cancelled: true };
  if (a.type === 'adhoc') return { type: 'adhoc', session: a.session, sql: a.sql, cancelled: true };
  return undefined;
}

/** What a command runs, in the learner's terms. */
function whatRuns(cmd: Command): Overdue['what'] {
  if (cmd.type === 'locks' || (cmd.type === 'action' && (cmd.action.type === 'step' || cmd.action.type === 'adhoc'))) return 'statement';
  return cmd.type === 'action' ? 'clock' : 'engine';
}

/** The learner-facing sentence for a lost request (`afterMs`: how long it ran when it was stopped past its limit). */
export function explain(cmd: Command, limitMs: number, reason: string, afterMs?: number): string {
  const secs = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const what = { statement: 'The statement', clock: 'Moving the clock', engine: 'The engine' }[whatRuns(cmd)];
  const stoppedPastLimit = reason.startsWith('no answer') || reason.startsWith('stopped');
  const byLearner = reason.startsWith('stopped at');
  const after = afterMs !== undefined ? ` after ${secs(afterMs)}` : '';
  const happened = stoppedPastLimit
    ? `did not finish within ${limitMs / 1000} s and was stopped${byLearner ? ' at your request' : ''}${after}`
    : `failed (${reason})`;
  return `${what} ${happened}; the scenario was rebuilt from its history.`;
}

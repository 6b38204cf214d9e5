/**
 * The main-thread side of the engine Worker, with a watchdog. Every request has a time limit;
 * a request that overruns it (a runaway statement: PGlite cannot be interrupted) gets the worker
 * terminated and replaced, and the new worker is rebuilt from the last history the old one
 * confirmed, that is, the history without the runaway action.
 */
import type { PlayerAction, PlayerView } from '../engine/player';
import { isResponse, type Command, type Response, type ScenarioSource, type Timing } from './protocol';

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
}

export const DEFAULT_LIMITS: WatchdogLimits = { actionMs: 3000, openMs: 30_000, perActionMs: 1000 };

/** Something the client reports for logging and measurements. */
export type ClientEvent =
  | { type: 'answer'; command: Command['type']; roundTripMs: number; timing: Timing }
  | { type: 'watchdog'; command: Command['type']; limitMs: number; reason: string }
  | { type: 'rebuilt'; actions: number; ms: number };

export interface ClientOptions {
  createWorker: () => WorkerLike;
  limits?: Partial<WatchdogLimits>;
  onEvent?: (e: ClientEvent) => void;
}

/** The worker did not answer in time, crashed, or reported its engine unusable. */
class WorkerLost extends Error {}

/** Engine client: one request at a time, watchdog on each. */
export class EngineClient {
  private readonly limits: WatchdogLimits;
  private worker: WorkerLike;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private source: ScenarioSource | null = null;
  private history: PlayerAction[] = [];
  private cursor = 0;

  constructor(private readonly opts: ClientOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.worker = opts.createWorker();
  }

  /** Opens a scenario; the start of its script. */
  open(source: ScenarioSource): Promise<PlayerView> {
    return this.serial(async () => {
      this.source = source;
      this.history = [];
      return this.call({ type: 'open', source }, this.limits.openMs);
    });
  }

  /** Performs one action (next step, ad-hoc SQL, clock move). */
  act(action: PlayerAction): Promise<PlayerView> {
    return this.serial(() => this.call({ type: 'action', action }, this.limits.actionMs));
  }

  /** Restores the state at a script cursor (undo, or steps forward), or a moment `atMs` inside that step. */
  goto(cursor: number, atMs?: number): Promise<PlayerView> {
    return this.serial(() => {
      const work = cursor > this.cursor ? cursor - this.cursor : this.history.length;
      return this.call({ type: 'goto', cursor, ...(atMs !== undefined ? { atMs } : {}) }, this.rebuildLimit(work));
    });
  }

  /** Back to the start of the script. */
  reset(): Promise<PlayerView> {
    return this.serial(() => this.call({ type: 'reset' }, this.rebuildLimit(0)));
  }

  /** The history the worker last confirmed. */
  get confirmedHistory(): readonly PlayerAction[] {
    return this.history;
  }

  /** Stops the worker. */
  dispose(): void {
    this.worker.terminate();
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
  private async call(cmd: Command, limitMs: number): Promise<PlayerView> {
    let r: Response;
    try {
      r = await this.send(cmd, limitMs);
    } catch (e) {
      if (!(e instanceof WorkerLost)) throw e;
      this.opts.onEvent?.({ type: 'watchdog', command: cmd.type, limitMs, reason: e.message });
      return this.recover(explain(cmd, limitMs, e.message));
    }
    return this.accept(r);
  }

  private accept(r: Response): PlayerView {
    if (!r.ok) throw new Error(r.message);
    if (!('state' in r)) throw new Error('unexpected answer from the engine worker');
    this.history = r.history;
    this.cursor = r.state.cursor;
    return r.state;
  }

  /** A new worker, the scenario reopened, the confirmed history replayed. */
  private async recover(error: string): Promise<PlayerView> {
    const t0 = performance.now();
    this.worker.terminate();
    this.worker = this.opts.createWorker();
    if (!this.source) throw new Error(error);
    const history = this.history;
    try {
      await this.send({ type: 'open', source: this.source }, this.limits.openMs);
      const r = await this.send({ type: 'replay', history }, this.rebuildLimit(history.length));
      const state = this.accept(r);
      this.opts.onEvent?.({ type: 'rebuilt', actions: history.length, ms: performance.now() - t0 });
      return { ...state, error };
    } catch (e) {
      throw new Error(`${error} Rebuilding failed too: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** One request/answer with a time limit; WorkerLost when the worker is gone or stuck. */
  private send(cmd: Command, limitMs: number): Promise<Response> {
    const id = this.nextId++;
    const worker = this.worker;
    const t0 = performance.now();
    return new Promise<Response>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.onmessage = null;
        worker.onerror = null;
      };
      const timer = setTimeout(() => {
        done();
        reject(new WorkerLost(`no answer within ${limitMs} ms`));
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

/** The learner-facing sentence for a lost request. */
export function explain(cmd: Command, limitMs: number, reason: string): string {
  const secs = `${limitMs / 1000} s`;
  const timedOut = reason.startsWith('no answer');
  const what =
    cmd.type === 'action' && (cmd.action.type === 'step' || cmd.action.type === 'adhoc')
      ? 'The statement'
      : cmd.type === 'action'
        ? 'Moving the clock'
        : 'The engine';
  const happened = timedOut ? `did not finish within ${secs} and was stopped` : `failed (${reason})`;
  return `${what} ${happened}; the scenario was rebuilt from its history.`;
}

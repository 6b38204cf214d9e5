/**
 * The player: one Spec and one permutation (a lesson compiles to exactly one), stepped with
 * isolationtester semantics on the engine's virtual clock, plus off-script actions.
 *
 * History is a list of actions (plain data). Undo / jump replays a prefix of it on a fresh
 * engine over the same PGlite after resetting the database, so every state is rebuilt from
 * scratch ("true undo") and replaying the same actions gives the same snapshot.
 * Runs in Node and in a Worker: no DOM, no timers, no Date.now().
 */
import { Engine, PgliteExecutor } from '../engine';
import type { EngineSnapshot } from '../engine/types';
import type { Permutation, ScriptItem, Spec } from '../scenario/types';
import { scriptItem, scriptSteps, type ScriptStep } from '../scenario/script';
import { permutationAt } from '../scenario/permutations';

/** isolationtester's max_step_wait: a step still busy after this long is canceled (as in SimDriver). */
const MAX_STEP_WAIT_MS = 300_000;

/**
 * One thing the learner did. 'step' runs the next script item; the others leave the script.
 * `cancelled`: the learner stopped the statement while it ran (a runaway), so it replays as a
 * client cancel (57014) instead of running again.
 */
export type PlayerAction =
  /** `untilMs`: stop the virtual clock there while the step's time passes (a moment inside the step). */
  | { type: 'step'; untilMs?: number; cancelled?: true }
  | { type: 'adhoc'; session: string; sql: string; cancelled?: true }
  | { type: 'advance'; ms: number }
  | { type: 'timer' };

/** One item of the script as the UI shows it (same shape as ui/backend.ts ScriptItem). */
/** One frame of the player: what the UI renders after every action (ui/backend.ts turns it into its PlayerState). */
export interface PlayerFrame {
  snapshot: EngineSnapshot;
  script: ScriptItem[];
  cursor: number;
  offScript: boolean;
  /** The clock stopped inside the last step (a timeline moment): the next action lets its time pass first. */
  midStep?: boolean;
  error?: string;
}

/** Options for Player.create. */
export interface PlayerOptions {
  /** Reuse this PGlite (the worker keeps one); otherwise the player starts and owns its own. */
  executor?: PgliteExecutor;
  /** 0-based permutation index for specs that list none or several (default 0). */
  permutation?: number;
  /** Script items the learner stopped before (a reopened scenario): they run as cancelled. */
  cancelledSteps?: readonly number[];
}

/** A refused action (nothing changed): the message is for the learner. */
export class ActionRefused extends Error {
  override name = 'ActionRefused';
}

/** The spec's setup (or a session's setup) failed: the scenario itself is broken. */
export class ScenarioSetupError extends Error {
  override name = 'ScenarioSetupError';
}

/** Plays one permutation of a spec; every method must be awaited one at a time. */
export class Player {
  readonly script: ScriptItem[];
  private readonly steps: ScriptStep[];
  private engine: Engine | null = null;
  private actions: PlayerAction[] = [];
  private stepsDone = 0;
  /** What the setup left in the engine's history (events, finished steps by session): not the learner's. */
  private setupMark: { events: number; steps: Map<string, number> } = { events: 0, steps: new Map() };
  /** Set while a step stopped at its `untilMs`: the `(*)` session its remaining time must not wait for. */
  private unsettled: { skip: string | null } | null = null;
  /** Script items the learner stopped once: undo, redo and jumps run them as cancelled again. */
  private readonly cancelledSteps = new Set<number>();

  private constructor(
    readonly spec: Spec,
    perm: Permutation,
    private readonly ex: PgliteExecutor,
    private readonly ownsExecutor: boolean,
  ) {
    this.steps = scriptSteps(spec, perm);
    this.script = this.steps.map(scriptItem);
  }

  /** Builds a player at the start of the script (setup done, nothing stepped). */
  static async create(spec: Spec, opts: PlayerOptions = {}): Promise<Player> {
    const index = opts.permutation ?? 0;
    const perm = spec.permutations.length > 0 ? spec.permutations[index] : permutationAt(spec, index);
    if (!perm) throw new Error(`no permutation ${index + 1}: the spec has ${spec.permutations.length}`);
    const ex = opts.executor ?? (await PgliteExecutor.create());
    const player = new Player(spec, perm, ex, !opts.executor);
    for (const k of opts.cancelledSteps ?? []) player.cancelledSteps.add(k);
    await player.rebuild([]);
    return player;
  }

  /** The actions that led to the current state. */
  get history(): readonly PlayerAction[] {
    return this.actions;
  }

  /** Number of script items done. */
  get cursor(): number {
    return this.stepsDone;
  }

  /** True once an ad-hoc statement or a manual clock move is part of the history. */
  get offScript(): boolean {
    return this.actions.some((a) => a.type !== 'step');
  }

  /** Session names, including the lesson's clock observer if it has one. */
  get sessions(): string[] {
    return this.spec.sessions.map((s) => s.name);
  }

  /** The current state for the UI (tables were refreshed after the last action). */
  view(error?: string): PlayerFrame {
    const v: PlayerFrame = {
      snapshot: withoutSetup(this.eng.snapshot(), this.setupMark),
      script: this.script.map((s) => ({ ...s })),
      cursor: this.stepsDone,
      offScript: this.offScript,
    };
    if (this.unsettled) v.midStep = true;
    if (error !== undefined) v.error = error;
    return v;
  }

  /** Runs the next script item. */
  next(): Promise<void> {
    return this.perform({ type: 'step' });
  }

  /** Runs SQL in any session, off script. */
  adHoc(session: string, sql: string): Promise<void> {
    return this.perform({ type: 'adhoc', session, sql });
  }

  /** Moves the virtual clock forward by `ms`, firing due timers. */
  advance(ms: number): Promise<void> {
    return this.perform({ type: 'advance', ms });
  }

  /** Moves the virtual clock to the next timer and fires it. */
  advanceToNextTimer(): Promise<void> {
    return this.perform({ type: 'timer' });
  }

  /**
   * Performs one action and appends it to the history. Throws ActionRefused (state unchanged)
   * when the action cannot apply; an engine failure rebuilds the state without the action and rethrows.
   */
  async perform(given: PlayerAction): Promise<void> {
    const action = this.asRecorded(given);
    this.check(action);
    try {
      await this.apply(action);
      await this.eng.refreshTables();
    } catch (e) {
      await this.rebuild(this.actions);
      throw e;
    }
    this.actions.push(action);
  }

  /** Rebuilds the state from the first `k` actions of the history (undo / jump). */
  async goto(k: number): Promise<void> {
    if (!Number.isInteger(k) || k < 0 || k > this.actions.length) throw new ActionRefused(`no history position ${k}`);
    await this.rebuild(this.actions.slice(0, k));
  }

  /**
   * Restores the latest state with `cursor` script items done: the history up to the next
   * step after it (ad-hoc work done at that cursor is kept); forward jumps step.
   */
  async gotoCursor(cursor: number, atMs?: number): Promise<void> {
    if (!Number.isInteger(cursor) || cursor < 0 || cursor > this.script.length)
      throw new ActionRefused(`no script position ${cursor} (the script has ${this.script.length} items)`);
    if (atMs !== undefined) {
      // A moment inside step `cursor`: the state before it, then the step with its clock stopped at atMs.
      if (cursor === 0 || !Number.isFinite(atMs)) throw new ActionRefused(`no moment ${atMs} ms inside script position ${cursor}`);
      await this.gotoCursor(cursor - 1);
      // A moment before the step began is not inside it: the step then runs to its end.
      await this.perform(this.eng.now() > atMs ? { type: 'step' } : { type: 'step', untilMs: atMs });
      return;
    }
    // A script position is the settled state: a step stopped at a moment runs to its end.
    if (cursor >= this.stepsDone) {
      if (this.unsettled) await this.rebuild(settled(this.actions));
      while (this.stepsDone < cursor) await this.next();
      return;
    }
    await this.rebuild(settled(this.actions.slice(0, historyIndexOfCursor(this.actions, cursor))));
  }

  /** Replaces the history with `actions` and rebuilds the state from them (watchdog recovery). */
  async replay(actions: readonly PlayerAction[]): Promise<void> {
    await this.rebuild(actions);
  }

  /** A step of a script item stopped before is recorded (and run) as cancelled. */
  private asRecorded(action: PlayerAction): PlayerAction {
    if (action.type !== 'step' || action.cancelled || !this.cancelledSteps.has(this.stepsDone)) return action;
    return { type: 'step', cancelled: true };
  }

  /** Releases the engine (and PGlite when the player started it). */
  async close(): Promise<void> {
    this.engine = null;
    if (this.ownsExecutor) await this.ex.close();
  }

  private get eng(): Engine {
    if (!this.engine) throw new Error('the player is closed');
    return this.engine;
  }

  private check(action: PlayerAction): void {
    switch (action.type) {
      case 'step':
        if (this.stepsDone >= this.steps.length) throw new ActionRefused('The script is finished.');
        return;
      case 'adhoc': {
        if (!this.sessions.includes(action.session)) throw new ActionRefused(`There is no session "${action.session}".`);
        const status = this.eng.statusOf(action.session);
        if (status === 'waiting' || status === 'sleeping')
          throw new ActionRefused(`Session ${action.session} is busy: its statement has not finished yet.`);
        if (action.sql.trim() === '') throw new ActionRefused('The statement is empty.');
        return;
      }
      case 'advance':
        if (!Number.isFinite(action.ms) || action.ms <= 0) throw new ActionRefused('Time can only move forward.');
        return;
      case 'timer':
        if (this.eng.nextTimerAt() === null) throw new ActionRefused('No timer is pending.');
        return;
    }
  }

  private async apply(action: PlayerAction): Promise<void> {
    const e = this.eng;
    // A step stopped at a moment finishes first, so every later action sees what it would have.
    if (this.unsettled) {
      const { skip } = this.unsettled;
      this.unsettled = null;
      await this.letTimePass(skip);
    }
    switch (action.type) {
      case 'step': {
        const step = this.steps[this.stepsDone];
        // isolationtester: a session runs one step at a time, so wait for the earlier one.
        await this.waitUntilFree(step.session);
        if (action.cancelled) this.cancelledSteps.add(this.stepsDone);
        await e.submit(step.session, step.sql, step.name, { cancelled: !!action.cancelled });
        this.stepsDone++;
        await this.letTimePass(step.star ? step.session : null, action.untilMs);
        return;
      }
      case 'adhoc':
        await e.submit(action.session, action.sql, 'ad hoc', { cancelled: !!action.cancelled });
        await this.letTimePass(null);
        return;
      case 'advance':
        await e.advance(action.ms);
        return;
      case 'timer':
        await e.advanceToNextTimer();
        return;
    }
  }

  /** poll(wait=true): advance timers until the session's step is done; cancel it past max_step_wait. */
  private async waitUntilFree(session: string): Promise<void> {
    const e = this.eng;
    const start = e.now();
    while (isBusy(e, session)) {
      const next = e.nextTimerAt();
      if (next === null || next - start > MAX_STEP_WAIT_MS) await e.cancel(session);
      else await e.advanceToNextTimer();
    }
  }

  /**
   * poll(wait=false) over every running step: time passes only while some step is neither done
   * nor blocked on a lock (it sleeps on the virtual clock). `skip` is a `(*)` step not waited for.
   */
  private async letTimePass(skip: string | null, untilMs?: number): Promise<void> {
    const e = this.eng;
    const start = e.now();
    for (;;) {
      const sleeper = this.sessions.find((s) => s !== skip && e.statusOf(s) === 'sleeping');
      if (sleeper === undefined) return;
      const next = e.nextTimerAt();
      if (untilMs !== undefined && (next === null || next > untilMs)) {
        if (untilMs > e.now()) await e.advance(untilMs - e.now());
        this.unsettled = { skip };
        return;
      }
      if (next === null || next - start > MAX_STEP_WAIT_MS) await e.cancel(sleeper);
      else await e.advanceToNextTimer();
    }
  }

  /** A fresh engine over the reset database, the spec's setup, then `actions` in order. */
  private async rebuild(actions: readonly PlayerAction[]): Promise<void> {
    this.engine = null;
    await this.ex.reset();
    const e = await Engine.create({ sessions: this.sessions, executor: this.ex });
    for (const sql of this.spec.setup) {
      const r = await e.setup(sql);
      if (r.error) throw new ScenarioSetupError(`setup failed: ${r.error.severity}:  ${r.error.message}`);
    }
    for (const s of this.spec.sessions) {
      if (s.setup === undefined) continue;
      await e.submit(s.name, s.setup, `${s.name} setup`);
      this.engine = e;
      await this.waitUntilFree(s.name);
      const r = e.takeResult(s.name);
      if (r?.error) throw new ScenarioSetupError(`setup of session ${s.name} failed: ${r.error.severity}:  ${r.error.message}`);
    }
    this.engine = e;
    this.unsettled = null;
    const done = e.snapshot();
    this.setupMark = { events: done.events.length, steps: new Map(done.sessions.map((s) => [s.name, s.history?.length ?? 0])) };
    this.actions = [];
    this.stepsDone = 0;
    await e.refreshTables();
    for (const given of actions) {
      const a = this.asRecorded(given);
      this.check(a);
      await this.apply(a);
      this.actions.push(a);
    }
    if (actions.length > 0) await e.refreshTables();
  }
}

/**
 * The snapshot without what the spec's setup did: its events and the sessions' setup steps (and
 * their `last` result) are the scenario's preparation, not something the learner ran.
 */
export function withoutSetup(snap: EngineSnapshot, mark: { events: number; steps: ReadonlyMap<string, number> }): EngineSnapshot {
  return {
    ...snap,
    events: snap.events.slice(mark.events),
    sessions: snap.sessions.map((s) => {
      const history = (s.history ?? []).slice(mark.steps.get(s.name) ?? 0);
      return { ...s, history, last: history.length > 0 ? s.last : null };
    }),
  };
}

/** The actions with every step run to its end (no `untilMs` moments): the same states at each cursor. */
export function settled(actions: readonly PlayerAction[]): PlayerAction[] {
  return actions.map((a) =>
    a.type === 'step' && a.untilMs !== undefined ? { type: 'step', ...(a.cancelled ? { cancelled: true } : {}) } : a,
  );
}

/** The length of the history prefix that ends just before the (cursor+1)-th step action. */
export function historyIndexOfCursor(actions: readonly PlayerAction[], cursor: number): number {
  let steps = 0;
  for (let i = 0; i < actions.length; i++) {
    if (actions[i].type !== 'step') continue;
    if (steps === cursor) return i;
    steps++;
  }
  return actions.length;
}

function isBusy(e: Engine, session: string): boolean {
  const st = e.statusOf(session);
  return st === 'waiting' || st === 'sleeping';
}

/**
 * The worker's request handler, independent of the Worker API (testable in Node): one PGlite,
 * one Player at a time, requests handled strictly one after another.
 */
import { loadParser, PgliteExecutor } from '../engine';
import { ActionRefused, Player, ScenarioSetupError, type PlayerAction, type PlayerFrame } from '../sim/player';
import { lessonToSpec, parseLesson } from '../scenario/lesson';
import { parseSpec } from '../scenario/spec';
import type { Spec } from '../scenario/types';
import type { Command, Request, Response, ScenarioSource, Timing } from './protocol';
import { SimDriver } from '../sim/simDriver';
import { exploreBatch, invariantHolds, type ExploreBatch } from '../scenario/explore';
import { measureStatementLocks } from '../engine/pg/statementLocks';
import { parseSync } from 'libpg-query';
import { syntaxProblem } from './sqlcheck';
import type { LocksAnswer } from './protocol';

/**
 * A lesson's next script step, done while the Worker had nothing to do: its answer, and the
 * history to go back to when the next request is not that step.
 */
interface Ahead {
  player: Player;
  frame: PlayerFrame;
  history: PlayerAction[];
  before: PlayerAction[];
  workMs: number;
}

/** Requests that rebuild the player from a prefix of its history (or replace it), so a step done ahead needs no undo first. */
const REBUILDS: ReadonlySet<Command['type']> = new Set(['open', 'replay', 'goto', 'reset']);

/**
 * How many script steps run ahead. Two: a learner who clicks Next as soon as a step is drawn
 * finds the next one done even after a heavy step (a deadlock check, a timer), because that step
 * started one click earlier.
 */
const AHEAD_DEPTH = 2;

/**
 * Ends the current task and continues in a new one. A message that arrived meanwhile is handled
 * in between; a promise continuation would not let it in, and a nested setTimeout is clamped to 4 ms.
 */
function yieldTask(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/** Handles protocol requests; `handle` never throws. */
export class Host {
  private readonly boot: Promise<PgliteExecutor>;
  private bootMs: number | undefined;
  private player: Player | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private broken: string | null = null;
  /** The open scenario is a lesson (curated steps): only then is its next step done ahead. */
  private lesson = false;
  /** Steps done ahead, in order: the first answers the next Next. */
  private aheads: Ahead[] = [];
  /** Requests accepted and not yet answered: while any waits, a Next must wait its turn too. */
  private waiting = 0;
  private readonly lookAhead: boolean;
  private readonly depth: number;

  /**
   * Starts PGlite and the SQL parser at once, so a scenario opens fast. `lookAhead` (default on):
   * after answering with a lesson's state, the next script steps (`depth` of them) run while the
   * learner reads, and a following Next is answered from them (the engine is deterministic: the same history gives the
   * same frame); any other request first goes back to the history it was sent for.
   */
  constructor(
    createExecutor: () => Promise<PgliteExecutor> = () => PgliteExecutor.create(),
    opts: { lookAhead?: boolean; depth?: number } = {},
  ) {
    const t0 = performance.now();
    this.lookAhead = opts.lookAhead ?? true;
    this.depth = opts.depth ?? AHEAD_DEPTH;
    this.boot = Promise.all([createExecutor(), loadParser()]).then(([ex]) => {
      this.bootMs = performance.now() - t0;
      return ex;
    });
    this.boot.catch(() => undefined);
  }

  /** Answers one request after the ones before it. */
  handle(req: Request): Promise<Response> {
    const quick = this.answerAhead(req);
    if (quick) return Promise.resolve(quick);
    this.waiting++;
    const job = this.queue.then(() => this.answer(req)).finally(() => this.waiting--);
    // The step ahead starts in a later task, so the Worker posts this answer first.
    this.queue = job.then((r) =>
      this.wantsAhead(req, r) ? new Promise((ok) => setTimeout(ok, 0)).then(() => this.runAhead()) : undefined,
    );
    return job;
  }

  /**
   * A Next that finds its step done ahead and no earlier request waiting is answered at once,
   * even while the step after it is still running ahead (it is suspended between round trips).
   */
  private answerAhead(req: Request): Response | null {
    const a = this.aheads[0];
    if (!a || this.waiting || this.broken || a.player !== this.player || req.type !== 'action' || !isPlainStep(req.action)) return null;
    this.aheads.shift();
    if (goesOn(a.frame)) this.queue = this.queue.then(() => this.runAhead());
    return { id: req.id, ok: true, state: a.frame, history: a.history, timing: this.timing(0, { workMs: a.workMs }) };
  }

  private timing(handleMs: number, extra: Partial<Timing> = {}): Timing {
    return { handleMs, ...(this.bootMs !== undefined ? { bootMs: this.bootMs } : {}), ...extra };
  }

  /** After a lesson's navigation or plain step answered without error, mid-step or at the end: the next step is worth doing ahead. */
  private wantsAhead(req: Request, r: Response): boolean {
    if (!this.lookAhead || !this.lesson || !this.player || !r.ok || !('state' in r)) return false;
    if (!(REBUILDS.has(req.type) || (req.type === 'action' && isPlainStep(req.action)))) return false;
    const s = r.state;
    return s.error === undefined && !s.midStep && s.cursor < s.script.length;
  }

  /**
   * Runs the next script step now and keeps its answer, then the one after it, up to `depth`
   * (never throws: a failed step is simply not kept, and the queue of requests goes on).
   */
  private async runAhead(): Promise<void> {
    try {
      await this.stepAhead();
    } catch {
      // Only the engine's own failure gets here; the next real request meets it and says so.
    }
  }

  private async stepAhead(): Promise<void> {
    const p = this.player;
    const last = this.aheads.at(-1);
    if (!p || this.broken || this.aheads.length >= this.depth) return;
    if (last && (last.player !== p || !goesOn(last.frame))) return;
    const before = [...p.history];
    const t0 = performance.now();
    const ex = await this.boot;
    ex.beforeRun = yieldTask;
    try {
      await p.perform({ type: 'step' });
    } catch {
      // Refused or failed: perform() left the state as it was; the real request will say why.
      return;
    } finally {
      ex.beforeRun = null;
    }
    // A copy: nothing the engine does later may change the answer kept for the next request.
    const frame = structuredClone(p.view());
    this.aheads.push({ player: p, frame, history: [...p.history], before, workMs: performance.now() - t0 });
    if (this.aheads.length < this.depth && goesOn(frame)) this.queue = this.queue.then(() => this.runAhead());
  }

  private async answer(req: Request): Promise<Response> {
    const t0 = performance.now();
    const timing = (extra: Partial<Timing> = {}): Timing => this.timing(performance.now() - t0, extra);
    if (this.broken) return { id: req.id, ok: false, kind: 'fatal', message: this.broken };
    try {
      const a = this.aheads[0];
      if (a && req.type !== 'ping') {
        if (a.player === this.player && req.type === 'action' && isPlainStep(req.action)) {
          this.aheads.shift();
          return { id: req.id, ok: true, state: a.frame, history: a.history, timing: timing({ workMs: a.workMs }) };
        }
        this.aheads = [];
        // Back to the history the learner sees (the player stands after the last step done ahead).
        if (a.player === this.player && !REBUILDS.has(req.type)) await a.player.replay(a.before);
      }
      if (req.type === 'ping') {
        await this.boot;
        return { id: req.id, ok: true, pong: true, timing: timing() };
      }
      if (req.type === 'explore') return { id: req.id, ok: true, explored: await this.explore(req), timing: timing() };
      if (req.type === 'locks') return { id: req.id, ok: true, locks: await this.locks(req), timing: timing() };
      const error = await this.run(req);
      if (!this.player) return { id: req.id, ok: false, kind: 'no-scenario', message: 'No lesson or spec is open.' };
      return { id: req.id, ok: true, state: this.player.view(error), history: [...this.player.history], timing: timing() };
    } catch (e) {
      if (e instanceof InvalidSource || e instanceof ScenarioSetupError)
        return { id: req.id, ok: false, kind: 'invalid-source', message: e.message };
      // The player could not even rebuild itself: this PGlite is unusable.
      this.broken = `The engine failed: ${messageOf(e)}`;
      return { id: req.id, ok: false, kind: 'fatal', message: this.broken };
    }
  }

  /** Runs a batch of permutations on the shared PGlite, then rebuilds the open player (the database was reset). */
  private async explore(cmd: Extract<Command, { type: 'explore' }>): Promise<ExploreBatch> {
    const spec = compile({ kind: 'spec', text: cmd.text });
    // Orders asked one at a time restore the setup's tables while nothing else ran in between.
    const driver = new SimDriver(await this.boot, { reuseSetup: true });
    const probe = async () => {
      const e = driver.engine!;
      await e.refreshTables();
      return e.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
    };
    const check = async (sql: string) => {
      const r = await driver.engine!.setup(sql, { refreshCatalog: false });
      return !r.error && invariantHolds(r.results.at(-1)?.rows);
    };
    try {
      return await exploreBatch(spec, driver, probe, cmd.from, cmd.count, {
        ...(cmd.withRuns ? { withRuns: true } : {}),
        ...(cmd.stopAtStall ? { stopAtStall: true } : {}),
        ...(cmd.invariant !== undefined ? { invariant: { sql: cmd.invariant, check } } : {}),
      });
    } catch (e) {
      throw new InvalidSource(messageOf(e));
    } finally {
      if (this.player) await this.player.replay([...this.player.history]);
    }
  }

  /** Measures what a statement locks on a fresh database, then rebuilds the open player (the database was reset). */
  private async locks(cmd: Extract<Command, { type: 'locks' }>): Promise<LocksAnswer> {
    const ex = await this.boot;
    for (const [where, text] of [
      ['schema', cmd.schema],
      ['statement', cmd.sql],
    ] as const) {
      const problem = syntaxProblem(text);
      if (problem) return { kind: 'syntax', where, problem };
    }
    const statements = (parseSync(cmd.sql) as { stmts?: { stmt: Record<string, unknown> }[] }).stmts?.map((s) => s.stmt) ?? [];
    if (!statements.length) return { kind: 'empty' };
    // The statement runs inside the page's own block: BEGIN, COMMIT or a savepoint would break it.
    if (statements.some((s) => 'TransactionStmt' in s)) return { kind: 'transaction-control' };
    try {
      return { kind: 'result', statements, result: await measureStatementLocks(ex, cmd.schema, cmd.sql) };
    } finally {
      if (this.player) await this.player.replay([...this.player.history]);
    }
  }

  /** Runs a command; returns the learner-facing message when the command was refused or failed. */
  private async run(cmd: Command): Promise<string | undefined> {
    if (cmd.type === 'open') {
      const spec = compile(cmd.source);
      const executor = await this.boot;
      this.player = null;
      this.lesson = cmd.source.kind === 'lesson';
      this.player = await Player.create(spec, {
        executor,
        ...(cmd.source.kind === 'spec' && cmd.source.permutation !== undefined ? { permutation: cmd.source.permutation } : {}),
        ...(cmd.cancelledSteps?.length ? { cancelledSteps: cmd.cancelledSteps } : {}),
      });
      return undefined;
    }
    const p = this.player;
    if (!p) return undefined;
    try {
      switch (cmd.type) {
        case 'action':
          await p.perform(cmd.action);
          return undefined;
        case 'goto':
          await p.gotoCursor(cmd.cursor, cmd.atMs);
          return undefined;
        case 'reset':
          await p.goto(0);
          return undefined;
        case 'replay':
          await p.replay(cmd.history);
          return undefined;
      }
    } catch (e) {
      if (e instanceof ActionRefused) return e.message;
      // perform() already rebuilt the state without the failed action.
      return `The engine failed on this action and the scenario was rebuilt without it: ${messageOf(e)}`;
    }
  }
}

/** A frame after which the script has a next step to run ahead. */
function goesOn(frame: PlayerFrame): boolean {
  return !frame.midStep && frame.cursor < frame.script.length;
}

/** A Next: a step with no moment to stop at and not cancelled (what the look-ahead runs). */
function isPlainStep(a: PlayerAction): boolean {
  return a.type === 'step' && a.untilMs === undefined && !a.cancelled;
}

class InvalidSource extends Error {}

/** Lesson YAML or spec text → Spec; a problem is an InvalidSource. */
function compile(source: ScenarioSource): Spec {
  try {
    return source.kind === 'lesson' ? lessonToSpec(parseLesson(source.yaml)) : parseSpec(source.text);
  } catch (e) {
    throw new InvalidSource(messageOf(e));
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

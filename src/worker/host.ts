/**
 * The worker's request handler, independent of the Worker API (testable in Node): one PGlite,
 * one Player at a time, requests handled strictly one after another.
 */
import { loadParser, PgliteExecutor } from '../engine';
import { ActionRefused, Player, ScenarioSetupError } from '../sim/player';
import { lessonToSpec, parseLesson } from '../scenario/lesson';
import { parseSpec } from '../scenario/spec';
import type { Spec } from '../scenario/types';
import type { Command, Request, Response, ScenarioSource } from './protocol';
import { SimDriver } from '../sim/simDriver';
import { exploreBatch, invariantHolds, type ExploreBatch } from '../scenario/explore';
import { measureStatementLocks } from '../engine/pg/statementLocks';
import { parseSync } from 'libpg-query';
import { syntaxProblem } from './sqlcheck';
import type { LocksAnswer } from './protocol';

/** Handles protocol requests; `handle` never throws. */
export class Host {
  private readonly boot: Promise<PgliteExecutor>;
  private bootMs: number | undefined;
  private player: Player | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private broken: string | null = null;

  /** Starts PGlite and the SQL parser at once, so a scenario opens fast. */
  constructor(createExecutor: () => Promise<PgliteExecutor> = () => PgliteExecutor.create()) {
    const t0 = performance.now();
    this.boot = Promise.all([createExecutor(), loadParser()]).then(([ex]) => {
      this.bootMs = performance.now() - t0;
      return ex;
    });
    this.boot.catch(() => undefined);
  }

  /** Answers one request after the ones before it. */
  handle(req: Request): Promise<Response> {
    const job = this.queue.then(() => this.answer(req));
    this.queue = job;
    return job;
  }

  private async answer(req: Request): Promise<Response> {
    const t0 = performance.now();
    const timing = () => ({ handleMs: performance.now() - t0, ...(this.bootMs !== undefined ? { bootMs: this.bootMs } : {}) });
    if (this.broken) return { id: req.id, ok: false, kind: 'fatal', message: this.broken };
    try {
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
    const driver = new SimDriver(await this.boot);
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

/**
 * The simulator as an isolationtester SessionDriver: the same algorithm that drives real
 * PostgreSQL drives the engine, and time passes only on the virtual clock.
 */
import { Engine, onlyDrops, PgliteExecutor, restorableSetup, type SetupState } from '../engine';
import type { ApproximationNote, PollResult, SessionDriver, SetupOutput, Spec, StepResult } from '../scenario/types';
import { normalizeDetailText } from '../scenario/normalize';

/** isolationtester's max_step_wait: a step still blocked after this long is canceled. */
const MAX_STEP_WAIT_MS = 300_000;
/** isolationtester's lock-wait check interval (try_complete_step's select() timeout). */
const LOCK_WAIT_CHECK_MS = 10;

/** What a SimDriver with `reuseSetup` keeps of a setup to restore it (PgliteExecutor.restorePoint). */
interface SetupTemplate {
  /** The TRUNCATE of the setup's tables and its data statements. */
  sql: string;
  /** What the engine read of the catalog after the setup (and since, while nothing but rows changed). */
  state: SetupState;
  /** What the setup blocks printed. */
  outputs: SetupOutput[];
}

/**
 * The key of a spec whose setup the next permutation may restore instead of running again, with
 * the restore's data statements per setup block; null when it may not. Its setup must be tables,
 * indexes and data only (restorableSetup), its teardown drops only (skipping it leaves what
 * reset() would drop anyway), and no SQL of it may read the statistics views or functions (a
 * TRUNCATE keeps a table's cumulative counters, which a dropped and re-created one starts afresh)
 * or pg_class (a TOAST index's page count is not put back, see RELATION_STATS_SQL).
 */
function restoreKey(spec: Spec): { key: string; dml: string[][] } | null {
  if (!keys.has(spec)) keys.set(spec, restoreKeyOf(spec));
  return keys.get(spec)!;
}
const keys = new WeakMap<Spec, { key: string; dml: string[][] } | null>();

function restoreKeyOf(spec: Spec): { key: string; dml: string[][] } | null {
  if (spec.teardown !== undefined && !onlyDrops(spec.teardown)) return null;
  const all = [
    ...spec.setup,
    spec.teardown ?? '',
    ...spec.sessions.flatMap((s) => [s.setup ?? '', s.teardown ?? '', ...s.steps.map((st) => st.sql)]),
  ];
  if (all.some((t) => /pg_stat|pg_class/i.test(t))) return null;
  const dml = restorableSetup(spec.setup);
  return dml && { key: JSON.stringify([spec.setup, spec.teardown ?? null]), dml };
}

/**
 * The restore of a setup: one TRUNCATE of every table it created (fresh files for each table
 * and index, so rows land where the setup first put them), then each block's data statements,
 * a transaction per block as when the blocks ran.
 */
function restoreSql(state: SetupState, dml: string[][], stats: (string | null)[][]): string {
  // Only schema public's: the setup made its tables there, and a schema an earlier scenario left
  // keeps its rows, as reset() keeps them.
  const tables = state.catalog
    .map((c) => c.sqlName ?? '')
    .filter((q) => q.startsWith('public.'))
    .join(', ');
  const blocks = dml.filter((b) => b.length);
  const data =
    blocks.length <= 1
      ? [`TRUNCATE ${tables}`, ...(blocks[0] ?? [])]
      : blocks.map((b, i) => ['BEGIN', ...(i === 0 ? [`TRUNCATE ${tables}`] : []), ...b, 'COMMIT'].join(';\n'));
  // TRUNCATE leaves every relation at relpages 0 and reltuples -1 ("never counted"), where
  // CREATE INDEX counted its empty index (1 page, 0 tuples); the planner reads a partial index's
  // figures, so the setup's own are put back (pg_restore_relation_stats writes them in place).
  const lit = (v: string | null) => `'${String(v).replace(/'/g, "''")}'`;
  const restored = stats.map(
    ([nsp, rel, pages, tuples, visible, frozen]) =>
      `SELECT pg_catalog.pg_restore_relation_stats('schemaname', ${lit(nsp)}, 'relname', ${lit(rel)}, 'relpages', ${Number(pages)}::integer, ` +
      `'reltuples', ${Number(tuples)}::real, 'relallvisible', ${Number(visible)}::integer, 'relallfrozen', ${Number(frozen)}::integer)`,
  );
  return [...data, ...restored].join(';\n');
}

/**
 * The statistics pg_class keeps for the user's tables and indexes. Not their TOAST tables' (the
 * function refuses those): no plan reads them, and restoreKey keeps SQL that names pg_class out.
 */
const RELATION_STATS_SQL = `SELECT n.nspname, c.relname, c.relpages, c.reltuples, c.relallvisible, c.relallfrozen
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'i', 'p', 'I') AND n.nspname = 'public' ORDER BY c.oid`;

/** Drives the engine for one spec at a time; reuses one PGlite across permutations. */
export class SimDriver implements SessionDriver {
  engine: Engine | null = null;
  private ex: PgliteExecutor | null = null;
  private relNames = new Map<string, string>();
  /** The setup of the running permutation, when `reuseSetup` may restore it for the next one. */
  private template: SetupTemplate | null = null;
  /** Per session: how many of the running step's notices a 'blocked' poll already handed out. */
  private noticesReported = new Map<string, number>();

  /**
   * `executor`: reuse this PGlite (the worker's); otherwise one is started on first use.
   * `reuseSetup` (the explorer's): when a permutation ends with nothing but row writes since the
   * setup, skip the spec's teardown and let the next permutation of the same setup restore the
   * tables (a TRUNCATE and the setup's data statements) instead of dropping and creating them.
   * The teardown's output is then not reported; the explorer reads none.
   */
  constructor(
    executor?: PgliteExecutor,
    private readonly opts: { reuseSetup?: boolean } = {},
  ) {
    this.ex = executor ?? null;
  }

  /** Runs the spec's setup blocks, then each session's setup. */
  async begin(spec: Spec): Promise<SetupOutput[]> {
    this.ex ??= await PgliteExecutor.create();
    const reuse = this.opts.reuseSetup ? restoreKey(spec) : null;
    const point = this.ex.restorePoint;
    this.ex.restorePoint = null;
    const template = reuse && point?.key === reuse.key && point.runs === this.ex.runCount ? (point.template as SetupTemplate) : null;
    const restored = template !== null && (await this.ex.restore(template.sql));
    if (!restored) await this.ex.reset();
    this.engine = await Engine.create({ sessions: spec.sessions.map((s) => s.name), executor: this.ex });
    const outputs: SetupOutput[] = [];
    if (restored) {
      this.engine.adoptSetup(template.state);
      outputs.push(...template.outputs);
      this.template = template;
    } else {
      for (const sql of spec.setup) {
        const r = await this.engine.setup(sql);
        if (r.error) throw new Error(`setup failed: ${r.error.severity}:  ${r.error.message}`);
        outputs.push({ result: { results: r.results, notices: [] } });
      }
      this.engine.setupDone();
      const state = this.engine.setupState();
      // A sequence would need its own restart, and a setup that made none lists no tables.
      this.template =
        reuse && !state.sequences.length && state.catalog.some((c) => c.sqlName?.startsWith('public.'))
          ? { sql: restoreSql(state, reuse.dml, await this.ex.must(RELATION_STATS_SQL)), state, outputs: [...outputs] }
          : null;
    }
    for (const s of spec.sessions) {
      if (s.setup === undefined) continue;
      await this.engine.submit(s.name, s.setup, `${s.name} setup`);
      const result = await this.settle(s.name);
      if (result.error) throw new Error(`setup of session ${s.name} failed: ${result.error.severity}:  ${result.error.message}`);
      outputs.push({ session: s.name, result });
    }
    this.relNames = await this.engine.relationNames();
    return outputs;
  }

  /** Sends a step; the engine runs it until it completes, waits or sleeps. */
  async send(session: string, sql: string): Promise<void> {
    this.noticesReported.delete(session);
    await this.engine!.submit(session, sql, sql);
    this.relNames = await this.engine!.relationNames();
  }

  /** Lets virtual time pass until the step is done (or, without `wait`, blocked on a lock). */
  async poll(session: string, wait: boolean): Promise<PollResult> {
    const e = this.engine!;
    const start = e.now();
    for (;;) {
      const st = e.statusOf(session);
      if (st === 'done' || st === 'idle') {
        this.noticesReported.delete(session);
        return { status: 'done', result: e.takeResult(session) ?? { results: [], notices: [] } };
      }
      if (st === 'waiting' && !wait) {
        // isolationtester checks a step for a lock wait when its 10 ms select() times out with no
        // result: that much time passes first, and a timer due by the check (a victim's
        // deadlock_timeout, and the release it causes) finishes the step or another one meanwhile.
        if (e.now() < start + LOCK_WAIT_CHECK_MS) {
          await e.advance(start + LOCK_WAIT_CHECK_MS - e.now());
          continue;
        }
        // The notices the step raised before it blocked reach the client now, as PostgreSQL sends them.
        const fresh = e.stepNotices(session).slice(this.noticesReported.get(session) ?? 0);
        this.noticesReported.set(session, (this.noticesReported.get(session) ?? 0) + fresh.length);
        return fresh.length ? { status: 'blocked', notices: fresh } : { status: 'blocked' };
      }
      const next = e.nextTimerAt();
      if (next === null || next - start > MAX_STEP_WAIT_MS) {
        // Nothing will ever wake it: isolationtester gives up after max_step_wait and cancels.
        await e.cancel(session);
        continue;
      }
      await e.advanceToNextTimer();
    }
  }

  private async settle(session: string): Promise<StepResult> {
    const r = await this.poll(session, true);
    return r.status === 'done' ? r.result : { results: [], notices: [] };
  }

  /** Process ids → session names, OIDs → names, xids masked. */
  normalizeDetail(detail: string): string {
    return normalizeDetailText(detail, this.engine?.pidNames() ?? new Map(), this.relNames);
  }

  /** The engine's server log for the current permutation (a fresh engine per begin()). */
  serverLog(): string[] {
    return this.engine?.serverLogLines() ?? [];
  }

  /** The approximation notes the engine said in this permutation (a fresh engine per begin()). */
  approximations(): ApproximationNote[] {
    return (this.engine?.snapshot().events ?? []).flatMap((e) =>
      e.type === 'approximation' ? [{ session: e.session, topic: e.topic, message: e.message }] : [],
    );
  }

  /** Runs teardowns; never throws on SQL errors. */
  async end(spec: Spec): Promise<SetupOutput[]> {
    const outputs: SetupOutput[] = [];
    const e = this.engine!;
    for (const s of spec.sessions) if (e.statusOf(s.name) !== 'idle') await this.settle(s.name).catch(() => undefined);
    for (const s of spec.sessions) {
      if (s.teardown === undefined) continue;
      await e.submit(s.name, s.teardown, `${s.name} teardown`);
      outputs.push({ session: s.name, result: await this.settle(s.name) });
    }
    const template = this.template;
    this.template = null;
    if (template && e.onlyRowsWritten()) {
      // The catalog is the setup's (nothing but rows changed): the next begin() of this setup may
      // restore the tables, and knows what this engine read of the catalog since (its functions).
      const key = this.opts.reuseSetup ? restoreKey(spec)?.key : undefined;
      if (key) {
        this.ex!.restorePoint = { key, runs: this.ex!.runCount, template: { ...template, state: e.setupState() } };
        return outputs;
      }
    }
    if (spec.teardown !== undefined) {
      const r = await e.setup(spec.teardown, { refreshCatalog: false });
      outputs.push({ result: { results: r.results, notices: [], ...(r.error ? { error: r.error } : {}) } });
    }
    return outputs;
  }

  /** Releases PGlite. */
  async close(): Promise<void> {
    await this.ex?.close();
    this.ex = null;
  }
}

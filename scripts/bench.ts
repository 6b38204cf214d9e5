/**
 * `npm run bench [-- --json]`: engine latency against its budgets, measured side by side in one
 * run with performance.now() (the only place the project measures wall time).
 *  - stepMedianMs / stepP95Ms: one simulator step = `send` + the poll that follows it, over every
 *    permutation of the conformance corpus (a timing wrapper around SimDriver);
 *  - rawStatementMedianMs: the same steps' SQL run once each, raw, on one PGlite instance;
 *  - ratio = stepMedianMs / rawStatementMedianMs (budget: ≤ 10);
 *  - conformanceCorpusMs / realPgCorpusMs: the whole corpus on the simulator and on an embedded
 *    real PostgreSQL 18 (budget: the simulator ≥ 5× faster). Start-up is reported apart.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runSpec } from '../src/scenario/isolation';
import { SimDriver } from '../src/engine/simDriver';
import { PgliteExecutor } from '../src/engine/executor/pglite';
import { PgDriver } from '../src/oracle/pgDriver';
import { startPostgres } from '../src/oracle/server';
import { loadScenario } from '../src/cli/load';
import type { PollResult, SessionDriver, SetupOutput, Spec } from '../src/scenario/types';

const CORPUS = join(new URL('.', import.meta.url).pathname, '..', 'tests', 'conformance');

/** Times each step as `send` plus the first poll after it, around another driver. */
class TimingDriver implements SessionDriver {
  readonly stepMs: number[] = [];
  private pending = new Map<string, number>();
  constructor(private readonly inner: SessionDriver) {}
  begin(spec: Spec): Promise<void | SetupOutput[]> {
    return this.inner.begin(spec);
  }
  async send(session: string, sql: string): Promise<void> {
    const t0 = performance.now();
    await this.inner.send(session, sql);
    this.pending.set(session, performance.now() - t0);
  }
  async poll(session: string, wait: boolean): Promise<PollResult> {
    const t0 = performance.now();
    const r = await this.inner.poll(session, wait);
    const sent = this.pending.get(session);
    if (sent !== undefined) {
      this.stepMs.push(sent + performance.now() - t0);
      this.pending.delete(session);
    }
    return r;
  }
  normalizeDetail(detail: string): string {
    return this.inner.normalizeDetail(detail);
  }
  end(spec: Spec): Promise<void | SetupOutput[]> {
    return this.inner.end(spec);
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
}

/** Plays every spec (all permutations) on a driver; returns wall time and failures. */
async function playCorpus(specs: { file: string; spec: Spec }[], driver: SessionDriver): Promise<{ ms: number; failures: string[] }> {
  const failures: string[] = [];
  const t0 = performance.now();
  for (const { file, spec } of specs) {
    try {
      await runSpec(spec, driver);
    } catch (e) {
      failures.push(`${file}: ${(e as Error).message}`);
    }
  }
  return { ms: performance.now() - t0, failures };
}

/** Each step's SQL once, raw on one PGlite, after the spec's setup; errors ignored (untimed ROLLBACK). */
async function rawStatements(specs: { spec: Spec }[]): Promise<{ ms: number[]; startupMs: number }> {
  const t0 = performance.now();
  const ex = await PgliteExecutor.create();
  const startupMs = performance.now() - t0;
  const ms: number[] = [];
  try {
    for (const { spec } of specs) {
      await ex.run('ROLLBACK');
      await ex.run('SELECT pg_catalog.pg_advisory_unlock_all(); DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; RESET ALL');
      for (const sql of spec.setup) await ex.run(sql);
      for (const session of spec.sessions) {
        if (session.setup) await ex.run(session.setup);
        for (const step of session.steps) {
          if (/pg_sleep/i.test(step.sql)) continue; // blocks the instance for real; the engine never runs it
          const s0 = performance.now();
          const r = await ex.run(step.sql);
          ms.push(performance.now() - s0);
          if (r.error) await ex.run('ROLLBACK');
        }
        await ex.run('ROLLBACK');
        await ex.run('SELECT pg_catalog.pg_advisory_unlock_all()');
      }
    }
  } finally {
    await ex.close();
  }
  return { ms, startupMs };
}

/** Runs every measurement and returns the figures. */
export async function bench(): Promise<Record<string, number | string[]>> {
  const files = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.spec'))
    .sort();
  const specs = await Promise.all(files.map(async (file) => ({ file, spec: await loadScenario(join(CORPUS, file)) })));

  // Simulator: boot PGlite with a first spec (start-up reported apart), then the timed corpus.
  const sim = new SimDriver();
  const s0 = performance.now();
  await runSpec(specs[0].spec, sim).catch(() => undefined);
  const simWarmupMs = performance.now() - s0;
  const timing = new TimingDriver(sim);
  const simRun = await playCorpus(specs, timing);
  await sim.close();

  const raw = await rawStatements(specs);

  const r0 = performance.now();
  const server = await startPostgres();
  const realStartupMs = performance.now() - r0;
  const real = new PgDriver(server.url);
  let realRun: { ms: number; failures: string[] };
  try {
    realRun = await playCorpus(specs, real);
  } finally {
    await real.close();
    await server.stop();
  }

  const stepMedianMs = quantile(timing.stepMs, 0.5);
  const rawStatementMedianMs = quantile(raw.ms, 0.5);
  return {
    specs: specs.length,
    steps: timing.stepMs.length,
    stepMedianMs,
    stepP95Ms: quantile(timing.stepMs, 0.95),
    rawStatements: raw.ms.length,
    rawStatementMedianMs,
    ratio: stepMedianMs / rawStatementMedianMs,
    conformanceCorpusMs: simRun.ms,
    realPgCorpusMs: realRun.ms,
    speedup: realRun.ms / simRun.ms,
    simWarmupMs,
    pgliteStartupMs: raw.startupMs,
    realPgStartupMs: realStartupMs,
    simFailures: simRun.failures,
    realFailures: realRun.failures,
  };
}

async function main(): Promise<void> {
  const r = await bench();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(r, null, 2));
    return;
  }
  const f = (x: unknown): string => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(2)) : String(x));
  const rows: [string, string, string][] = [
    ['corpus', `${f(r.specs)} specs, ${f(r.steps)} simulator steps, ${f(r.rawStatements)} raw statements`, ''],
    ['stepMedianMs', f(r.stepMedianMs), 'simulator step: send + poll'],
    ['stepP95Ms', f(r.stepP95Ms), ''],
    ['rawStatementMedianMs', f(r.rawStatementMedianMs), 'same SQL, raw PGlite'],
    ['ratio', f(r.ratio), `target ≤ 10: ${(r.ratio as number) <= 10 ? 'met' : 'NOT met'}`],
    ['conformanceCorpusMs', f(r.conformanceCorpusMs), 'whole corpus, simulator (warm)'],
    ['realPgCorpusMs', f(r.realPgCorpusMs), 'whole corpus, real PostgreSQL 18'],
    ['speedup', `${f(r.speedup)}×`, `target ≥ 5×: ${(r.speedup as number) >= 5 ? 'met' : 'NOT met'}`],
    ['simWarmupMs', f(r.simWarmupMs), 'PGlite boot + first spec'],
    ['pgliteStartupMs', f(r.pgliteStartupMs), ''],
    ['realPgStartupMs', f(r.realPgStartupMs), 'initdb + start'],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  const v = Math.max(...rows.map((x) => x[1].length));
  for (const [k, val, note] of rows) console.log(`${k.padEnd(w)}  ${val.padStart(v)}  ${note}`);
  for (const e of r.simFailures as string[]) console.log(`simulator failed: ${e}`);
  for (const e of r.realFailures as string[]) console.log(`real PostgreSQL failed: ${e}`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await main();

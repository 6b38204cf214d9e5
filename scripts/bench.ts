/**
 * `npm run bench [-- --json]`: engine latency against its budgets, measured side by side in one
 * run with performance.now() (the only place the project measures wall time).
 *  - stepMedianMs / stepP95Ms: one simulator step = `send` + the poll that follows it, over every
 *    permutation of the conformance corpus (a timing wrapper around SimDriver);
 *  - rawStatementMedianMs: the same steps' SQL run once each, raw, on one PGlite instance;
 *  - ratio = stepMedianMs / rawStatementMedianMs (budget: ≤ 10);
 *  - conformanceCorpusMs / realPgCorpusMs: the whole corpus on the simulator and on an embedded
 *    real PostgreSQL 18 (budget: the simulator ≥ 5× faster). Start-up is reported apart.
 *  - labTxPerSecUnordered / labTxPerSecOrdered: the retry lab (src/retrylab/runner.ts), transfer
 *    workload, 8 workers × 50 transactions on 10 accounts, seed 1: simulated transactions per
 *    wall-clock second of the workers' loop (start-up excluded; budget: ≥ 500 tx/s).
 *    `--lab-only` runs only these.
 *  - explore3x4Ms: the explorer (partial-order reduction, src/scenario/por.ts, on two lanes: worker
 *    threads, one PGlite each, as the lab runs two Workers on two cores or more) over every one of
 *    the 34,650 interleavings of tests/explore/transfer-3x4-{unordered,ordered}.spec, both summed
 *    (budget: ≤ 10 s), with the orders actually run and the summary; explore3x4BruteForceEstimateMs
 *    extrapolates 100 orders of each run one by one. `--explore-only` runs only these.
 * Then the browser figures (./bench-browser.ts): the production build in headless Chromium —
 * browserColdStartMs, browserBareBootMs and their ratio browserColdStartOverBareBoot (≤ 1.25),
 * browserRepeatVisitMs, browserStepMedianMs / browserStepP95Ms (p95 ≤ 16 ms), jsGzipKB and
 * browserExplore3x4Ms (the lab's explorer on the same two scenarios, ≤ 30 s;
 * `--no-browser-explore` skips it). `--no-browser` skips them, `--browser-only` runs only them.
 * `--browser-explore-only` runs browserExplore3x4Ms alone (with `--no-build`, on the existing dist/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSpec } from '../src/scenario/isolation';
import { SimDriver } from '../src/sim/simDriver';
import { PgliteExecutor } from '../src/engine';
import { PgDriver } from '../src/oracle/pgDriver';
import { startPostgres } from '../src/oracle/server';
import { loadScenario } from '../src/cli/load';
import type { PollResult, SessionDriver, SetupOutput, Spec } from '../src/scenario/types';
import { runLab } from '../src/retrylab/runner';
import { parseLabArgs } from '../src/retrylab/args';
import type { LabResult } from '../src/retrylab/types';
import { BROWSER_TARGETS, browserBench, quantile } from './bench-browser';
import { parseSpec } from '../src/scenario/spec';
import { exploreBatch, summarize } from '../src/scenario/explore';
import { exploreReduced, type RunOne } from '../src/scenario/por';
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { LaneRequest } from './explore-lane';
import type { InterleavingOutcome } from '../src/scenario/explore';
import type { PermutationRun } from '../src/scenario/isolation';
import { countAllPermutations } from '../src/scenario/permutations';

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

/** The retry-lab figure's run: the transfer workload as `npm run lab` would run it. */
export const LAB_BENCH = { workers: 8, transactionsPerWorker: 50, accounts: 10, seed: 1, targetTxPerSec: 500 } as const;

function labConfig(strategy: 'unordered' | 'ordered', transactionsPerWorker: number) {
  const b = LAB_BENCH;
  return parseLabArgs(
    [
      '--workload',
      'transfer',
      '--strategy',
      strategy,
      '--workers',
      b.workers,
      '--transactions',
      transactionsPerWorker,
      '--accounts',
      b.accounts,
      '--seed',
      b.seed,
    ].map(String),
  ).config;
}

/** Simulated transactions (committed + given up) per wall-clock second of the workers' loop. */
const txPerSec = (r: LabResult): number => ((r.committed + r.giveUps) * 1000) / r.wallMs;

/**
 * The retry lab's throughput: transfer, unordered and ordered, on one warmed-up PGlite (a short
 * unmeasured run first; `runLab` resets the executor and excludes its own start-up from wallMs).
 */
export async function labBench(): Promise<Record<string, number | boolean>> {
  const ex = await PgliteExecutor.create();
  try {
    await runLab(labConfig('unordered', 5), { executor: ex });
    const unordered = await runLab(labConfig('unordered', LAB_BENCH.transactionsPerWorker), { executor: ex });
    const ordered = await runLab(labConfig('ordered', LAB_BENCH.transactionsPerWorker), { executor: ex });
    return {
      labTransactions: LAB_BENCH.workers * LAB_BENCH.transactionsPerWorker,
      labTxPerSecUnordered: txPerSec(unordered),
      labTxPerSecOrdered: txPerSec(ordered),
      labWallMsUnordered: unordered.wallMs,
      labWallMsOrdered: ordered.wallMs,
      labDeadlocksUnordered: unordered.deadlocks,
      labDeadlocksOrdered: ordered.deadlocks,
      labStatementsUnordered: unordered.statements,
      labStatementsOrdered: ordered.statements,
      labInvariantHolds: unordered.invariant.holds && ordered.invariant.holds,
    };
  } finally {
    await ex.close();
  }
}

/** The explorer's benchmark scenarios: three transfers of four steps each (tests/explore/). */
export const EXPLORE_SPECS = ['transfer-3x4-unordered', 'transfer-3x4-ordered'] as const;
const EXPLORE_TARGET_MS = 10_000;
const BRUTE_SAMPLE = 100;

/** Reads one of EXPLORE_SPECS (every interleaving: the file lists no permutation). */
export function exploreSpec(name: string): Spec {
  return parseSpec(readFileSync(join(CORPUS, '..', 'explore', `${name}.spec`), 'utf8'));
}

/** Lanes the Node explorer runs (worker threads, one PGlite each): one per core, up to two, as the lab's. */
const EXPLORE_LANES = Math.max(1, Math.min(2, availableParallelism()));

/** Worker threads running scripts/explore-lane.ts, booted (one interleaving each) before use. */
async function startLanes(n: number, spec: Spec): Promise<{ runner: (spec: Spec) => RunOne; close: () => Promise<void> }> {
  // A worker thread does not inherit tsx's loader: its entry registers it, then loads the lane.
  const entry = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(new URL('./explore-lane.ts', import.meta.url).href)}); });`;
  const workers = Array.from({ length: n }, () => new Worker(entry, { eval: true }));
  const ask = (w: Worker, req: LaneRequest) =>
    new Promise<Awaited<ReturnType<RunOne>>>((resolve, reject) => {
      const settle = (m: { error?: string; outcome: InterleavingOutcome; run?: PermutationRun }) => {
        w.off('error', fail);
        if (m.error) reject(new Error(m.error));
        else resolve(m);
      };
      const fail = (e: Error) => {
        w.off('message', settle);
        reject(e);
      };
      w.once('message', settle);
      w.once('error', fail);
      w.postMessage(req);
    });
  await Promise.all(workers.map((w) => ask(w, { spec, index: 0 }))); // boots each lane's PGlite
  return {
    runner: (s) => (index, lane) => ask(workers[lane], { spec: s, index }),
    close: async () => {
      await Promise.all(workers.map((w) => new Promise((r) => (w.once('exit', r), w.postMessage('close')))));
    },
  };
}

/**
 * The explorer in Node: every interleaving of each 3×4 scenario with the partial-order reduction
 * (src/scenario/por.ts) on EXPLORE_LANES lanes (worker threads, each booted before the clock
 * starts). Also the summary counts, so a change in what the explorer finds shows in the bench.
 */
export async function exploreBench(): Promise<Record<string, unknown>> {
  const driver = new SimDriver(undefined, { reuseSetup: true });
  const probe = async () => {
    await driver.engine!.refreshTables();
    return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };
  const out: Record<string, unknown> = { explore3x4Lanes: EXPLORE_LANES };
  const lanes = await startLanes(EXPLORE_LANES, exploreSpec(EXPLORE_SPECS[0]));
  try {
    await exploreBatch(exploreSpec(EXPLORE_SPECS[0]), driver, probe, 0, 1); // boots PGlite
    let totalMs = 0;
    let totalCpuMs = 0;
    for (const name of EXPLORE_SPECS) {
      const spec = exploreSpec(name);
      const total = Number(countAllPermutations(spec));
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const r = await exploreReduced(spec, total, lanes.runner(spec), undefined, EXPLORE_LANES);
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      totalMs += ms;
      totalCpuMs += (cpu.user + cpu.system) / 1000;
      out[`explore3x4${name.endsWith('unordered') ? 'Unordered' : 'Ordered'}CpuMs`] = (cpu.user + cpu.system) / 1000;
      const key = name.endsWith('unordered') ? 'Unordered' : 'Ordered';
      const sum = summarize(r.outcomes);
      out[`explore3x4${key}Ms`] = ms;
      out[`explore3x4${key}Orders`] = total;
      out[`explore3x4${key}Ran`] = r.ran;
      out[`explore3x4${key}Covered`] = r.outcomes.length;
      out[`explore3x4${key}Verdicts`] =
        `${sum.clean} clean, ${sum.deadlocks} deadlock (${sum.victims.map((v) => `${v.session} ${v.count}`).join(', ')}), ` +
        `${sum.errors} error, ${sum.stalled} stalled, ${sum.finalStates.length} final data`;
    }
    out.explore3x4Ms = totalMs;
    // The process's CPU time over the same span (PGlite runs in-process, the lanes' threads
    // included): load inflates it far less than wall time.
    out.explore3x4CpuMs = totalCpuMs;
    // Without the reduction: the first BRUTE_SAMPLE orders of each, run one by one, extrapolated to all.
    let bruteMs = 0;
    for (const name of EXPLORE_SPECS) {
      const spec = exploreSpec(name);
      const t0 = performance.now();
      await exploreBatch(spec, driver, probe, 0, BRUTE_SAMPLE);
      bruteMs += ((performance.now() - t0) / BRUTE_SAMPLE) * Number(countAllPermutations(spec));
    }
    out.explore3x4BruteForceEstimateMs = bruteMs;
  } finally {
    await lanes.close();
    await driver.close();
  }
  return out;
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

/** The browser figures, or an `browserError` when Chromium or the build is unavailable. */
async function browserFigures(): Promise<Record<string, unknown>> {
  try {
    const b = await browserBench({ explore: !process.argv.includes('--no-browser-explore') });
    return {
      browserColdStartMs: b.browserColdStartMs,
      browserColdStartRunsMs: b.browserColdStartRunsMs,
      browserBareBootMs: b.browserBareBootMs,
      browserBareBootRunsMs: b.browserBareBootRunsMs,
      browserColdStartOverBareBoot: b.browserColdStartOverBareBoot,
      browserRepeatVisitMs: b.browserRepeatVisitMs,
      ...(b.browserExplore3x4Ms !== undefined
        ? {
            browserExplore3x4Ms: b.browserExplore3x4Ms,
            browserExplore3x4CpuMs: b.browserExplore3x4CpuMs,
            browserExplore3x4Runs: b.browserExplore3x4Runs,
          }
        : {}),
      browserListVisibleMs: b.browserListVisibleMs,
      browserSteps: b.browserSteps,
      browserStepMedianMs: b.browserStepMedianMs,
      browserStepP95Ms: b.browserStepP95Ms,
      browserStepMaxMs: b.browserStepMaxMs,
      browserStepFrameMedianMs: b.browserStepFrameMedianMs,
      browserStepFrameP95Ms: b.browserStepFrameP95Ms,
      jsGzipKB: b.jsGzipKB,
      jsGzipFiles: b.jsFiles.map((f) => `${f.file} ${f.gzipKB.toFixed(1)} KB`),
      chromium: b.chromium,
    };
  } catch (e) {
    return { browserError: e instanceof Error ? e.message : String(e) };
  }
}

async function main(): Promise<void> {
  const argv = process.argv;
  const labOnly = argv.includes('--lab-only');
  const exploreOnly = argv.includes('--explore-only');
  if (argv.includes('--browser-explore-only')) {
    // Only the lab's explorer in Chromium (browserExplore3x4Ms), for side-by-side runs.
    const b = await browserBench({ exploreOnly: true, rebuild: !argv.includes('--no-build') });
    console.log(
      JSON.stringify(
        {
          browserExplore3x4Ms: b.browserExplore3x4Ms,
          browserExplore3x4CpuMs: b.browserExplore3x4CpuMs,
          browserExplore3x4Runs: b.browserExplore3x4Runs,
        },
        null,
        2,
      ),
    );
    return;
  }
  const node: Record<string, unknown> = argv.includes('--browser-only')
    ? {}
    : exploreOnly
      ? await exploreBench()
      : { ...(labOnly ? {} : await bench()), ...(await labBench()), ...(labOnly ? {} : await exploreBench()) };
  if (exploreOnly) argv.push('--no-browser');
  const browser = argv.includes('--no-browser') || labOnly ? {} : await browserFigures();
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ ...node, ...browser }, null, 2));
    return;
  }
  const f = (x: unknown): string => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(2)) : String(x));
  if (!argv.includes('--browser-only')) {
    if (!labOnly && !exploreOnly) printNode(node, f);
    if (!exploreOnly) printLab(node, f);
    if (!labOnly) printExplore(node, f);
  }
  if (!argv.includes('--no-browser') && !labOnly) printBrowser(browser, f);
}

function printLab(r: Record<string, unknown>, f: (x: unknown) => string): void {
  const t = LAB_BENCH.targetTxPerSec;
  const met = (x: unknown) => `target ≥ ${t}: ${(x as number) >= t ? 'met' : 'NOT met'}`;
  const rows: [string, string, string][] = [
    [
      'labTxPerSecUnordered',
      f(r.labTxPerSecUnordered),
      `${f(r.labTransactions)} tx in ${f(r.labWallMsUnordered)} ms, ${f(r.labDeadlocksUnordered)} deadlocks; ${met(r.labTxPerSecUnordered)}`,
    ],
    [
      'labTxPerSecOrdered',
      f(r.labTxPerSecOrdered),
      `${f(r.labTransactions)} tx in ${f(r.labWallMsOrdered)} ms, ${f(r.labDeadlocksOrdered)} deadlocks; ${met(r.labTxPerSecOrdered)}`,
    ],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  const v = Math.max(...rows.map((x) => x[1].length));
  console.log(
    `retry lab (transfer, ${LAB_BENCH.workers} workers × ${LAB_BENCH.transactionsPerWorker}, ${LAB_BENCH.accounts} accounts, seed ${LAB_BENCH.seed}; wall time of the workers' loop):`,
  );
  for (const [k, val, note] of rows) console.log(`${k.padEnd(w)}  ${val.padStart(v)}  ${note}`);
  if (r.labInvariantHolds !== true) console.log('retry lab: the transfer invariant FAILED in a bench run');
}

function printExplore(r: Record<string, unknown>, f: (x: unknown) => string): void {
  console.log('explorer (partial-order reduction, Node, three transfers × four steps):');
  for (const key of ['Unordered', 'Ordered']) {
    console.log(
      `explore3x4${key}Ms  ${f(r[`explore3x4${key}Ms`])}  ran ${f(r[`explore3x4${key}Ran`])} of ${f(r[`explore3x4${key}Orders`])} orders; ${String(r[`explore3x4${key}Verdicts`])}`,
    );
  }
  const ms = r.explore3x4Ms as number;
  console.log(`explore3x4Ms  ${f(ms)}  both; target ≤ ${EXPLORE_TARGET_MS}: ${ms <= EXPLORE_TARGET_MS ? 'met' : 'NOT met'}`);
  console.log(
    `explore3x4BruteForceEstimateMs  ${f(r.explore3x4BruteForceEstimateMs)}  every order run (${BRUTE_SAMPLE} of each timed, extrapolated)`,
  );
}

function printBrowser(r: Record<string, unknown>, f: (x: unknown) => string): void {
  if (r.browserError) {
    console.log(`browser figures skipped: ${String(r.browserError)}`);
    return;
  }
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const rows: [string, string, string][] = [
    [
      'browserColdStartMs',
      f(r.browserColdStartMs),
      `median of [${(r.browserColdStartRunsMs as number[]).join(', ')}]; target ≤ ${BROWSER_TARGETS.coldStartMs}: ${met((r.browserColdStartMs as number) <= BROWSER_TARGETS.coldStartMs)}`,
    ],
    ['browserListVisibleMs', f(r.browserListVisibleMs), 'lesson list visible (part of the cold start)'],
    [
      'browserBareBootMs',
      f(r.browserBareBootMs),
      `bare page, PGlite in a Worker from the same data directory; median of [${(r.browserBareBootRunsMs as number[]).join(', ')}]`,
    ],
    [
      'browserColdStartOverBareBoot',
      f(r.browserColdStartOverBareBoot),
      `target ≤ ${BROWSER_TARGETS.coldStartOverBareBoot}: ${met((r.browserColdStartOverBareBoot as number) <= BROWSER_TARGETS.coldStartOverBareBoot)}`,
    ],
    ['browserRepeatVisitMs', f(r.browserRepeatVisitMs), 'the same, second tab of the same context (HTTP cache warm)'],
    ...(r.browserExplore3x4Ms === undefined
      ? []
      : ([
          [
            'browserExplore3x4Ms',
            f(r.browserExplore3x4Ms),
            `${(r.browserExplore3x4Runs as { name: string; ms: number; ran: number; total: number }[]).map((x) => `${x.name}: ${Math.round(x.ms)} ms, ran ${x.ran} of ${x.total}`).join('; ')}; target ≤ ${BROWSER_TARGETS.explore3x4Ms}: ${met((r.browserExplore3x4Ms as number) <= BROWSER_TARGETS.explore3x4Ms)}`,
          ],
        ] as [string, string, string][])),
    ['browserStepMedianMs', f(r.browserStepMedianMs), `click → step counter, ${f(r.browserSteps)} steps of every lesson`],
    [
      'browserStepP95Ms',
      f(r.browserStepP95Ms),
      `target ≤ ${BROWSER_TARGETS.stepP95Ms}: ${met((r.browserStepP95Ms as number) <= BROWSER_TARGETS.stepP95Ms)}`,
    ],
    ['browserStepMaxMs', f(r.browserStepMaxMs), ''],
    ['browserStepFrameMedianMs', f(r.browserStepFrameMedianMs), 'click → the frame showing the step rendered'],
    ['browserStepFrameP95Ms', f(r.browserStepFrameP95Ms), ''],
    [
      'jsGzipKB',
      f(r.jsGzipKB),
      `every dist/**/*.js gzipped; target ≤ ${BROWSER_TARGETS.jsGzipKB}: ${met((r.jsGzipKB as number) <= BROWSER_TARGETS.jsGzipKB)}`,
    ],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  const v = Math.max(...rows.map((x) => x[1].length));
  console.log(`browser (Chromium ${String(r.chromium)}, vite preview of the production build):`);
  for (const [k, val, note] of rows) console.log(`${k.padEnd(w)}  ${val.padStart(v)}  ${note}`);
  for (const line of r.jsGzipFiles as string[]) console.log(`  ${line}`);
}

function printNode(r: Record<string, unknown>, f: (x: unknown) => string): void {
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

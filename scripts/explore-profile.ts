/**
 * Where an explored order's time goes: runs the partial-order-reduced exploration of one
 * tests/explore/ scenario (default transfer-3x4-unordered) for at most N orders (default all)
 * with timing wrappers around the SimDriver's calls and every PGlite round trip, and prints ms
 * and round trips per order by phase (begin, send, poll, end), the kinds of the orders run and,
 * with SQL=1, the most frequent round trips by phase (calls and ms per order). FULL=1 runs
 * stalled orders to the end; NO_REUSE=1 starts every order with the full setup.
 * Usage: npx tsx scripts/explore-profile.ts [scenario] [N]
 */
import { SimDriver } from '../src/sim/simDriver';
import { exploreBatch } from '../src/scenario/explore';
import { exploreReduced } from '../src/scenario/por';
import { countAllPermutations } from '../src/scenario/permutations';
import type { PgliteExecutor } from '../src/engine';
import { exploreSpec } from './bench';

const ms: Record<string, number> = {};
const calls: Record<string, number> = {};
const add = (k: string, t: number) => {
  ms[k] = (ms[k] ?? 0) + t;
  calls[k] = (calls[k] ?? 0) + 1;
};
// NO_REUSE=1: every order drops and creates its tables (SimDriver's reuseSetup off).
const driver = new SimDriver(undefined, { reuseSetup: !process.env.NO_REUSE });
const probe = async () => {
  const t0 = performance.now();
  await driver.engine!.refreshTables();
  const tables = driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  add('probe', performance.now() - t0);
  return tables;
};
const spec = exploreSpec(process.argv[2] ?? 'transfer-3x4-unordered');
await exploreBatch(spec, driver, probe, 0, 1); // boots PGlite
for (const k of Object.keys(ms)) {
  delete ms[k];
  delete calls[k];
}

let phase = 'other';
const d = driver as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
for (const m of ['begin', 'send', 'poll', 'end']) {
  const f = d[m].bind(driver);
  d[m] = async (...a: unknown[]) => {
    const outer = phase;
    phase = m;
    const t0 = performance.now();
    try {
      return await f(...a);
    } finally {
      add(m, performance.now() - t0);
      phase = outer;
    }
  };
}
const ex = (driver as unknown as { ex: PgliteExecutor }).ex;
const run = ex.run.bind(ex);
const sqls: Record<string, number> = {};
const sqlMs: Record<string, number> = {};
ex.run = async (sql: string) => {
  const t0 = performance.now();
  try {
    return await run(sql);
  } finally {
    const dt = performance.now() - t0;
    add(`pg.${phase}`, dt);
    const key = `${phase} ${sql.slice(0, 70).replace(/\s+/g, ' ')}`;
    sqls[key] = (sqls[key] ?? 0) + 1;
    sqlMs[key] = (sqlMs[key] ?? 0) + dt;
  }
};

const limit = Number(process.argv[3] ?? Infinity);
const kinds: Record<string, number> = {};
const t0 = performance.now();
const r = await exploreReduced(spec, Number(countAllPermutations(spec)), async (i) => {
  if (Object.values(kinds).reduce((a, b) => a + b, 0) >= limit) return null;
  const b = await exploreBatch(spec, driver, probe, i, 1, { withRuns: true, stopAtStall: !process.env.FULL });
  kinds[b.outcomes[0].kind] = (kinds[b.outcomes[0].kind] ?? 0) + 1;
  return { outcome: b.outcomes[0], ...(b.runs?.[0] ? { run: b.runs[0] } : {}) };
});
const total = performance.now() - t0;
console.log(`ran ${r.ran} orders in ${total.toFixed(0)} ms: ${(total / r.ran).toFixed(1)} ms per order`);
for (const k of Object.keys(ms))
  console.log(`${k.padEnd(10)} ${(ms[k] / r.ran).toFixed(2)} ms/order, ${(calls[k] / r.ran).toFixed(1)} calls/order`);
console.log(kinds);
if (process.env.SQL)
  for (const [k, v] of Object.entries(sqls)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30))
    console.log((v / r.ran).toFixed(2), ((sqlMs[k] ?? 0) / r.ran).toFixed(2) + 'ms', k);
await driver.close();

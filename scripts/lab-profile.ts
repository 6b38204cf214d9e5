/**
 * Where the retry lab's time goes (a diagnostic, not a benchmark): the bench's transfer run
 * (8 workers × 50, 10 accounts, seed 1) on one warmed-up PGlite, with a timing wrapper around
 * PgliteExecutor.run. Prints the run's wall and CPU ms, PGlite's share, round trips per
 * transaction, and the most expensive round trips by text (count, CPU ms).
 * Usage: npx tsx scripts/lab-profile.ts [unordered|ordered] [rounds]
 */
import { PgliteExecutor } from '../src/engine';
import { runLab } from '../src/retrylab/runner';
import { parseLabArgs } from '../src/retrylab/args';
import { LAB_BENCH } from './bench';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

const strategy = process.argv[2] ?? 'unordered';
const rounds = Number(process.argv[3] ?? 1);
const config = (n: number) =>
  parseLabArgs(
    [
      '--workload',
      'transfer',
      '--strategy',
      strategy,
      '--workers',
      LAB_BENCH.workers,
      '--transactions',
      n,
      '--accounts',
      LAB_BENCH.accounts,
      '--seed',
      LAB_BENCH.seed,
    ].map(String),
  ).config;

/** CPU ms of this process (PGlite runs in it): what the machine's load does not inflate. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const ex = await PgliteExecutor.create();
let counting = false;
let trips = 0;
let tripCpu = 0;
const kinds = new Map<string, { n: number; cpuMs: number }>();
const run = ex.run.bind(ex);
ex.run = async (sql: string) => {
  const c0 = cpu();
  try {
    return await run(sql);
  } finally {
    if (counting) {
      const used = cpu() - c0;
      trips++;
      tripCpu += used;
      // Row values and ctids vary; the statement's shape is what repeats.
      const k = sql
        .replace(/\s+/g, ' ')
        .replace(/'[^']*'/g, "'…'")
        .replace(/\b\d+\b/g, 'N')
        .trim()
        .slice(0, 110);
      const e = kinds.get(k) ?? { n: 0, cpuMs: 0 };
      e.n++;
      e.cpuMs += used;
      kinds.set(k, e);
    }
  }
};
await runLab(config(5), { executor: ex });
// PROFILE_OUT=file: a CPU profile of the measured rounds only (start-up and warm-up excluded).
const inspector = process.env.PROFILE_OUT ? new Session() : null;
if (inspector) {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
}
let txs = 0;
let wallMs = 0;
let cpuMs = 0;
for (let r = 0; r < rounds; r++) {
  counting = true;
  const c0 = cpu();
  const res = await runLab(config(LAB_BENCH.transactionsPerWorker), { executor: ex });
  cpuMs += cpu() - c0;
  counting = false;
  txs += res.committed + res.giveUps;
  wallMs += res.wallMs;
  console.log(
    `round ${r + 1}: ${res.committed + res.giveUps} tx in ${res.wallMs} ms, ${res.deadlocks} deadlocks, ${res.statements} statements`,
  );
}
if (inspector) {
  const { profile } = await inspector.post('Profiler.stop');
  writeFileSync(process.env.PROFILE_OUT!, JSON.stringify(profile));
}
console.log(`tx/s (wall) ${((txs * 1000) / wallMs).toFixed(1)}, tx per CPU s ${((txs * 1000) / cpuMs).toFixed(1)}`);
console.log(
  `CPU ${cpuMs.toFixed(0)} ms (incl. setup), PGlite round trips ${trips} (${(trips / txs).toFixed(1)} per tx), ${tripCpu.toFixed(0)} ms CPU in them`,
);
console.log('round trips by text (count, CPU ms):');
for (const [k, v] of [...kinds].sort((a, b) => b[1].cpuMs - a[1].cpuMs).slice(0, 30))
  console.log(`${String(v.n).padStart(6)} ${v.cpuMs.toFixed(0).padStart(6)}  ${k}`);
await ex.close();

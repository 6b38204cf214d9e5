/**
 * Where a lesson step's time goes in the engine Worker (a diagnostic, not a benchmark): in Node,
 * one PGlite and the Worker's own Host, every step of every lesson (Next, as the bench clicks it),
 * split into the player's action (perform), the snapshot for the UI (view), the structured clone
 * the Worker's postMessage does (structuredClone of the answer), and PGlite round trips (count and
 * ms, by a timing wrapper around PgliteExecutor.run). Prints median / p95 per part.
 * Usage: tsx scripts/step-profile.ts [rounds] [lesson ids…]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgliteExecutor } from '../src/engine';
import { Host } from '../src/worker/host';
import { quantile } from './bench-browser';
import type { Response } from '../src/worker/protocol';

const ROOT = join(new URL('.', import.meta.url).pathname, '..');
const rounds = Number(process.argv[2] ?? 1);
const only = process.argv.slice(3);
const dir = join(ROOT, 'lessons');
const ids = only.length
  ? only
  : readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.replace(/\.yaml$/, ''));

const ex = await PgliteExecutor.create();
let trips = 0;
let tripMs = 0;
let counting = false;
/** CPU ms of this process (PGlite runs in it): what the machine's load does not inflate. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const kinds = new Map<string, { n: number; cpuMs: number }>();
const run = ex.run.bind(ex);
ex.run = async (sql: string) => {
  const c0 = cpu();
  const t0 = performance.now();
  try {
    return await run(sql);
  } finally {
    trips++;
    tripMs += performance.now() - t0;
    if (counting) {
      const k = sql.replace(/\s+/g, ' ').trim().slice(0, 70);
      const e = kinds.get(k) ?? { n: 0, cpuMs: 0 };
      e.n++;
      e.cpuMs += cpu() - c0;
      kinds.set(k, e);
    }
  }
};
const host = new Host(() => Promise.resolve(ex));
let id = 1;
const parts = {
  handle: [] as number[],
  clone: [] as number[],
  trips: [] as number[],
  tripMs: [] as number[],
  bytes: [] as number[],
  cpu: [] as number[],
};
const slow: { where: string; ms: number; trips: number; tripMs: number }[] = [];
for (let r = 0; r < rounds; r++)
  for (const lesson of ids) {
    let yaml: string;
    try {
      yaml = readFileSync(join(dir, `${lesson}.yaml`), 'utf8');
    } catch {
      continue;
    }
    const opened = await host.handle({ id: id++, type: 'open', source: { kind: 'lesson', id: lesson, yaml } });
    if (!opened.ok || !('state' in opened)) {
      console.error(lesson, 'did not open', opened);
      continue;
    }
    let state = opened.state;
    while (state.cursor < state.script.length) {
      trips = 0;
      tripMs = 0;
      counting = r === rounds - 1;
      const c0 = cpu();
      const a = (await host.handle({ id: id++, type: 'action', action: { type: 'step' } })) as Response;
      if (!a.ok || !('state' in a)) throw new Error(`${lesson}: ${JSON.stringify(a)}`);
      parts.cpu.push(cpu() - c0);
      const t0 = performance.now();
      const copy = structuredClone(a);
      parts.clone.push(performance.now() - t0);
      parts.bytes.push(JSON.stringify(copy).length);
      parts.handle.push(a.timing.handleMs);
      parts.trips.push(trips);
      parts.tripMs.push(tripMs);
      if (r === rounds - 1) slow.push({ where: `${lesson}#${a.state.cursor}`, ms: a.timing.handleMs, trips, tripMs });
      state = a.state;
    }
  }
const q = (xs: number[], d = 2) =>
  `median ${quantile(xs, 0.5).toFixed(d)}  p95 ${quantile(xs, 0.95).toFixed(d)}  max ${Math.max(...xs).toFixed(d)}`;
console.log(`${parts.handle.length} steps (${rounds} round(s), ${ids.length} lessons)`);
console.log('worker handleMs        ', q(parts.handle));
console.log('worker CPU ms           ', q(parts.cpu));
console.log('  PGlite round trips   ', q(parts.trips, 0));
console.log('  PGlite ms            ', q(parts.tripMs));
console.log('  rest (TS) ms         ', q(parts.handle.map((h, i) => h - parts.tripMs[i])));
console.log('structuredClone ms     ', q(parts.clone));
console.log('answer JSON chars      ', q(parts.bytes, 0));
for (const s of slow.sort((a, b) => b.ms - a.ms).slice(0, 12))
  console.log(`slow: ${s.where} ${s.ms.toFixed(1)} ms, ${s.trips} trips ${s.tripMs.toFixed(1)} ms`);
console.log('round trips of the last round by text (count, CPU ms):');
for (const [k, v] of [...kinds].sort((a, b) => b[1].cpuMs - a[1].cpuMs).slice(0, 25))
  console.log(`${String(v.n).padStart(5)} ${v.cpuMs.toFixed(0).padStart(6)}  ${k}`);
await ex.close();

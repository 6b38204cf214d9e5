/**
 * CLI for the SERIALIZABLE fuzz: `npx tsx tests/fuzz/ssi-run.ts [--start N] [--seeds N]`.
 * Starts its own embedded PostgreSQL 18, prints each divergent seed's spec and divergences,
 * and a summary line; exits 1 on any divergence.
 */
import { startPostgres } from '../../src/oracle/server';
import { SimDriver } from '../../src/sim/simDriver';
import { compareOnSim, playOnReal } from './harness';
import { generateSsi } from './ssi-generate';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const start = arg('--start', 1);
const count = arg('--seeds', 200);

const server = await startPostgres();
const sim = new SimDriver();
let bad = 0;
let errors40001 = 0;
try {
  const generated = Array.from({ length: count }, (_, i) => generateSsi(start + i));
  const real = await playOnReal(
    server.url,
    generated.map((g) => g.spec),
    { lanes: 4, prefix: 'ssi_fuzz' },
  );
  for (let i = 0; i < generated.length; i++) {
    const r = await compareOnSim(sim, generated[i].spec, real[i]);
    const rr = real[i];
    if ('traces' in rr) errors40001 += rr.traces.flatMap((t) => t.events).filter((e) => e.sqlstate === '40001').length;
    if (r.divergences) {
      bad++;
      console.log(`✗ seed ${generated[i].seed}\n${generated[i].text}\n${r.report}\n`);
    }
  }
} finally {
  await sim.close();
  await server.stop();
}
console.log(`${count} seeds (from ${start}), ${bad} divergent, ${errors40001} serialization failures on real PostgreSQL`);
process.exit(bad ? 1 : 0);

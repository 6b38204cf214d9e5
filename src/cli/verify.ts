/**
 * `npm run verify -- FILE|DIR… [--pg URL]`: plays each scenario on the simulator and on real
 * PostgreSQL (an embedded PostgreSQL 18 unless --pg is given) and prints every divergence.
 * Exit code 1 on any divergence, 2 on bad input.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runSpec, toTraces } from '../scenario/isolation';
import { SimDriver } from '../sim/simDriver';
import { PgDriver } from '../oracle/pgDriver';
import { startPostgres, type PgServer } from '../oracle/server';
import { compareTraces, formatDivergences } from '../oracle/compare';
import { loadScenario } from './load';

/** Expands directories into the scenario files they hold. */
export function expandFiles(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (statSync(p).isDirectory())
      out.push(
        ...readdirSync(p)
          .filter((f) => /\.(spec|ya?ml)$/.test(f))
          .sort()
          .map((f) => join(p, f)),
      );
    else out.push(p);
  }
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const pgIdx = args.indexOf('--pg');
  const url = pgIdx >= 0 ? args[pgIdx + 1] : undefined;
  const files = expandFiles(args.filter((a, i) => !a.startsWith('--') && (pgIdx < 0 || i !== pgIdx + 1)));
  if (!files.length) {
    console.error('usage: npm run verify -- FILE|DIR… [--pg postgres://user:pass@host:port/db]');
    process.exit(2);
  }
  let server: PgServer | undefined;
  const realUrl = url ?? (server = await startPostgres()).url;
  const sim = new SimDriver();
  const real = new PgDriver(realUrl);
  let total = 0;
  try {
    for (const file of files) {
      let spec;
      try {
        spec = await loadScenario(file);
      } catch (e) {
        console.log(`✗ ${file}: ${(e as Error).message}`);
        total++;
        continue;
      }
      const expected = toTraces(await runSpec(spec, real));
      let actual;
      try {
        actual = toTraces(await runSpec(spec, sim));
      } catch (e) {
        console.log(`✗ ${file}: the simulator failed: ${(e as Error).message}`);
        total++;
        continue;
      }
      const div = compareTraces(expected, actual);
      total += div.length;
      console.log(div.length ? `✗ ${file}: ${div.length} divergence(s)\n${formatDivergences(div)}` : `✓ ${file}`);
    }
  } finally {
    await sim.close();
    await real.close();
    await server?.stop();
  }
  console.log(`${files.length} scenario(s), ${total} divergence(s)`);
  process.exit(total ? 1 : 0);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(1);
});

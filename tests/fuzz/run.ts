/**
 * Manual fuzz runs: `npx tsx tests/fuzz/run.ts [--seeds N] [--start S] [--long] [--save] [--pg URL]`.
 * Plays N generated schedules (default 300, or 3,000 with `--long`; from seed S, default 1) on an
 * embedded real PostgreSQL 18 and on the simulator and prints a summary. `--long` draws from every
 * feature, including those with known divergences; `--save` writes each divergent seed to
 * tests/fuzz/regressions/seed-N.spec. Exit code 1 when anything diverged.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type PgServer } from '../../src/oracle/server';
import { writeSpec } from '../../src/scenario/spec';
import { ALL_FEATURES, FEATURES_WITH_KNOWN_DIVERGENCES } from './generate';
import { describeFailure, fuzzSeeds, type FuzzResult } from './harness';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Writes a divergent seed as a regression spec; returns its path. */
export function saveRegression(r: FuzzResult, long: boolean): string {
  const seed = r.name.replace('seed ', '');
  const file = join(new URL('.', import.meta.url).pathname, 'regressions', `seed-${seed}.spec`);
  const header = [
    `# Fuzz regression: seed ${seed}${long ? ' (--long feature set)' : ''}.`,
    `# Features: ${r.features.join(', ')}.`,
    ...r.report.split('\n').map((l) => `# ${l}`),
  ].join('\n');
  writeFileSync(file, `${header}\n\n${writeSpec(r.spec)}`);
  return file;
}

async function main(): Promise<void> {
  const long = process.argv.includes('--long');
  const count = arg('--seeds', long ? 3000 : 300);
  const start = arg('--start', 1);
  const save = process.argv.includes('--save');
  const pgIdx = process.argv.indexOf('--pg');
  let server: PgServer | undefined;
  const url = pgIdx >= 0 ? process.argv[pgIdx + 1] : (server = await startPostgres()).url;
  const t0 = performance.now();
  try {
    const results = await fuzzSeeds({ url, start, count, ...(long ? { features: ALL_FEATURES } : {}) });
    const bad = results.filter((r) => r.divergences > 0);
    const invalid = results.filter((r) => r.invalid);
    if (invalid.length > 0)
      console.log(`not compared (generator mispredicted a wait; real PostgreSQL hung): ${invalid.map((r) => r.name).join(', ')}`);
    for (const r of bad) {
      console.log(describeFailure(r, long));
      if (save) console.log(`saved ${saveRegression(r, long)}`);
      console.log();
    }
    const byFeature = new Map<string, number>();
    for (const r of bad) for (const f of r.features) byFeature.set(f, (byFeature.get(f) ?? 0) + 1);
    console.log(
      `seeds ${start}..${start + count - 1} (${long ? 'all features' : 'CI features'}): ${count} schedules, ${bad.length} divergent, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    if (bad.length > 0) {
      console.log(`divergent seeds: ${bad.map((r) => r.name.replace('seed ', '')).join(' ')}`);
      console.log('features of divergent seeds:');
      for (const [f, n] of [...byFeature].sort((a, b) => b[1] - a[1])) {
        const known = FEATURES_WITH_KNOWN_DIVERGENCES[f as keyof typeof FEATURES_WITH_KNOWN_DIVERGENCES];
        console.log(`  ${f}: ${n}${known ? ` (known: ${known})` : ''}`);
      }
    }
    process.exitCode = bad.length > 0 ? 1 : 0;
  } finally {
    await server?.stop();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await main();

/**
 * Shared differential check: play scenario files on real PostgreSQL 18 and on the simulator and
 * require identical traces, except for entries of a known-divergences file, which must STILL
 * diverge (so a fix forces their removal and a new divergence can never hide there).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { runSpec, toTraces } from '../../src/scenario/isolation';
import { SimDriver } from '../../src/sim/simDriver';
import { PgDriver } from '../../src/oracle/pgDriver';
import { compareTraces, formatDivergences } from '../../src/oracle/compare';
import { loadScenario } from '../../src/cli/load';
import type { PermutationTrace } from '../../src/scenario/types';

/** Registers one test per scenario file in `dir` (matching `pattern`). */
export function differentialSuite(
  dir: string,
  pattern: RegExp,
  opts: { minFiles: number; onReal?: (file: string, traces: PermutationTrace[], text: string) => void | Promise<void> },
): void {
  const files = readdirSync(dir)
    .filter((f) => pattern.test(f))
    .sort();
  const knownPath = join(dir, 'known-divergences.json');
  const known: Record<string, string> = JSON.parse(readFileSync(knownPath, 'utf8'));
  let sim: SimDriver;
  let real: PgDriver;
  beforeAll(() => {
    sim = new SimDriver();
    real = new PgDriver(inject('pgUrl'));
  });
  afterAll(async () => {
    await sim?.close();
    await real?.close();
  });

  it(`has at least ${opts.minFiles} scenarios and no stale known-divergence entries`, () => {
    expect(files.length).toBeGreaterThanOrEqual(opts.minFiles);
    for (const f of Object.keys(known)) expect(files, `known-divergences.json names a missing file ${f}`).toContain(f);
  });

  for (const file of files) {
    it(file, async () => {
      const spec = await loadScenario(join(dir, file));
      const { formatText } = await import('../../src/scenario/isolation');
      const realRuns = await runSpec(spec, real);
      const expected = toTraces(realRuns);
      await opts.onReal?.(file, expected, formatText(spec, realRuns));
      let report: string;
      let count: number;
      try {
        const actual = toTraces(await runSpec(spec, sim));
        const div = compareTraces(expected, actual);
        count = div.length;
        report = formatDivergences(div);
      } catch (e) {
        count = 1;
        report = `simulator failed: ${(e as Error).message}`;
      }
      if (known[file])
        expect(
          count,
          `${file} is listed as a known divergence (${known[file]}) but now matches PostgreSQL: remove it from known-divergences.json`,
        ).toBeGreaterThan(0);
      else expect(count, report).toBe(0);
    });
  }
}

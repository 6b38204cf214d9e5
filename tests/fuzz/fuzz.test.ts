/**
 * Seeded differential fuzzing: FUZZ_SEEDS (default 300) generated schedules, each played on real
 * PostgreSQL 18 (inject('pgUrl')) and on the simulator; the traces must match. The generator
 * leaves out FEATURES_WITH_KNOWN_DIVERGENCES. Seeds saved under regressions/ and listed in
 * regressions/known.json (matched by spec text) are bugs being fixed: they must still diverge here. Any other divergence
 * fails with the seed, the spec and the divergences;
 * `npx tsx tests/fuzz/run.ts --start N --seeds 1 --save` turns it into a regression spec.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parseSpec, writeSpec } from '../../src/scenario/spec';
import { describeFailure, fuzzSeeds, type FuzzResult } from './harness';

const SEEDS = Number(process.env.FUZZ_SEEDS ?? 300);
const START = Number(process.env.FUZZ_START ?? 1);
const dir = join(new URL('.', import.meta.url).pathname, 'regressions');
const known: Record<string, string> = JSON.parse(readFileSync(join(dir, 'known.json'), 'utf8'));
/** Known by content, not by seed number: a change of the feature set changes what a seed draws. */
const knownSpecs = new Set(Object.keys(known).map((f) => writeSpec(parseSpec(readFileSync(join(dir, f), 'utf8')))));
const isKnown = (r: FuzzResult): boolean => knownSpecs.has(writeSpec(r.spec));

describe('differential fuzzing: simulator vs real PostgreSQL 18', () => {
  it(`${SEEDS} seeded schedules (seeds ${START}..${START + SEEDS - 1}) match`, { timeout: 300_000 }, async () => {
    const results = await fuzzSeeds({ url: inject('pgUrl'), start: START, count: SEEDS, prefix: 'fuzz_ci' });
    const invalid = results.filter((r) => r.invalid).map((r) => r.name);
    expect(invalid.length, `schedules the generator mispredicted (real PostgreSQL hung): ${invalid.join(', ')}`).toBeLessThanOrEqual(
      Math.ceil(SEEDS / 100),
    );
    // Six lanes of real PostgreSQL share two cores: a lane can fall behind its own
    // deadlock_timeout / lock_timeout by more than the generator's 250 ms margin, and the real
    // server then reports a timer at another step than it would unloaded. The simulator is
    // deterministic, so a divergent seed is played again on real PostgreSQL alone; it counts
    // only if it still diverges.
    const firstBad = results.filter((r) => r.divergences > 0 && !isKnown(r));
    const bad: FuzzResult[] = [];
    for (const r of firstBad) {
      const seed = Number(r.name.replace('seed ', ''));
      const [again] = await fuzzSeeds({ url: inject('pgUrl'), start: seed, count: 1, lanes: 1, prefix: 'fuzz_ci_alone' });
      if (again.divergences > 0 || again.invalid) bad.push(again.invalid ? r : again);
      else console.log(`fuzz: ${r.name} diverged with 6 lanes and matched when replayed alone (a timing race on the loaded real server)`);
    }
    expect(
      bad.map((r) => r.name),
      bad.map((r) => describeFailure(r)).join('\n\n'),
    ).toEqual([]);
    const fixed = results.filter((r) => r.divergences === 0 && !r.invalid && isKnown(r)).map((r) => r.name);
    expect(fixed, 'these seeds are listed in regressions/known.json but now match PostgreSQL: remove them').toEqual([]);
  });
});

/**
 * Seeded differential fuzzing: FUZZ_SEEDS (default 300) generated schedules, each played on real
 * PostgreSQL 18 (inject('pgUrl')) and on the simulator; the traces must match. The generator
 * leaves out FEATURES_WITH_KNOWN_DIVERGENCES. A failure prints the seed, the spec and the
 * divergences; `npx tsx tests/fuzz/run.ts --start N --seeds 1 --save` turns it into a regression.
 */
import { describe, expect, inject, it } from 'vitest';
import { describeFailure, fuzzSeeds, type FuzzResult } from './harness';

const SEEDS = Number(process.env.FUZZ_SEEDS ?? 300);
const START = Number(process.env.FUZZ_START ?? 1);

describe('differential fuzzing: simulator vs real PostgreSQL 18', () => {
  it(`${SEEDS} seeded schedules (seeds ${START}..${START + SEEDS - 1}) match`, { timeout: 300_000 }, async () => {
    const results: FuzzResult[] = await fuzzSeeds({ url: inject('pgUrl'), start: START, count: SEEDS, prefix: 'fuzz_ci' });
    const bad = results.filter((r) => r.divergences > 0);
    expect(bad.map((r) => r.name), bad.map((r) => describeFailure(r)).join('\n\n')).toEqual([]);
  });
});

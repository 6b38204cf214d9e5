/**
 * Differential fuzzing of SERIALIZABLE (the SSI port, src/engine/ssi.ts): SSI_FUZZ_SEEDS
 * (default 60) generated schedules of 2–3 serializable sessions, each played on real
 * PostgreSQL 18 and on the simulator; the traces (results, 40001s with their reason codes,
 * 25P02s, COMMIT → ROLLBACK) must match. `npx tsx tests/fuzz/ssi-run.ts --seeds N` runs more.
 */
import { describe, expect, inject, it } from 'vitest';
import { compareOnSim, playOnReal } from './harness';
import { generateSsi } from './ssi-generate';
import { SimDriver } from '../../src/sim/simDriver';

const SEEDS = Number(process.env.SSI_FUZZ_SEEDS ?? 60);

describe('differential fuzzing of SERIALIZABLE: simulator vs real PostgreSQL 18', () => {
  it(`${SEEDS} seeded serializable schedules match`, { timeout: 300_000 }, async () => {
    const generated = Array.from({ length: SEEDS }, (_, i) => generateSsi(i + 1));
    const real = await playOnReal(
      inject('pgUrl'),
      generated.map((g) => g.spec),
      { lanes: 4, prefix: 'ssi_fuzz_ci' },
    );
    const sim = new SimDriver();
    const failures: string[] = [];
    let failed40001 = 0;
    try {
      for (let i = 0; i < generated.length; i++) {
        const r = await compareOnSim(sim, generated[i].spec, real[i]);
        if (r.divergences) failures.push(`seed ${generated[i].seed}:\n${generated[i].text}\n${r.report}`);
        const rr = real[i];
        if ('traces' in rr) failed40001 += rr.traces.flatMap((t) => t.events).filter((e) => e.sqlstate === '40001').length;
      }
    } finally {
      await sim.close();
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    // The generator must exercise SSI at all: some schedules end in serialization failures.
    expect(failed40001).toBeGreaterThan(SEEDS / 10);
  });
});

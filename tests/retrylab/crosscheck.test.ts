/**
 * Cross-check of lab runs on real PostgreSQL 18: the schedule of a small run (which statement
 * each worker sent, in which order) is replayed as an isolation spec on the simulator and on
 * real PostgreSQL (PgDriver), and the traces must match event by event.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SimDriver } from '../../src/sim/simDriver';
import { PgDriver } from '../../src/oracle/pgDriver';
import { compareTraces, formatDivergences } from '../../src/oracle/compare';
import { runSpec, toTraces } from '../../src/scenario/isolation';
import { scheduleToSpec } from '../../src/retrylab/replay';
import { runLab } from '../../src/retrylab/runner';
import { COURSE_POLICY, DEFAULT_CONFIG, type LabConfig } from '../../src/retrylab/types';

let sim: SimDriver;
let pg: PgDriver;
beforeAll(() => {
  sim = new SimDriver();
  pg = new PgDriver(inject('pgUrl'), { maxStepWaitMs: 30_000 });
});
afterAll(async () => {
  await sim?.close();
  await pg?.close();
});

const samples: [string, Partial<LabConfig>][] = [
  // Two transfer workers: with three, two waiters can chase one row that the holder updated,
  // and real PostgreSQL lets either win (a race the simulator resolves as the lock queue says).
  ['transfer / unordered, 2 workers', { workload: 'transfer', strategy: 'unordered', workers: 2, transactions: 4, rows: 3, seed: 4 }],
  ['transfer / ordered, 2 workers', { workload: 'transfer', strategy: 'ordered', workers: 2, transactions: 4, rows: 3, seed: 4 }],
  ['queue / skip-locked, 3 workers', { workload: 'queue', strategy: 'skip-locked', workers: 3, transactions: 2, seed: 2 }],
  [
    'transfer / nowait-retry, 2 workers',
    {
      workload: 'transfer',
      strategy: 'nowait-retry',
      workers: 2,
      transactions: 3,
      rows: 2,
      seed: 3,
      policy: { ...COURSE_POLICY, retryOn: ['40P01', '40001', '55P03'] },
    },
  ],
];

describe('lab schedules replayed on real PostgreSQL 18', () => {
  it.each(samples)('%s', { timeout: 90_000 }, async (_name, over) => {
    const cfg = { ...DEFAULT_CONFIG, ...over };
    const lab = await runLab(cfg, { recordSchedule: true });
    const spec = scheduleToSpec(cfg, lab.schedule!);
    const simTrace = toTraces(await runSpec(spec, sim));
    // Real PostgreSQL decides on wall-clock timing (a step can be seen blocked for an instant
    // on 2 busy cores): a diverging real run is played once more before the traces must match.
    let divergences = compareTraces(toTraces(await runSpec(spec, pg)), simTrace);
    if (divergences.length) divergences = compareTraces(toTraces(await runSpec(spec, pg)), simTrace);
    expect(divergences, formatDivergences(divergences)).toEqual([]);
    // The replay reproduces the lab's own outcomes: same errors on the same statements.
    const labErrors = lab.schedule!.filter((s) => s.outcome === 'error').map((s) => s.sqlstate);
    const simErrors = simTrace[0].events.filter((e) => e.outcome === 'error').map((e) => e.sqlstate);
    expect(simErrors).toEqual(labErrors);
  });
});

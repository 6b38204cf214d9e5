/**
 * Plays generated specs on real PostgreSQL and on the simulator and compares their traces.
 * Real PostgreSQL runs several specs at once, each lane in its own database (advisory locks,
 * prepared transactions and pg_isolation_test_session_is_blocked are per database or per pid);
 * the simulator then runs them one after the other, so it never steals the event loop from a
 * lane whose timing matters.
 */
import pg from 'pg';
import { runSpec, toTraces } from '../../src/scenario/isolation';
import { writeSpec } from '../../src/scenario/spec';
import { SimDriver } from '../../src/sim/simDriver';
import { PgDriver } from '../../src/oracle/pgDriver';
import { compareTraces, formatDivergences } from '../../src/oracle/compare';
import type { PermutationTrace, Spec } from '../../src/scenario/types';
import { generate, type FeatureTag } from './generate';

/** A step that has not completed after this long on real PostgreSQL is canceled (generator bug). */
export const REAL_MAX_STEP_WAIT_MS = 20_000;

/** The outcome of one spec. */
export interface FuzzResult {
  name: string;
  spec: Spec;
  features: FeatureTag[];
  divergences: number;
  report: string;
  /**
   * Real PostgreSQL hit the harness's step cancel: the generator's model mispredicted a wait and
   * the isolationtester blocked on it, so the timing (and the trace) is not reproducible. Such a
   * schedule is not compared; it is a generator bug to report, not an engine bug.
   */
  invalid?: boolean;
}

/** Real traces that contain the harness's cancel of a step that never completed. */
function hitCancel(traces: PermutationTrace[]): boolean {
  return traces.some((t) => t.events.some((e) => e.sqlstate === '57014' && e.message === 'canceling statement due to user request'));
}

/** Real PostgreSQL traces, or the error that stopped the run. */
type RealOutcome = { traces: PermutationTrace[] } | { error: string };

/** OID of database `postgres` (initdb's fixed OID), the simulator's and the corpus's database. */
const POSTGRES_DB_OID = 5;

/**
 * A lane database has its own OID, which PostgreSQL prints in deadlock DETAIL lines (the first
 * field of an advisory lock tag, "… of database N" of a relation or tuple lock); map it back to
 * `postgres`'s so lanes compare like the corpus.
 */
function unLane(traces: PermutationTrace[], laneOid: number): PermutationTrace[] {
  for (const t of traces)
    for (const e of t.events)
      if (e.detail)
        e.detail = e.detail
          .replaceAll(`advisory lock [${laneOid},`, `advisory lock [${POSTGRES_DB_OID},`)
          .replaceAll(`of database ${laneOid}`, `of database ${POSTGRES_DB_OID}`);
  return traces;
}

async function databaseOid(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ oid: string }>('SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()');
    return Number(r.rows[0].oid);
  } finally {
    await client.end();
  }
}

/** Creates (once) the lane databases and returns their URLs. */
async function laneUrls(url: string, prefix: string, lanes: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const urls: string[] = [];
    for (let i = 0; i < lanes; i++) {
      const db = `${prefix}_${i}`;
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
      if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${db}`);
      const u = new URL(url);
      u.pathname = `/${db}`;
      urls.push(u.toString());
    }
    return urls;
  } finally {
    await client.end();
  }
}

/** Plays specs on real PostgreSQL, `lanes` at a time. */
export async function playOnReal(url: string, specs: Spec[], opts: { lanes: number; prefix: string }): Promise<RealOutcome[]> {
  const urls = await laneUrls(url, opts.prefix, Math.min(opts.lanes, specs.length));
  const out: RealOutcome[] = new Array(specs.length);
  let next = 0;
  await Promise.all(
    urls.map(async (laneUrl) => {
      const driver = new PgDriver(laneUrl, { maxStepWaitMs: REAL_MAX_STEP_WAIT_MS });
      const oid = await databaseOid(laneUrl);
      try {
        for (let i = next++; i < specs.length; i = next++) {
          try {
            out[i] = { traces: unLane(toTraces(await runSpec(specs[i], driver)), oid) };
          } catch (e) {
            out[i] = { error: (e as Error).message };
          }
        }
      } finally {
        await driver.close();
      }
    }),
  );
  return out;
}

/** Plays one spec on the simulator and compares with the real traces. */
export async function compareOnSim(sim: SimDriver, spec: Spec, real: RealOutcome): Promise<{ divergences: number; report: string }> {
  if ('error' in real) return { divergences: 1, report: `real PostgreSQL failed: ${real.error}` };
  try {
    const div = compareTraces(real.traces, toTraces(await runSpec(spec, sim)));
    return { divergences: div.length, report: formatDivergences(div) };
  } catch (e) {
    return { divergences: 1, report: `simulator failed: ${(e as Error).message}` };
  }
}

/** Generates and plays seeds start…start+count-1. */
export async function fuzzSeeds(opts: {
  url: string;
  start: number;
  count: number;
  features?: readonly FeatureTag[];
  lanes?: number;
  prefix?: string;
  sim?: SimDriver;
}): Promise<FuzzResult[]> {
  const generated = Array.from({ length: opts.count }, (_, i) =>
    generate(opts.start + i, opts.features ? { features: opts.features } : {}),
  );
  const real = await playOnReal(
    opts.url,
    generated.map((g) => g.spec),
    { lanes: opts.lanes ?? 6, prefix: opts.prefix ?? 'fuzz' },
  );
  const sim = opts.sim ?? new SimDriver();
  const results: FuzzResult[] = [];
  try {
    for (let i = 0; i < generated.length; i++) {
      const g = generated[i];
      const r = real[i];
      if ('traces' in r && hitCancel(r.traces)) {
        results.push({ name: `seed ${g.seed}`, spec: g.spec, features: g.features, divergences: 0, report: 'not compared', invalid: true });
        continue;
      }
      results.push({ name: `seed ${g.seed}`, spec: g.spec, features: g.features, ...(await compareOnSim(sim, g.spec, r)) });
    }
  } finally {
    if (!opts.sim) await sim.close();
  }
  return results;
}

/** The failure text for a divergent seed: how to replay it, the spec and the divergences. */
export function describeFailure(r: FuzzResult, long = false): string {
  return [
    `${r.name} diverges (features: ${r.features.join(', ')}).`,
    `Replay: npx tsx tests/fuzz/run.ts --start ${r.name.replace('seed ', '')} --seeds 1${long ? ' --long' : ''} --save`,
    '--- spec ---',
    writeSpec(r.spec),
    '--- divergences ---',
    r.report,
  ].join('\n');
}

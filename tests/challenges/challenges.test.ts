/**
 * Every challenge is winnable and not won for free, decided by the engine's outcomes:
 * - break: the shipped winning order reaches the goal on the simulator AND on real PostgreSQL 18
 *   (same victims, SQLSTATEs, waits and invariant verdict), while the empty start and the
 *   session-after-session order do not;
 * - fix: the original SQL fails in some order (on the simulator, and that order fails the same
 *   way on real PostgreSQL), and the model solution passes every order on the simulator (and the
 *   order that failed before passes on real PostgreSQL too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SimDriver } from '../../src/sim/simDriver';
import { PgDriver } from '../../src/oracle/pgDriver';
import { exploreBatch, invariantHolds, type InterleavingOutcome } from '../../src/scenario/explore';
import { countPermutations } from '../../src/scenario/permutations';
import {
  allSteps,
  challengeSpec,
  fixFault,
  goalReached,
  judgeFix,
  loadChallenges,
  solutionSql,
  type Challenge,
} from '../../src/scenario/challenge';

const DIR = 'lessons/challenges';
const files = Object.fromEntries(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => [join(DIR, f), readFileSync(join(DIR, f), 'utf8')]),
);
const challenges = loadChallenges(files);

let sim: SimDriver;
let real: PgDriver;
let control: pg.Client;

beforeAll(async () => {
  sim = new SimDriver();
  real = new PgDriver(inject('pgUrl'));
  control = new pg.Client({ connectionString: inject('pgUrl'), application_name: 'challenge invariant' });
  await control.connect();
});
afterAll(async () => {
  await sim?.close();
  await real?.close();
  await control?.end();
});

type Opts = { sql?: Record<string, string>; order?: readonly string[] };

/** Runs orders `from`… of the challenge on the simulator, with the invariant's verdict. */
async function onSim(c: Challenge, opts: Opts, from = 0, count = 1): Promise<InterleavingOutcome[]> {
  const spec = challengeSpec(c, opts);
  const probe = async () => [];
  const check = async (sql: string) => {
    const r = await sim.engine!.setup(sql, { refreshCatalog: false });
    return !r.error && invariantHolds(r.results.at(-1)?.rows);
  };
  const b = await exploreBatch(spec, sim, probe, from, count, c.invariant ? { invariant: { sql: c.invariant, check } } : {});
  return b.outcomes;
}

/** Runs one order on real PostgreSQL, the invariant checked on a separate connection. */
async function onReal(c: Challenge, opts: Opts): Promise<InterleavingOutcome> {
  const check = async (sql: string) => {
    const r = await control.query({ text: sql, rowMode: 'array' });
    const v: unknown = r.rows[0]?.[0];
    return v === true || v === 't';
  };
  const b = await exploreBatch(
    challengeSpec(c, opts),
    real,
    async () => [],
    0,
    1,
    c.invariant ? { invariant: { sql: c.invariant, check } } : {},
  );
  return b.outcomes[0];
}

/** What must agree between the simulator and PostgreSQL. */
const essence = (o: InterleavingOutcome) => ({
  kind: o.kind,
  victims: o.victims,
  failures: o.failures.map((f) => `${f.session}:${f.sqlstate}`),
  waited: [...o.waited].sort(),
  invariant: o.invariant,
});

const serialOrder = (c: Challenge) => allSteps(c);

it(`ships at least 12 challenges, break and fix, from beginner to senior`, () => {
  expect(challenges.length).toBeGreaterThanOrEqual(12);
  expect(new Set(challenges.map((c) => c.kind))).toEqual(new Set(['break', 'fix']));
  expect(new Set(challenges.map((c) => c.level))).toEqual(new Set(['beginner', 'intermediate', 'senior']));
});

for (const c of challenges) {
  describe(`${c.kind} ${c.id}`, () => {
    if (c.kind === 'break') {
      const order = c.solution.order!;
      const complete = order.length === allSteps(c).length;
      it('the start and the session-after-session order do not reach the goal', async () => {
        const [start] = await onSim(c, { order: [] });
        expect(goalReached(c, start, false), 'won before any step').toBe(false);
        const [serial] = await onSim(c, { order: serialOrder(c) });
        expect(goalReached(c, serial, true), `the serial order ${serial.permutation} already wins`).toBe(false);
      });
      it('the winning order reaches the goal on the simulator and on PostgreSQL alike', async () => {
        const [s] = await onSim(c, { order });
        expect(goalReached(c, s, complete), `simulator: ${JSON.stringify(essence(s))}`).toBe(true);
        const r = await onReal(c, { order });
        expect(essence(s)).toEqual(essence(r));
        expect(goalReached(c, r, complete)).toBe(true);
      });
    } else {
      it('the original SQL fails in some order, the same way on PostgreSQL; the model solution passes every order', async () => {
        const total = Number(countPermutations(challengeSpec(c)));
        expect(total).toBeLessThanOrEqual(2000);
        const before = await onSim(c, {}, 0, total);
        const verdict = judgeFix(c, before, total);
        expect(verdict.won, 'the unfixed SQL already passes').toBe(false);
        const bad = verdict.failing[0].outcome;
        const order = bad.permutation.split(' ');
        const r = await onReal(c, { order });
        expect(essence(r), `order ${bad.permutation}`).toEqual(essence(bad));
        expect(fixFault(c, r)).not.toBeNull();

        const sql = solutionSql(c);
        const after = await onSim(c, { sql }, 0, total);
        const fixed = judgeFix(c, after, total);
        expect(fixed.failing.map((f) => `${f.outcome.permutation}: ${JSON.stringify(f.fault)}`)).toEqual([]);
        expect(fixed.won).toBe(true);
        // The order that failed before, or (when the fix makes it impossible, a stall) the first valid one.
        const replay =
          after.find((o) => o.permutation === bad.permutation && o.kind !== 'stalled') ?? after.find((o) => o.kind !== 'stalled')!;
        const rFixed = await onReal(c, { sql, order: replay.permutation.split(' ') });
        expect(essence(rFixed), `model solution, order ${replay.permutation}`).toEqual(essence(replay));
        expect(fixFault(c, rFixed)).toBeNull();
      });
    }
  });
}

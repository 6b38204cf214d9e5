/**
 * The simulator's server log against real PostgreSQL 18's, for lessons played with
 * log_lock_waits and log_lock_failures on: the same entries (lock waits, grants, deadlock
 * reports, NOWAIT failures, errors) in the same order, with the same texts once pids, xids, OIDs
 * and the prefix are normalized, and wait times within a scheduling margin of the virtual clock's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/cli/load';
import { SimDriver } from '../../src/sim/simDriver';
import { runSpec } from '../../src/scenario/isolation';
import type { Spec } from '../../src/scenario/types';
import { LoggingPgDriver, alignSameMoment, normalizeLog } from '../support/serverLog';

const lessons = new URL('../../lessons/', import.meta.url).pathname;
/** Lessons whose waits, deadlocks and NOWAIT failures cover every kind of entry. */
const FILES = [
  'classic-deadlock.yaml',
  'nowait.yaml',
  'lock-timeout.yaml',
  'implicit-deadlocks.yaml',
  'read-the-server-log.yaml',
  'row-locks-inside.yaml',
  'table-lock-migrations.yaml',
  'migration-lock-queue.yaml',
];
/** Real backends are scheduled on a shared machine: their measured waits run a little late. */
const MARGIN_MS = 450;

/** The lesson with both log settings turned on in every session (they are superuser GUCs; the test user is one). */
function withLogging(spec: Spec): Spec {
  const on = 'SET log_lock_waits = on; SET log_lock_failures = on;';
  return { ...spec, sessions: spec.sessions.map((s) => ({ ...s, setup: s.setup ? `${on} ${s.setup}` : on })) };
}

/** The simulator, keeping the relation names it had before teardown dropped the tables. */
class NamingSimDriver extends SimDriver {
  names = new Map<string, string>();
  override async end(spec: Spec) {
    this.names = await this.engine!.relationNames();
    return super.end(spec);
  }
}

describe('server log: simulator vs real PostgreSQL 18', () => {
  let real: LoggingPgDriver;
  let sim: NamingSimDriver;
  beforeAll(async () => {
    real = new LoggingPgDriver();
    await real.start();
    sim = new NamingSimDriver();
  });
  afterAll(async () => {
    await sim?.close();
    await real?.close();
  });

  for (const file of FILES) {
    it(
      file,
      async () => {
        const spec = withLogging(await loadScenario(lessons + file));
        await runSpec(spec, real);
        const expected = real.last;
        const realTimes = real.lastTimes;
        const [run] = await runSpec(spec, sim);
        const actual = normalizeLog(run.serverLog ?? [], sim.engine!.pidNames(), sim.names);
        const realOrder = alignSameMoment(expected.fields, realTimes, actual.fields);
        expect(actual.fields.join('\n'), `${file}: the simulator's log`).toBe(realOrder.join('\n'));
        expect(
          actual.fields.some((f) => / LOG: {2}process \S+ (still waiting for|could not obtain) /.test(f)),
          'some wait or NOWAIT failure is logged',
        ).toBe(true);
        expect(actual.waitsMs.length).toBe(expected.waitsMs.length);
        actual.waitsMs.forEach((ms, i) =>
          expect(Math.abs(expected.waitsMs[i] - ms), `wait ${i}: real ${expected.waitsMs[i]} ms, simulator ${ms} ms`).toBeLessThan(
            MARGIN_MS,
          ),
        );
      },
      120_000,
    );
  }
});

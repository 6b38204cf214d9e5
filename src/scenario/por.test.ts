import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSpec } from './spec';
import { countAllPermutations } from './permutations';
import { exploreBatch, summarize, type InterleavingOutcome } from './explore';
import { conflicts, exploreReduced, statementFootprint, stepFootprints } from './por';
import { SimDriver } from '../sim/simDriver';
import type { Spec } from './types';

const root = join(__dirname, '..', '..');
const template = (name: string): Spec => ({
  ...parseSpec(readFileSync(join(root, 'lessons', 'lab-templates', `${name}.spec`), 'utf8')),
  permutations: [],
});

const ACCOUNTS = `setup { CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL); INSERT INTO accounts VALUES (1, 1000), (2, 1000), (3, 1000); }
teardown { DROP TABLE accounts; }`;

/** n sessions, each moving 100 from account i+1 to the next one (mod 3), in `steps` steps. */
function ring(n: number, ordered: boolean): Spec {
  const sessions = Array.from({ length: n }, (_, i) => {
    const from = (i % 3) + 1;
    const to = ((i + 1) % 3) + 1;
    const [x, y] =
      ordered && to < from
        ? [`+ 100 WHERE id = ${to}`, `- 100 WHERE id = ${from}`]
        : [`- 100 WHERE id = ${from}`, `+ 100 WHERE id = ${to}`];
    const s = `s${i}`;
    return `session ${s}
setup { SET deadlock_timeout = '1s'; }
step ${s}a { BEGIN; UPDATE accounts SET balance = balance ${x}; }
step ${s}b { UPDATE accounts SET balance = balance ${y}; }
step ${s}c { COMMIT; }`;
  });
  return parseSpec(`${ACCOUNTS}\n${sessions.join('\n')}`);
}

/**
 * The 3×4 benchmark's shape in 3×3 steps: a BEGIN of its own (it touches nothing), the debit,
 * then the credit and COMMIT; `timeouts` sets each session's deadlock_timeout.
 */
function ringWithBegins(timeouts: string[]): Spec {
  const sessions = timeouts.map((timeout, i) => {
    const from = i + 1;
    const to = ((i + 1) % 3) + 1;
    const s = `s${i}`;
    return `session ${s}
setup { SET deadlock_timeout = '${timeout}'; }
step ${s}a { BEGIN; }
step ${s}b { UPDATE accounts SET balance = balance - 100 WHERE id = ${from}; }
step ${s}c { UPDATE accounts SET balance = balance + 100 WHERE id = ${to}; COMMIT; }`;
  });
  return parseSpec(`${ACCOUNTS}\n${sessions.join('\n')}`);
}

const SELECTS = parseSpec(`${ACCOUNTS}
session r
step r1 { BEGIN; }
step r2 { SELECT balance FROM accounts WHERE id = 1; }
step r3 { SELECT sum(balance) FROM accounts; }
step r4 { COMMIT; }
session w
step w1 { UPDATE accounts SET balance = balance + 1 WHERE id = 2; }
step w2 { UPDATE accounts SET balance = balance + 1 WHERE id = 1; }
session q
step q1 { SELECT 1; }
step q2 { SELECT * FROM accounts WHERE id = 3; }
`);

const ADVISORY = parseSpec(`${ACCOUNTS}
session a
step a1 { SELECT pg_advisory_lock(1); }
step a2 { SELECT pg_advisory_lock(2); }
step a3 { SELECT pg_advisory_unlock(1); }
session b
step b1 { SELECT pg_advisory_lock(2); }
step b2 { SELECT pg_try_advisory_lock(1); }
step b3 { SELECT pg_advisory_unlock_all(); }
session c
step c1 { BEGIN; SELECT pg_advisory_xact_lock(3); UPDATE accounts SET balance = 0 WHERE id = 3; }
step c2 { COMMIT; }
`);

const NOWAIT = parseSpec(`${ACCOUNTS}
session a
step a1 { BEGIN; SELECT id FROM accounts WHERE id IN (1, 2) ORDER BY id FOR UPDATE; }
step a2 { UPDATE accounts SET balance = balance - 5 WHERE id = 1; }
step a3 { COMMIT; }
session b
step b1 { BEGIN; }
step b2 { SELECT id FROM accounts WHERE id = 2 FOR UPDATE NOWAIT; }
step b3 { ROLLBACK; }
session c
step c1 { SELECT id FROM accounts ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED; }
step c2 { UPDATE accounts SET balance = balance + 7 WHERE id = 3; }
`);

describe('static footprints', () => {
  it('reads a row key, a whole relation, advisory keys, and nothing else', () => {
    const fp = (sql: string) => statementFootprint(sql);
    expect(fp('BEGIN')).toEqual([]);
    expect(fp('SELECT 1')).toEqual([]);
    expect(conflicts(fp('UPDATE t SET v = v + 1 WHERE id = 1'), fp('UPDATE t SET v = 2 WHERE id = 2'))).toBe(false);
    expect(conflicts(fp('UPDATE t SET v = v + 1 WHERE id = 1'), fp("UPDATE t SET v = 2 WHERE id = '01'"))).toBe(true);
    expect(conflicts(fp('UPDATE t SET v = v + 1 WHERE id = 1'), fp('UPDATE u SET v = 2 WHERE id = 1'))).toBe(false);
    expect(conflicts(fp('SELECT v FROM t WHERE id = 1'), fp('SELECT * FROM t'))).toBe(false);
    expect(conflicts(fp('SELECT sum(v) FROM t'), fp('UPDATE t SET v = 2 WHERE id = 9'))).toBe(true);
    expect(conflicts(fp('UPDATE t SET k = 1 WHERE id = 1'), fp('SELECT v FROM t WHERE k = 2'))).toBe(true);
    expect(conflicts(fp('SELECT pg_advisory_lock(1)'), fp('SELECT pg_advisory_lock(2)'))).toBe(false);
    expect(conflicts(fp('SELECT pg_advisory_lock(1)'), fp('SELECT pg_advisory_unlock_all()'))).toBe(true);
    // Anything not recognized touches everything.
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'DELETE FROM t WHERE id = 1',
      'UPDATE t SET id = 2 WHERE id = 1',
      'SELECT f(1)',
      'LOCK t',
    ])
      expect(fp(sql)).toBe('all');
    expect(conflicts(fp('INSERT INTO t VALUES (1)'), [])).toBe(true);
  });
  it('makes a transaction end touch what its session touched, and refuses risky setups', () => {
    const fps = stepFootprints(ring(2, false))!;
    // s0's COMMIT touches rows 1 and 2 (what s0 wrote); s1's first step writes row 2, its second row 3.
    expect(conflicts(fps[0][2], fps[1][0])).toBe(true);
    expect(conflicts(fps[0][0], fps[1][1])).toBe(false);
    expect(stepFootprints({ ...ring(2, false), setup: ['CREATE TABLE t (id int UNIQUE)'] })).toBeNull();
    expect(
      stepFootprints(
        parseSpec(`${ACCOUNTS}\nsession a\nstep a1 { BEGIN ISOLATION LEVEL REPEATABLE READ; }\nsession b\nstep b1 { SELECT 1; }`),
      ),
    ).toBeNull();
  });
});

describe('partial-order reduction = brute force', () => {
  const driver = new SimDriver();
  afterAll(() => driver.close());
  const probe = async () => {
    await driver.engine!.refreshTables();
    return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };
  const brute = async (spec: Spec): Promise<InterleavingOutcome[]> =>
    (await exploreBatch(spec, driver, probe, 0, Number(countAllPermutations(spec)))).outcomes;
  // The reduced side runs as the explorer does (restoring the setup between orders, SimDriver's
  // reuseSetup), brute force drops and creates the tables every time. A second engine for two-lane
  // runs: lanes pick other representatives of the classes than one lane does.
  const first = new SimDriver(undefined, { reuseSetup: true });
  const second = new SimDriver(undefined, { reuseSetup: true });
  afterAll(() => Promise.all([first.close(), second.close()]));
  const drivers = [first, second];
  const probeOf = (d: SimDriver) => async () => {
    await d.engine!.refreshTables();
    return d.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };
  const reduced = async (spec: Spec, lanes = 1) =>
    exploreReduced(
      spec,
      Number(countAllPermutations(spec)),
      async (i, lane) => {
        const d = drivers[lane];
        const b = await exploreBatch(spec, d, probeOf(d), i, 1, { withRuns: true, stopAtStall: true });
        return { outcome: b.outcomes[0], ...(b.runs?.[0] ? { run: b.runs[0] } : {}) };
      },
      undefined,
      lanes,
    );
  // A stalled interleaving shows only that it stalled (its data and later errors are not counted).
  const verdict = (o: InterleavingOutcome) =>
    o.kind === 'stalled'
      ? { index: o.index, permutation: o.permutation, kind: o.kind }
      : {
          index: o.index,
          permutation: o.permutation,
          kind: o.kind,
          victims: o.victims,
          failures: o.failures,
          waited: o.waited,
          dataHash: o.dataHash,
        };

  const cases: [string, () => Spec, number][] = [
    ['transfer-unordered (2×3)', () => template('transfer-unordered'), 20],
    ['transfer-ordered (2×3)', () => template('transfer-ordered'), 20],
    ['skip-locked-queue', () => template('skip-locked-queue'), 6],
    ['ring of 3 transfers (3×3)', () => ring(3, false), 1680],
    ['ordered ring of 3 transfers (3×3)', () => ring(3, true), 1680],
    ['ring of 3 with BEGIN steps (3×3)', () => ringWithBegins(['1s', '1s', '1s']), 1680],
    // Timers that fire while steps are still being sent, at 10 ms apart: where a BEGIN falls
    // against a wait (one poll of the virtual clock) can decide the victim here.
    ['ring of 3 with BEGIN steps, deadlock_timeout 10ms, 20ms, 1s', () => ringWithBegins(['10ms', '20ms', '1s']), 1680],
    ['SELECT-only steps', () => SELECTS, 420],
    ['advisory locks', () => ADVISORY, 560],
    ['NOWAIT and SKIP LOCKED', () => NOWAIT, 560],
  ];
  it.each(cases)(
    '%s: every interleaving gets the verdict brute force gives it',
    async (_name, make, total) => {
      const spec = make();
      expect(Number(countAllPermutations(spec))).toBe(total);
      const all = await brute(spec);
      const por = await reduced(spec);
      expect(por.complete).toBe(true);
      const byIndex = [...por.outcomes].sort((a, b) => a.index - b.index);
      expect(byIndex.map(verdict)).toEqual(all.map(verdict));
      expect(summarize(por.outcomes)).toEqual(summarize(all));
      // The reduction must actually reduce where steps commute.
      if (stepFootprints(spec) && total > 20) expect(por.ran).toBeLessThan(total);
      const two = await reduced(spec, 2);
      expect(two.complete).toBe(true);
      expect([...two.outcomes].sort((a, b) => a.index - b.index).map(verdict)).toEqual(all.map(verdict));
    },
    600_000,
  );
});

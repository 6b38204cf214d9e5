/**
 * Rebuilt scenarios replay the deadlock they were rebuilt from: each is played on the simulator
 * in its own order, must end in 40P01 for the log's victim, and the simulator's own server log,
 * parsed again, must show the same cycle. The first case starts from real PostgreSQL 18's log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModule, parseSync } from 'libpg-query';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseLog, reportCycle } from './parse';
import { explainReport, statementsToParse, type Explanation, type StatementReading } from './explain';
import { readStatement } from './statements';
import { rebuildScenario } from './rebuild';
import { scenarioIssues, scenarioToSpec, type LabScenario } from '../scenario/labScenario';
import { parseSpec } from '../scenario/spec';
import { runSpec } from '../scenario/isolation';
import { SimDriver } from '../sim/simDriver';
import { exploreBatch, summarize } from '../scenario/explore';
import { LoggingPgDriver } from '../../tests/support/serverLog';

beforeAll(() => loadModule());

/** Every report of a paste, explained with the real parser's reading of its statements. */
function explainText(text: string): Explanation[] {
  return parseLog(text).reports.map((r) => {
    const readings = new Map<number, StatementReading>(statementsToParse(r).map((s) => [s.pid, readStatement(s.sql, parseSync)]));
    return explainReport(r, readings);
  });
}

/** The scenario rebuilt from the paste's only report (fails the test when there is none). */
function rebuilt(text: string): { ex: Explanation; scenario: LabScenario } {
  const [ex] = explainText(text);
  const r = rebuildScenario(ex, 'rebuilt');
  if (!r.ok) throw new Error(`not rebuilt: ${r.problem}`);
  expect(scenarioIssues(r.scenario)).toEqual([]);
  return { ex, scenario: r.scenario };
}

/** Plays a scenario's own order on the simulator: who failed with what, and the server log it wrote. */
async function play(driver: SimDriver, sc: LabScenario) {
  const [run] = await runSpec(scenarioToSpec(sc), driver);
  const failed = run.records.filter((r) => r.event.outcome === 'error').map((r) => `${r.event.session}:${r.event.sqlstate}`);
  return { failed, log: (run.serverLog ?? []).join('\n') };
}

const COURSE = [
  '2026-12-01 10:15:02.345 UTC [1234] ERROR:  deadlock detected',
  '2026-12-01 10:15:02.345 UTC [1234] DETAIL:  Process 1234 waits for ShareLock on transaction 5678; blocked by process 5679.',
  '         Process 5679 waits for ShareLock on transaction 5680; blocked by process 1234.',
  '         Process 1234: UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
  '         Process 5679: UPDATE accounts SET balance = balance - 100 WHERE id = 1;',
  '2026-12-01 10:15:02.345 UTC [1234] HINT:  See server log for query details.',
  '2026-12-01 10:15:02.345 UTC [1234] CONTEXT:  while updating tuple (0,5) in relation "accounts"',
].join('\n');

const THREE = [
  '2026-12-01 10:15:02.345 UTC [301] ERROR:  deadlock detected',
  '2026-12-01 10:15:02.345 UTC [301] DETAIL:  Process 301 waits for ShareLock on transaction 900; blocked by process 302.',
  '\tProcess 302 waits for ShareLock on transaction 901; blocked by process 303.',
  '\tProcess 303 waits for ShareLock on transaction 899; blocked by process 301.',
  '\tProcess 301: UPDATE accounts SET balance = balance + 1 WHERE id = 2;',
  '\tProcess 302: UPDATE accounts SET balance = balance + 1 WHERE id = 3;',
  '\tProcess 303: UPDATE accounts SET balance = balance + 1 WHERE id = 1;',
  '2026-12-01 10:15:02.345 UTC [301] HINT:  See server log for query details.',
  '2026-12-01 10:15:02.345 UTC [301] CONTEXT:  while updating tuple (0,2) in relation "accounts"',
].join('\n');

const UPGRADE = [
  '2026-12-01 10:15:02.345 UTC [71] ERROR:  deadlock detected',
  '2026-12-01 10:15:02.345 UTC [71] DETAIL:  Process 71 waits for ShareLock on transaction 555; blocked by process 72.',
  '\tProcess 72 waits for ShareLock on transaction 554; blocked by process 71.',
  "\tProcess 71: UPDATE jobs SET state = 'done' WHERE id = 7;",
  "\tProcess 72: UPDATE jobs SET state = 'done' WHERE id = 7;",
  '2026-12-01 10:15:02.345 UTC [71] HINT:  See server log for query details.',
  '2026-12-01 10:15:02.345 UTC [71] CONTEXT:  while updating tuple (0,1) in relation "jobs"',
].join('\n');

const DDL = [
  '2026-12-01 10:16:40.010 UTC [402] ERROR:  deadlock detected',
  '2026-12-01 10:16:40.010 UTC [402] DETAIL:  Process 402 waits for AccessExclusiveLock on relation 16385 of database 5; blocked by process 401.',
  '\tProcess 401 waits for RowExclusiveLock on relation 16390 of database 5; blocked by process 402.',
  '\tProcess 402: ALTER TABLE accounts ADD COLUMN note text;',
  '\tProcess 401: INSERT INTO audit (id) VALUES (1);',
  '2026-12-01 10:16:40.010 UTC [402] HINT:  See server log for query details.',
].join('\n');

describe('explain: cause and edges', () => {
  it.each([
    { name: "the course's two transfers", text: COURSE, cause: 'opposite-order', lesson: 'ordered-locking', keys: ['2', '1'] },
    { name: 'three transfers', text: THREE, cause: 'opposite-order', keys: ['2', '3', '1'] },
    { name: 'a lock upgrade on one row', text: UPGRADE, cause: 'lock-upgrade', keys: ['7'] },
    { name: 'DDL against a workload', text: DDL, cause: 'ddl', keys: ['1'] },
  ])('$name → $cause', ({ text, cause, keys }) => {
    const [ex] = explainText(text);
    expect(ex.cause).toMatchObject({ kind: cause, keys });
    expect(ex.processes[0]).toMatchObject({ name: 'A', victim: true });
    expect(ex.processes.filter((p) => p.victim)).toHaveLength(1);
    expect(ex.gaps).toEqual([]);
  });

  it('words each edge from its lock object: a row (with the CONTEXT tuple on the victim’s), a tuple queue, a relation', () => {
    expect(explainText(COURSE)[0].edges.map((e) => e.meaning)).toEqual([
      { kind: 'row', insert: false, tuple: { action: 'updating', block: 0, offset: 5, relation: 'accounts' } },
      { kind: 'row', insert: false },
    ]);
    const queued = UPGRADE.replace('ShareLock on transaction 554', 'ExclusiveLock on tuple (0,1) of relation 16385 of database 5');
    expect(explainText(queued)[0].edges[1].meaning).toEqual({ kind: 'tuple-queue', block: 0, offset: 1, relation: 16385 });
    expect(explainText(DDL)[0].edges.map((e) => e.meaning)).toEqual([
      { kind: 'relation', relation: 16385, table: 'accounts' },
      { kind: 'relation', relation: 16390, table: 'audit' },
    ]);
  });

  it('names what it cannot read: a statement cut short, one PostgreSQL hid, a report without statements, an open cycle', () => {
    const cut = COURSE.replace('WHERE id = 1;', 'WHERE id =');
    expect(explainText(cut)[0].gaps).toEqual([{ code: 'statement-syntax', name: 'B', pid: 5679, message: 'syntax error at end of input' }]);
    const hidden = COURSE.replace('UPDATE accounts SET balance = balance - 100 WHERE id = 1;', '<insufficient privilege>');
    expect(explainText(hidden)[0].gaps).toEqual([{ code: 'statement-hidden', name: 'B', pid: 5679 }]);
    const client = COURSE.split('\n')
      .filter((l) => !/Process \d+:/.test(l))
      .join('\n');
    expect(explainText(client)[0].gaps).toEqual([{ code: 'no-statements' }]);
    expect(rebuildScenario(explainText(client)[0], '')).toEqual({ ok: false, problem: 'no-statements' });
    const open = COURSE.split('\n')
      .filter((l) => !/Process 5679 waits/.test(l))
      .join('\n');
    expect(explainText(open)[0].gaps).toContainEqual({ code: 'open-cycle', pids: [5679] });
    const prepared = COURSE.replace(/balance - 100 WHERE id = \d;/g, 'balance - $1 WHERE id = $2;');
    expect(explainText(prepared)[0].gaps).toEqual([
      { code: 'statement-params', name: 'A', pid: 1234 },
      { code: 'statement-params', name: 'B', pid: 5679 },
    ]);
    expect(rebuildScenario(explainText(prepared)[0], '')).toEqual({ ok: false, problem: 'parameters' });
  });
});

const FK = [
  '2026-12-01 10:15:02.345 UTC [81] ERROR:  deadlock detected',
  '2026-12-01 10:15:02.345 UTC [81] DETAIL:  Process 81 waits for ShareLock on transaction 610; blocked by process 82.',
  '\tProcess 82 waits for ShareLock on transaction 609; blocked by process 81.',
  '\tProcess 81: INSERT INTO orders (account_id) VALUES (1);',
  '\tProcess 82: UPDATE accounts SET id = 10 WHERE id = 2;',
  '2026-12-01 10:15:02.345 UTC [81] HINT:  See server log for query details.',
  '2026-12-01 10:15:02.345 UTC [81] CONTEXT:  while locking tuple (0,1) in relation "accounts"',
  '\tSQL statement "SELECT 1 FROM ONLY "public"."accounts" x WHERE "id" OPERATOR(pg_catalog.=) $1 FOR KEY SHARE OF x"',
].join('\n');

const UPSERT = [
  '2026-12-01 10:15:02.345 UTC [91] ERROR:  deadlock detected',
  '2026-12-01 10:15:02.345 UTC [91] DETAIL:  Process 91 waits for ShareLock on transaction 710; blocked by process 92.',
  '\tProcess 92 waits for ShareLock on transaction 709; blocked by process 91.',
  "\tProcess 91: INSERT INTO stock (sku, qty) VALUES ('a', 1), ('b', 1) ON CONFLICT (sku) DO UPDATE SET qty = stock.qty + 1;",
  "\tProcess 92: INSERT INTO stock (sku, qty) VALUES ('b', 1), ('a', 1) ON CONFLICT (sku) DO UPDATE SET qty = stock.qty + 1;",
  '2026-12-01 10:15:02.345 UTC [91] HINT:  See server log for query details.',
  '2026-12-01 10:15:02.345 UTC [91] CONTEXT:  while inserting index tuple (0,2) in relation "stock_pkey"',
].join('\n');

describe('explain: causes the rebuild leaves to the lab', () => {
  it.each([
    { name: 'a foreign-key check', text: FK, cause: 'fk-parent', problem: 'foreign-key' },
    { name: 'an upsert batch in different key orders', text: UPSERT, cause: 'upsert-order', problem: 'batch' },
  ])('$name → $cause, no rebuild ($problem)', ({ text, cause, problem }) => {
    const [ex] = explainText(text);
    expect(ex.cause.kind).toBe(cause);
    expect(ex.edges.map((e) => e.meaning.kind)).toEqual(['row', 'row']);
    expect(rebuildScenario(ex, '')).toEqual({ ok: false, problem });
  });

  it("reads the FK check's two-line CONTEXT: the row, then the SQL statement", () => {
    const [ex] = explainText(FK);
    expect(ex.report.tuple).toEqual({ action: 'locking', block: 0, offset: 1, relation: 'accounts' });
    expect(ex.report.context).toContain('FOR KEY SHARE OF x');
  });
});

describe('rebuild: the schema and the sessions', () => {
  it("infers the course's table, its rows and the steps each process took before its logged one", () => {
    const { scenario } = rebuilt(COURSE);
    expect(scenario.setup).toEqual([
      'CREATE TABLE accounts (id int PRIMARY KEY, balance numeric);\nINSERT INTO accounts VALUES (1, 1000), (2, 1000);',
    ]);
    expect(scenario.sessions.map((s) => s.steps.map((st) => st.sql))).toEqual([
      [
        'BEGIN; UPDATE accounts SET balance = balance - 100 WHERE id = 1;',
        'UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
        'COMMIT;',
      ],
      [
        'BEGIN; UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
        'UPDATE accounts SET balance = balance - 100 WHERE id = 1;',
        'COMMIT;',
      ],
    ]);
    expect(scenario.order).toBe('a1 b1 a2 b2 a3 b3');
  });
});

describe('rebuild: played on the simulator, the scenario deadlocks as the log says', () => {
  const driver = new SimDriver();
  afterAll(() => driver.close());

  it.each([
    { name: 'two transfers', text: COURSE, size: 2 },
    { name: 'three transfers', text: THREE, size: 3 },
    { name: 'lock upgrade', text: UPGRADE, size: 2 },
    { name: 'DDL against a workload', text: DDL, size: 2 },
  ])(
    '$name',
    async ({ text, size }) => {
      const { ex, scenario } = rebuilt(text);
      const { failed, log } = await play(driver, scenario);
      expect(failed).toEqual(['A:40P01']);
      // The simulator's own report of the replay, read back: the same cycle, the victim first.
      const [again] = explainText(log);
      expect(reportCycle(again.report)).toHaveLength(size);
      expect(again.processes.map((p) => [p.name, p.victim, p.sql])).toEqual(ex.processes.map((p) => [p.name, p.victim, p.sql]));
      expect(again.edges.map((e) => [e.from, e.to, e.mode])).toEqual(ex.edges.map((e) => [e.from, e.to, e.mode]));
    },
    60_000,
  );
});

describe('rebuild: the fix, explored over every interleaving', () => {
  const driver = new SimDriver();
  afterAll(() => driver.close());
  const probe = async () => {
    await driver.engine!.refreshTables();
    return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };
  const explore = async (sc: LabScenario) =>
    summarize((await exploreBatch(scenarioToSpec(sc, { allInterleavings: true }), driver, probe, 0, 100)).outcomes);

  it.each([
    {
      name: 'two transfers: lock both rows in id order first',
      text: COURSE,
      lock: 'SELECT * FROM accounts WHERE id IN (1, 2) ORDER BY id FOR UPDATE;',
    },
    { name: 'lock upgrade: FOR UPDATE instead of FOR SHARE', text: UPGRADE, lock: 'SELECT * FROM jobs WHERE id = 7 FOR UPDATE;' },
  ])(
    '$name',
    async ({ text, lock }) => {
      const [ex] = explainText(text);
      const r = rebuildScenario(ex, 'rebuilt');
      if (!r.ok || !r.fixed) throw new Error('no fixed scenario');
      expect(r.fixed.sessions.every((s) => s.steps[0].sql.includes(lock))).toBe(true);
      const before = await explore(r.scenario);
      const after = await explore(r.fixed);
      expect(before.total).toBe(20);
      expect(before.deadlocks).toBeGreaterThan(0);
      expect({ total: after.total, deadlocks: after.deadlocks, errors: after.errors }).toEqual({ total: 20, deadlocks: 0, errors: 0 });
    },
    240_000,
  );

  it('other causes leave the fix to the lab', () => {
    const r = rebuildScenario(explainText(DDL)[0], 'rebuilt');
    expect(r.ok && r.fixed).toBe(undefined);
  });
});

describe('rebuild from real PostgreSQL 18', () => {
  let real: LoggingPgDriver;
  const sim = new SimDriver();
  beforeAll(async () => {
    real = new LoggingPgDriver();
    await real.start();
  });
  afterAll(async () => {
    await sim.close();
    await real?.close();
  });

  it("the course's unordered transfers: the server's log explains and rebuilds into a scenario that deadlocks the same way", async () => {
    const root = join(__dirname, '..', '..');
    const spec = parseSpec(readFileSync(join(root, 'lessons', 'lab-templates', 'transfer-unordered.spec'), 'utf8'));
    await runSpec(spec, real);
    const log = parseLog(real.lastRaw);
    expect(log.reports).toHaveLength(1);
    const [ex] = explainText(real.lastRaw);
    expect(ex.gaps).toEqual([]);
    expect(ex.cause.kind).toBe('opposite-order');
    // Each process's logged statement is its second UPDATE; the victim (A) is the one the ERROR line's pid names.
    expect(ex.report.victimFrom).toBe('prefix');
    expect(ex.processes.map((p) => p.sql).sort()).toEqual([
      'UPDATE accounts SET balance = balance + 100 WHERE id = 1;',
      'UPDATE accounts SET balance = balance + 100 WHERE id = 2;',
    ]);
    expect(ex.processes[0]).toMatchObject({ name: 'A', victim: true, pid: ex.report.victim });
    const r = rebuildScenario(ex, 'from the server');
    if (!r.ok) throw new Error(r.problem);
    const { failed } = await play(sim, r.scenario);
    expect(failed).toEqual(['A:40P01']);
  }, 120_000);
});

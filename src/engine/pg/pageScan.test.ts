import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteExecutor } from './executor';
import { LOCK_SAMPLE_SQL, parseCatalog, parseLockSample, TUPLE_SCAN_SQL, type RelationInfo } from './footprint';
import { FOOTPRINT_SQL, HexPage, scanRowsFromPages, splitFootprint, versionValues } from './pageScan';
import { decodeTuples } from './footprint';
import { valuesSql } from './dryRun';

let ex: PgliteExecutor;
let relations: Map<number, RelationInfo>;

beforeAll(async () => {
  ex = await PgliteExecutor.create();
  await ex.must(`CREATE TABLE a (id int PRIMARY KEY, v text, w int UNIQUE);
    CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a (id), pad text);
    INSERT INTO a SELECT g, repeat('x', g), g * 10 FROM generate_series(1, 45) g;
    INSERT INTO b SELECT g, (g % 40) + 1, repeat('y', 300) FROM generate_series(1, 60) g;`);
  const rows = await ex.must('EXECUTE lockstep_relations');
  relations = new Map(rows.map(([oid, name, kind, table]) => [Number(oid), { name: name!, isIndex: kind === 'i', table: table! }]));
});

afterAll(async () => {
  await ex.close();
});

/**
 * In an open transaction: the lock sample and the tuple scan as two statements (in a savepoint
 * rolled back afterwards, so their own locks are gone), then the footprint; both readings.
 */
async function bothReadings(): Promise<{ old: { sample: unknown; scan: unknown }; now: { sample: unknown; scan: unknown } }> {
  const r = await ex.run(`SAVEPOINT cmp; ${LOCK_SAMPLE_SQL}; ${TUPLE_SCAN_SQL}; ROLLBACK TO SAVEPOINT cmp; ${FOOTPRINT_SQL}`);
  expect(r.error).toBeUndefined();
  const oldSample = parseLockSample(r.results[1].rows!, relations);
  const fp = splitFootprint(r.results[4].rows!);
  const sample = parseLockSample(fp.sample, relations);
  const scan = await scanRowsFromPages(ex, fp.pages, sample.xids);
  return { old: { sample: oldSample, scan: r.results[2].rows }, now: { sample, scan } };
}

describe('footprint with pages decoded in TypeScript', () => {
  const cases: [string, string][] = [
    ['nothing written', 'SELECT 1'],
    ['an update', 'UPDATE a SET v = v || $$!$$ WHERE id = 3'],
    [
      'a key update, a delete and inserts',
      'UPDATE a SET id = 100 WHERE id = 42; DELETE FROM a WHERE id = 43; INSERT INTO a VALUES (46, $$n$$, 460)',
    ],
    [
      'row locks in every mode',
      'SELECT * FROM a WHERE id = 6 FOR KEY SHARE; SELECT * FROM a WHERE id = 7 FOR SHARE; SELECT * FROM a WHERE id = 8 FOR NO KEY UPDATE; SELECT * FROM a WHERE id = 9 FOR UPDATE',
    ],
    ['several pages and a foreign key check', 'UPDATE b SET pad = pad || $$z$$ WHERE id > 50; INSERT INTO b VALUES (61, 2, $$p$$)'],
    ['a row updated twice', 'UPDATE a SET w = w + 1 WHERE id = 10; UPDATE a SET w = w + 1 WHERE id = 10'],
    [
      'own subtransactions',
      'SAVEPOINT s1; SELECT * FROM a WHERE id = 11 FOR SHARE; SAVEPOINT s2; SELECT * FROM a WHERE id = 11 FOR UPDATE; RELEASE s1',
    ],
  ];
  for (const [name, sql] of cases)
    it(`reads what two statements read: ${name}`, async () => {
      try {
        await ex.must(`BEGIN; ${sql}`);
        const { old, now } = await bothReadings();
        expect(now).toEqual(old);
      } finally {
        await ex.run('ROLLBACK');
      }
    });

  it('lists the members of a multixact, shared with a prepared transaction', async () => {
    await ex.must(
      `BEGIN; SELECT * FROM a WHERE id = 12 FOR SHARE; SELECT * FROM a WHERE id = 13 FOR KEY SHARE; PREPARE TRANSACTION 'pagescan_other'`,
    );
    try {
      await ex.must('BEGIN; SELECT * FROM a WHERE id IN (12, 13) FOR SHARE');
      const { old, now } = await bothReadings();
      expect(now).toEqual(old);
      const scan = now.scan as (string | null)[][];
      // Rows 12 and 13 (and row 11, left by the rolled-back subtransactions): two lockers in one multixact each.
      expect(scan.filter((r) => r[9]?.split(',').length === 2).length).toBeGreaterThanOrEqual(2);
      await ex.run('ROLLBACK');
    } finally {
      await ex.run(`ROLLBACK PREPARED 'pagescan_other'`);
    }
  });

  it('reads bytea hex output byte by byte', () => {
    const p = new HexPage('\\x00ff7a0A');
    expect([p.u8(0), p.u8(1), p.u8(2), p.u8(3), p.u16(1), p.u32(0)]).toEqual([0, 255, 122, 10, 0x7aff, 0x0a7aff00]);
    expect(() => p.u8(4)).toThrow();
    expect(() => new HexPage('00ff')).toThrow();
    expect(() => new HexPage('\\x0g').u8(0)).toThrow();
  });
});

describe('values of new row versions read from the pages', () => {
  // Each case: a table, rows, and the statement whose new versions are read both ways.
  const cases: { name: string; table: string; rows: string; sql: string; decoded: boolean }[] = [
    {
      name: 'int and bigint',
      table: 'id int PRIMARY KEY, balance bigint NOT NULL',
      rows: '(1, 100), (2, -9007199254740993)',
      sql: 'UPDATE t SET balance = balance - 5 WHERE id = 2',
      decoded: true,
    },
    {
      name: 'every decoded type, nulls among them',
      table: 'a smallint, b int, c bigint, d bool, e text, f varchar(300), g int',
      rows: `(-3, -2147483648, 9223372036854775807, true, 'é', 'x', NULL), (NULL, 7, NULL, false, NULL, repeat('ü', 200), 1)`,
      sql: `UPDATE t SET g = coalesce(g, 0) + 1; INSERT INTO t VALUES (1, 2, 3, NULL, repeat('long ', 40), '', 4)`,
      decoded: true,
    },
    {
      name: 'a dropped column before the others',
      table: 'x text, id int, v bigint',
      rows: `('gone', 1, 10), (repeat('p', 500), 2, 20)`,
      sql: 'ALTER TABLE t DROP COLUMN x; UPDATE t SET v = v + 1',
      decoded: true,
    },
    {
      name: 'a column added with a default (attributes missing from old tuples)',
      table: 'id int',
      rows: '(1), (2)',
      sql: 'ALTER TABLE t ADD COLUMN v int DEFAULT 7; UPDATE t SET id = id + 10 WHERE id = 1',
      decoded: true,
    },
    {
      name: 'a new version locked afterwards',
      table: 'id int, v int',
      rows: '(1, 1), (2, 2)',
      sql: 'UPDATE t SET v = v + 1; SELECT * FROM t WHERE id = 1 FOR UPDATE',
      decoded: true,
    },
    {
      name: 'a new version updated again (not seen by the read)',
      table: 'id int, v int',
      rows: '(1, 1)',
      sql: 'UPDATE t SET v = v + 1; UPDATE t SET v = v + 1',
      decoded: false,
    },
    { name: 'a type not decoded here', table: 'id int, n numeric', rows: '(1, 1.5)', sql: 'UPDATE t SET n = n + 1', decoded: false },
    { name: 'a compressed value', table: 'id int, v text', rows: `(1, repeat('c', 5000))`, sql: 'UPDATE t SET id = 2', decoded: false },
  ];
  for (const c of cases)
    it(`gives what the SQL read gives: ${c.name}`, async () => {
      await ex.must(`CREATE TABLE t (${c.table}); INSERT INTO t VALUES ${c.rows}`);
      try {
        await ex.must(`BEGIN; ${c.sql}`);
        const r = await ex.run(`${FOOTPRINT_SQL}; EXECUTE lockstep_catalog`);
        expect(r.error).toBeUndefined();
        const fp = splitFootprint(r.results[0].rows!);
        const cat = parseCatalog(r.results[1].rows!).find((t) => t.name === 't')!;
        const xids = parseLockSample(fp.sample, relations).xids;
        const scan = await scanRowsFromPages(ex, fp.pages, xids);
        const created = (await decodeTuples(ex, scan, xids, new Set())).inserted.filter((v) => v.relation === 't');
        expect(created.length).toBeGreaterThan(0);
        const fromPages = versionValues(
          fp.pages,
          cat,
          created.map((v) => v.ctid),
        );
        const fromSql = await ex.must(valuesSql(cat, created));
        if (c.decoded) expect(fromPages).toEqual(fromSql);
        else expect(fromPages).toBeNull();
      } finally {
        await ex.run('ROLLBACK; DROP TABLE t');
      }
    });
});

import { beforeAll, describe, expect, it } from 'vitest';
import {
  AFTER_MARK,
  excludeTuples,
  lockingProbeOf,
  orderRowNotices,
  restrictMerge,
  restrictToTuples,
  ROW_MARK,
  ROW_PASS,
  scanRowsSql,
  tagOrder,
  updatedColumns,
} from './epq';
import { ROW_MARK_FUNCTIONS } from './pg/inject';
import { loadParser } from './sql';

beforeAll(() => loadParser());

describe('restrictToTuples', () => {
  const cases: { name: string; sql: string; verb: 'select' | 'update' | 'delete'; target: string; expected: string | null }[] = [
    {
      name: 'delete with where',
      sql: 'DELETE FROM website WHERE hits = 10',
      verb: 'delete',
      target: 'website',
      expected: `DELETE FROM website WHERE (hits = 10) AND website.ctid = ANY('{"(0,3)"}'::tid[])`,
    },
    {
      name: 'update without where',
      sql: 'UPDATE t SET v = v + 1',
      verb: 'update',
      target: 't',
      expected: `UPDATE t SET v = v + 1 WHERE t.ctid = ANY('{"(0,3)"}'::tid[])`,
    },
    {
      name: 'update with returning',
      sql: 'UPDATE t AS x SET v = 1 WHERE id IN (SELECT id FROM u WHERE a = 1) RETURNING v',
      verb: 'update',
      target: 'x',
      expected: `UPDATE t AS x SET v = 1 WHERE (id IN (SELECT id FROM u WHERE a = 1)) AND x.ctid = ANY('{"(0,3)"}'::tid[]) RETURNING v`,
    },
    {
      name: 'select for update with order by',
      sql: 'SELECT * FROM jobs WHERE s = 1 ORDER BY id FOR UPDATE',
      verb: 'select',
      target: 'jobs',
      expected: `SELECT * FROM jobs WHERE (s = 1) AND jobs.ctid = ANY('{"(0,3)"}'::tid[]) ORDER BY id FOR UPDATE`,
    },
    {
      name: 'select for update without where',
      sql: 'SELECT * FROM jobs FOR UPDATE',
      verb: 'select',
      target: 'jobs',
      expected: `SELECT * FROM jobs WHERE jobs.ctid = ANY('{"(0,3)"}'::tid[]) FOR UPDATE`,
    },
    { name: 'set operation refused', sql: 'SELECT 1 FROM a UNION SELECT 1 FROM b FOR UPDATE', verb: 'select', target: 'a', expected: null },
  ];
  for (const c of cases)
    it(c.name, () => {
      const input = structuredClone(c);
      const own = (t: string) =>
        ` OR ${t}.xmin::text::bigint IN (SELECT l.transactionid::text::bigint FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'transactionid'))`;
      const expected = c.expected?.replace(/(\w+)\.ctid = ANY\('\{"\(0,3\)"\}'::tid\[\]\)/, (m, t: string) => `(${m}${own(t)}`) ?? null;
      expect(restrictToTuples(c.sql, c.verb, c.target, ['(0,3)'])).toBe(expected);
      expect(c).toEqual(input);
    });
});

describe('excludeTuples', () => {
  const cases: { name: string; args: Parameters<typeof excludeTuples>; expected: string | null }[] = [
    {
      name: 'a locking select with a limit',
      args: ["SELECT id FROM q WHERE s = 'new' ORDER BY id LIMIT 1 FOR KEY SHARE", 'select', 'q', ['(0,1)']],
      expected: `SELECT id FROM q WHERE (s = 'new') AND NOT (q.ctid = ANY('{"(0,1)"}'::tid[])) ORDER BY id LIMIT 1 FOR KEY SHARE`,
    },
    {
      name: 'an update without where',
      args: ['UPDATE t SET v = 1 RETURNING v', 'update', 't', ['(0,1)', '(0,4)']],
      expected: `UPDATE t SET v = 1 WHERE NOT (t.ctid = ANY('{"(0,1)","(0,4)"}'::tid[])) RETURNING v`,
    },
    {
      name: 'an inheritance family’s rows',
      args: ['DELETE FROM p WHERE c = 0', 'delete', 'p', ['16390:(0,1)']],
      expected: `DELETE FROM p WHERE (c = 0) AND NOT ((p.tableoid::pg_catalog.int8::pg_catalog.text || ':' || p.ctid::pg_catalog.text) = ANY('{"16390:(0,1)"}'::pg_catalog.text[]))`,
    },
    { name: 'where current of refused', args: ['DELETE FROM t WHERE CURRENT OF c', 'delete', 't', ['(0,1)']], expected: null },
    { name: 'set operation refused', args: ['SELECT 1 FROM a UNION SELECT 1 FROM b FOR UPDATE', 'select', 'a', ['(0,1)']], expected: null },
  ];
  for (const c of cases)
    it(c.name, () => {
      const input = structuredClone(c);
      expect(excludeTuples(...c.args)).toBe(c.expected);
      expect(c).toEqual(input);
    });
});

describe('lockingProbeOf', () => {
  const cases: { name: string; args: Parameters<typeof lockingProbeOf>; expected: string | null }[] = [
    {
      name: 'an update with returning',
      args: ["UPDATE queue SET status = status || '2' WHERE id IN (3, 2, 1) RETURNING status", 'update', 'NO KEY UPDATE'],
      expected: 'SELECT 1 FROM queue WHERE id IN (3, 2, 1) FOR NO KEY UPDATE',
    },
    {
      name: 'a delete with an alias',
      args: ['DELETE FROM queue q WHERE q.id = 1', 'delete', 'UPDATE'],
      expected: 'SELECT 1 FROM queue q WHERE q.id = 1 FOR UPDATE',
    },
    { name: 'an update without where', args: ['UPDATE t SET v = 1', 'update', 'UPDATE'], expected: 'SELECT 1 FROM t FOR UPDATE' },
    {
      name: 'an update with a join refused',
      args: ['UPDATE parent p SET v = 1 FROM users u WHERE u.id = p.id', 'update', 'UPDATE'],
      expected: null,
    },
    {
      name: 'a delete with using refused',
      args: ['DELETE FROM queue q USING parent p WHERE p.id = q.id', 'delete', 'UPDATE'],
      expected: null,
    },
    { name: 'where current of refused', args: ['DELETE FROM t WHERE CURRENT OF c', 'delete', 'UPDATE'], expected: null },
  ];
  for (const c of cases)
    it(c.name, () => {
      const input = structuredClone(c);
      expect(lockingProbeOf(...c.args)).toBe(c.expected);
      expect(c).toEqual(input);
    });
  it('names the columns an UPDATE sets', () => {
    expect(updatedColumns('UPDATE t SET v = 1, "Key" = 2 WHERE id = 1')).toEqual(['v', 'Key']);
    expect(updatedColumns('DELETE FROM t')).toEqual([]);
  });
});

describe('scanRowsSql', () => {
  const cases: { name: string; args: Parameters<typeof scanRowsSql>; expected: string | null }[] = [
    {
      name: 'a queue head',
      args: ["SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE", 'jobs'],
      expected: "SELECT jobs.tableoid::pg_catalog.int4, jobs.ctid::pg_catalog.text FROM jobs WHERE status = 'new'",
    },
    {
      name: 'a join locking one table',
      args: ['SELECT p.id FROM parent p JOIN users u ON u.id = p.id WHERE u.id = 3 FOR SHARE OF p', 'p'],
      expected: 'SELECT p.tableoid::pg_catalog.int4, p.ctid::pg_catalog.text FROM parent p JOIN users u ON u.id = p.id WHERE u.id = 3',
    },
    { name: 'a WITH query refused', args: ['WITH x AS (SELECT 1) SELECT * FROM t FOR UPDATE', 't'], expected: null },
  ];
  for (const c of cases)
    it(c.name, () => {
      const input = structuredClone(c);
      expect(scanRowsSql(...c.args)).toBe(c.expected);
      expect(c).toEqual(input);
    });
});

describe('an inheritance parent’s rows, keyed by table and ctid', () => {
  it('restricts by table OID and ctid together, and tags the rows with both', () => {
    const sql = restrictToTuples('UPDATE p SET b = -b WHERE c = 0', 'update', 'p', ['16390:(0,1)', '16393:(0,1)'], undefined, true);
    expect(sql).toContain(
      `(p.tableoid::pg_catalog.int8::pg_catalog.text || ':' || p.ctid::pg_catalog.text) = ANY('{"16390:(0,1)","16393:(0,1)"}'::pg_catalog.text[])`,
    );
    expect(sql).not.toContain('array_position');
    expect(tagOrder('DELETE FROM p WHERE c = 0 RETURNING a', 'delete', 'p', true)).toBe(
      `DELETE FROM p WHERE c = 0 RETURNING a, old.tableoid::pg_catalog.int8::pg_catalog.text || ':' || old.ctid::pg_catalog.text AS " lockstep_order"`,
    );
  });
});

describe('restrictToTuples with a horizon', () => {
  it('keeps the row versions committed before the statement started eligible', () => {
    const sql = restrictToTuples('SELECT * FROM jobs ORDER BY id LIMIT 1 FOR UPDATE', 'select', 'jobs', ['(0,1)'], 731);
    expect(sql).toContain(`jobs.ctid = ANY('{"(0,1)"}'::tid[])`);
    expect(sql).toMatch(/ OR jobs\.xmin::text::bigint < 731\) ORDER BY id LIMIT 1 FOR UPDATE$/);
  });
  it('keeps the newest versions of the rows its snapshot saw that a committed update replaced eligible', () => {
    const sql = restrictToTuples('SELECT * FROM jobs ORDER BY id LIMIT 1 FOR UPDATE', 'select', 'jobs', ['(0,1)'], {
      horizon: 731,
      beyond: ['(0,7)'],
    });
    expect(sql).toMatch(
      / OR jobs\.xmin::text::bigint < 731 OR jobs\.ctid = ANY\('\{"\(0,7\)"\}'::tid\[\]\)\) ORDER BY id LIMIT 1 FOR UPDATE$/,
    );
  });
});

describe('restrictToTuples of a locking SELECT with ORDER BY', () => {
  it('puts the rows the scan locked first, in the order it locked them, when that order is known', () => {
    const sql = restrictToTuples(
      'SELECT * FROM jobs ORDER BY prio DESC LIMIT 1 FOR UPDATE',
      'select',
      'jobs',
      ['(0,5)', '(0,1)'],
      731,
      true,
    );
    expect(sql).toMatch(
      / ORDER BY pg_catalog\.array_position\('\{"\(0,5\)","\(0,1\)"\}'::tid\[\], jobs\.ctid\), prio DESC LIMIT 1 FOR UPDATE$/,
    );
  });
  it('leaves the ORDER BY alone otherwise', () => {
    const sql = restrictToTuples('SELECT * FROM jobs ORDER BY prio DESC LIMIT 1 FOR UPDATE', 'select', 'jobs', ['(0,5)'], 731);
    expect(sql).toMatch(/ ORDER BY prio DESC LIMIT 1 FOR UPDATE$/);
  });
  it('does not touch an ORDER BY inside a subquery', () => {
    const sql = restrictToTuples(
      'SELECT * FROM jobs WHERE id IN (SELECT id FROM x ORDER BY id LIMIT 2) FOR UPDATE',
      'select',
      'jobs',
      ['(0,5)'],
      1,
      true,
    );
    expect(sql).not.toContain('array_position');
  });
});

describe('orderRowNotices', () => {
  const n = (message: string) => ({ sqlstate: '00000', message });
  const row = (c: string) => n(`${ROW_MARK} ${c}`);
  const pass = (c: string) => n(`${ROW_PASS} ${c}`);
  const after = (level: 'row' | 'statement') => n(`${AFTER_MARK} ${level}`);
  const cases: {
    name: string;
    notices: { sqlstate: string; message: string }[];
    origin: Record<string, string>;
    waitedAt?: string;
    expected: string[];
  }[] = [
    {
      name: 'the followed row goes back where the scan met it; its AFTER event first',
      notices: [
        n('stmt before'),
        row('(0,2)'),
        n('b: f'),
        row('(0,3)'),
        n('c: t'),
        pass('(0,3)'),
        row('(0,4)'),
        n('a: t'),
        pass('(0,4)'),
        n('before a'),
        after('row'),
        n('after c'),
        after('row'),
        n('after a'),
        after('statement'),
        n('stmt after'),
      ],
      origin: { '(0,4)': '(0,1)' },
      waitedAt: '(0,1)',
      expected: ['a: t', 'before a', 'b: f', 'c: t', 'after a', 'after c', 'stmt after'],
    },
    {
      name: 'rows before the waited one raised their notices before the wait',
      notices: [
        row('(0,1)'),
        n('a: t'),
        pass('(0,1)'),
        row('(0,2)'),
        n('b: t'),
        pass('(0,2)'),
        after('row'),
        n('after a'),
        after('row'),
        n('after b'),
      ],
      origin: {},
      waitedAt: '(0,2)',
      expected: ['b: t', 'after a', 'after b'],
    },
    {
      name: 'without a waited row everything stays, prefix included',
      notices: [n('first'), row('(0,2)'), n('b'), row('(0,1)'), n('a')],
      origin: {},
      expected: ['first', 'a', 'b'],
    },
    {
      name: 'a run without row marks is returned as it is, AFTER marks out',
      notices: [n('x'), after('statement'), n('y')],
      origin: {},
      waitedAt: '(0,1)',
      expected: ['x', 'y'],
    },
  ];
  it.each(cases)('$name', ({ notices, origin, waitedAt, expected }) => {
    const frozen = Object.freeze(notices.map((x) => Object.freeze({ ...x })));
    expect(orderRowNotices(frozen, origin, waitedAt).map((x) => x.message)).toEqual(expected);
  });
});

describe("restrictToTuples with row marks: the quals in PostgreSQL's cost order inside the CASE", () => {
  const marked = (where: string) => {
    const sql = restrictToTuples(`UPDATE t SET v = 1 WHERE ${where} RETURNING v`, 'update', 't', ['(0,1)'], 700, false, ROW_MARK_FUNCTIONS);
    return /THEN \((.*)\) AND \(t\.ctid/.exec(sql ?? '')?.[1];
  };
  it.each([
    { where: 'noisy(id) AND id = 1', quals: '(id = 1) AND (noisy(id))' },
    { where: 'f(a) AND g(b) AND a BETWEEN 1 AND 3', quals: '(a BETWEEN 1 AND 3) AND (f(a)) AND (g(b))' },
    { where: 'EXISTS (SELECT 1 FROM u) AND k = 2', quals: '(k = 2) AND (EXISTS (SELECT 1 FROM u))' },
    { where: 'noisy(id) OR id = 1', quals: 'noisy(id) OR id = 1' },
    { where: 'CASE WHEN a AND b THEN f(a) ELSE true END AND k = 1', quals: '(k = 1) AND (CASE WHEN a AND b THEN f(a) ELSE true END)' },
  ])('$where', ({ where, quals }) => {
    expect(marked(where)).toBe(quals);
  });
});

describe('restrictMerge', () => {
  const own = `t.xmin::text::bigint IN (SELECT l.transactionid::text::bigint FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'transactionid')`;
  const r = `(t.ctid = ANY('{"(0,1)"}'::tid[]) OR ${own} OR t.xmin::text::bigint < 700)`;
  const cases: { name: string; sql: string; expected: string | null }[] = [
    {
      name: 'the ON condition takes the restriction',
      sql: "MERGE INTO inv t USING (VALUES ('a', 1)) s(sku, q) ON t.sku = s.sku WHEN MATCHED THEN UPDATE SET qty = t.qty + s.q WHEN NOT MATCHED THEN INSERT VALUES (s.sku, s.q)",
      expected: `MERGE INTO inv t USING (VALUES ('a', 1)) s(sku, q) ON (t.sku = s.sku) AND ${r} WHEN MATCHED THEN UPDATE SET qty = t.qty + s.q WHEN NOT MATCHED THEN INSERT VALUES (s.sku, s.q)`,
    },
    {
      name: 'an ON with OR is kept whole, a USING subquery with its own ON is passed over',
      sql: 'MERGE INTO inv t USING (SELECT a.sku FROM a JOIN b ON a.id = b.id) s ON t.sku = s.sku OR t.sku IS NULL WHEN MATCHED THEN DELETE',
      expected: `MERGE INTO inv t USING (SELECT a.sku FROM a JOIN b ON a.id = b.id) s ON (t.sku = s.sku OR t.sku IS NULL) AND ${r} WHEN MATCHED THEN DELETE`,
    },
    {
      name: 'WHEN NOT MATCHED BY SOURCE: not restricted',
      sql: 'MERGE INTO inv t USING s ON t.sku = s.sku WHEN MATCHED THEN DELETE WHEN NOT MATCHED BY SOURCE THEN DELETE',
      expected: null,
    },
  ];
  it.each(cases)('$name', ({ sql, expected }) => {
    expect(restrictMerge(sql, 't', ['(0,1)'], 700)).toBe(expected);
  });
});

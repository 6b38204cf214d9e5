import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser } from './sql';
import { otherRelations, replaceBodies, rowsQuery, shapeQuery, subqueryBodies, valuesBody, valuesTable } from './initPlans';

beforeAll(() => loadParser());

describe('subqueryBodies', () => {
  it('finds every kind of SubLink, outermost first, and skips locking ones and the WITH clause', () => {
    const sql =
      'WITH c AS (SELECT (SELECT 0)) UPDATE stock SET qty = (SELECT 1) WHERE id = (SELECT max(id) FROM stock WHERE wh IN (SELECT id FROM w)) ' +
      'AND EXISTS (SELECT 1 FROM x WHERE x.a = stock.id) AND b = ANY (SELECT 2) AND k IN (SELECT k FROM q FOR UPDATE) RETURNING ARRAY(SELECT 3)';
    expect(subqueryBodies(sql).map((b) => b.body)).toEqual([
      'SELECT 1',
      'SELECT max(id) FROM stock WHERE wh IN (SELECT id FROM w)',
      'SELECT id FROM w',
      'SELECT 1 FROM x WHERE x.a = stock.id',
      'SELECT 2',
      'SELECT 3',
    ]);
  });

  it('gives byte offsets, past multi-byte text', () => {
    const sql = "DELETE FROM t WHERE name = 'é' AND id = (SELECT 1)";
    const [b] = subqueryBodies(sql);
    expect(replaceBodies(sql, [{ start: b.start, end: b.end, text: 'VALUES (2)' }])).toBe(
      "DELETE FROM t WHERE name = 'é' AND id = (VALUES (2))",
    );
  });

  it('is empty for statements without subqueries or other kinds', () => {
    expect(subqueryBodies('UPDATE t SET a = 1')).toEqual([]);
    expect(subqueryBodies('INSERT INTO t SELECT (SELECT 1)')).toEqual([]);
  });
});

describe('valuesBody', () => {
  it('types each literal and keeps NULLs', () => {
    expect(
      valuesBody(
        [
          ['t', 'integer', '3', 'text', "it's"],
          ['t', 'integer', null, 'text', 'x'],
        ],
        2,
      ),
    ).toBe("VALUES ('3'::integer, 'it''s'::text), (NULL::integer, 'x'::text)");
  });

  it('stands for no rows with a typed empty SELECT', () => {
    expect(valuesBody([[null, 'numeric', null]], 1)).toBe('SELECT NULL::numeric WHERE false');
  });

  it('reads shape and rows through the subquery', () => {
    expect(shapeQuery('SELECT 1')).toContain('(SELECT 1)');
    expect(rowsQuery('SELECT 1, 2', 2)).toContain('AS q(p, c1, c2)');
  });
});

describe('otherRelations', () => {
  it('finds the tables an UPDATE or DELETE reads besides its target, with their aliases', () => {
    const sql =
      'WITH c AS (SELECT * FROM audit) UPDATE lines l SET amount = (SELECT p.price FROM prices AS p WHERE p.sku = l.sku) ' +
      'FROM public.rates, c WHERE l.id IN (SELECT id FROM lines WHERE amount = 0) AND EXISTS (SELECT 1 FROM q FOR UPDATE)';
    expect(otherRelations(sql).map((r) => [r.name, r.ref, sql.slice(r.start, r.end)])).toEqual([
      ['audit', 'audit', 'audit'],
      ['prices', 'p', 'prices AS p'],
      ['public.rates', 'rates', 'public.rates'],
      ['lines', 'lines', 'lines'],
    ]);
    expect(otherRelations('DELETE FROM lines l USING prices p WHERE p.sku = l.sku').map((r) => r.ref)).toEqual(['p']);
  });

  it('finds the tables a locking SELECT reads besides those its locking clauses name', () => {
    const sql =
      'SELECT * FROM accounts a1 JOIN accounts a2 USING (id), rates WHERE a1.k = (SELECT k FROM a1 WHERE true) FOR UPDATE OF a1 FOR SHARE OF rates';
    expect(otherRelations(sql).map((r) => [r.name, r.ref, sql.slice(r.start, r.end)])).toEqual([
      ['accounts', 'a2', 'accounts a2'],
      ['a1', 'a1', 'a1'],
    ]);
  });

  it('skips ONLY, column aliases and statements with a data-modifying CTE', () => {
    expect(otherRelations('UPDATE t SET a = 1 FROM ONLY u WHERE u.id = t.id')).toEqual([]);
    expect(otherRelations('UPDATE t SET a = 1 FROM u AS x(i) WHERE x.i = t.id')).toEqual([]);
    expect(otherRelations('WITH d AS (DELETE FROM v RETURNING id) UPDATE t SET a = 1 FROM u WHERE u.id = t.id')).toEqual([]);
    expect(otherRelations('SELECT * FROM u')).toEqual([]);
    expect(otherRelations('SELECT * FROM u, v FOR UPDATE')).toEqual([]);
    expect(otherRelations('SELECT * FROM u FOR UPDATE OF u FOR SHARE')).toEqual([]);
  });

  it('stands a table in as typed VALUES under its reference name', () => {
    expect(valuesTable('p', ['sku', 'price'], ['text', 'integer'], [['a', '10']])).toBe(
      "(VALUES ('a'::text, '10'::integer)) AS p(sku, price)",
    );
    expect(valuesTable('p', ['sku'], ['text'], [])).toBe('(SELECT NULL::text WHERE false) AS p(sku)');
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser } from './sql';
import { replaceBodies, rowsQuery, shapeQuery, subqueryBodies, valuesBody } from './initPlans';

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

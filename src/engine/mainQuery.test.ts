import { beforeAll, describe, expect, it } from 'vitest';
import { mainQueryOf } from './mainQuery';
import { loadParser } from './sql';

beforeAll(() => loadParser());

describe('mainQueryOf', () => {
  const cases: { name: string; sql: string; expected: string | null }[] = [
    {
      name: 'an unreferenced ON CONFLICT CTE is emptied',
      sql: 'WITH t AS (INSERT INTO colors VALUES (1) ON CONFLICT (key) DO UPDATE SET c = EXCLUDED.c WHERE colors.a) SELECT * FROM colors',
      expected: 'WITH t AS (SELECT) SELECT * FROM colors',
    },
    {
      name: 'several CTEs, multibyte text, NOT MATERIALIZED, a subquery in the body',
      sql: `WITH r AS (SELECT 1), "é" AS NOT MATERIALIZED (DELETE FROM x WHERE a IN (SELECT 1)), u AS (UPDATE y SET b = 'ü') SELECT 'é', * FROM r`,
      expected: `WITH r AS (SELECT 1), "é" AS NOT MATERIALIZED (SELECT), u AS (SELECT) SELECT 'é', * FROM r`,
    },
    { name: 'the main query reads the CTE', sql: 'WITH t AS (UPDATE x SET a = 1 RETURNING *) SELECT * FROM t', expected: null },
    {
      name: 'another CTE reads it',
      sql: 'WITH t AS (UPDATE x SET a = 1 RETURNING *), v AS (SELECT * FROM t) SELECT * FROM v',
      expected: null,
    },
    {
      name: 'a schema-qualified table of the same name is not the CTE',
      sql: 'WITH t AS (DELETE FROM x) SELECT * FROM public.t',
      expected: 'WITH t AS (SELECT) SELECT * FROM public.t',
    },
    { name: 'no data-modifying CTE', sql: 'WITH t AS (SELECT 1) SELECT * FROM t', expected: null },
    { name: 'a locking main query', sql: 'WITH t AS (DELETE FROM x) SELECT * FROM x FOR UPDATE', expected: null },
    { name: 'not a SELECT', sql: 'WITH t AS (DELETE FROM x) UPDATE y SET a = 1', expected: null },
  ];
  for (const c of cases) it(c.name, () => expect(mainQueryOf(c.sql)).toBe(c.expected));
});

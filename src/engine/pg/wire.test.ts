import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite, protocol } from '@electric-sql/pglite';
import type { PgMessage, StatementResult } from '../types';
import { parseQueryResponse, queryMessage } from './wire';
import type { RawResult } from './executor';

/** The executor's previous reading of a response, through PGlite's own protocol parser. */
function reference(raw: Uint8Array): RawResult {
  const msgs: Record<string, unknown>[] = [];
  new protocol.Parser().parse(raw, (m: unknown) => msgs.push(m as Record<string, unknown>));
  const pg = (m: Record<string, unknown>): PgMessage => {
    const out: PgMessage = {
      severity: (m.severity as string) ?? 'ERROR',
      sqlstate: (m.code as string) ?? 'XX000',
      message: (m.message as string) ?? '',
    };
    if (m.detail) out.detail = m.detail as string;
    if (m.hint) out.hint = m.hint as string;
    if (m.where) out.context = m.where as string;
    if (m.position) out.position = Number(m.position);
    return out;
  };
  const results: StatementResult[] = [];
  const notices: PgMessage[] = [];
  const noticeAt: number[] = [];
  let error: PgMessage | undefined;
  let cur: { columns?: string[]; rows?: (string | null)[][] } = {};
  for (const m of msgs) {
    switch (m.name) {
      case 'rowDescription':
        cur = { columns: (m.fields as { name: string }[]).map((f) => f.name), rows: [] };
        break;
      case 'dataRow':
        cur.rows?.push(m.fields as (string | null)[]);
        break;
      case 'commandComplete':
        results.push({ command: (m.text as string) ?? '', ...cur });
        cur = {};
        break;
      case 'emptyQuery':
        cur = {};
        break;
      case 'notice':
        notices.push(pg(m));
        noticeAt.push(results.length);
        break;
      case 'error':
        error = pg(m);
        break;
    }
  }
  return error ? { results, error, notices, noticeAt } : { results, notices, noticeAt };
}

describe('queryMessage', () => {
  it('builds the bytes PGlite builds', () => {
    for (const sql of ['SELECT 1', '', "SELECT 'Привет' -- ✓\nFROM t;", 'x'.repeat(10000)])
      expect(queryMessage(sql)).toEqual(protocol.serialize.query(sql));
  });
});

describe('parseQueryResponse', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
  }, 60_000);
  afterAll(async () => {
    await db.close();
  });

  const cases: [string, string][] = [
    ['rows, NULLs, empty strings', `SELECT 1 AS a, NULL::text AS "b c", '' AS e UNION ALL SELECT 2, 'x', NULL`],
    ['no rows', `SELECT 1 WHERE false`],
    [
      'several statements and tags',
      `CREATE TEMP TABLE w (id int PRIMARY KEY, v text); INSERT INTO w VALUES (1, 'a'), (2, 'b'); UPDATE w SET v = 'c' WHERE id = 1; DELETE FROM w WHERE id = 2; SELECT * FROM w; DROP TABLE w`,
    ],
    [
      'unicode and long values',
      `SELECT 'Привет, мир — ünïcödé ✓' AS "имя", repeat('x', 5000) AS long, repeat('é', 100) AS long_utf8, E'\\uFEFFbom' AS bom`,
    ],
    ['empty query', `;`],
    [
      'notices, then an error with detail, hint and position',
      `DO $$ BEGIN RAISE NOTICE 'one'; RAISE WARNING 'two' USING DETAIL = 'd', HINT = 'h'; END $$; SELECT 1; SELECT * FROM no_such_table`,
    ],
    ['error with context', `DO $$ BEGIN PERFORM 1 / 0; END $$`],
    ['constraint error detail', `CREATE TEMP TABLE u (id int PRIMARY KEY); INSERT INTO u VALUES (1); INSERT INTO u VALUES (1)`],
    ['transaction warnings', `COMMIT; ROLLBACK`],
    ['many rows', `SELECT g, g::text || 'ж', CASE WHEN g % 3 = 0 THEN NULL ELSE g END FROM generate_series(1, 3000) g`],
    ['syntax error', `SELEC 1`],
  ];
  for (const [name, sql] of cases)
    it(name, async () => {
      const raw = await db.execProtocolRaw(protocol.serialize.query(sql));
      expect(parseQueryResponse(raw)).toEqual(reference(raw));
    });
});

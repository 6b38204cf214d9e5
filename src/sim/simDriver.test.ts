/**
 * SimDriver's `reuseSetup` (the explorer's cheaper start): a permutation that begins by restoring
 * the tables the previous one left (TRUNCATE and the setup's data statements) must find PGlite as
 * a dropped and re-created setup leaves it, and every explored outcome must be the same.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimDriver } from './simDriver';
import { parseSpec } from '../scenario/spec';
import { exploreBatch, type InterleavingOutcome } from '../scenario/explore';
import type { SessionDriver, Spec } from '../scenario/types';
import { runSpec, toTraces } from '../scenario/isolation';
import type { PgliteExecutor } from '../engine';

const root = join(__dirname, '..', '..');
const benchSpec = (name: string): Spec => parseSpec(readFileSync(join(root, 'tests', 'explore', `${name}.spec`), 'utf8'));

const TWO_TABLES = `setup {
  CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL, note text);
  CREATE TABLE audit (id int, who text);
  CREATE INDEX audit_id ON audit (id);
}
setup { INSERT INTO accounts SELECT g, 1000, repeat('x', g * 40) FROM generate_series(1, 40) g; INSERT INTO audit VALUES (1, 'a'); }
setup { DELETE FROM accounts WHERE id % 7 = 0; UPDATE accounts SET balance = 900 WHERE id = 3; }
teardown { DROP TABLE accounts; DROP TABLE audit; }
session a
setup { SET deadlock_timeout = '1s'; }
step a1 { BEGIN; UPDATE accounts SET balance = balance - 1 WHERE id = 1; INSERT INTO audit VALUES (2, 'a'); }
step a2 { UPDATE accounts SET balance = balance + 1 WHERE id = 2; }
step a3 { COMMIT; }
session b
setup { SET deadlock_timeout = '1s'; }
step b1 { BEGIN; UPDATE accounts SET balance = balance - 1 WHERE id = 2; DELETE FROM audit WHERE id = 1; }
step b2 { UPDATE accounts SET balance = balance + 1 WHERE id = 1; }
step b3 { COMMIT; }`;

/**
 * What a permutation can observe of the user tables besides their OIDs and transaction ids: every
 * heap and index page's line pointers, tuple flags (hint bits too) and contents (xmin and xmax left
 * out, as they differ between any two permutations), the btree metapages, and pg_class's statistics.
 */
async function physical(ex: PgliteExecutor): Promise<string> {
  // The user's tables and indexes, then their TOAST tables and indexes (named by their table's OID, so by position).
  const rels = await ex.must(
    `WITH u AS (SELECT c.oid, c.relname, c.reltoastrelid FROM pg_catalog.pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i'))
     SELECT CASE WHEN c.relnamespace = 'public'::regnamespace THEN c.relname ELSE 'toast of ' || (SELECT t.relname FROM u t WHERE t.reltoastrelid IN (c.oid, (SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = c.oid))) || ' ' || c.relkind::text END,
       c.relkind, c.relpages, c.reltuples, c.relallvisible, c.relallfrozen, c.relhasindex, pg_catalog.pg_relation_size(c.oid) / 8192, c.oid::regclass::text
     FROM pg_catalog.pg_class c
     WHERE c.oid IN (SELECT oid FROM u) OR c.oid IN (SELECT reltoastrelid FROM u)
       OR c.oid IN (SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT reltoastrelid FROM u)) ORDER BY 1`,
  );
  // A TOAST relation's pg_class figures are left out: no plan reads them, and a spec whose SQL
  // names pg_class is never restored.
  const out: string[] = [
    JSON.stringify(rels.map((r) => (r[1] === 't' || r[0]!.startsWith('toast') ? [r[0], r[1], r[7]] : r.slice(0, -1)))),
  ];
  for (const [name, kind, , , , , , pages, reg] of rels)
    for (let p = 0; p < Number(pages); p++) {
      const page = `lockstep.get_raw_page('${reg}', ${p})`;
      const sql =
        kind === 'r' || kind === 't'
          ? `SELECT lp, lp_off, lp_flags, lp_len, t_ctid, t_infomask2, t_infomask, t_hoff, t_data FROM lockstep.heap_page_items(${page})`
          : p === 0
            ? `SELECT * FROM lockstep.bt_metap('${reg}')`
            : `SELECT itemoffset, ctid, itemlen, data FROM lockstep.bt_page_items(${page})`;
      out.push(`${name} ${p}: ${JSON.stringify(await ex.must(sql))}`);
    }
  return out.join('\n');
}

/** Runs permutations one at a time (as the explorer's lanes do), with PGlite's state read at each begin. */
async function explore(driver: SimDriver, spec: Spec, indexes: number[]): Promise<{ outcomes: InterleavingOutcome[]; states: string[] }> {
  const states: string[] = [];
  const probing: SessionDriver = {
    begin: async (s) => {
      const out = await driver.begin(s);
      states.push(await physical(driver.engine!.executor));
      return out;
    },
    send: (session, sql) => driver.send(session, sql),
    poll: (session, wait) => driver.poll(session, wait),
    normalizeDetail: (d) => driver.normalizeDetail(d),
    end: (s) => driver.end(s),
  };
  const probe = async () => {
    await driver.engine!.refreshTables();
    return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };
  const outcomes: InterleavingOutcome[] = [];
  for (const i of indexes) outcomes.push(...(await exploreBatch(spec, probing, probe, i, 1, { stopAtStall: true })).outcomes);
  return { outcomes, states };
}

/** Counts the executor's restores (the cheaper start) and full resets. */
function counting(driver: SimDriver): { restores: number; resets: number } {
  const n = { restores: 0, resets: 0 };
  const d = driver as unknown as { ex: PgliteExecutor | null };
  const wrap = (ex: PgliteExecutor) => {
    const restore = ex.restore.bind(ex);
    const reset = ex.reset.bind(ex);
    ex.restore = async (sql) => {
      const ok = await restore(sql);
      if (ok) n.restores++;
      return ok;
    };
    ex.reset = async () => {
      n.resets++;
      return reset();
    };
  };
  if (d.ex) wrap(d.ex);
  return n;
}

describe('SimDriver reuseSetup: a restored setup is the re-created one', () => {
  const full = new SimDriver();
  const reuse = new SimDriver(undefined, { reuseSetup: true });
  afterAll(async () => {
    await full.close();
    await reuse.close();
  });

  it.each([
    ['transfer-3x4-unordered', () => benchSpec('transfer-3x4-unordered'), [0, 1, 2, 100, 5000, 12000, 20000, 30000, 34649, 7, 7]],
    ['transfer-3x4-ordered', () => benchSpec('transfer-3x4-ordered'), [0, 3, 999, 17000, 34000]],
    [
      'three setup blocks, two tables, a toasted column',
      () => parseSpec(TWO_TABLES),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
    ],
  ])(
    '%s: same pages at every start, same outcomes',
    async (_name, make, indexes) => {
      const spec = make();
      // Boot both PGlites, then count the restores from the first real permutation on.
      await exploreBatch(spec, full, async () => [], 0, 1);
      await exploreBatch(spec, reuse, async () => [], 0, 1);
      const n = counting(reuse);
      const a = await explore(full, spec, indexes);
      const b = await explore(reuse, spec, indexes);
      expect(b.outcomes).toEqual(a.outcomes);
      expect(b.states).toEqual(a.states);
      expect(n.restores).toBe(indexes.length);
      expect(n.resets).toBe(0);
    },
    120_000,
  );

  const DDL_STEP =
    parseSpec(`setup { CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL); INSERT INTO accounts VALUES (1, 1000), (2, 1000); }
teardown { DROP TABLE accounts; }
session a
step a1 { ALTER TABLE accounts ADD COLUMN note text; }
step a2 { UPDATE accounts SET balance = 1 WHERE id = 1; }
session b
step b1 { UPDATE accounts SET balance = 2 WHERE id = 2; }`);

  it.each([
    ['a step runs DDL', DDL_STEP, 0],
    [
      'the setup creates a sequence',
      parseSpec(`setup { CREATE TABLE t (id serial PRIMARY KEY, v int); INSERT INTO t (v) VALUES (1), (2); }
teardown { DROP TABLE t; }
session a
step a1 { INSERT INTO t (v) VALUES (3); }
session b
step b1 { UPDATE t SET v = 0 WHERE id = 1; }`),
      0,
    ],
    [
      'the setup indexes rows already there',
      parseSpec(`setup { CREATE TABLE t (id int, v int); INSERT INTO t VALUES (1, 1), (2, 2); CREATE INDEX ON t (id); }
teardown { DROP TABLE t; }
session a
step a1 { UPDATE t SET v = 0 WHERE id = 1; }
session b
step b1 { UPDATE t SET v = 0 WHERE id = 2; }`),
      0,
    ],
    [
      'the teardown does more than drop',
      parseSpec(`setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1), (2, 2); }
teardown { UPDATE t SET v = 5; }
session a
step a1 { UPDATE t SET v = 0 WHERE id = 1; }
session b
step b1 { UPDATE t SET v = 0 WHERE id = 2; }`),
      0,
    ],
    [
      'a step reads the statistics',
      parseSpec(`setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1), (2, 2); }
teardown { DROP TABLE t; }
session a
step a1 { SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 't'; }
session b
step b1 { UPDATE t SET v = 0 WHERE id = 2; }`),
      0,
    ],
  ] as const)(
    'falls back to dropping and creating when %s: same outcomes',
    async (_name, spec, restores) => {
      await exploreBatch(spec, reuse, async () => [], 0, 1);
      const n = counting(reuse);
      const indexes = [0, 1, 0, 1];
      const a = await explore(full, spec, indexes);
      const b = await explore(reuse, spec, indexes);
      expect(b.outcomes).toEqual(a.outcomes);
      expect(b.states).toEqual(a.states);
      expect(n.restores).toBe(restores);
      expect(n.resets).toBe(indexes.length);
    },
    60_000,
  );

  it('does not restore when anything else ran on PGlite since the permutation ended', async () => {
    const spec = benchSpec('transfer-3x4-unordered');
    await exploreBatch(spec, reuse, async () => [], 0, 1);
    const n = counting(reuse);
    await reuse.engine!.executor.run('SELECT 1');
    await exploreBatch(spec, reuse, async () => [], 1, 1);
    expect(n).toEqual({ restores: 0, resets: 1 });
    await exploreBatch(spec, reuse, async () => [], 2, 1);
    expect(n).toEqual({ restores: 1, resets: 1 });
  });

  it('a restored permutation after a DDL step is not offered: the step changed the catalog', async () => {
    // Same as the fallback case above, checked on the restore point itself.
    await exploreBatch(DDL_STEP, reuse, async () => [], 0, 1);
    expect(reuse.engine!.executor.restorePoint).toBeNull();
  });
});

describe('the approximations a permutation met', () => {
  const driver = new SimDriver();
  afterAll(async () => {
    await driver.close();
  });

  it('are in the permutation’s trace (play --json), with the session and the sentence the pane shows', async () => {
    const spec = parseSpec(`setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); }
teardown { DROP TABLE t; }
session s1
step s1a { BEGIN; CREATE TEMP TABLE tt (x int); INSERT INTO tt VALUES (1); UPDATE t SET v = v + 1 WHERE id = 1; }
step s1c { COMMIT; }
session s2
step s2a { UPDATE t SET v = v + 1 WHERE id = 1; }
step s2b { SELECT v FROM t; }
permutation s1a s2a s1c s2b
permutation s2a s2b`);
    const [noted, plain] = toTraces(await runSpec(spec, driver));
    expect(noted!.approximations).toEqual([
      { session: 's1', topic: 'temp-table', message: expect.stringMatching(/temporary tables are approximated/) },
    ]);
    expect(noted!.events.map((e) => e.outcome)).toContain('waiting');
    // Only the permutation whose step met the limit carries it.
    expect(plain!.approximations).toBeUndefined();
  });
});

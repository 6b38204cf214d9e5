/**
 * What a statement locks, measured in PGlite by measureStatementLocks (the engine's executor), against what real
 * PostgreSQL 18 holds for the same statement on the same schema (pg_locks inside a block).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { PgliteExecutor } from '../../src/engine/pg/executor';
import { measureStatementLocks, type StatementLocks } from '../../src/engine/pg/statementLocks';
import { startPostgres, type PgServer } from '../../src/oracle/server';
import { EVERYDAY, SAMPLE_SCHEMA } from '../../src/ui/model/statementLocks';

let ex: PgliteExecutor;
let ownServer: PgServer | undefined;
let real: pg.Client;

beforeAll(async () => {
  let url = inject('pgUrl') as string | undefined;
  if (!url) {
    ownServer = await startPostgres();
    url = ownServer.url;
  }
  real = new pg.Client({ connectionString: url });
  await real.connect();
  ex = await PgliteExecutor.create();
});

afterAll(async () => {
  await ex?.close();
  await real?.end();
  await ownServer?.stop();
});

/** A measured lock as `relation|mode`, a TOAST table (whose name has its OID) as `toast(owner)`. */
function key(l: { relation: string; kind: string; of?: string; mode: string }): string {
  const name = l.relation.startsWith('pg_toast.') ? `toast(${l.of})${l.kind === 'index' ? ' index' : ''}` : l.relation;
  return `${name}|${l.mode}`;
}

function measuredKeys(r: StatementLocks): string[] {
  if (r.outcome !== 'measured') throw new Error(`not measured: ${JSON.stringify(r)}`);
  return r.relations.map(key).sort();
}

/** The same statement on real PostgreSQL: a fresh schema, the statement in a block, pg_locks, rollback. */
async function realLocks(schema: string, sql: string): Promise<{ keys: string[] } | { error: string; sqlstate: string }> {
  await real.query('DROP SCHEMA IF EXISTS locks_t CASCADE; CREATE SCHEMA locks_t; SET search_path = locks_t, public');
  await real.query(schema);
  try {
    await real.query('BEGIN');
    await real.query(sql);
    const r = await real.query<{ k: string }>(`SELECT CASE WHEN n.nspname = 'pg_toast'
        THEN 'toast(' || o.relname || ')' || CASE WHEN c.relkind = 'i' THEN ' index' ELSE '' END ELSE c.relname END || '|' || l.mode AS k
      FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
      LEFT JOIN pg_class o ON o.reltoastrelid = coalesce(i.indrelid, c.oid)
      WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted
        AND (n.nspname = 'locks_t' OR (n.nspname = 'pg_toast' AND o.relnamespace = 'locks_t'::regnamespace))`);
    return { keys: r.rows.map((x) => x.k).sort() };
  } catch (e) {
    const err = e as { message: string; code: string };
    return { error: err.message, sqlstate: err.code };
  } finally {
    await real.query('ROLLBACK');
  }
}

describe('measureStatementLocks on the sample schema', () => {
  /**
   * `pgliteOnly`: locks PGlite (PostgreSQL 18.6) holds and the oracle server (18.4) does not, for
   * the same statement on the same schema; the cause is not established (docs/decisions.md).
   * Pinned exactly, so a change on either side fails here.
   */
  const cases: { sql: string; expect: string[]; pgliteOnly?: string[] }[] = [
    { sql: 'ALTER TABLE accounts ADD COLUMN note text', expect: ['accounts|AccessExclusiveLock'] },
    { sql: 'CREATE INDEX ON accounts (balance)', expect: ['accounts|ShareLock', 'accounts_balance_idx|AccessExclusiveLock'] },
    {
      sql: 'UPDATE transfers SET from_id = 3 WHERE id = 1',
      expect: ['accounts_pkey|RowShareLock', 'accounts|RowShareLock', 'transfers_pkey|RowExclusiveLock', 'transfers|RowExclusiveLock'],
    },
    { sql: 'LOCK TABLE accounts IN SHARE MODE', expect: ['accounts|ShareLock'] },
    {
      sql: 'TRUNCATE transfers',
      expect: [
        'toast(transfers) index|AccessExclusiveLock',
        'toast(transfers)|AccessExclusiveLock',
        'transfers_pkey|AccessExclusiveLock',
        'transfers|AccessExclusiveLock',
      ],
    },
    {
      sql: 'ALTER TABLE transfers ADD FOREIGN KEY (to_id) REFERENCES accounts (id) NOT VALID',
      expect: ['accounts|ShareRowExclusiveLock', 'transfers|ShareRowExclusiveLock'],
      pgliteOnly: ['accounts_pkey|AccessShareLock'],
    },
    {
      sql: 'ALTER TABLE transfers ADD FOREIGN KEY (to_id) REFERENCES accounts (id)',
      expect: ['accounts|ShareRowExclusiveLock', 'transfers|ShareRowExclusiveLock', 'accounts_pkey|AccessShareLock'],
    },
    { sql: 'ALTER TABLE transfers ADD CONSTRAINT amount_positive CHECK (amount > 0)', expect: ['transfers|AccessExclusiveLock'] },
    { sql: 'ALTER TABLE transfers ALTER COLUMN amount TYPE text', expect: ['transfers|AccessExclusiveLock'] },
    { sql: 'REFRESH MATERIALIZED VIEW CONCURRENTLY balances', expect: [] },
    { sql: 'REINDEX TABLE accounts', expect: [] },
    { sql: 'CLUSTER accounts USING accounts_pkey', expect: [] },
    { sql: 'GRANT SELECT ON accounts TO PUBLIC', expect: [] },
    { sql: 'CREATE TRIGGER t BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()', expect: [] },
  ];
  for (const c of cases)
    it(`${c.sql}: the locks real PostgreSQL holds`, async () => {
      const mine = measuredKeys(await measureStatementLocks(ex, SAMPLE_SCHEMA, c.sql));
      const theirs = await realLocks(SAMPLE_SCHEMA, c.sql);
      expect(theirs).toEqual({ keys: mine.filter((k) => !c.pgliteOnly?.includes(k)) });
      for (const k of c.pgliteOnly ?? []) expect(mine).toContain(k);
      // Where the case names locks, they are among them (a check that does not lean on the oracle alone).
      for (const k of c.expect) expect(mine).toContain(k);
    });

  it('an UPDATE row-locks the referenced account FOR KEY SHARE and changes the transfer', async () => {
    const r = await measureStatementLocks(ex, SAMPLE_SCHEMA, 'UPDATE transfers SET from_id = 3 WHERE id = 1');
    if (r.outcome !== 'measured') throw new Error(r.outcome);
    expect(r.rows.map((x) => [x.relation, x.mode, JSON.parse(x.row ?? 'null')?.id])).toEqual([
      ['accounts', 'ForKeyShare', 3],
      ['transfers', 'NoKeyUpdate', 1],
    ]);
    expect(r.xid).toBe(true);
  });

  it('a statement refused inside a block is refused by real PostgreSQL too, and runs alone', async () => {
    for (const sql of ['CREATE INDEX CONCURRENTLY ON accounts (balance)', 'VACUUM FULL accounts', 'REINDEX TABLE CONCURRENTLY accounts']) {
      const r = await measureStatementLocks(ex, SAMPLE_SCHEMA, sql);
      const theirs = await realLocks(SAMPLE_SCHEMA, sql);
      expect(r.outcome).toBe('outside-block');
      if (r.outcome !== 'outside-block') continue;
      expect(theirs).toEqual({ error: r.refusal.message, sqlstate: '25001' });
      expect(r.error).toBeUndefined();
    }
    const bad = await measureStatementLocks(ex, SAMPLE_SCHEMA, 'CREATE INDEX CONCURRENTLY ON nosuch (x)');
    expect(bad).toMatchObject({ outcome: 'outside-block', error: { sqlstate: '42P01', message: 'relation "nosuch" does not exist' } });
  });

  it('a statement that fails on the schema, and a schema that fails, say so with PostgreSQL’s error', async () => {
    expect(await measureStatementLocks(ex, SAMPLE_SCHEMA, 'ALTER TABLE accounts ADD COLUMN balance int')).toMatchObject({
      outcome: 'failed',
      error: { sqlstate: '42701', message: 'column "balance" of relation "accounts" already exists' },
    });
    expect(await measureStatementLocks(ex, 'CREATE TABLE t (id int REFERENCES nosuch)', 'SELECT 1')).toMatchObject({
      outcome: 'schema-failed',
      error: { sqlstate: '42P01' },
    });
  });

  it('a trailing comment, a schema of its own run twice, and several statements in one text', async () => {
    const own = 'CREATE SCHEMA bank; CREATE TABLE bank.accounts (id int PRIMARY KEY)';
    for (let i = 0; i < 2; i++)
      expect(measuredKeys(await measureStatementLocks(ex, own, 'LOCK bank.accounts -- no mode: ACCESS EXCLUSIVE'))).toEqual([
        'bank.accounts|AccessExclusiveLock',
      ]);
    const skipped = await measureStatementLocks(ex, SAMPLE_SCHEMA, 'ALTER TABLE accounts ADD COLUMN IF NOT EXISTS balance numeric');
    expect(skipped).toMatchObject({
      outcome: 'measured',
      notices: [{ severity: 'NOTICE', message: 'column "balance" of relation "accounts" already exists, skipping' }],
    });
    const two = await measureStatementLocks(ex, SAMPLE_SCHEMA, "SET lock_timeout = '1s'; CREATE INDEX ON transfers (to_id);");
    expect(measuredKeys(two)).toEqual(['transfers_to_id_idx|AccessExclusiveLock', 'transfers|ShareLock']);
  });

  // The page derives what each lock blocks from these modes: each everyday statement takes its mode.
  const everyday: Record<(typeof EVERYDAY)[number]['id'], string> = {
    select: 'SELECT * FROM accounts',
    forUpdate: 'SELECT * FROM accounts FOR SHARE',
    dml: 'DELETE FROM accounts WHERE id = 3',
    vacuum: 'ANALYZE accounts',
    createIndexConcurrently: 'CREATE INDEX CONCURRENTLY ON accounts (balance)',
    createIndex: 'CREATE INDEX ON accounts (balance)',
    createTrigger: 'CREATE TRIGGER t BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()',
    alterTable: 'ALTER TABLE accounts ADD COLUMN note text',
  };
  for (const e of EVERYDAY)
    it(`everyday ${e.sql} takes ${e.mode} on its table`, async () => {
      const r = await measureStatementLocks(ex, SAMPLE_SCHEMA, everyday[e.id]);
      // CREATE INDEX CONCURRENTLY cannot be sampled in a block: real PostgreSQL's sample of the
      // same statement's lock level comes from LOCK TABLE's equivalence of modes, checked below.
      if (r.outcome === 'outside-block') {
        expect(e.id).toBe('createIndexConcurrently');
        return;
      }
      expect(measuredKeys(r)).toContain(`accounts|${e.mode}`);
      const stronger = measuredKeys(r).filter((k) => k.startsWith('accounts|') && k !== `accounts|${e.mode}`);
      expect(stronger.every((k) => ['accounts|AccessShareLock', 'accounts|RowShareLock'].includes(k))).toBe(true);
    });
});

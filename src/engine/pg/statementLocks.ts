/**
 * What one statement locks, measured in PGlite: the schema is created and committed, then the
 * statement runs inside a transaction block, this backend's pg_locks (the engine's own sample)
 * and the tuple headers it wrote (the engine's tuple scan) are read, and the block is rolled
 * back. A statement PostgreSQL refuses inside a block (25001) runs once on its own instead, so
 * its errors on the schema are still PostgreSQL's; its locks cannot be sampled then.
 */
import type { PgMessage } from '../types';
import type { LockMode, RowLockMode } from '../model/locks/types';
import { LOCK_SAMPLE_SQL, TUPLE_SCAN_SQL, decodeTuples } from './footprint';
import { INTERNAL_SCHEMA, ADVISORY_SHADOW_SCHEMA as SHADOW_SCHEMA } from './names';
import { DIAGNOSTICS_SCHEMA as DIAG_SCHEMA } from './diagnostics';
import type { PgliteExecutor } from './executor';

/** The kind of relation a lock is on, from pg_class.relkind. */
export type RelationKind = 'table' | 'partitioned table' | 'index' | 'toast' | 'materialized view' | 'view' | 'sequence' | 'other';

/** One table-level lock the statement holds at its end, as pg_locks lists it. */
export interface RelationLock {
  /** The relation's name as regclass prints it (schema-qualified outside search_path: pg_toast.pg_toast_16385). */
  relation: string;
  kind: RelationKind;
  /** For an index or a TOAST table (or a TOAST table's index): the table it belongs to. */
  of?: string;
  mode: LockMode;
  /** The statement created this relation (a new index, say). */
  created: boolean;
}

/** One row lock the statement took, read from the tuple header. */
export interface RowLock {
  relation: string;
  ctid: string;
  mode: RowLockMode;
  /** The row as it was before the statement (row_to_json), when it could be read back. */
  row?: string;
}

/** The answer for one statement on one schema. */
export type StatementLocks =
  | {
      outcome: 'measured';
      relations: RelationLock[];
      rows: RowLock[];
      /** The statement was assigned a transaction id (it holds ExclusiveLock on it until the end). */
      xid: boolean;
      notices: PgMessage[];
    }
  /** PostgreSQL refused it inside a block (`refusal`, 25001); run alone it succeeded or failed with `error`. */
  | { outcome: 'outside-block'; refusal: PgMessage; error?: PgMessage; notices: PgMessage[] }
  | { outcome: 'failed'; error: PgMessage }
  | { outcome: 'schema-failed'; error: PgMessage };

const RELKIND: Record<string, RelationKind> = {
  r: 'table',
  p: 'partitioned table',
  i: 'index',
  I: 'index',
  t: 'toast',
  m: 'materialized view',
  v: 'view',
  S: 'sequence',
};

/**
 * Relations by OID with the user table each index, TOAST table or TOAST index belongs to; system
 * catalogs (and their TOAST tables) and the engine's own schemas are left out.
 */
function namesSql(oids: number[]): string {
  return `SELECT c.oid::int, c.oid::regclass::text, c.relkind::text, owner.oid::regclass::text
FROM pg_catalog.pg_class c
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
LEFT JOIN LATERAL (SELECT o.oid, o.relnamespace FROM pg_catalog.pg_class o
    WHERE o.reltoastrelid = coalesce(i.indrelid, c.oid) OR (o.oid = i.indrelid AND o.relkind <> 't')
    ORDER BY o.reltoastrelid = coalesce(i.indrelid, c.oid) DESC LIMIT 1) owner ON true
JOIN pg_catalog.pg_namespace n ON n.oid = coalesce(owner.relnamespace, c.relnamespace)
WHERE c.oid = ANY('{${oids.join(',')}}'::oid[])
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', '${INTERNAL_SCHEMA}', '${SHADOW_SCHEMA}')`;
}

/** The table-level order of the list: the statement's tables first, then indexes, then TOAST. */
const KIND_ORDER: RelationKind[] = ['table', 'partitioned table', 'materialized view', 'view', 'sequence', 'index', 'toast', 'other'];
const MODE_ORDER: LockMode[] = [
  'AccessExclusiveLock',
  'ExclusiveLock',
  'ShareRowExclusiveLock',
  'ShareLock',
  'ShareUpdateExclusiveLock',
  'RowExclusiveLock',
  'RowShareLock',
  'AccessShareLock',
];

/**
 * Creates `schema` on a fresh database (committed), then measures what `sql` locks inside a
 * rolled-back transaction block. The database is left holding the schema only.
 */
export async function measureStatementLocks(ex: PgliteExecutor, schema: string, sql: string): Promise<StatementLocks> {
  await ex.reset();
  // reset() empties schema public; schemas an earlier run created go too, so the same schema text runs again.
  const others = await ex.must(OTHER_SCHEMAS_SQL);
  if (others.length) await ex.must(others.map(([name]) => `DROP SCHEMA ${quoteIdent(name!)} CASCADE`).join(';\n'));
  if (schema.trim()) {
    const s = await ex.run(schema);
    await ex.run('ROLLBACK');
    if (s.error) return { outcome: 'schema-failed', error: s.error };
  }
  const body = sql.trim().replace(/;\s*$/, '');
  // A newline before each separator ends a trailing -- comment in the statement.
  const r = await ex.run(`BEGIN;\n${body}\n;\n${LOCK_SAMPLE_SQL};\n${TUPLE_SCAN_SQL}`);
  if (r.error) {
    await ex.run('ROLLBACK');
    if (r.error.sqlstate !== '25001') return { outcome: 'failed', error: r.error };
    // PreventInTransactionBlock: the statement runs alone, as a client would send it.
    const alone = await ex.run(body);
    await ex.run('ROLLBACK');
    return { outcome: 'outside-block', refusal: r.error, notices: alone.notices, ...(alone.error ? { error: alone.error } : {}) };
  }
  const sample = r.results.at(-2)?.rows ?? [];
  const scan = r.results.at(-1)?.rows ?? [];
  const xids = new Set(sample.filter(([locktype]) => locktype === 'transactionid').map((row) => Number(row[3])));
  const relLocks = sample
    .filter(([locktype]) => locktype === 'relation')
    .map(([, rel, mode]) => ({ oid: Number(rel), mode: mode as LockMode }));
  const names = await ex.must(namesSql([...new Set(relLocks.map((l) => l.oid))]));
  const { touched } = await decodeTuples(ex, scan, xids, xids);
  await ex.run('ROLLBACK');
  // What the rollback removed, the statement created.
  const left = new Set((await ex.must(existingSql(names.map(([oid]) => Number(oid))))).map(([oid]) => Number(oid)));
  const byOid = new Map(names.map(([oid, name, kind, of]) => [Number(oid), { name: name!, kind: RELKIND[kind!] ?? 'other', of }]));
  const relations: RelationLock[] = relLocks.flatMap(({ oid, mode }) => {
    const n = byOid.get(oid);
    if (!n) return [];
    return [{ relation: n.name, kind: n.kind, ...(n.of ? { of: n.of } : {}), mode, created: !left.has(oid) }];
  });
  relations.sort(
    (a, b) =>
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) ||
      (a.of ?? a.relation).localeCompare(b.of ?? b.relation) ||
      a.relation.localeCompare(b.relation) ||
      MODE_ORDER.indexOf(a.mode) - MODE_ORDER.indexOf(b.mode),
  );
  const rows: RowLock[] = touched.map((t) => ({ relation: t.relation, ctid: `(${t.block},${t.offset})`, mode: t.mode }));
  // After the rollback the versions the statement locked or replaced are the live ones again.
  for (const rel of new Set(rows.map((x) => x.relation))) {
    const mine = rows.filter((x) => x.relation === rel);
    // `t.*` names the row even when the table has a column called t (plain `t` would be that column).
    const back = await ex.run(
      `SELECT t.ctid::text, pg_catalog.row_to_json(t.*)::text FROM ${quoteIdent(rel)} t WHERE t.ctid = ANY('{${mine.map((x) => `"${x.ctid}"`).join(',')}}'::tid[])`,
    );
    const values = new Map((back.results.at(-1)?.rows ?? []).map(([ctid, json]) => [ctid, json]));
    for (const x of mine) {
      const v = values.get(x.ctid);
      if (v) x.row = v;
    }
  }
  return { outcome: 'measured', relations, rows, xid: xids.size > 0, notices: r.notices };
}

/** User schemas besides public (the system's, the engine's and the diagnostics' own are kept). */
const OTHER_SCHEMAS_SQL = `SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname NOT IN
  ('public', 'information_schema', '${INTERNAL_SCHEMA}', '${SHADOW_SCHEMA}', '${DIAG_SCHEMA}') AND nspname NOT LIKE 'pg\\_%'`;

/** Of the given relations, those that exist. */
function existingSql(oids: number[]): string {
  return `SELECT c.oid::int FROM pg_catalog.pg_class c WHERE c.oid = ANY('{${oids.join(',')}}'::oid[])`;
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * Deferred unique and foreign-key constraints, checked at COMMIT and at SET CONSTRAINTS … IMMEDIATE.
 *
 * A DEFERRABLE unique constraint's index takes a duplicate in (UNIQUE_CHECK_PARTIAL) and queues
 * a recheck of the new row (unique_key_recheck), which the index insert asks for only when it met
 * a possible duplicate. The recheck runs _bt_check_unique for real: it waits for an open
 * transaction that inserted the key, or that updated or deleted a committed row with it, and
 * raises 23505 when a live row holds the key (a committed one, or another of the transaction's
 * own). The replay in PGlite sits on the committed rows and the transaction's own, so a query
 * there finds those duplicates; the model knows the other transactions' keys and changed rows.
 */
import type { EngineContext } from '../context';
import { keyOwner, waitOnXid, walkPlan } from '../model/acquire';
import { constraintDeferred, type Deferrable } from '../model/deferred';
import { PG, xactWaitContext } from '../model/messages';
import type { TupleId } from '../model/rowlocks';
import { groupBy } from '../model/util';
import type { Sess, UniqueKey } from '../state';
import type { PgMessage } from '../types';
import { keyBlocker } from './catalog';
import { uniqueKeysSql } from './footprint';
import { CTID_MAP } from './names';
import { riCheckQuery } from './probes';

/**
 * Runs the checks of `keys` (in the order they went in) inside a PGlite transaction that has the
 * session's log replayed: 'wait' when one waits for another transaction (the step's wait is set),
 * the error when one fails, undefined when all pass.
 */
export async function checkDeferredKeys(eng: EngineContext, s: Sess, keys: UniqueKey[]): Promise<PgMessage | 'wait' | undefined> {
  const duplicated = await replayedDuplicates(eng, keys);
  for (const k of keys) {
    // An open transaction's key this one met when it went in: _bt_check_unique waits for it.
    const owner = k.openConflict ? keyOwner(eng, s, k.index, k.key) : undefined;
    if (owner) {
      const waited = waitForKey(eng, s, k, owner);
      if (waited) return waited;
    }
    if (!duplicated.has(`${k.index}\u0001${k.key}`)) continue;
    const error = PG.uniqueViolation(k.index, k.key);
    // A committed row with the key that an open transaction updated or deleted is waited for.
    const blocker = await keyBlocker(eng, s, error);
    return (blocker && waitForKey(eng, s, k, blocker)) || error;
  }
  return undefined;
}

/** The keys among `keys` that two live rows hold in the replayed transaction ("index\u0001key"). */
async function replayedDuplicates(eng: EngineContext, keys: UniqueKey[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [table, list] of groupBy(keys, (k) => k.table ?? '')) {
    const cat = eng.catalog.find((c) => c.name === table);
    const sql = cat && uniqueKeysSql(cat, 'all');
    if (!sql) continue;
    const cols = cat.uniqueIndexes.map((_, i) => `k${i}`);
    const wanted = new Set(list.map((k) => `${k.index}\u0001${k.key}`));
    const rows = await eng.ex.must(
      `SELECT key FROM (${sql}) AS u(c, ${cols.join(', ')}) CROSS JOIN LATERAL unnest(ARRAY[${cols.join(', ')}]) AS x(key) WHERE key IS NOT NULL GROUP BY key HAVING count(*) > 1`,
    );
    for (const [key] of rows) if (key && wanted.has(key)) out.add(key);
  }
  return out;
}

/** The check's wait for the transaction that holds the key: "while inserting index tuple" of the own row. */
function waitForKey(eng: EngineContext, s: Sess, k: UniqueKey, holder: { session: string; xid: number }): PgMessage | 'wait' | undefined {
  const [b, o] = (k.ctid ?? '').slice(1, -1).split(',').map(Number);
  const context = k.ctid ? xactWaitContext('insert', b, o, k.index) : undefined;
  const r = waitOnXid(eng, s, holder.session, holder.xid, undefined, 'insert', context);
  if (r === 'wait') return 'wait';
  // A deadlock found at once fails the step; otherwise the holder was no longer running.
  return s.step?.error;
}

/** A DEFERRABLE foreign key of a table whose rows the transaction inserted or updated. */
export interface ForeignKeyCheck extends Deferrable {
  child: { oid: number; name: string; sql: string };
  parent: { oid: number; name: string; sql: string; partitioned: boolean };
  /** Referencing and referenced columns, and the operator comparing them (conpfeqop). */
  cols: { fk: string; pk: string; op: string }[];
  /** The referencing key of each committed row the transaction updated, by ctid (a check runs only if it changed). */
  before: Map<string, string>;
}

/**
 * The deferrable foreign keys of the tables the transaction inserted rows into or updated rows
 * of, with the committed keys of the rows it updated; read from the committed catalog, before
 * the replay. Empty for most transactions (no such table has triggers).
 */
export async function deferrableForeignKeys(eng: EngineContext, s: Sess): Promise<ForeignKeyCheck[]> {
  const txn = s.txn!;
  const rels = new Set<number>();
  for (const e of txn.log)
    if (e.kind === 'image')
      for (const op of e.ops) {
        if (op.op === 'insert') rels.add(op.rel);
        else if (op.op === 'update') rels.add(op.target.rel);
      }
  const candidates = [...rels].filter((oid) => eng.catalog.find((c) => c.oid === oid)?.triggersOrRules);
  if (!candidates.length) return [];
  const rows = await eng.ex.must(
    `SELECT con.conname, con.condeferred, con.conrelid::int, cr.relname,
       pg_catalog.quote_ident(cn.nspname) || '.' || pg_catalog.quote_ident(cr.relname),
       con.confrelid::int, pr.relname, pg_catalog.quote_ident(pn.nspname) || '.' || pg_catalog.quote_ident(pr.relname), pr.relkind = 'p',
       (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(pg_catalog.quote_ident(fa.attname), pg_catalog.quote_ident(pa.attname),
            'OPERATOR(' || pg_catalog.quote_ident(opn.nspname) || '.' || op.oprname || ')') ORDER BY k.i)::text
          FROM unnest(con.conkey, con.confkey, con.conpfeqop) WITH ORDINALITY AS k(fk, pk, opr, i)
          JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.conrelid AND fa.attnum = k.fk
          JOIN pg_catalog.pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = k.pk
          JOIN pg_catalog.pg_operator op ON op.oid = k.opr JOIN pg_catalog.pg_namespace opn ON opn.oid = op.oprnamespace)
     FROM pg_catalog.pg_constraint con
     JOIN pg_catalog.pg_class cr ON cr.oid = con.conrelid JOIN pg_catalog.pg_namespace cn ON cn.oid = cr.relnamespace
     JOIN pg_catalog.pg_class pr ON pr.oid = con.confrelid JOIN pg_catalog.pg_namespace pn ON pn.oid = pr.relnamespace
     WHERE con.contype = 'f' AND con.condeferrable AND con.conrelid = ANY('{${candidates.join(',')}}'::oid[])
     ORDER BY con.oid`,
  );
  const out: ForeignKeyCheck[] = [];
  for (const [name, deferred, childOid, child, childSql, parentOid, parent, parentSql, partitioned, cols] of rows) {
    const fk: ForeignKeyCheck = {
      constraint: name!,
      initiallyDeferred: deferred === 't',
      child: { oid: Number(childOid), name: child!, sql: childSql! },
      parent: { oid: Number(parentOid), name: parent!, sql: parentSql!, partitioned: partitioned === 't' },
      cols: (JSON.parse(cols ?? '[]') as [string, string, string][]).map(([f, p, o]) => ({ fk: f, pk: p, op: o })),
      before: new Map(),
    };
    const origins = [...txn.originOf.values()].filter((t) => t.oid === fk.child.oid).map((t) => `"(${t.block},${t.offset})"`);
    if (origins.length)
      for (const [ctid, key] of await eng.ex.must(
        `SELECT ctid::text, ${keyText(fk, 'c')} FROM ONLY ${fk.child.sql} c WHERE ctid = ANY('{${origins.join(',')}}'::tid[])`,
      ))
        fk.before.set(ctid!, key ?? '');
    out.push(fk);
  }
  return out;
}

/** The referencing key of a row as the violation's DETAIL prints its values ("1, 2"). */
function keyText(fk: ForeignKeyCheck, alias: string): string {
  return fk.cols.map((c) => `COALESCE((${alias}.${c.fk})::text, 'null')`).join(` || ', ' || `);
}

/**
 * The deferred foreign-key checks (RI_FKey_check) of the rows the transaction inserted or whose
 * key it changed, for the constraints deferred now (or named by SET CONSTRAINTS … IMMEDIATE:
 * `names`), inside the replay: each locks the referenced row FOR KEY SHARE, waiting for a
 * transaction that deleted it or changed its key, and fails with 23503 when no row has the key.
 */
export async function checkDeferredForeignKeys(
  eng: EngineContext,
  s: Sess,
  fks: ForeignKeyCheck[],
  names?: string[] | null,
): Promise<PgMessage | 'wait' | undefined> {
  const txn = s.txn!;
  const due = fks.filter((fk) => (names === undefined ? constraintDeferred(txn, fk) : names === null || names.includes(fk.constraint)));
  for (const fk of due) {
    const match = fk.cols.map((c) => `p.${c.pk} ${c.op} c.${c.fk}`).join(' AND ');
    const notNull = fk.cols.map((c) => `c.${c.fk} IS NOT NULL`).join(' AND ');
    // The transaction's live row versions in the referencing table, in the order it made them.
    const rows = await eng.ex.must(
      `SELECT m.orig, ${keyText(fk, 'c')},
         (SELECT p.tableoid::int || ' ' || p.ctid::text FROM ${fk.parent.partitioned ? '' : 'ONLY '}${fk.parent.sql} p WHERE ${match} LIMIT 1)
       FROM ${CTID_MAP} m JOIN ONLY ${fk.child.sql} c ON c.ctid = m.cur
       WHERE m.rel = ${fk.child.oid} AND ${notNull} ORDER BY m.ctid`,
    );
    for (const [orig, key, parent] of rows) {
      // An update that kept the key of a committed row queues no check (RI_FKey_fk_upd_check_required).
      const origin = txn.originOf.get(`${fk.child.oid}:${orig}`);
      if (origin && fk.before.get(`(${origin.block},${origin.offset})`) === key) continue;
      if (!parent)
        return PG.foreignKeyMissing(
          fk.child.name,
          fk.constraint,
          fk.cols.map((c) => unquote(c.fk)),
          key ?? '',
          fk.parent.name,
        );
      const [oid, ctid] = parent.split(' ');
      const [block, offset] = ctid.slice(1, -1).split(',').map(Number);
      const tuple: TupleId = { oid: Number(oid), relation: eng.relations.get(Number(oid))?.name ?? fk.parent.name, block, offset };
      const st = s.step!.statements[s.step!.idx];
      const walked = walkPlan(
        eng,
        s,
        st,
        {
          raw: { results: [], notices: [] },
          plan: [{ kind: 'row', tuple, mode: 'ForKeyShare' }],
          assignsXid: false,
          inserted: [],
          sessionAdvisory: null,
          entry: null,
        },
        new Set(['row']),
      );
      if (walked === 'wait') {
        const w = s.step!.wait;
        const query = await riCheckQuery(eng, tuple.oid, [fk.child.oid]);
        if (w?.context && query) w.context += `\nSQL statement "${query}"`;
        return 'wait';
      }
      if (walked === 'error') return s.step!.error;
    }
  }
  return undefined;
}

/** A column name as quote_ident gave it, as the DETAIL prints it (unquoted). */
function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name;
}

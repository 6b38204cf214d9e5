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
import { ident, literal } from './replay';
import { riCheckQuery } from './probes';

/**
 * Runs the checks of `keys` (in the order they went in) inside a PGlite transaction that has the
 * session's log replayed: 'wait' when one waits for another transaction (the step's wait is set),
 * the error when one fails, undefined when all pass.
 */
export async function checkDeferredKeys(eng: EngineContext, s: Sess, keys: UniqueKey[]): Promise<PgMessage | 'wait' | undefined> {
  const counts = await replayedKeyCounts(eng, keys);
  for (const k of keys) {
    const id = `${k.index}\u0001${k.key}`;
    // An open transaction's key this one met when it went in: _bt_check_unique waits for it,
    // unless the row is gone (unique_key_recheck skips a row no longer live).
    const owner = k.openConflict && counts.has(id) ? keyOwner(eng, s, k.index, k.key) : undefined;
    if (owner) {
      const waited = waitForKey(eng, s, k, owner);
      if (waited) return waited;
    }
    if ((counts.get(id) ?? 0) < 2) continue;
    const error = PG.uniqueViolation(k.index, k.key);
    // A committed row with the key that an open transaction updated or deleted is waited for.
    const blocker = await keyBlocker(eng, s, error);
    return (blocker && waitForKey(eng, s, k, blocker)) || error;
  }
  return undefined;
}

/** How many live rows hold each of `keys` in the replayed transaction ("index\u0001key"; absent: none). */
async function replayedKeyCounts(eng: EngineContext, keys: UniqueKey[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [table, list] of groupBy(keys, (k) => k.table ?? '')) {
    const cat = eng.catalog.find((c) => c.name === table);
    const sql = cat && uniqueKeysSql(cat, 'all');
    if (!sql) continue;
    const cols = cat.uniqueIndexes.map((_, i) => `k${i}`);
    const wanted = new Set(list.map((k) => `${k.index}\u0001${k.key}`));
    const rows = await eng.ex.must(
      `SELECT key, count(*) FROM (${sql}) AS u(c, ${cols.join(', ')}) CROSS JOIN LATERAL unnest(ARRAY[${cols.join(', ')}]) AS x(key) WHERE key = ANY(${literal(`{${[...wanted].map((w) => `"${w.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)}::text[]) GROUP BY key`,
    );
    for (const [key, n] of rows) if (key && wanted.has(key)) out.set(key, Number(n));
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

/** A DEFERRABLE foreign key of a table the transaction wrote rows of, on either side. */
export interface ForeignKeyCheck extends Deferrable {
  child: { oid: number; name: string; sql: string; partitioned: boolean; schema: string };
  parent: { oid: number; name: string; sql: string; partitioned: boolean };
  /** Referencing and referenced columns (names as in the catalog), the referenced column's type, and the operator comparing them (conpfeqop). */
  cols: { fk: string; pk: string; pkType: string; op: string }[];
  /** The referencing key of each committed row the transaction updated, by ctid (a check runs only if it changed). */
  before: Map<string, string>;
  /**
   * NO ACTION on the referenced side: the committed keys of the referenced rows the transaction
   * deleted, or updated, in the order it did (each value as text; the text as a DETAIL prints it).
   */
  removed: { values: string[]; text: string }[];
}

/** The deferrable foreign keys read for a catalog (a new catalog after DDL reads them again), by the tables written. */
const fkDefinitions = new WeakMap<object, Map<string, (string | null)[][]>>();

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The deferrable foreign keys of the tables the transaction inserted rows into or updated rows
 * of (the referencing side), or deleted or updated rows of (the referenced side, NO ACTION), with
 * the committed keys of the rows it updated or deleted there; read from the committed catalog and
 * rows, before the replay. Empty for most transactions (no such table has triggers).
 */
export async function deferrableForeignKeys(eng: EngineContext, s: Sess): Promise<ForeignKeyCheck[]> {
  const txn = s.txn!;
  const written = new Set<number>();
  const removedFrom = new Map<number, string[]>();
  const remove = (rel: number, ctid: string) => {
    const list = removedFrom.get(rel) ?? [];
    if (!list.includes(ctid)) list.push(ctid);
    removedFrom.set(rel, list);
  };
  for (const e of txn.log)
    if (e.kind === 'image')
      for (const op of e.ops) {
        if (op.op === 'insert') written.add(op.rel);
        else if (op.op === 'update') written.add(op.target.rel);
        if ((op.op === 'update' || op.op === 'delete') && !op.target.own) remove(op.target.rel, op.target.ctid);
      }
  const withTriggers = (oids: Iterable<number>) => [...oids].filter((oid) => eng.catalog.find((c) => c.oid === oid)?.triggersOrRules);
  const children = withTriggers(written);
  const parents = withTriggers(removedFrom.keys());
  if (!children.length && !parents.length) return [];
  const cacheKey = `${children.join(',')}/${parents.join(',')}`;
  const cached = fkDefinitions.get(eng.catalog)?.get(cacheKey);
  const rows =
    cached ??
    (await eng.ex.must(
      `SELECT con.conname, con.condeferred, con.conrelid::int, cr.relname,
       pg_catalog.quote_ident(cn.nspname) || '.' || pg_catalog.quote_ident(cr.relname), cr.relkind = 'p', cn.nspname,
       con.confrelid::int, pr.relname, pg_catalog.quote_ident(pn.nspname) || '.' || pg_catalog.quote_ident(pr.relname), pr.relkind = 'p',
       (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(fa.attname, pa.attname, pg_catalog.format_type(pa.atttypid, pa.atttypmod),
            'OPERATOR(' || opn.nspname || '.' || op.oprname || ')') ORDER BY k.i)::text
          FROM unnest(con.conkey, con.confkey, con.conpfeqop) WITH ORDINALITY AS k(fk, pk, opr, i)
          JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.conrelid AND fa.attnum = k.fk
          JOIN pg_catalog.pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = k.pk
          JOIN pg_catalog.pg_operator op ON op.oid = k.opr JOIN pg_catalog.pg_namespace opn ON opn.oid = op.oprnamespace),
       con.confdeltype = 'a', con.confupdtype = 'a'
     FROM pg_catalog.pg_constraint con
     JOIN pg_catalog.pg_class cr ON cr.oid = con.conrelid JOIN pg_catalog.pg_namespace cn ON cn.oid = cr.relnamespace
     JOIN pg_catalog.pg_class pr ON pr.oid = con.confrelid JOIN pg_catalog.pg_namespace pn ON pn.oid = pr.relnamespace
     WHERE con.contype = 'f' AND con.condeferrable
       AND (con.conrelid = ANY('{${children.join(',')}}'::oid[]) OR con.confrelid = ANY('{${parents.join(',')}}'::oid[]))
     ORDER BY con.oid`,
    ));
  if (!cached) {
    const byTables = fkDefinitions.get(eng.catalog) ?? new Map<string, (string | null)[][]>();
    byTables.set(cacheKey, rows);
    fkDefinitions.set(eng.catalog, byTables);
  }
  const out: ForeignKeyCheck[] = [];
  for (const [
    name,
    deferred,
    childOid,
    child,
    childSql,
    childPart,
    childSchema,
    parentOid,
    parent,
    parentSql,
    parentPart,
    cols,
    noActDel,
    noActUpd,
  ] of rows) {
    const fk: ForeignKeyCheck = {
      constraint: name!,
      initiallyDeferred: deferred === 't',
      child: { oid: Number(childOid), name: child!, sql: childSql!, partitioned: childPart === 't', schema: childSchema! },
      parent: { oid: Number(parentOid), name: parent!, sql: parentSql!, partitioned: parentPart === 't' },
      cols: (JSON.parse(cols ?? '[]') as [string, string, string, string][]).map(([f, p, t, o]) => ({ fk: f, pk: p, pkType: t, op: o })),
      before: new Map(),
      removed: [],
    };
    const origins = [...txn.originOf.values()].filter((t) => t.oid === fk.child.oid).map((t) => `"(${t.block},${t.offset})"`);
    if (children.includes(fk.child.oid) && origins.length)
      for (const [ctid, key] of await eng.ex.must(
        `SELECT ctid::text, ${keyText(fk.cols.map((c) => `c.${ident(c.fk)}`))} FROM ONLY ${fk.child.sql} c WHERE ctid = ANY('{${origins.join(',')}}'::tid[])`,
      ))
        fk.before.set(ctid!, key ?? '');
    // A deleted row's NO ACTION check (RI_FKey_noaction_del), an updated one's (RI_FKey_noaction_upd).
    const removed = (removedFrom.get(fk.parent.oid) ?? []).filter((ctid) => {
      const deleted = txn.log.some(
        (e) => e.kind === 'image' && e.ops.some((op) => op.op === 'delete' && op.target.rel === fk.parent.oid && op.target.ctid === ctid),
      );
      return deleted ? noActDel === 't' : noActUpd === 't';
    });
    if (removed.length) {
      const pks = fk.cols.map((c) => `p.${ident(c.pk)}`);
      const found = new Map(
        (
          await eng.ex.must(
            `SELECT ctid::text, pg_catalog.json_build_array(${pks.map((k) => `(${k})::text`).join(', ')})::text, ${keyText(pks)}
             FROM ONLY ${fk.parent.sql} p WHERE ctid = ANY('{${removed.map((c) => `"${c}"`).join(',')}}'::tid[])`,
          )
        ).map(([ctid, values, text]) => [ctid!, { values: JSON.parse(values!) as string[], text: text! }]),
      );
      for (const ctid of removed) {
        const k = found.get(ctid);
        if (k && !k.values.includes(null as unknown as string) && !fk.removed.some((r) => r.text === k.text)) fk.removed.push(k);
      }
    }
    out.push(fk);
  }
  return out;
}

/** A key's values as the violation's DETAIL prints them ("1, 2"). */
function keyText(exprs: string[]): string {
  return exprs.map((e) => `COALESCE((${e})::text, 'null')`).join(` || ', ' || `);
}

/**
 * The deferred foreign-key checks of the constraints deferred now (or named by SET CONSTRAINTS …
 * IMMEDIATE: `names`), inside the replay. The referencing side's (RI_FKey_check) for the rows
 * the transaction inserted or whose key it changed: each locks the referenced row FOR KEY SHARE,
 * waiting for a transaction that deleted it or changed its key, and fails with 23503 when no row
 * has the key. The referenced side's (NO ACTION, ri_restrict) for the keys it deleted or changed:
 * unless a row has the key again, the first row still referencing it is locked FOR KEY SHARE
 * (waiting for a transaction that deleted it) and fails the check with 23503.
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
    const match = fk.cols.map((c) => `p.${ident(c.pk)} ${c.op} c.${ident(c.fk)}`).join(' AND ');
    const notNull = fk.cols.map((c) => `c.${ident(c.fk)} IS NOT NULL`).join(' AND ');
    // The transaction's live row versions in the referencing table, in the order it made them.
    const rows = await eng.ex.must(
      `SELECT m.orig, ${keyText(fk.cols.map((c) => `c.${ident(c.fk)}`))},
         (SELECT p.tableoid::int || ' ' || p.ctid::text FROM ${fk.parent.partitioned ? '' : 'ONLY '}${fk.parent.sql} p WHERE ${match} LIMIT 1)
       FROM ${CTID_MAP} m JOIN ONLY ${fk.child.sql} c ON c.ctid = m.cur
       WHERE m.rel = ${fk.child.oid} AND ${notNull} ORDER BY m.ctid`,
    );
    for (const [orig, key, parent] of rows) {
      // An update that kept the key of a committed row queues no check (RI_FKey_fk_upd_check_required).
      const origin = txn.originOf.get(`${fk.child.oid}:${orig}`);
      if (origin && fk.before.get(`(${origin.block},${origin.offset})`) === key) continue;
      // After waiting for the referenced row's deleter or key changer, RI_FKey_check's query,
      // whose snapshot predates the wait, finds that row gone (or no longer matching, after
      // EvalPlanQual) and cannot see a row with the key committed meanwhile: only the row it
      // waited for, still there because its holder rolled back, satisfies it.
      const waited = s.step!.deferredFkWait;
      const stale = waited?.constraint === fk.constraint && waited.orig === orig && waited.row !== parent;
      if (waited?.constraint === fk.constraint && waited.orig === orig) s.step!.deferredFkWait = undefined;
      if (!parent || stale)
        return PG.foreignKeyMissing(
          fk.child.name,
          fk.constraint,
          fk.cols.map((c) => c.fk),
          key ?? '',
          fk.parent.name,
        );
      const query = await riCheckQuery(eng, Number(parent.split(' ')[0]), [fk.child.oid]);
      const locked = lockForKeyShare(eng, s, parent, query);
      if (locked === 'wait') s.step!.deferredFkWait = { constraint: fk.constraint, orig: orig!, row: parent };
      if (locked) return locked;
    }
    for (const k of fk.removed) {
      const lits = k.values.map((v, i) => `${literal(v)}::${fk.cols[i].pkType}`);
      // ri_Check_Pk_Match: another row with the key (the key put back) satisfies the constraint.
      const again = await eng.ex.must(
        `SELECT 1 FROM ${fk.parent.partitioned ? '' : 'ONLY '}${fk.parent.sql} p WHERE ${fk.cols.map((c, i) => `p.${ident(c.pk)} = ${lits[i]}`).join(' AND ')} LIMIT 1`,
      );
      if (again.length) continue;
      const only = fk.child.partitioned ? '' : 'ONLY ';
      const referencing = await eng.ex.must(
        `SELECT x.tableoid::int || ' ' || x.ctid::text FROM ${only}${fk.child.sql} x WHERE ${fk.cols.map((c, i) => `${lits[i]} ${c.op} x.${ident(c.fk)}`).join(' AND ')} LIMIT 1`,
      );
      if (!referencing.length) continue;
      // ri_restrict's query, as its CONTEXT prints it (names always quoted).
      const query = `SELECT 1 FROM ${only}${quoted(fk.child.schema)}.${quoted(fk.child.name)} x WHERE ${fk.cols.map((c, i) => `$${i + 1} ${c.op} ${quoted(c.fk)}`).join(' AND ')} FOR KEY SHARE OF x`;
      const locked = lockForKeyShare(eng, s, referencing[0][0]!, query);
      if (locked) return locked;
      return PG.foreignKeyReferenced(
        fk.parent.name,
        fk.constraint,
        fk.child.name,
        fk.cols.map((c) => c.pk),
        k.text,
      );
    }
  }
  return undefined;
}

/**
 * The check's FOR KEY SHARE on a row ("tableoid (block,offset)"), in the lock model: 'wait' (its
 * CONTEXT names the check's query) or the step's error when it cannot have it now, else undefined.
 */
function lockForKeyShare(eng: EngineContext, s: Sess, row: string, query: string | undefined): PgMessage | 'wait' | undefined {
  const [oid, ctid] = row.split(' ');
  const [block, offset] = ctid.slice(1, -1).split(',').map(Number);
  const tuple: TupleId = { oid: Number(oid), relation: eng.relations.get(Number(oid))?.name ?? '', block, offset };
  const step = s.step!;
  const walked = walkPlan(
    eng,
    s,
    step.statements[step.idx],
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
    if (step.wait?.context && query) step.wait.context += `\nSQL statement "${query}"`;
    return 'wait';
  }
  return walked === 'error' ? step.error : undefined;
}

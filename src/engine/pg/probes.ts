/**
 * Catalog and plan probes a statement's outcome needs beyond its dry run: the CONTEXT of a wait in
 * a foreign-key check, and the approximation notes that depend on PGlite's plan or catalog.
 */
import type { EngineContext } from '../context';
import { approximate } from '../model/approximate';
import { EngineInternalError } from '../errors';
import type { DryRun, PlanItem } from '../model/facts';
import type { TupleId } from '../model/rowlocks';
import { keyOwner } from '../model/acquire';
import { groupBy } from '../model/util';
import { restoreSequences, sequenceStates } from './catalog';
import { dryRun, targetIndexScan } from './dryRun';
import { uniqueKeysSql } from './footprint';
import { type ParsedStatement, parseStatements } from '../sql';
import type { Sess } from '../state';
import type { PgMessage } from '../types';
import { relSql } from './replay';

/**
 * A DELETE that waits for a row after locking others, reading its target with an Index Scan:
 * PostgreSQL meets its rows in key order, the simulator in ctid order (an UPDATE's, and a
 * bitmap scan's, are put in the scan's order by the dry run). An UPDATE or DELETE locking its
 * rows through a subquery with ORDER BY … FOR UPDATE: the subquery's order decides, which the
 * simulator does not follow. Both said on screen.
 */
export async function noteLockOrder(eng: EngineContext, s: Sess, st: ParsedStatement, plan: PlanItem[]): Promise<void> {
  const cls = st.cls;
  if (cls.kind !== 'dml' || (cls.verb !== 'update' && cls.verb !== 'delete') || !cls.target) return;
  const sub = cls.lockingSublink;
  if (sub?.ordered && plan.filter((p) => p.kind === 'row' && p.tuple.relation === sub.relname).length >= 2) {
    // The subquery's order is the one that decides; its scan's index says nothing more.
    approximate(eng, s, 'subquery-lock-order');
    return;
  }
  if (cls.verb !== 'delete') return;
  if ((await targetIndexScan(eng, s, st, plan)) === 'index') approximate(eng, s, 'index-order');
}

/**
 * A row wait on a table the statement does not name, with one foreign key from a table it does:
 * the lock is the referential check's (ri_triggers.c), whose query PostgreSQL's CONTEXT shows
 * after the tuple ("SQL statement "SELECT 1 FROM ONLY … FOR KEY SHARE OF x"").
 */
export async function foreignKeyContext(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<void> {
  const w = s.step?.wait;
  const cls = st.cls;
  if (!w?.tuple || !w.context || cls.kind !== 'dml' || cls.relations.includes(w.tuple.relation)) return;
  // The check's FOR KEY SHARE does not wait for a holder that only updated non-key columns.
  if (!keyShareBlocked(eng, s, w.tuple)) return;
  // eng.relations knows partitioned tables too (they have no storage, so no catalog entry).
  const from = cls.relations.flatMap((r) => [...eng.relations].filter(([, i]) => !i.isIndex && i.name === r).map(([oid]) => oid));
  if (!from.length) return;
  const query = await riCheckQuery(eng, w.tuple.oid, from);
  if (query) w.context += `\nSQL statement "${query}"`;
}

/**
 * The query ri_triggers.c runs to check a row of one of `from` (or of their partitions) against
 * the referenced table holding `parentOid`'s rows: undefined unless exactly one such check exists.
 */
export async function riCheckQuery(eng: EngineContext, parentOid: number, from: number[]): Promise<string | undefined> {
  // A partitioned referenced table is queried without ONLY, at its root (ri_triggers.c's pk_only);
  // the row is in a partition, and the referencing side's partitions have their own constraints.
  const rows = await eng.ex.must(
    `SELECT DISTINCT q FROM (SELECT 'SELECT 1 FROM ' || CASE WHEN pc.relkind = 'p' THEN '' ELSE 'ONLY ' END || '"' || pg_catalog.replace(pn.nspname, '"', '""') || '"' || '.' || '"' || pg_catalog.replace(pc.relname, '"', '""') || '"' || ' x WHERE ' ||
        pg_catalog.string_agg('"' || pg_catalog.replace(pa.attname, '"', '""') || '"' || ' OPERATOR(' || opn.nspname || '.' || op.oprname || ') $' || k.i, ' AND ' ORDER BY k.i) ||
        ' FOR KEY SHARE OF x' AS q
       FROM pg_catalog.pg_constraint con
       JOIN pg_catalog.pg_class pc ON pc.oid = con.confrelid JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
       CROSS JOIN LATERAL unnest(con.confkey, con.conpfeqop) WITH ORDINALITY AS k(att, opr, i)
       JOIN pg_catalog.pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = k.att
       JOIN pg_catalog.pg_operator op ON op.oid = k.opr JOIN pg_catalog.pg_namespace opn ON opn.oid = op.oprnamespace
       WHERE con.contype = 'f'
         -- (the partition functions return no rows for a table that is not partitioned)
         AND (con.confrelid = ${Number(parentOid)} OR con.confrelid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors(${Number(parentOid)})))
         AND (con.conrelid = ANY('{${from.join(',')}}'::oid[])
           OR con.conrelid IN (SELECT t.relid FROM unnest('{${from.join(',')}}'::oid[]) AS f(oid), LATERAL pg_catalog.pg_partition_tree(f.oid) AS t))
         -- a clone for a referenced partition (same referencing table as its parent) is not the one checked
         AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint par WHERE par.oid = con.conparentid AND par.conrelid = con.conrelid)
       GROUP BY con.oid, pn.nspname, pc.relname, pc.relkind) AS checks`,
  );
  // Names always quoted, as ri_triggers.c's quoteOneName does.
  return rows.length === 1 && rows[0][0] ? rows[0][0] : undefined;
}

/**
 * COMMIT of a transaction that changed a table with a deferrable constraint trigger of the
 * user's: it does not run again here. Deferred unique and foreign-key checks (their internal
 * triggers) are modelled (pg/deferred.ts).
 */
export async function noteDeferred(eng: EngineContext, s: Sess): Promise<void> {
  const rels = new Set<number>();
  for (const e of s.txn?.log ?? [])
    if (e.kind === 'image') for (const op of e.ops) if (op.op !== 'advisory') rels.add(op.op === 'insert' ? op.rel : op.target.rel);
  const candidates = [...rels].filter((oid) => eng.catalog.find((c) => c.oid === oid)?.triggersOrRules);
  if (!candidates.length) return;
  const rows = await eng.ex.must(
    `SELECT 1 FROM pg_catalog.pg_trigger WHERE tgdeferrable AND tgrelid = ANY('{${candidates.join(',')}}'::oid[])
       AND tgfoid NOT IN ('pg_catalog.unique_key_recheck'::pg_catalog.regproc, 'pg_catalog."RI_FKey_check_ins"'::pg_catalog.regproc,
         'pg_catalog."RI_FKey_check_upd"'::pg_catalog.regproc, 'pg_catalog."RI_FKey_noaction_del"'::pg_catalog.regproc,
         'pg_catalog."RI_FKey_noaction_upd"'::pg_catalog.regproc) LIMIT 1`,
  );
  if (rows.length) approximate(eng, s, 'deferred-commit');
}

/**
 * The check a referenced row's NO ACTION / RESTRICT constraint runs when an UPDATE or DELETE
 * removes its key (ri_triggers.c's ri_restrict), for the key a failed statement reported ("Key
 * (id)=(1) is still referenced from table …", or "is referenced" for RESTRICT's 23001). That check locks the referencing rows FOR KEY
 * SHARE before it reports one, so it waits for a transaction that deleted such a row, changed
 * its key or locked it FOR UPDATE, and fails only if the row is still there afterwards.
 * `probe`: a locking SELECT finding those rows as the check does (by the key's text, as the
 * DETAIL prints it), stopping at the first row it locks, as the check asks SPI for one row
 * (ri_PerformCheck); `query`: the check's own query, as PostgreSQL's CONTEXT names it.
 * Undefined for any other error.
 */
export async function referencingRowsCheck(eng: EngineContext, error: PgMessage): Promise<{ probe: string; query: string } | undefined> {
  // NO ACTION: 23503 "… violates foreign key constraint …", "… is still referenced …";
  // RESTRICT: 23001 "… violates RESTRICT setting of foreign key constraint …", "… is referenced …".
  const m = /^update or delete on table "(.+)" violates (?:RESTRICT setting of )?foreign key constraint "(.+)" on table "(.+)"$/s.exec(
    error.message,
  );
  const d = /^Key \((.+?)\)=\((.*)\) is (?:still )?referenced from table "(.+)"\.$/s.exec(error.detail ?? '');
  if (!m || !d || d[3] !== m[3]) return undefined;
  const lit = (v: string) => `'${v.replace(/'/g, "''")}'`;
  const q = (expr: string) => `'"' || pg_catalog.replace(${expr}, '"', '""') || '"'`;
  const rows = await eng.ex.must(
    `SELECT 'SELECT 1 FROM ' || CASE WHEN fc.relkind = 'p' THEN '' ELSE 'ONLY ' END || ${q('fn.nspname')} || '.' || ${q('fc.relname')} || ' x WHERE pg_catalog.concat_ws('', '', ' ||
        pg_catalog.string_agg('x.' || ${q('fa.attname')} || '::text', ', ' ORDER BY k.i) || ') = ' || ${lit(lit(d[2]))} || ' FOR KEY SHARE OF x LIMIT 1',
       'SELECT 1 FROM ' || CASE WHEN fc.relkind = 'p' THEN '' ELSE 'ONLY ' END || ${q('fn.nspname')} || '.' || ${q('fc.relname')} || ' x WHERE ' ||
        pg_catalog.string_agg('$' || k.i || ' OPERATOR(' || opn.nspname || '.' || op.oprname || ') ' || ${q('fa.attname')}, ' AND ' ORDER BY k.i) || ' FOR KEY SHARE OF x'
       FROM pg_catalog.pg_constraint con
       JOIN pg_catalog.pg_class fc ON fc.oid = con.conrelid JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
       JOIN pg_catalog.pg_class pc ON pc.oid = con.confrelid
       CROSS JOIN LATERAL unnest(con.conkey, con.conpfeqop) WITH ORDINALITY AS k(att, opr, i)
       JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.conrelid AND fa.attnum = k.att
       JOIN pg_catalog.pg_operator op ON op.oid = k.opr JOIN pg_catalog.pg_namespace opn ON opn.oid = op.oprnamespace
       WHERE con.contype = 'f' AND con.conname = ${lit(m[2])} AND fc.relname = ${lit(m[3])} AND pc.relname = ${lit(m[1])}
       GROUP BY con.oid, fn.nspname, fc.relname, fc.relkind`,
  );
  return rows.length === 1 && rows[0][0] && rows[0][1] ? { probe: rows[0][0], query: rows[0][1] } : undefined;
}

/**
 * INSERT … ON CONFLICT checks each row it is about to insert against its arbiter indexes first
 * (ExecCheckIndexConstraints, with a dirty snapshot): a conflicting row that an open transaction
 * has updated or deleted is waited for, since that transaction may yet remove the conflict, and
 * afterwards the row is checked again (DO NOTHING inserts if the conflicting row is gone). The
 * dry run, where that transaction's change is not made, meets the committed row and skips it.
 * A second dry run with those rows removed shows which of them the statement's rows conflict
 * with: the first, in the order the statement inserts them, is the one its pre-check waits for.
 * Rows the dry run itself locked (DO UPDATE) are left to the plan's row waits.
 */
export async function arbiterBlocker(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  dry: DryRun,
): Promise<{ session: string; xid: number; tuple: TupleId } | undefined> {
  const cls = st.cls;
  if (cls.kind !== 'dml' || cls.verb !== 'insert' || !cls.onConflict) return undefined;
  const at = (t: TupleId) => `(${t.block},${t.offset})`;
  const planned = new Set(dry.plan.flatMap((p) => (p.kind === 'row' ? [`${p.tuple.oid}:${at(p.tuple)}`] : [])));
  const changed = eng.rows.all().flatMap(({ tuple, holders }) => {
    if (planned.has(`${tuple.oid}:${at(tuple)}`)) return [];
    const h = holders.find((x) => x.session !== s.name && (x.mode === 'Update' || x.mode === 'NoKeyUpdate'));
    return h ? [{ tuple, session: h.session, xid: h.xid }] : [];
  });
  if (!changed.length) return undefined;
  // Rows of the tables the statement names, or of their partitions (a partitioned table's rows are in those).
  const outside = [...new Set(changed.map((h) => h.tuple.oid))].filter(
    (oid) => !cls.relations.includes(changed.find((h) => h.tuple.oid === oid)!.tuple.relation),
  );
  const partitions = outside.length
    ? new Set(
        (
          await eng.ex.must(
            `SELECT c.oid::text FROM pg_catalog.pg_class c WHERE c.oid = ANY('{${outside.join(',')}}'::oid[]) AND c.relispartition AND (SELECT r.relname FROM pg_catalog.pg_class r WHERE r.oid = pg_catalog.pg_partition_root(c.oid)) = ANY(ARRAY[${cls.relations.map((r) => `'${r.replace(/'/g, "''")}'`).join(', ')}]::text[])`,
          )
        ).map((r) => Number(r[0])),
      )
    : new Set<number>();
  const held = changed.filter((h) => cls.relations.includes(h.tuple.relation) || partitions.has(h.tuple.oid));
  if (!held.length) return undefined;
  // Their unique keys as committed (the holders' changes are not in PGlite).
  const byKey = new Map<string, (typeof held)[number]>();
  const byTable = groupBy(held, (h) => h.tuple.relation);
  for (const [table, list] of byTable) {
    const cat = eng.catalog.find((c) => c.name === table);
    const sql =
      cat &&
      uniqueKeysSql(
        cat,
        list.map((h) => at(h.tuple)),
      );
    if (!sql) continue;
    for (const row of await eng.ex.must(sql)) {
      const h = list.find((x) => at(x.tuple) === row[0]);
      for (const k of row.slice(1)) if (k && h) byKey.set(k, h);
    }
  }
  if (!byKey.size) return undefined;
  // Remove them (triggers off: no cascade, no check) before the statement runs again.
  const deletes = [...byTable].map(
    ([table, list]) => `DELETE FROM ${relSql(eng, table)} WHERE ctid = ANY('{${list.map((h) => `"${at(h.tuple)}"`).join(',')}}'::tid[]);\n`,
  );
  const prelude = withoutTriggers(deletes);
  // nextval is not transactional: the probe gives back what its run took.
  const seqs = await sequenceStates(eng);
  let probe: DryRun;
  try {
    probe = await dryRun(eng, s, st, false, false, prelude);
  } catch (e) {
    if (!(e instanceof EngineInternalError)) throw e;
    return undefined;
  } finally {
    await restoreSequences(eng, seqs);
  }
  if (probe.raw.error) return undefined;
  const hits = probe.inserted.filter((k) => byKey.has(`${k.index}\u0001${k.key}`)).sort((a, b) => byCtid(a.ctid, b.ctid));
  return hits.length ? byKey.get(`${hits[0].index}\u0001${hits[0].key}`) : undefined;
}

/**
 * INSERT … ON CONFLICT without a conflict target takes every unique index as an arbiter and
 * checks each row against them in index order before it inserts it (ExecCheckIndexConstraints,
 * check_exclusion_or_unique_constraint with CEOUC_WAIT): an index whose key a row the statement
 * can see holds (a committed row, or one its own transaction inserted) ends the check and the
 * row is skipped, while one whose key another open transaction has inserted is waited for, even
 * when a later index would have found the row's conflict. The dry run, where that transaction's
 * row is not, meets only the later conflict and skips the row at once. A probe with the table's
 * rows removed forms the statement's rows and gives their keys; a read of the keys the
 * statement sees tells, index by index, which comes first. The owner of the first key waited for,
 * if any; rows the dry run inserted are left to the plan's key checks.
 */
export async function arbiterKeyOwner(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
): Promise<{ session: string; xid: number; table?: string; ctid?: string } | undefined> {
  const cls = st.cls;
  if (cls.kind !== 'dml' || cls.verb !== 'insert' || !cls.onConflict || cls.onConflictTarget) return undefined;
  const cat = eng.catalog.find((c) => c.name === cls.relations[0]);
  if (!cat || cat.uniqueIndexes.length < 2) return undefined;
  // Only another open transaction's own new keys in these indexes can make the check wait.
  const names = new Set(cat.uniqueIndexes.map((ix) => ix.name));
  const pending = [...eng.sessions.values()].some(
    (o) =>
      o !== s && o.txn && [...o.txn.insertedKeys, ...(o.step?.wait ? (o.step.keysBeforeWait ?? []) : [])].some((k) => names.has(k.index)),
  );
  if (!pending) return undefined;
  const keysSql = uniqueKeysSql(cat, 'all')!;
  const prelude = withoutTriggers([`DELETE FROM ${relSql(eng, cat.name)};\n`]);
  // nextval is not transactional: the probes give back what their runs took.
  const seqs = await sequenceStates(eng);
  let seen: DryRun;
  let formed: DryRun;
  try {
    seen = await dryRun(eng, s, parseStatements(keysSql)[0]);
    formed = await dryRun(eng, s, st, false, false, prelude);
  } catch (e) {
    if (!(e instanceof EngineInternalError)) throw e;
    return undefined;
  } finally {
    await restoreSequences(eng, seqs);
  }
  if (seen.raw.error || formed.raw.error) return undefined;
  const visible = new Set((seen.raw.results[0]?.rows ?? []).flatMap((row) => row.slice(1).flatMap((k) => (k ? [k] : []))));
  const rows = [...groupBy(formed.inserted, (k) => k.ctid ?? '')].sort(([a], [b]) => byCtid(a, b));
  for (const [, keys] of rows) {
    const inOrder = cat.uniqueIndexes.flatMap((ix) => keys.filter((k) => k.index === ix.name));
    // A row the dry run inserted: its keys are the plan's to check.
    if (!inOrder.some((k) => visible.has(`${k.index}\u0001${k.key}`))) {
      if (inOrder.some((k) => keyOwner(eng, s, k.index, k.key))) return undefined;
      continue;
    }
    for (const k of inOrder) {
      if (visible.has(`${k.index}\u0001${k.key}`)) break;
      const owner = keyOwner(eng, s, k.index, k.key);
      if (owner) return owner;
    }
  }
  return undefined;
}

/**
 * A probe's prelude: `statements` run with triggers, foreign-key checks and rules off
 * (session_replication_role = replica for them alone; the session's own setting comes back after).
 */
function withoutTriggers(statements: string[]): { sql: string; count: number } {
  return {
    sql:
      `SELECT pg_catalog.set_config('lockstep.replication_role', pg_catalog.current_setting('session_replication_role'), true);\n` +
      `SET LOCAL session_replication_role = replica;\n${statements.join('')}` +
      `SELECT pg_catalog.set_config('session_replication_role', pg_catalog.current_setting('lockstep.replication_role'), true);\n`,
    count: 3 + statements.length,
  };
}

/** Heap order of two ctids ('(block,offset)'; a missing one sorts as (0,0)). */
function byCtid(a = '', b = ''): number {
  const [ab, ao] = a.slice(1, -1).split(',').map(Number);
  const [bb, bo] = b.slice(1, -1).split(',').map(Number);
  return (ab || 0) - (bb || 0) || (ao || 0) - (bo || 0);
}

/** Whether another session holds `tuple` in a mode that a foreign-key check's FOR KEY SHARE waits for. */
export function keyShareBlocked(eng: EngineContext, s: Sess, tuple: TupleId): boolean {
  return eng.rows.conflicting(tuple, 'ForKeyShare', s.name).length > 0;
}

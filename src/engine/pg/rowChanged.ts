/**
 * REPEATABLE READ and SERIALIZABLE after a row wait: when the transaction PostgreSQL waited for
 * committed an update or a delete of the row, heap_lock_tuple / heap_update return TM_Updated or
 * TM_Deleted, and a transaction-snapshot statement fails there with 40001 (nodeLockRows.c,
 * "could not serialize access due to concurrent update"). The engine's re-run normally meets
 * that row again under the transaction's snapshot and PGlite raises the error itself; a query
 * that reads with a newer snapshot (ri_triggers.c checks a partitioned referenced table with the
 * latest snapshot, detectNewRows) no longer sees the deleted row and never reaches it. This
 * reads the waited row's header to tell PostgreSQL's answer.
 */
import type { EngineContext } from '../context';
import type { TupleId } from '../model/rowlocks';
import { INTERNAL_SCHEMA } from './names';
import { snapshotSees } from './stmtSnapshot';

/** HEAP_XMAX_LOCK_ONLY, HEAP_XMAX_INVALID, HEAP_XMAX_IS_MULTI (htup_details.h). */
const XMAX_LOCK_ONLY = 0x0080;
const XMAX_INVALID = 0x0800;
const XMAX_IS_MULTI = 0x1000;

/**
 * Whether a committed transaction updated or deleted the row (its xmax is a committed updater,
 * or the line pointer no longer holds a tuple: pruned after that commit). A multixact xmax is
 * not decided here (false).
 */
export async function rowChangedByCommit(eng: EngineContext, t: TupleId): Promise<boolean> {
  const rows = await eng.ex.must(
    `SELECT lp_flags, t_infomask, CASE WHEN t_xmax::text::bigint = 0 THEN NULL ELSE pg_catalog.pg_xact_status(t_xmax::text::xid8) END
       FROM ${INTERNAL_SCHEMA}.heap_page_items(${INTERNAL_SCHEMA}.get_raw_page(${Number(t.oid)}::regclass::text, ${Number(t.block)}))
       WHERE lp = ${Number(t.offset)}`,
  );
  const [flags, infomask, status] = rows[0] ?? [];
  // LP_NORMAL is 1: anything else is a tuple that pruning removed once its deleter committed.
  if (flags === undefined || Number(flags) !== 1 || infomask === null) return true;
  const mask = Number(infomask);
  if (mask & (XMAX_INVALID | XMAX_LOCK_ONLY | XMAX_IS_MULTI)) return false;
  return status === 'committed';
}

/** The condition that a heap_page_items row `h` is a version whose xmax is a committed updater or deleter. */
function changedByCommitSql(h: string): string {
  return `${h}.lp_flags = 1 AND ${h}.t_infomask IS NOT NULL AND ${h}.t_infomask & ${XMAX_INVALID | XMAX_LOCK_ONLY} = 0
        AND CASE WHEN ${h}.t_infomask & ${XMAX_IS_MULTI} <> 0
              THEN EXISTS (SELECT 1 FROM pg_catalog.pg_get_multixact_members(${h}.t_xmax::text::xid) m
                            WHERE m.mode IN ('upd', 'nokeyupd') AND pg_catalog.pg_xact_status(m.xid::text::xid8) = 'committed')
              ELSE pg_catalog.pg_xact_status(${h}.t_xmax::text::xid8) = 'committed' END`;
}

/** Every block of the given tables' heaps, with its line pointers: `c.oid`, `b.blk` and `h`. */
function heapItemsSql(oids: readonly number[]): string {
  return `FROM pg_catalog.pg_class c
       CROSS JOIN LATERAL pg_catalog.generate_series(0, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
       CROSS JOIN LATERAL ${INTERNAL_SCHEMA}.heap_page_items(${INTERNAL_SCHEMA}.get_raw_page(c.oid::regclass::text, b.blk)) h
      WHERE c.oid = ANY('{${oids.map((o) => Math.trunc(o)).join(',')}}'::oid[]) AND c.relkind = 'r'`;
}

/**
 * The row versions of the given tables that a committed transaction deleted after the snapshot
 * `snapshot` (an exported snapshot file's content) was taken: the version's t_ctid still points at
 * itself (a delete, not an update), and its xmax, or the updating member of its multixact, is a
 * committed transaction the snapshot does not see. A statement that kept that snapshot across a
 * wait meets them as TM_Deleted.
 */
export async function rowsDeletedSince(eng: EngineContext, snapshot: string, oids: readonly number[]): Promise<RowVersion[]> {
  if (!oids.length) return [];
  const rows = await eng.ex.must(
    `SELECT c.oid::int, b.blk, h.lp,
            CASE WHEN h.t_infomask & ${XMAX_IS_MULTI} <> 0
              THEN (SELECT m.xid::text FROM pg_catalog.pg_get_multixact_members(h.t_xmax::text::xid) m WHERE m.mode IN ('upd', 'nokeyupd') LIMIT 1)
              ELSE h.t_xmax::text END
        ${heapItemsSql(oids)}
        AND h.t_ctid = pg_catalog.format('(%s,%s)', b.blk, h.lp)::tid AND ${changedByCommitSql('h')}`,
  );
  return rows
    .filter((r) => !snapshotSees(snapshot, Number(r[3])))
    .map((r) => ({ oid: Number(r[0]), block: Number(r[1]), offset: Number(r[2]) }));
}

/** A row version: its table and place. */
export interface RowVersion {
  oid: number;
  block: number;
  offset: number;
}

/**
 * The newest versions of the rows a kept statement snapshot saw, where a committed update
 * replaced the version it saw (each followed along its update chain, t_ctid, as heap_lock_tuple
 * and EvalPlanQualFetch follow it). A deleted chain's last version is among them too: a new
 * snapshot does not see it. `snapshot` is the kept snapshot's file content; `seenSql` a query,
 * run under it, for the table OID and ctid of the rows to follow; `oids` the tables they lie in.
 */
export async function newestOfSnapshotRows(
  eng: EngineContext,
  snapshot: string,
  seenSql: string,
  oids: readonly number[],
): Promise<RowVersion[]> {
  if (!oids.length) return [];
  const id = await eng.ex.stageSnapshotImport(snapshot);
  const r = await eng.ex.run(
    `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
SET TRANSACTION SNAPSHOT '${id}';
${seenSql};
SELECT c.oid::int, b.blk, h.lp, h.t_ctid::text ${heapItemsSql(oids)}
        AND h.t_ctid <> pg_catalog.format('(%s,%s)', b.blk, h.lp)::tid AND ${changedByCommitSql('h')};
ROLLBACK`,
  );
  if (r.error) {
    await eng.ex.run('ROLLBACK');
    return [];
  }
  const seen = r.results[2]?.rows ?? [];
  const next = new Map((r.results[3]?.rows ?? []).map((x) => [`${x[0]}:(${x[1]},${x[2]})`, String(x[3])]));
  const out: RowVersion[] = [];
  for (const [oid, ctid] of seen) {
    let at = `${oid}:${ctid}`;
    // A version moved to another partition points nowhere in this table (an invalid block).
    for (let hops = 0; next.has(at) && hops < 10_000; hops++) at = `${oid}:${next.get(at)}`;
    if (at === `${oid}:${ctid}`) continue;
    const [b, o] = at
      .slice(at.indexOf(':') + 2, -1)
      .split(',')
      .map(Number);
    if (Number.isFinite(b) && b < 0xffffffff) out.push({ oid: Number(oid), block: b, offset: o });
  }
  return out;
}

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

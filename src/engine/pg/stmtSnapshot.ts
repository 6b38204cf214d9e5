/**
 * READ COMMITTED: the statement keeps its snapshot across a wait. PostgreSQL takes a statement's
 * snapshot once, before it scans; a wait in the middle (a row lock, an advisory lock in the WHERE
 * clause, a duplicate key) does not replace it, and only the rows the statement locks after the
 * wait are re-read, on their newest versions (EvalPlanQual). The engine re-runs a statement that
 * waited, so it keeps the snapshot the first run saw (exported from PGlite when the statement
 * first waits) and runs the re-run under it, as a REPEATABLE READ transaction importing it.
 *
 * A row the re-run locks or updates that a commit changed after that snapshot is where
 * PostgreSQL's READ COMMITTED follows the update chain and REPEATABLE READ raises 40001; only
 * then does the engine fall back to re-running with a new snapshot, restricted to the rows the
 * first scan found (epq.ts). A lock that does not conflict with the committed change (FOR KEY
 * SHARE past a key-preserving update) succeeds under the snapshot, and returns the version the
 * snapshot sees, as heap_lock_tuple does. A row deleted after the snapshot is not followed: the
 * re-run under the snapshot leaves it out and goes on (`gone`), as nodeLockRows and
 * ExecUpdate / ExecDelete pass over a TM_Deleted row.
 *
 * Pure: SQL text and decisions only.
 */
import type { PgMessage } from '../types';

/** What a running statement keeps across its waits. */
export interface StatementSnapshot {
  /** The exported snapshot file's content (see PgliteExecutor.readExportedSnapshot). */
  content: string;
  /** A re-run under the snapshot met a row changed after it: later re-runs take a new snapshot (EvalPlanQual emulation). */
  fresh?: boolean;
  /**
   * Rows of the statement's scan (epqKey) that a committed transaction deleted after the snapshot:
   * READ COMMITTED's lock or update meets TM_Deleted and passes over the row, so the re-runs under
   * the snapshot leave them out of the scan and go on with the rest.
   */
  gone?: string[];
  /**
   * The sequence states before the run that formed the statement's rows and then waited for a
   * row: PostgreSQL writes the rows it formed once the holder ends without changing the row.
   */
  formed?: string[];
  /**
   * The wait was inside a trigger, a cascade or a foreign-key check, after the statement wrote its
   * own rows: EvalPlanQual forms again only the row that trigger's statement waited for, so a re-run
   * with a new snapshot forms the statement's rows with the same values too (`formed`, the
   * statement's own sequences).
   */
  formedBeyondRecheck?: boolean;
}

/**
 * SQL that exports a snapshot equal to the one the statement's dry run just used (nothing ran in
 * between) and returns the exported file's content (pg_snapshots/ in the data directory).
 */
export const EXPORT_SNAPSHOT_SQL =
  "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT pg_catalog.pg_read_file('pg_snapshots/' || pg_catalog.pg_export_snapshot())";

/** The transaction start of a dry run under the statement's snapshot (the file staged as `id`). */
export function importSnapshotBegin(id: string): { sql: string; count: number } {
  return { sql: `BEGIN ISOLATION LEVEL REPEATABLE READ;\nSET TRANSACTION SNAPSHOT '${id}';\n`, count: 2 };
}

/** Whether a statement's re-run should run under the snapshot it kept. */
export function usesStatementSnapshot(isolation: string, snap: StatementSnapshot | undefined): snap is StatementSnapshot {
  return isolation === 'read committed' && !!snap && !snap.fresh;
}

/**
 * Whether an error of a re-run under the kept snapshot is REPEATABLE READ's answer to a row
 * changed after the snapshot (heap_update / heap_lock_tuple returned TM_Updated or TM_Deleted,
 * or ON CONFLICT met a version the snapshot cannot see): READ COMMITTED would have followed the row.
 */
export function isSnapshotConflict(e: PgMessage | undefined): boolean {
  return e?.sqlstate === '40001';
}

/**
 * Whether a committed transaction's effects are visible to an exported snapshot (its file's
 * content: `xmax:`, and the `xip:` and `sxp:` lines of the transactions and subtransactions
 * running when it was taken), as XidInMVCCSnapshot decides: a transaction id below xmax and not
 * among the running ones.
 */
export function snapshotSees(content: string, xid: number): boolean {
  const field = (name: string) => [...content.matchAll(new RegExp(`^${name}:(\\d+)$`, 'gm'))].map((m) => Number(m[1]));
  const xmax = field('xmax')[0];
  if (xmax === undefined || !Number.isFinite(xid)) return false;
  return xid < xmax && !field('xip').includes(xid) && !field('sxp').includes(xid);
}

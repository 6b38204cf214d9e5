/**
 * Row images: how the engine replays a session's earlier statements deterministically.
 *
 * Re-running SQL text is not deterministic (READ COMMITTED sees other sessions' later
 * commits, SKIP LOCKED sees different locks, sequences advance). So a data-changing or
 * row-locking statement is recorded as what it did to tuples: lock tuple X in mode M, set
 * row X to these values, delete X, insert these values, take this advisory lock. Tuples the
 * session created itself move between replays (their ctids drift), so each created version
 * is registered in a ctid map keyed by the ctid it had when it was recorded.
 *
 * Pure: produces SQL text only.
 */
import { ROW_LOCK_SQL } from '../model/locks/modes';
import type { LockMode, LockTag, RowLockMode } from '../model/locks/types';
import type { ImageOp, LogEntry, TupleRef } from '../model/log';
import { CTID_MAP } from './names';

export type { ImageOp, LogEntry, TupleRef } from '../model/log';

/** A quoted identifier. */
export function ident(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : '"' + s.replace(/"/g, '""') + '"';
}

/** A SQL literal for a PostgreSQL text value (unknown-typed, so it coerces to the column type). */
export function literal(v: string | null): string {
  return v === null ? 'NULL' : "'" + v.replace(/'/g, "''") + "'";
}

function target(t: TupleRef): string {
  return t.own
    ? `(SELECT cur FROM ${CTID_MAP} WHERE rel = ${t.rel} AND orig = '${t.ctid}' ORDER BY ctid DESC LIMIT 1)`
    : `'${t.ctid}'::tid`;
}

function lockClause(mode: RowLockMode): string {
  return mode === 'NoKeyUpdate' ? 'FOR NO KEY UPDATE' : mode === 'Update' ? 'FOR UPDATE' : ROW_LOCK_SQL[mode];
}

/** A call taking an advisory lock as pg_locks reported it (field4 1: one bigint key, 2: two int keys). */
export function advisorySql(tag: LockTag & { type: 'advisory' }, mode: LockMode, level: 'session' | 'xact'): string {
  const fn = `pg_catalog.pg_advisory${level === 'xact' ? '_xact' : ''}_lock${mode === 'ShareLock' ? '_shared' : ''}`;
  if (tag.field4 === 2) return `SELECT ${fn}(${tag.key1 | 0}, ${tag.key2 | 0})`;
  const key = BigInt.asIntN(64, (BigInt(tag.key1 >>> 0) << 32n) | BigInt(tag.key2 >>> 0));
  return `SELECT ${fn}(${key}::bigint)`;
}

/** SQL of one op; every op returns exactly one row when it replays correctly. */
export function opSql(op: ImageOp): string {
  switch (op.op) {
    case 'lock':
      return `SELECT ctid FROM ${ident(op.target.relation)} WHERE ctid = ${target(op.target)} ${lockClause(op.mode)}`;
    case 'delete':
      return `DELETE FROM ${ident(op.target.relation)} WHERE ctid = ${target(op.target)} RETURNING ctid`;
    case 'update': {
      const set = op.columns.map((c, i) => `${ident(c)} = ${literal(op.values[i])}`).join(', ');
      return `WITH u AS (UPDATE ${ident(op.target.relation)} SET ${set} WHERE ctid = ${target(op.target)} RETURNING ctid) INSERT INTO ${CTID_MAP} SELECT ${op.target.rel}, '${op.newCtid}', ctid FROM u`;
    }
    case 'insert': {
      const cols = op.columns.map(ident).join(', ');
      const vals = op.values.map(literal).join(', ');
      return `WITH i AS (INSERT INTO ${ident(op.relation)} (${cols}) OVERRIDING SYSTEM VALUE VALUES (${vals}) RETURNING ctid) INSERT INTO ${CTID_MAP} SELECT ${op.rel}, '${op.newCtid}', ctid FROM i`;
    }
    case 'advisory':
      return advisorySql(op.tag, op.mode, 'xact');
  }
}

/**
 * Replay SQL for a log, and a check per produced result (null = fine, else what went wrong).
 * `replica: false` leaves out the session_replication_role switch around row images: only for
 * logs whose images touch no table with triggers or rules (the engine decides, see
 * Engine.replayNeedsReplica), where it changes nothing but costs a plan-cache reset.
 */
export function replaySql(
  log: LogEntry[],
  opts: { replica?: boolean } = {},
): { sql: string; checks: ((tag: string | undefined) => string | null)[] } {
  const parts: string[] = [];
  const checks: ((tag: string | undefined) => string | null)[] = [];
  const hasImages = opts.replica !== false && log.some((e) => e.kind === 'image');
  if (hasImages) {
    // Replay exactly the recorded effects: triggers (and foreign-key checks, whose row locks are
    // part of the image) must not fire a second time.
    parts.push('SET LOCAL session_replication_role = replica');
    checks.push(() => null);
  }
  for (const e of log) {
    if (e.kind === 'sql') {
      parts.push(e.sql);
      checks.push((tag) => (tag === e.command ? null : `"${e.sql.slice(0, 80)}": recorded ${e.command}, got ${tag ?? 'nothing'}`));
    } else {
      for (const op of e.ops) {
        parts.push(opSql(op));
        checks.push((tag) =>
          tag && / 1$/.test(tag) ? null : `row image of "${e.sql.slice(0, 60)}" (${op.op}) did not apply: ${tag ?? 'nothing'}`,
        );
      }
    }
  }
  if (hasImages) {
    parts.push('SET LOCAL session_replication_role = origin');
    checks.push(() => null);
  }
  return { sql: parts.map((p) => p + ';\n').join(''), checks };
}

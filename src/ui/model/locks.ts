/** pg_locks table ordering and cell text. */
import type { EngineSnapshot, LockRow } from '../../engine/types';
import { lockModeNumber } from '../../engine/model/locks/modes';
import { sireadLockRows, type PgLocksRow } from './ssi';

const LOCKTYPE_ORDER: Readonly<Record<LockRow['locktype'], number>> = {
  relation: 0,
  tuple: 1,
  transactionid: 2,
  virtualxid: 3,
  advisory: 4,
};

/** Waiting rows first (oldest wait first), then by session, locktype and mode; input untouched. */
export function sortLockRows(rows: readonly LockRow[]): LockRow[] {
  return rows
    .slice()
    .sort(
      (a, b) =>
        Number(a.granted) - Number(b.granted) ||
        (a.waitstart ?? 0) - (b.waitstart ?? 0) ||
        a.session.localeCompare(b.session) ||
        LOCKTYPE_ORDER[a.locktype] - LOCKTYPE_ORDER[b.locktype] ||
        String(a.relation ?? '').localeCompare(String(b.relation ?? '')) ||
        lockModeNumber(a.mode) - lockModeNumber(b.mode),
    );
}

/**
 * The lock table's rows: the heavyweight locks (sortLockRows), then the SIRead locks of the
 * tracked serializable transactions, as pg_locks lists predicate locks after the others.
 */
export function lockTableRows(snap: Pick<EngineSnapshot, 'sessions' | 'locks' | 'ssi'>): PgLocksRow[] {
  return [...sortLockRows(snap.locks), ...sireadLockRows(snap)];
}

/** A pg_locks value as psql shows it (NULL as empty). */
export function lockCell(v: string | number | boolean | null): string {
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  return String(v);
}

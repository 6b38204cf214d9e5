/**
 * Lock-mode tables, straight from PostgreSQL: the heavyweight conflict table of lock.c
 * (LockConflicts[]) and the row-level table of README.tuplock / heapam.c (tupleLockExtraInfo).
 * The matrix views render these same tables.
 */
import type { LockMode, RowLockMode, RowLockStrength } from './types';
import { ROW_LOCK_MODES, TABLE_LOCK_MODES } from './types';

export { ROW_LOCK_MODES, TABLE_LOCK_MODES };

/** lock.c LockConflicts[]: for each requested mode, the held modes it conflicts with. */
export const LOCK_CONFLICTS: Readonly<Record<LockMode, readonly LockMode[]>> = {
  AccessShareLock: ['AccessExclusiveLock'],
  RowShareLock: ['ExclusiveLock', 'AccessExclusiveLock'],
  RowExclusiveLock: ['ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareUpdateExclusiveLock: ['ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareLock: ['RowExclusiveLock', 'ShareUpdateExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareRowExclusiveLock: [
    'RowExclusiveLock',
    'ShareUpdateExclusiveLock',
    'ShareLock',
    'ShareRowExclusiveLock',
    'ExclusiveLock',
    'AccessExclusiveLock',
  ],
  ExclusiveLock: [
    'RowShareLock',
    'RowExclusiveLock',
    'ShareUpdateExclusiveLock',
    'ShareLock',
    'ShareRowExclusiveLock',
    'ExclusiveLock',
    'AccessExclusiveLock',
  ],
  AccessExclusiveLock: [
    'AccessShareLock',
    'RowShareLock',
    'RowExclusiveLock',
    'ShareUpdateExclusiveLock',
    'ShareLock',
    'ShareRowExclusiveLock',
    'ExclusiveLock',
    'AccessExclusiveLock',
  ],
};

/** PostgreSQL's lock mode number (lockdefs.h): AccessShareLock = 1 … AccessExclusiveLock = 8. */
export function lockModeNumber(mode: LockMode): number {
  return TABLE_LOCK_MODES.indexOf(mode) + 1;
}

/** True when a lock requested in mode `requested` conflicts with one held in mode `held`. */
export function conflicts(requested: LockMode, held: LockMode): boolean {
  return LOCK_CONFLICTS[requested].includes(held);
}

/** LOCKBIT_ON(mode): the bit of one mode in a LOCKMASK. */
export function lockBit(mode: LockMode): number {
  return 1 << lockModeNumber(mode);
}

/** Bit mask of a set of modes (LOCKBIT_ON), used by the queue rules of proc.c. */
export function modeMask(modes: Iterable<LockMode>): number {
  let mask = 0;
  for (const m of modes) mask |= lockBit(m);
  return mask;
}

/** A PROCLOCK holdMask: the bits of every mode held at least once (counts as in LOCALLOCK nLocks). */
export function holdMaskOf(hold: Partial<Record<LockMode, number>>): number {
  let mask = 0;
  for (const m of TABLE_LOCK_MODES) if ((hold[m] ?? 0) > 0) mask |= lockBit(m);
  return mask;
}

/** lock.c LockConflicts[] as bit masks, computed once: the lock manager tests them constantly. */
const CONFLICT_MASKS: Readonly<Record<LockMode, number>> = Object.fromEntries(
  TABLE_LOCK_MODES.map((m) => [m, modeMask(LOCK_CONFLICTS[m])]),
) as Record<LockMode, number>;

/** conflictTab[mode] as a bit mask. */
export function conflictMask(mode: LockMode): number {
  return CONFLICT_MASKS[mode];
}

/** The locking strength a row-lock mode stands for in conflict checks. */
export function rowStrength(mode: RowLockMode): RowLockStrength {
  if (mode === 'NoKeyUpdate') return 'ForNoKeyUpdate';
  if (mode === 'Update') return 'ForUpdate';
  return mode;
}

/** README.tuplock conflict table of the four row-level strengths. */
export const ROW_LOCK_CONFLICTS: Readonly<Record<RowLockStrength, readonly RowLockStrength[]>> = {
  ForKeyShare: ['ForUpdate'],
  ForShare: ['ForNoKeyUpdate', 'ForUpdate'],
  ForNoKeyUpdate: ['ForShare', 'ForNoKeyUpdate', 'ForUpdate'],
  ForUpdate: ['ForKeyShare', 'ForShare', 'ForNoKeyUpdate', 'ForUpdate'],
};

/** True when a row lock requested in `requested` conflicts with one held in `held`. */
export function rowConflicts(requested: RowLockMode, held: RowLockMode): boolean {
  return ROW_LOCK_CONFLICTS[rowStrength(requested)].includes(rowStrength(held));
}

/**
 * heapam.c tupleLockExtraInfo: the heavyweight mode of the tuple lock taken while waiting
 * for a row in a given strength (LockTupleKeyShare → AccessShareLock, … LockTupleExclusive → AccessExclusiveLock).
 */
export function tupleLockMode(mode: RowLockMode): LockMode {
  switch (rowStrength(mode)) {
    case 'ForKeyShare':
      return 'AccessShareLock';
    case 'ForShare':
      return 'RowShareLock';
    case 'ForNoKeyUpdate':
      return 'ExclusiveLock';
    case 'ForUpdate':
      return 'AccessExclusiveLock';
  }
}

/** The SQL spelling of a row-lock mode, as pgrowlocks / the docs print it. */
export const ROW_LOCK_SQL: Readonly<Record<RowLockMode, string>> = {
  ForKeyShare: 'FOR KEY SHARE',
  ForShare: 'FOR SHARE',
  ForNoKeyUpdate: 'FOR NO KEY UPDATE',
  ForUpdate: 'FOR UPDATE',
  NoKeyUpdate: 'UPDATE (no key)',
  Update: 'UPDATE (key) / DELETE',
};

/** The SQL name of a table-level mode as LOCK TABLE spells it ("ROW EXCLUSIVE"). */
export function lockModeSql(mode: LockMode): string {
  return mode
    .replace(/Lock$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toUpperCase();
}

/**
 * Lock-model vocabulary, named exactly as PostgreSQL names it (lock.c, lockdefs.h, lmgr.c).
 * Pure data: no PGlite, DOM, Svelte or D3 here.
 */

/** The eight heavyweight (table-level) lock modes, in PostgreSQL's numeric order 1..8. */
export const TABLE_LOCK_MODES = [
  'AccessShareLock',
  'RowShareLock',
  'RowExclusiveLock',
  'ShareUpdateExclusiveLock',
  'ShareLock',
  'ShareRowExclusiveLock',
  'ExclusiveLock',
  'AccessExclusiveLock',
] as const;
export type LockMode = (typeof TABLE_LOCK_MODES)[number];

/**
 * Row-level lock strengths (README.tuplock). The first four are the SQL locking clauses;
 * 'NoKeyUpdate' and 'Update' are the implicit modes of UPDATE (non-key columns) and of
 * DELETE / key-changing UPDATE. For conflicts, NoKeyUpdate behaves as ForNoKeyUpdate and
 * Update as ForUpdate; they differ in that the row was really changed.
 */
export const ROW_LOCK_MODES = ['ForKeyShare', 'ForShare', 'ForNoKeyUpdate', 'ForUpdate'] as const;
export type RowLockStrength = (typeof ROW_LOCK_MODES)[number];
export type RowLockMode = RowLockStrength | 'NoKeyUpdate' | 'Update';

/** Branded ids. */
export type Xid = number & { readonly __brand: 'Xid' };
/** A lock-manager participant: one per simulated session (PostgreSQL: a PGPROC). */
export type ProcId = string & { readonly __brand: 'ProcId' };

/** What is locked; mirrors LOCKTAG types used by the engine. */
export type LockTag =
  | { type: 'relation'; relation: string; oid: number }
  | { type: 'tuple'; relation: string; oid: number; block: number; offset: number }
  | { type: 'transactionid'; xid: Xid }
  | { type: 'virtualxid'; vxid: string }
  /** field4 is 1 for a bigint key (key1 = high 32 bits, key2 = low 32 bits), 2 for an (int, int) key. */
  | { type: 'advisory'; key1: number; key2: number; field4: 1 | 2 };

/**
 * Decoding of tuple-header lock bits (htup_details.h, README.tuplock), as pgrowlocks does.
 * Pure: takes the numbers pageinspect reports.
 */
import type { RowLockMode } from './locks/types';

export const HEAP_XMAX_KEYSHR_LOCK = 0x0010;
export const HEAP_XMAX_EXCL_LOCK = 0x0040;
export const HEAP_XMAX_LOCK_ONLY = 0x0080;
export const HEAP_XMAX_INVALID = 0x0800;
export const HEAP_XMAX_IS_MULTI = 0x1000;
export const HEAP_KEYS_UPDATED = 0x2000; // in t_infomask2

/** The row-lock mode a single (non-multi) xmax stands for. */
export function singleXmaxMode(infomask: number, infomask2: number): RowLockMode {
  const keysUpdated = (infomask2 & HEAP_KEYS_UPDATED) !== 0;
  if (infomask & HEAP_XMAX_LOCK_ONLY) {
    const excl = (infomask & HEAP_XMAX_EXCL_LOCK) !== 0;
    const keyshr = (infomask & HEAP_XMAX_KEYSHR_LOCK) !== 0;
    if (excl && keyshr) return 'ForShare';
    if (keyshr) return 'ForKeyShare';
    return keysUpdated ? 'ForUpdate' : 'ForNoKeyUpdate';
  }
  return keysUpdated ? 'Update' : 'NoKeyUpdate';
}

/** pg_get_multixact_members() status text → mode. */
export function multiMemberMode(status: string): RowLockMode {
  switch (status) {
    case 'keysh':
      return 'ForKeyShare';
    case 'sh':
      return 'ForShare';
    case 'fornokeyupd':
      return 'ForNoKeyUpdate';
    case 'forupd':
      return 'ForUpdate';
    case 'nokeyupd':
      return 'NoKeyUpdate';
    case 'upd':
      return 'Update';
    default:
      throw new Error(`unknown multixact member status ${status}`);
  }
}

const STRENGTH: Record<RowLockMode, number> = { ForKeyShare: 1, ForShare: 2, ForNoKeyUpdate: 3, NoKeyUpdate: 3, ForUpdate: 4, Update: 4 };

/** The stronger of two row-lock modes; a real update outranks a lock of equal strength. */
export function strongerRowMode(a: RowLockMode, b: RowLockMode): RowLockMode {
  if (STRENGTH[a] !== STRENGTH[b]) return STRENGTH[a] > STRENGTH[b] ? a : b;
  return a === 'NoKeyUpdate' || a === 'Update' ? a : b;
}

/** True when `held` already covers a request for `wanted` by the same transaction. */
export function rowModeCovers(held: RowLockMode, wanted: RowLockMode): boolean {
  return STRENGTH[held] >= STRENGTH[wanted];
}

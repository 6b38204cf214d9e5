/** Deferred unique constraints in the model: which are deferred now, and the keys still to check. */
import type { CatalogTable } from './facts';
import type { Txn, UniqueKey } from '../state';

/** A DEFERRABLE constraint: its name and whether it is INITIALLY DEFERRED. */
export interface Deferrable {
  constraint: string;
  initiallyDeferred: boolean;
}

/** Whether a deferrable constraint is deferred in the transaction now: its last SET CONSTRAINTS, else its initial mode. */
export function constraintDeferred(txn: Txn, c: Deferrable | undefined): boolean {
  if (!c) return false;
  for (let i = txn.constraintModes.length - 1; i >= 0; i--) {
    const m = txn.constraintModes[i];
    if (m.names === null || m.names.includes(c.constraint)) return m.deferred;
  }
  return c.initiallyDeferred;
}

/**
 * The keys whose deferred check runs now: at COMMIT every pending one, at SET CONSTRAINTS …
 * IMMEDIATE those of the constraints it names (`names`; null for ALL), in the order they went in.
 */
export function keysToCheck(catalog: readonly CatalogTable[], txn: Txn, names?: string[] | null): UniqueKey[] {
  return txn.insertedKeys.filter((k) => {
    if (!k.pending) return false;
    if (names === undefined || names === null) return true;
    const ix = catalog.find((c) => c.name === k.table)?.uniqueIndexes.find((i) => i.name === k.index);
    return !!ix?.deferrable && names.includes(ix.deferrable.constraint);
  });
}

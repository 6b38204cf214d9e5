/** Small helpers the model and pg/ share. */
import type { LockTag } from './locks/types';

/** The index of the last element satisfying `f`, or -1. */
export function findLastIndex<T>(a: T[], f: (x: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (f(a[i])) return i;
  return -1;
}

/** Groups a list by a string key, keeping order within each group. */
export function groupBy<T>(a: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of a) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

/** Splits a unique key ("index\u0001(cols)=(values)", uniqueKeysSql) into its index and key. */
export function splitKey(table: string, k: string): { table: string; index: string; key: string } {
  const [index, key] = k.split('\u0001');
  return { table, index, key };
}

/** Whether two lock tags name the same lockable object. */
export function sameTag(a: LockTag, b: LockTag): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What EvalPlanQual keeps of the rows a statement's scan first found (state.ts, `Step.epq`). */
export interface EpqRows {
  oid: number;
  ctids: string[];
  children?: number[];
}

/** Whether the scan kept in `epq` covers a row of table `oid` (its own, or an inheritance child's). */
export function epqCovers(epq: EpqRows, oid: number): boolean {
  return epq.children ? epq.children.includes(oid) : epq.oid === oid;
}

/** A row's key among `epq.ctids`: its ctid, qualified by its table's OID when the scan spans children. */
export function epqKey(epq: EpqRows, t: { oid: number; block: number; offset: number }): string {
  return epq.children ? `${t.oid}:(${t.block},${t.offset})` : `(${t.block},${t.offset})`;
}

/** The table and ctid an `epqKey` names. */
export function epqRow(epq: EpqRows, key: string): { oid: number; ctid: string } {
  if (!epq.children) return { oid: epq.oid, ctid: key };
  const at = key.indexOf(':');
  return { oid: Number(key.slice(0, at)), ctid: key.slice(at + 1) };
}

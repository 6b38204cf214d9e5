/**
 * Row locks as tuple headers record them (xmax / multixact members), kept per committed
 * tuple version. Not in pg_locks, exactly like PostgreSQL. Pure data.
 */
import { rowConflicts } from './locks/modes';
import type { RowLockMode } from './locks/types';
import { rowModeCovers, strongerRowMode } from './rowbits';

export interface TupleId {
  oid: number;
  relation: string;
  block: number;
  offset: number;
}

export interface RowHolder {
  session: string;
  mode: RowLockMode;
  /** Savepoint depth at which the lock was taken (subtransaction level). */
  depth: number;
  /** The (sub)transaction id in the tuple header: whom a waiter waits for. */
  xid: number;
  /**
   * The version (tupleKey) the lock was taken on, when a committed update has since carried it to
   * a newer one: the old version's xmax (a multixact) still names this locker.
   */
  carried?: string;
}

/** Stable key of a tuple. */
export function tupleKey(t: TupleId): string {
  return `${t.oid}:${t.block}:${t.offset}`;
}

/** Which sessions hold which tuples, in the order the lockers arrived (multixact member order). */
export class RowLockTable {
  /**
   * `multiMode`: the strongest mode of the multixact last written into the tuple's xmax, as its
   * infomask bits record it (GetMultiXactIdHintBits). A member that ends leaves the bits as they
   * are until the next locker writes a new xmax.
   */
  private rows = new Map<string, { tuple: TupleId; holders: RowHolder[]; multiMode?: RowLockMode }>();

  /** Other sessions' holds on `t` that conflict with `mode`, oldest first. */
  conflicting(t: TupleId, mode: RowLockMode, session: string): RowHolder[] {
    const e = this.rows.get(tupleKey(t));
    if (!e) return [];
    return e.holders.filter((h) => h.session !== session && rowConflicts(mode, h.mode));
  }

  /** The strongest mode `session` holds on `t`, if any. */
  heldMode(t: TupleId, session: string): RowLockMode | undefined {
    const e = this.rows.get(tupleKey(t));
    let best: RowLockMode | undefined;
    for (const h of e?.holders ?? []) if (h.session === session) best = best ? strongerRowMode(best, h.mode) : h.mode;
    return best;
  }

  /** True when `session` already holds `t` in a mode at least as strong as `mode`. */
  covers(t: TupleId, session: string, mode: RowLockMode): boolean {
    const held = this.heldMode(t, session);
    return (
      held !== undefined &&
      rowModeCovers(held, mode) &&
      (mode === 'NoKeyUpdate' || mode === 'Update' ? held === mode || held === 'Update' : true)
    );
  }

  /** Records a lock; a stronger mode at the same depth replaces a weaker one. */
  add(t: TupleId, session: string, mode: RowLockMode, depth: number, xid: number): void {
    const k = tupleKey(t);
    let e = this.rows.get(k);
    if (!e) this.rows.set(k, (e = { tuple: t, holders: [] }));
    const same = e.holders.find((h) => h.session === session && h.depth === depth);
    if (same) same.mode = strongerRowMode(same.mode, mode);
    else e.holders.push({ session, mode, depth, xid });
    // A new xmax: a multixact of the running members when more than one (sub)transaction holds the row.
    const multi = new Set(e.holders.map((h) => h.xid)).size > 1;
    e.multiMode = multi ? e.holders.map((h) => h.mode).reduce((a, b) => strongerRowMode(a, b)) : undefined;
  }

  /**
   * Whether the tuple's multixact infomask says an exclusive lock or an update (heap_lock_tuple's
   * HEAP_XMAX_IS_EXCL_LOCKED / !HEAP_XMAX_IS_LOCKED_ONLY), though the member that took it may have
   * ended (a rolled-back subtransaction's FOR UPDATE).
   */
  multiExclusive(t: TupleId): boolean {
    const m = this.rows.get(tupleKey(t))?.multiMode;
    return m === 'ForNoKeyUpdate' || m === 'ForUpdate' || m === 'NoKeyUpdate' || m === 'Update';
  }

  /** Drops a session's locks taken at `minDepth` or deeper (all of them with 0). */
  release(session: string, minDepth = 0): void {
    for (const [k, e] of this.rows) {
      e.holders = e.holders.filter((h) => h.session !== session || h.depth < minDepth);
      if (!e.holders.length) this.rows.delete(k);
    }
  }

  /** Drops a session's locks on one tuple (a rolled-back subtransaction the model does not track took them). */
  releaseTuple(t: TupleId, session: string): void {
    const k = tupleKey(t);
    const e = this.rows.get(k);
    if (!e) return;
    e.holders = e.holders.filter((h) => h.session !== session);
    if (!e.holders.length) this.rows.delete(k);
  }

  /** Moves a session's locks deeper than `depth` up to `depth` (RELEASE SAVEPOINT). */
  merge(session: string, depth: number): void {
    for (const e of this.rows.values()) for (const h of e.holders) if (h.session === session && h.depth > depth) h.depth = depth;
  }

  /** Moves the holds on a tuple to its new version (an update chain step). */
  relocate(from: { oid: number; block: number; offset: number }, to: { block: number; offset: number }): void {
    const k = `${from.oid}:${from.block}:${from.offset}`;
    const e = this.rows.get(k);
    if (!e) return;
    this.rows.delete(k);
    const tuple = { ...e.tuple, block: to.block, offset: to.offset };
    const nk = tupleKey(tuple);
    const holders = e.holders.map((h) => ({ ...h, carried: h.carried ?? k }));
    const existing = this.rows.get(nk);
    if (existing) existing.holders.push(...holders);
    else this.rows.set(nk, { tuple, holders });
  }

  /**
   * Other sessions' locks taken on the version `old` before a committed update carried them to a
   * newer one, conflicting with `mode`: heap_lock_tuple on `old` still finds them running in its
   * xmax's multixact (TM_BeingModified) and waits for them before it sees the update.
   */
  carriedConflicting(old: TupleId, mode: RowLockMode, session: string): RowHolder[] {
    const k = tupleKey(old);
    return [...this.rows.values()].flatMap((e) =>
      e.holders.filter((h) => h.carried === k && h.session !== session && rowConflicts(mode, h.mode)),
    );
  }

  /** Every tuple with its holders. */
  all(): { tuple: TupleId; holders: RowHolder[] }[] {
    return [...this.rows.values()].map((e) => ({ tuple: e.tuple, holders: e.holders.map((h) => ({ ...h })) }));
  }

  /** Tuples a session holds. */
  heldBy(session: string): { tuple: TupleId; mode: RowLockMode }[] {
    const out: { tuple: TupleId; mode: RowLockMode }[] = [];
    for (const e of this.rows.values()) {
      const m = this.heldMode(e.tuple, session);
      if (m) out.push({ tuple: e.tuple, mode: m });
    }
    return out;
  }

  /** A deep copy. */
  clone(): RowLockTable {
    const c = new RowLockTable();
    for (const [k, e] of this.rows)
      c.rows.set(k, {
        tuple: { ...e.tuple },
        holders: e.holders.map((h) => ({ ...h })),
        ...(e.multiMode ? { multiMode: e.multiMode } : {}),
      });
    return c;
  }
}

/** Row locks and row images following a committed update to the row's new version. */
import type { ModelState, Sess } from '../state';
import { epqCovers, epqKey } from './util';

/**
 * A committed UPDATE that moved rows to another partition: a session waiting for one of those
 * rows finds, once it wakes, the moved-partitions marker in the old tuple's t_ctid, and its
 * statement fails (heapam_tuple_lock under READ COMMITTED, the snapshot check otherwise).
 */
export function noteMovedRows(eng: ModelState, s: Sess): void {
  const moved = new Set<string>();
  for (const e of s.txn!.log)
    if (e.kind === 'image')
      for (const op of e.ops) {
        if (op.op !== 'delete' || !op.moved) continue;
        // A version the transaction updated before moving it: waiters wait on the committed tuple it descends from.
        const origin = op.target.own ? s.txn!.originOf.get(`${op.target.rel}:${op.target.ctid}`) : undefined;
        if (!op.target.own) moved.add(`${op.target.rel}:${op.target.ctid}`);
        else if (origin) moved.add(`${origin.oid}:(${origin.block},${origin.offset})`);
      }
  if (!moved.size) return;
  for (const other of eng.sessions.values()) {
    const t = other.step?.wait?.tuple;
    if (other === s || !other.step || other.step.done || !t || !moved.has(`${t.oid}:(${t.block},${t.offset})`)) continue;
    // A foreign-key check's wait: the error keeps the check's SQL statement as its CONTEXT.
    const ctx = other.step.wait?.context;
    const at = ctx?.indexOf('SQL statement "') ?? -1;
    other.step.movedAway = at >= 0 ? { context: ctx!.slice(at) } : {};
  }
}

/**
 * A committed update moves the row to a new version. Other sessions' FOR KEY SHARE locks on
 * the old version (the only ones a non-key update is compatible with) live on in the new
 * version's header, so the model and their row images follow the update chain.
 */
export function followUpdates(eng: ModelState, s: Sess, committed: Map<string, string>): void {
  const moved = new Map<string, string>();
  // Versions the transaction itself deleted after creating them: a chain that ends there ends in
  // a deletion, so heap_lock_tuple's walk to the last version finds the row gone (TM_Deleted) and
  // nothing follows it.
  const deletedOwn = new Set<string>();
  for (const e of s.txn!.log) {
    if (e.kind !== 'image') continue;
    for (const op of e.ops) {
      if (op.op === 'delete' && op.target.own) deletedOwn.add(`${op.target.rel}:${op.target.ctid}`);
      if (op.op !== 'update') continue;
      const cur = committed.get(`${op.target.rel}:${op.newCtid}`);
      if (!cur) continue;
      // An update of an own version continues a chain that started at a committed tuple.
      const start = op.target.own
        ? [...moved].find(([, v]) => v === `${op.target.rel}:${op.target.ctid}`)?.[0]
        : `${op.target.rel}:${op.target.ctid}`;
      if (start) moved.set(start, `${op.target.rel}:${op.newCtid}`);
    }
  }
  for (const [from, viaOrig] of moved) {
    const cur = committed.get(viaOrig);
    if (!cur || deletedOwn.has(viaOrig)) continue;
    const [rel, oldCtid] = from.split(':');
    const [b, o] = cur.slice(1, -1).split(',').map(Number);
    const [ob, oo] = oldCtid.slice(1, -1).split(',').map(Number);
    eng.rows.relocate({ oid: Number(rel), block: ob, offset: oo }, { block: b, offset: o });
    for (const other of eng.sessions.values()) {
      const epq = other.step?.epq;
      if (!epq || !epqCovers(epq, Number(rel))) continue;
      const oldKey = epqKey(epq, { oid: Number(rel), block: ob, offset: oo });
      const curKey = epqKey(epq, { oid: Number(rel), block: b, offset: o });
      if (epq.ctids.includes(oldKey)) {
        epq.ctids = epq.ctids.map((c) => (c === oldKey ? curKey : c));
        epq.followed = [...(epq.followed ?? []).filter((c) => c !== oldKey), curKey];
        if (epq.modes?.[oldKey]) epq.modes = { ...epq.modes, [curKey]: epq.modes[oldKey] };
        epq.origin = { ...epq.origin, [curKey]: epq.origin?.[oldKey] ?? oldKey };
      }
      if (epq.beyond?.includes(oldKey)) epq.beyond = epq.beyond.map((c) => (c === oldKey ? curKey : c));
    }
    for (const other of eng.sessions.values()) {
      if (other === s || !other.txn) continue;
      // A REPEATABLE READ / SERIALIZABLE locker's snapshot predates this commit: the new version
      // is invisible to its replay, the old one is not, and locking the old one follows the
      // update chain (heap_lock_updated_tuple), as its original lock did.
      const snapshotLocker = other.txn.isolation !== 'read committed';
      for (const e of other.txn.log)
        if (e.kind === 'image')
          for (const op of e.ops)
            if (
              (op.op === 'lock' || op.op === 'update' || op.op === 'delete') &&
              !op.target.own &&
              op.target.rel === Number(rel) &&
              op.target.ctid === oldCtid
            )
              if (!(snapshotLocker && op.op === 'lock')) {
                op.target = { ...op.target, ctid: cur };
                // The new version is invisible to a statement snapshot it keeps: its re-run takes a new one.
                if (other.step?.stmtSnapshot) other.step.stmtSnapshot.fresh = true;
              }
    }
  }
}

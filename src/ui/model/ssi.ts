/**
 * SERIALIZABLE (Serializable Snapshot Isolation) in the player: the SIRead locks as pg_locks rows,
 * the rw-antidependencies as graph edges, and which sessions are doomed. Pure; reads only
 * `snapshot.ssi` (absent while no serializable transaction is tracked).
 */
import type { EngineSnapshot, LockRow, SsiSnapshot } from '../../engine/types';

export type SireadLocktype = 'relation' | 'page' | 'tuple';

/**
 * A pg_locks row for an SIRead (predicate) lock, as PostgreSQL's pg_lock_status prints it: locktype
 * relation / page / tuple, mode SIReadLock, always granted, never fast-path, no waitstart.
 */
export interface SireadLockRow extends Omit<LockRow, 'locktype' | 'mode'> {
  locktype: SireadLocktype;
  mode: 'SIReadLock';
  /** Lockstep's annotation, not a pg_locks column: the holder's SSI state. */
  ssi: { committed: boolean; doomed: boolean };
}

/** A row of the lock table: a heavyweight lock (the engine's LockRow) or an SIRead lock. */
export type PgLocksRow = LockRow | SireadLockRow;

export function isSiread(row: PgLocksRow): row is SireadLockRow {
  return row.mode === 'SIReadLock';
}

const SIREAD_ORDER: Readonly<Record<SireadLocktype, number>> = { relation: 0, page: 1, tuple: 2 };

/** The locktype PostgreSQL shows for a predicate lock target (PredicateLockTagTypeNames). */
export function sireadLocktype(target: { page: number | null; tuple: number | null }): SireadLocktype {
  return target.page === null ? 'relation' : target.tuple === null ? 'page' : 'tuple';
}

/**
 * The SIRead locks of every tracked serializable transaction as pg_locks rows, committed ones
 * included (PostgreSQL keeps them while a transaction that overlapped them still runs). Ordered
 * by session, then the older (committed) transaction first, then relation, page, tuple; sessions
 * missing from `snap.sessions` (hidden ones) are left out. Input untouched.
 */
export function sireadLockRows(snap: Pick<EngineSnapshot, 'sessions' | 'locks' | 'ssi'>): SireadLockRow[] {
  if (!snap.ssi) return [];
  const sessions = new Map(snap.sessions.map((s) => [s.name, s]));
  const database = snap.locks.find((l) => l.locktype === 'relation' && l.database !== null)?.database ?? null;
  const rows: SireadLockRow[] = [];
  for (const x of snap.ssi.transactions) {
    const s = sessions.get(x.session);
    if (!s) continue;
    const committed = x.state === 'committed';
    for (const l of x.sireadLocks)
      rows.push({
        locktype: sireadLocktype(l),
        database,
        relation: l.relation,
        page: l.page,
        tuple: l.tuple,
        virtualxid: null,
        transactionid: null,
        classid: null,
        objid: null,
        objsubid: null,
        // The snapshot does not carry a committed transaction's old vxid; the table does not show it.
        virtualtransaction: committed ? '' : (s.vxid ?? ''),
        pid: s.pid,
        session: s.name,
        mode: 'SIReadLock',
        granted: true,
        fastpath: false,
        waitstart: null,
        ssi: { committed, doomed: x.doomed },
      });
  }
  return rows.sort(
    (a, b) =>
      a.session.localeCompare(b.session) ||
      Number(b.ssi.committed) - Number(a.ssi.committed) ||
      SIREAD_ORDER[a.locktype] - SIREAD_ORDER[b.locktype] ||
      String(a.relation).localeCompare(String(b.relation)) ||
      (a.page ?? -1) - (b.page ?? -1) ||
      (a.tuple ?? -1) - (b.tuple ?? -1),
  );
}

/** Sessions whose running serializable transaction is doomed: its next statement or COMMIT fails with 40001. */
export function doomedSessions(ssi: SsiSnapshot | undefined): Set<string> {
  return new Set((ssi?.transactions ?? []).filter((x) => x.doomed && x.state === 'active').map((x) => x.session));
}

/** Sessions with a committed serializable transaction SSI still tracks (its SIRead locks and rw edges live on). */
export function committedTracked(ssi: SsiSnapshot | undefined): Set<string> {
  return new Set((ssi?.transactions ?? []).filter((x) => x.state === 'committed').map((x) => x.session));
}

/** One rw-antidependency: `from` read something `to` then wrote, so `from` must come first in a serial order. */
export interface RwDependency {
  id: string;
  from: string;
  to: string;
  fromCommitted: boolean;
  toCommitted: boolean;
}

/** The rw-antidependencies between shown sessions, with unique ids; input untouched. */
export function rwDependencies(snap: Pick<EngineSnapshot, 'sessions' | 'ssi'>): RwDependency[] {
  if (!snap.ssi) return [];
  const shown = new Set(snap.sessions.map((s) => s.name));
  const seen = new Map<string, number>();
  return snap.ssi.conflicts
    .filter((c) => shown.has(c.from) && shown.has(c.to))
    .map((c) => {
      const base = `rw:${c.from}${c.fromCommitted ? '(committed)' : ''}->${c.to}${c.toCommitted ? '(committed)' : ''}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return { id: n ? `${base}#${n}` : base, from: c.from, to: c.to, fromCommitted: c.fromCommitted, toCommitted: c.toCommitted };
    });
}

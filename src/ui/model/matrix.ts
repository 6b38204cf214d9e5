/**
 * What the lock matrices light up for a snapshot: requested modes (rows), held modes (columns)
 * and the conflicting cells of the current waits; and which modes each session holds.
 * The matrices themselves are the tables of engine/model/locks/modes.ts.
 */
import type { EngineSnapshot, LockMode, RowLockMode } from '../../engine/types';
import type { RowLockStrength } from '../../engine/model/locks/types';
import { conflicts, rowConflicts, rowStrength, tupleLockMode, ROW_LOCK_MODES } from '../../engine/model/locks/modes';

/** One wait as the matrix sees it: requested mode vs the blockers' modes. */
export interface MatrixWait<M extends string> {
  session: string;
  requested: M;
  held: { session: string; mode: M; conflict: boolean }[];
}

export interface MatrixLights<M extends string> {
  waits: MatrixWait<M>[];
  requested: Set<M>;
  held: Set<M>;
  /** Keys `${requested}|${held}` of the cells that block a current wait. */
  conflicts: Set<string>;
}

/** The key of a matrix cell. */
export function cellKey(requested: string, held: string): string {
  return `${requested}|${held}`;
}

function lights<M extends string>(waits: MatrixWait<M>[]): MatrixLights<M> {
  const out: MatrixLights<M> = { waits, requested: new Set(), held: new Set(), conflicts: new Set() };
  for (const w of waits) {
    out.requested.add(w.requested);
    for (const h of w.held) {
      out.held.add(h.mode);
      if (h.conflict) out.conflicts.add(cellKey(w.requested, h.mode));
    }
  }
  return out;
}

/** Table-level (heavyweight) lights from each waiting session's structured wait reason. */
export function tableMatrixLights(snap: EngineSnapshot): MatrixLights<LockMode> {
  const waits: MatrixWait<LockMode>[] = [];
  for (const s of snap.sessions) {
    const w = s.pending?.wait;
    if (!w) continue;
    waits.push({
      session: s.name,
      requested: w.mode,
      held: w.blockers.map((b) => ({ session: b.session, mode: b.mode, conflict: conflicts(w.mode, b.mode) })),
    });
  }
  return lights(waits);
}

const STRENGTH_OF_TUPLE_MODE = new Map<LockMode, RowLockStrength>(ROW_LOCK_MODES.map((m) => [tupleLockMode(m), m]));

/**
 * Row-level lights. A row waiter holds (or waits for) the heavyweight tuple lock whose mode
 * names the row strength it wants (heapam.c tupleLockExtraInfo); the row's current lockers
 * are the holders.
 */
export function rowMatrixLights(snap: EngineSnapshot): MatrixLights<RowLockStrength> {
  const waits: MatrixWait<RowLockStrength>[] = [];
  for (const s of snap.sessions) {
    const w = s.pending?.wait;
    if (!w) continue;
    let tuple: { relation: string; block: number; offset: number; mode: LockMode } | null = null;
    if (w.tag.type === 'tuple') {
      tuple = { relation: w.tag.relation, block: w.tag.block, offset: w.tag.offset, mode: w.mode };
    } else if (w.tag.type === 'transactionid') {
      const held = snap.locks.find((r) => r.session === s.name && r.locktype === 'tuple' && r.granted);
      if (held && held.relation != null && held.page != null && held.tuple != null)
        tuple = { relation: held.relation, block: held.page, offset: held.tuple, mode: held.mode };
    }
    if (!tuple) continue;
    const requested = STRENGTH_OF_TUPLE_MODE.get(tuple.mode);
    if (!requested) continue;
    const ctid = `(${tuple.block},${tuple.offset})`;
    const row = snap.tables.find((t) => t.name === tuple.relation)?.rows.find((r) => r.ctid === ctid);
    const held = (row?.lockers ?? [])
      .filter((l) => l.session !== s.name)
      .map((l) => ({ session: l.session, mode: rowStrength(l.mode), conflict: rowConflicts(requested, l.mode) }));
    waits.push({ session: s.name, requested, held });
  }
  return lights(waits);
}

/** Granted table-level modes per session (from pg_locks), in session order. */
export function heldTableModes(snap: EngineSnapshot): Map<string, Set<LockMode>> {
  const out = new Map<string, Set<LockMode>>(snap.sessions.map((s) => [s.name, new Set()]));
  for (const r of snap.locks) if (r.granted) (out.get(r.session) ?? out.set(r.session, new Set()).get(r.session)!).add(r.mode);
  return out;
}

/** Row-level strengths per session (from the tables' row lockers). */
export function heldRowModes(snap: EngineSnapshot): Map<string, Set<RowLockStrength>> {
  const out = new Map<string, Set<RowLockStrength>>(snap.sessions.map((s) => [s.name, new Set()]));
  for (const t of snap.tables)
    for (const r of t.rows)
      for (const l of r.lockers)
        (out.get(l.session) ?? out.set(l.session, new Set()).get(l.session)!).add(rowStrength(l.mode as RowLockMode));
  return out;
}

/** For each mode, the sessions holding it (column badges). */
export function holdersByMode<M extends string>(held: Map<string, Set<M>>): Map<M, string[]> {
  const out = new Map<M, string[]>();
  for (const [session, modes] of held) for (const m of modes) out.set(m, [...(out.get(m) ?? []), session]);
  return out;
}

/** One lit matrix cell for the presenter stage: the pair of modes and who requests / holds them. */
export interface ExplainingCell {
  key: string;
  kind: 'table' | 'row';
  requested: string;
  held: string;
  /** The waiting sessions that request `requested`, in session order. */
  sessions: string[];
  /** The sessions whose `held` mode blocks them. */
  holders: string[];
}

/**
 * The conflicting (requested × held) cells of the current waits, table-level first, one entry per
 * cell with every requester and holder: the stage shows the few cells that explain the waits
 * instead of the full matrices.
 */
export function explainingCells(snap: EngineSnapshot): ExplainingCell[] {
  const out = new Map<string, ExplainingCell>();
  const add = <M extends string>(kind: 'table' | 'row', waits: MatrixWait<M>[]) => {
    for (const w of waits)
      for (const h of w.held) {
        if (!h.conflict) continue;
        const key = `${kind}:${cellKey(w.requested, h.mode)}`;
        const cell = out.get(key) ?? { key, kind, requested: w.requested, held: h.mode, sessions: [], holders: [] };
        if (!cell.sessions.includes(w.session)) cell.sessions.push(w.session);
        if (!cell.holders.includes(h.session)) cell.holders.push(h.session);
        out.set(key, cell);
      }
  };
  add('table', tableMatrixLights(snap).waits);
  add('row', rowMatrixLights(snap).waits);
  return [...out.values()];
}

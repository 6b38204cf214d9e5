/** The immutable snapshot of the engine that the UI renders. */
import { DATABASE_OID, type ModelState } from '../state';
import { friendly, presentTag, stateOf, waitReason } from '../model/present';
import type { EngineSnapshot, LockRow, SessionSnapshot, SsiSnapshot, WaitEdge } from '../types';

/** The immutable, JSON-serializable view of everything. */
export function snapshotOf(eng: ModelState): EngineSnapshot {
  const sessions: SessionSnapshot[] = [...eng.sessions.values()].map((s) => {
    const step = s.step && !s.step.done ? s.step : null;
    const reason = waitReason(eng, s);
    return {
      name: s.name,
      pid: s.pid,
      state: stateOf(eng, s),
      isolation: s.txn?.isolation ?? s.defaultIsolation,
      xid: s.txn?.xid ?? null,
      vxid: s.txn?.vxid ?? null,
      xactStartMs: s.txn?.startMs ?? null,
      stateChangeMs: s.stateChangeMs,
      query: s.query,
      gucs: { ...s.gucs },
      pending: step
        ? {
            step: step.name,
            sql: step.sql,
            startedMs: step.startedMs,
            results: [...step.results],
            ...(reason ? { wait: reason } : {}),
            ...(step.sleepUntil !== undefined ? { sleepUntilMs: step.sleepUntil } : {}),
          }
        : null,
      last: s.last,
      history: [...s.history],
      ...(s.terminated ? { terminated: { atMs: s.terminatedAtMs, message: { ...s.terminated } } } : {}),
    };
  });
  const bySession = new Map([...eng.sessions.values()].map((s) => [s.proc as string, s]));
  const locks: LockRow[] = eng.lm.entries().map((e) => {
    const s = bySession.get(e.proc)!;
    const t = e.tag;
    const row: LockRow = {
      locktype: t.type,
      database: t.type === 'relation' || t.type === 'tuple' || t.type === 'advisory' ? DATABASE_OID : null,
      relation: t.type === 'relation' || t.type === 'tuple' ? t.relation : null,
      page: t.type === 'tuple' ? t.block : null,
      tuple: t.type === 'tuple' ? t.offset : null,
      virtualxid: t.type === 'virtualxid' ? t.vxid : null,
      transactionid: t.type === 'transactionid' ? t.xid : null,
      classid: t.type === 'advisory' ? t.key1 : null,
      objid: t.type === 'advisory' ? t.key2 : null,
      objsubid: t.type === 'advisory' ? t.field4 : null,
      virtualtransaction: s.txn?.vxid ?? `${s.index + 3}/0`,
      pid: s.pid,
      session: s.name,
      mode: e.mode,
      granted: e.granted,
      fastpath: e.fastpath,
      waitstart: e.granted ? null : (s.step?.wait?.sinceMs ?? null),
    };
    return row;
  });
  locks.sort((a, b) => Number(a.granted) - Number(b.granted));
  const cycle = new Set<string>();
  if (eng.lastDeadlock) {
    const c = eng.lastDeadlock.cycle;
    c.forEach((n, i) => cycle.add(`${n}->${c[(i + 1) % c.length]}`));
  }
  const edges: WaitEdge[] = eng.lm.waitEdges().map((e) => ({
    from: e.from,
    to: e.to,
    kind: e.kind,
    tag: presentTag(eng, e.tag),
    mode: e.mode,
    label: `${e.mode} on ${friendly(eng, e.tag)}`,
    inCycle: false,
  }));
  markCycles(edges);
  return structuredClone({
    clockMs: eng.clock,
    sessions,
    locks,
    edges,
    deadlock: eng.lastDeadlock,
    tables: eng.tables,
    views: eng.views,
    timers: eng.timers.all().map((t) => ({ session: t.session, kind: t.kind, atMs: t.atMs })),
    events: eng.events,
    serverLog: eng.serverLog,
    ...ssiSnapshot(eng),
  });
}

/** SERIALIZABLE transactions, their SIREAD locks and rw-conflicts, for the UI. */
export function ssiSnapshot(eng: ModelState): { ssi?: SsiSnapshot } {
  const all = eng.ssi.all();
  if (!all.length) return {};
  const name = (rel: number) => eng.relations.get(rel)?.name ?? String(rel);
  return {
    ssi: {
      transactions: all.map((x) => ({
        session: x.session,
        state: x.committed ? 'committed' : 'active',
        doomed: x.doomed,
        sireadLocks: [...x.locks.values()].map((l) => ({
          relation: name(l.rel),
          page: l.kind === 'relation' ? null : l.block,
          tuple: l.kind === 'tuple' ? l.offset : null,
        })),
      })),
      conflicts: all.flatMap((r) =>
        [...r.outConflicts].map((w) => ({ from: r.session, to: w.session, fromCommitted: r.committed, toCommitted: w.committed })),
      ),
    },
  };
}

/** Marks edges that lie on a cycle of the current wait-for graph. */
export function markCycles(edges: WaitEdge[]): void {
  const adj = new Map<string, string[]>();
  for (const e of edges) adj.set(e.from, [...(adj.get(e.from) ?? []), e.to]);
  const reach = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) {
      const n = stack.pop()!;
      if (n === to) return true;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(adj.get(n) ?? []));
    }
    return false;
  };
  for (const e of edges) e.inCycle = reach(e.to, e.from);
}

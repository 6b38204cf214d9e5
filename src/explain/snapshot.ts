/**
 * The player's wait-for graph takes an EngineSnapshot; this builds one from an explained report,
 * frozen at the moment of detection: every member waits, the cycle's edges are lit, and the
 * victim's statement has just failed with 40P01. Nothing here is invented beyond that moment:
 * pids, modes and objects are the log's, and a process's xid is the one its waiter waits for.
 */
import type { EngineSnapshot, LockRow, SessionSnapshot, WaitEdge } from '../engine/types';
import { TABLE_LOCK_MODES, type LockMode, type LockTag, type Xid } from '../engine/model/locks/types';
import type { CycleEdge, Explanation } from './explain';
import type { LockObject } from './parse';

/** The lock tag the engine would use for a log's lock object (only its kind matters to the graph). */
function tagOf(o: LockObject): LockTag {
  switch (o.kind) {
    case 'transaction':
      return { type: 'transactionid', xid: o.xid as Xid };
    case 'speculative':
      return { type: 'transactionid', xid: o.xid as Xid };
    case 'tuple':
      return { type: 'tuple', relation: String(o.relation), oid: o.relation, block: o.block, offset: o.offset };
    case 'relation':
    case 'extend':
    case 'page':
      return { type: 'relation', relation: String(o.relation), oid: o.relation };
    case 'advisory':
      return { type: 'advisory', key1: o.key1, key2: o.key2, field4: o.field4 === 2 ? 2 : 1 };
    case 'virtualxid':
      return { type: 'virtualxid', vxid: o.vxid };
    case 'object':
      return { type: 'virtualxid', vxid: o.text };
  }
}

/** The edge's label as PostgreSQL words the lock, without the database OID: "ShareLock on transaction 5678". */
export function edgeLabel(e: Pick<CycleEdge, 'mode' | 'objectText'>): string {
  return `${e.mode} on ${e.objectText.replace(/ of database \d+$/, '')}`;
}

const isMode = (m: string): m is LockMode => (TABLE_LOCK_MODES as readonly string[]).includes(m);

/**
 * pg_locks rows the report implies, for the graph's sessions ↔ locks view: each waiter's request
 * (not granted), and for a transaction wait the holder's ExclusiveLock on its own xid, which every
 * transaction holds. Other holders' modes are not in the report, so they are left out.
 */
function lockRows(ex: Explanation, pidOf: ReadonlyMap<string, number>): LockRow[] {
  const rows: LockRow[] = [];
  const base = (session: string) => ({
    database: null,
    relation: null,
    page: null,
    tuple: null,
    virtualxid: null,
    transactionid: null,
    classid: null,
    objid: null,
    objsubid: null,
    virtualtransaction: '',
    pid: pidOf.get(session) ?? 0,
    session,
    fastpath: false,
    waitstart: null,
  });
  for (const e of ex.edges) {
    const o = e.object;
    const mode = isMode(e.mode) ? e.mode : 'ExclusiveLock';
    if (o.kind === 'transaction') {
      rows.push({ ...base(e.from), locktype: 'transactionid', transactionid: o.xid, mode, granted: false });
      rows.push({ ...base(e.to), locktype: 'transactionid', transactionid: o.xid, mode: 'ExclusiveLock', granted: true });
    } else if (o.kind === 'relation') {
      rows.push({ ...base(e.from), locktype: 'relation', database: o.database, relation: String(o.relation), mode, granted: false });
    } else if (o.kind === 'tuple') {
      const at = { database: o.database, relation: String(o.relation), page: o.block, tuple: o.offset };
      rows.push({ ...base(e.from), locktype: 'tuple', ...at, mode, granted: false });
    } else if (o.kind === 'advisory') {
      const at = { database: o.database, classid: o.key1, objid: o.key2, objsubid: o.field4 };
      rows.push({ ...base(e.from), locktype: 'advisory', ...at, mode, granted: false });
    }
  }
  return rows;
}

/** The snapshot WaitForGraph draws for an explanation. */
export function explanationSnapshot(ex: Explanation): EngineSnapshot {
  const xidOf = new Map<string, number>();
  for (const e of ex.edges) if (e.object.kind === 'transaction' && !xidOf.has(e.to)) xidOf.set(e.to, e.object.xid);
  const victim = ex.processes.find((p) => p.victim);
  const sessions: SessionSnapshot[] = ex.processes.map((p) => ({
    name: p.name,
    pid: p.pid,
    state: 'waiting',
    isolation: 'read committed',
    xid: xidOf.get(p.name) ?? null,
    vxid: null,
    xactStartMs: 0,
    stateChangeMs: 0,
    query: p.sql ?? '',
    gucs: {},
    pending: null,
    last: null,
    history: [],
  }));
  const closed = !ex.gaps.some((g) => g.code === 'open-cycle');
  const edges: WaitEdge[] = ex.edges.map((e) => ({
    from: e.from,
    to: e.to,
    kind: 'hard',
    tag: tagOf(e.object),
    mode: isMode(e.mode) ? e.mode : 'ExclusiveLock',
    label: edgeLabel(e),
    inCycle: closed,
  }));
  const step = victim ? `${victim.name.toLowerCase()}2` : '';
  return {
    clockMs: 0,
    sessions,
    locks: lockRows(ex, new Map(ex.processes.map((p) => [p.name, p.pid]))),
    edges,
    deadlock: victim && closed ? { cycle: ex.processes.map((p) => p.name), victim: victim.name, atMs: 0 } : null,
    tables: [],
    timers: [],
    events: victim
      ? [
          { type: 'step-start', atMs: 0, session: victim.name, step, sql: victim.sql ?? '' },
          { type: 'step-done', atMs: 0, session: victim.name, step, ok: false, sqlstate: '40P01' },
        ]
      : [],
    serverLog: [],
  };
}

/** The shadow objects a dry run fills so diagnostics and pg_try_advisory_* see the simulated sessions. */
import type { EngineContext } from '../context';
import type { LockMode, LockTag } from '../model/locks/types';
import { DIAGNOSTICS_SCHEMA, diagnosticsDataSql, type DiagnosticsInput } from './diagnostics';
import { ADVISORY_ORDER_SCHEMA, ADVISORY_SHADOW_SCHEMA, OTHERS_ADVISORY } from './names';
import type { ParsedStatement } from '../sql';
import { DATABASE_OID, type Sess } from '../state';
import { snapshotOf } from '../view/snapshot';

/**
 * SQL run just before the statement so that unqualified diagnostics (pg_locks,
 * pg_stat_activity, pg_blocking_pids, pg_backend_pid) show the simulated sessions and
 * pg_try_advisory_* sees the other sessions' advisory locks (search_path shadowing).
 */
export function shadowSql(eng: EngineContext, s: Sess, st: ParsedStatement, advisoryOrder = false): { sql: string; count: number } {
  if (st.cls.kind !== 'dml') return { sql: '', count: 0 };
  // The advisory lock functions that note where they fall among the row locks (advisoryOrder.ts).
  const schemas: string[] = advisoryOrder ? [ADVISORY_ORDER_SCHEMA] : [];
  let sql = '';
  let count = 0;
  if (st.cls.mentionsDiagnostics) {
    schemas.push(DIAGNOSTICS_SCHEMA);
    sql += diagnosticsDataSql(diagnosticsInput(eng, s)) + ';\n';
    count++;
  }
  if (/pg_try_advisory/i.test(st.sql)) {
    schemas.push(ADVISORY_SHADOW_SCHEMA);
    const rows = unavailableAdvisory(eng, s).map(({ tag, mode }) => `(${tag.key1 | 0}, ${tag.key2 | 0}, ${tag.field4}, '${mode}')`);
    if (rows.length) {
      sql += `INSERT INTO ${OTHERS_ADVISORY} VALUES ${rows.join(', ')};\n`;
      count++;
    }
  }
  if (!schemas.length) return { sql: '', count: 0 };
  return { sql: sql + shadowSearchPathSql(schemas), count: count + 1 };
}

/**
 * The advisory locks `s` could not take without waiting, by key and mode: LockAcquire with
 * dontWait refuses a request that conflicts with another session's hold or with a mode another
 * session waits for (the lock's waitMask), unless JoinWaitQueue lets it in ahead; a mode the
 * session already holds is granted at once. Keys nobody holds or waits for are free.
 */
function unavailableAdvisory(eng: EngineContext, s: Sess): { tag: LockTag & { type: 'advisory' }; mode: LockMode }[] {
  const tags = new Map<string, LockTag & { type: 'advisory' }>();
  for (const e of eng.lm.entries()) {
    if (e.proc === s.proc || e.tag.type !== 'advisory') continue;
    tags.set(`${e.tag.key1}/${e.tag.key2}/${e.tag.field4}`, e.tag);
  }
  const out: { tag: LockTag & { type: 'advisory' }; mode: LockMode }[] = [];
  for (const tag of tags.values())
    for (const mode of ['ShareLock', 'ExclusiveLock'] as const) {
      if (eng.lm.holdCount(s.proc, tag, mode) > 0) continue;
      if (eng.lm.clone().acquire(s.proc, tag, mode, { dontWait: true }).status !== 'granted') out.push({ tag, mode });
    }
  return out;
}

/**
 * One statement that puts `schemas` first on the search_path, for the transaction (`local`) or
 * the session. pg_catalog must be listed after the shadows explicitly, or it is searched first:
 * it goes right after them unless the user's path lists it (then its place there is kept).
 */
export function shadowSearchPathSql(schemas: string[], local = true): string {
  const path = `pg_catalog.current_setting('search_path')`;
  const tail = `CASE WHEN ${path} ~ '(^|[ ,])pg_catalog([ ,]|$)' THEN ${path} ELSE 'pg_catalog, ' || ${path} END`;
  return `SELECT pg_catalog.set_config('search_path', '${schemas.join(', ')}, ' || ${tail}, ${local});\n`;
}

/** The simulated state the diagnostics shadows show the asking session. */
export function diagnosticsInput(eng: EngineContext, me: Sess): DiagnosticsInput {
  const snap = snapshotOf(eng);
  const live = new Set([...eng.sessions.values()].filter((x) => !x.terminated).map((x) => x.name));
  const blocking: Record<string, string[]> = {};
  for (const e of eng.lm.waitEdges()) {
    const list = (blocking[e.from] ??= []);
    if (!list.includes(e.to)) list.push(e.to);
  }
  return {
    sessions: snap.sessions.filter((x) => live.has(x.name)),
    me: me.name,
    locks: snap.locks.filter((l) => live.has(l.session)),
    blocking,
    clockMs: eng.clock,
    relationOids: Object.fromEntries(eng.catalog.map((c) => [c.name, c.oid])),
    predicateLocks: eng.ssi.all().flatMap((x) => {
      const pid = eng.sessions.get(x.session)?.pid ?? 0;
      return [...x.locks.values()].map((l) => ({
        locktype: l.kind,
        relation: l.rel,
        page: l.kind === 'relation' ? null : l.block,
        tuple: l.kind === 'tuple' ? l.offset : null,
        virtualtransaction: x.vxid,
        pid,
      }));
    }),
    prepared: [...me.prepared].map(([name, p]) => ({
      name,
      statement: p.queryString,
      atMs: p.atMs,
      parameterTypes: p.parameterTypes,
      resultTypes: p.resultTypes,
      genericPlans: p.genericPlans,
      customPlans: p.customPlans,
    })),
    databaseOid: DATABASE_OID,
    nextXid: eng.nextXid,
    databaseName: 'postgres',
    userName: 'postgres',
  };
}

/**
 * Diagnostics over simulated sessions. PGlite has one backend, so its own pg_locks,
 * pg_stat_activity, pg_blocking_pids() and pg_backend_pid() would show only itself. The executor
 * creates the shadow objects once (SHADOW_DDL); before a dry run whose statement mentions them,
 * the engine runs `diagnosticsDataSql(...)` inside the dry-run transaction and puts
 * DIAGNOSTICS_SCHEMA first on the search_path (pg/shadows.ts): unqualified names then resolve to objects in DIAGNOSTICS_SCHEMA that show the simulated multi-session truth in
 * PostgreSQL 18's exact shape (column names and types, function signatures). ROLLBACK removes
 * the objects and the transaction-local settings that carry the state.
 *
 * Pure: builds SQL text only, no PGlite import.
 *
 * Objects (in DIAGNOSTICS_SCHEMA, a real schema: functions in pg_temp are never found through the
 * search_path; views, not tables: no relation files, nothing for the engine's heap scans):
 *  - view pg_locks: the engine's LockRows, plus the running session's own locks on what its
 *    statement reads (PostgreSQL shows the asker's AccessShareLock on pg_locks and its virtualxid);
 *  - view pg_stat_activity: one row per simulated session, then PostgreSQL 18's auxiliary processes;
 *  - view pg_prepared_statements: the asking session's own (PGlite's are the engine's);
 *  - functions pg_blocking_pids(integer), pg_backend_pid(),
 *    pg_isolation_test_session_is_blocked(integer, integer[]);
 *  - functions now(), transaction_timestamp(), statement_timestamp(), clock_timestamp() on the
 *    virtual clock, so the course's `now() - xact_start` measures simulated time.
 */
import type { LockRow, PgMessage, SessionSnapshot } from '../types';

export const DIAGNOSTICS_SCHEMA = 'lockstep_sim';

/** Virtual time 0 (2026-01-01 00:00:00+00) in ms. */
const EPOCH_MS = Date.UTC(2026, 0, 1);

export interface DiagnosticsInput {
  /** All simulated sessions (connected ones: omit sessions whose backend was terminated). */
  sessions: SessionSnapshot[];
  /** The session running the statement. */
  me: string;
  /** What pg_locks must show (engine-provided), in display order. */
  locks: LockRow[];
  /** SERIALIZABLE: the SIRead (predicate) locks pg_locks lists after the others (relation: a real OID). */
  predicateLocks?: {
    locktype: 'relation' | 'page' | 'tuple';
    relation: number;
    page: number | null;
    tuple: number | null;
    virtualtransaction: string;
    pid: number;
  }[];
  /** session → sessions blocking it, in pg_blocking_pids order. */
  blocking: Record<string, string[]>;
  /** Virtual now, ms since virtual time 0 (2026-01-01 00:00:00+00). */
  clockMs: number;
  /** Relation name (as in LockRow.relation) → oid in this database (PGlite's real oids). */
  relationOids: Record<string, number>;
  databaseOid: number;
  databaseName: string;
  userName: string;
  /**
   * Optional facts SessionSnapshot lacks. queryStartMs: when each session's current or last query
   * started (default: pending.startedMs, else stateChangeMs). backendXmin: each session's snapshot
   * xmin, null when it holds no snapshot (default: approximated from the running xids).
   */
  queryStartMs?: Record<string, number>;
  backendXmin?: Record<string, number | null>;
  /** The next transaction id to be assigned: the xmin of a snapshot taken while no transaction has one. */
  nextXid?: number;
  /** The asking session's prepared statements, as its pg_prepared_statements lists them (PGlite's are the engine's own). */
  prepared?: {
    name: string;
    statement: string;
    atMs: number;
    parameterTypes: string;
    resultTypes: string | null;
    genericPlans: number;
    customPlans: number;
  }[];
  /** Show PostgreSQL 18's auxiliary processes (checkpointer, io workers, …) in pg_stat_activity; default true. */
  auxiliaryProcesses?: boolean;
}

/** A SQL string literal (standard_conforming_strings = on). */
function lit(v: string): string {
  return `'${v.replace(/'/g, "''")}'`;
}

/** Virtual milliseconds as a timestamptz literal text, e.g. '2026-01-01 00:00:01.5+00'. */
export function virtualTimestamp(ms: number): string {
  const iso = new Date(EPOCH_MS + ms).toISOString(); // 2026-01-01T00:00:01.500Z
  const [date, time] = iso.slice(0, -1).split('T') as [string, string];
  return `${date} ${time.replace(/\.?0+$/, '')}+00`;
}

function ts(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : virtualTimestamp(ms);
}

/** Transaction-local settings (set_config(..., true)) that carry the simulated state to the shadows. */
const G = {
  locks: 'lockstep.diag_locks',
  activity: 'lockstep.diag_activity',
  blocking: 'lockstep.diag_blocking',
  self: 'lockstep.diag_self',
  pid: 'lockstep.diag_pid',
  xactNow: 'lockstep.diag_xact_now',
  stmtNow: 'lockstep.diag_stmt_now',
  clockNow: 'lockstep.diag_clock_now',
  baseline: 'lockstep.diag_baseline',
  prepared: 'lockstep.diag_prepared',
} as const;

/** A setting's value, NULL when unset (after a transaction that set it ends, a placeholder reads ''). */
const setting = (name: string): string => `NULLIF(pg_catalog.current_setting('${name}', true), '')`;

const S = DIAGNOSTICS_SCHEMA;

/**
 * The shadow objects. Constant text: the state arrives through settings, so the definitions stay
 * small and cheap to create (a view over a large VALUES list costs several times more), and they
 * may also be installed once for good (then only diagnosticsDataSql runs per statement).
 */
/**
 * The notice the shadow pg_cancel_backend / pg_terminate_backend raise for a simulated session:
 * a signal is not transactional, so it leaves the dry run as a notice (which survives its
 * rollback) and the engine delivers it once the statement is done (takeSignals).
 */
export const SIGNAL_MARK = 'lockstep-signal';

/** Removes the signal notices from a statement's notices and returns the signals, in order. */
export function takeSignals(raw: { notices: PgMessage[] }): { kind: 'cancel' | 'terminate'; pid: number }[] {
  const out: { kind: 'cancel' | 'terminate'; pid: number }[] = [];
  const re = new RegExp(`^${SIGNAL_MARK} (cancel|terminate) (-?\\d+)$`);
  raw.notices = raw.notices.filter((n) => {
    const m = re.exec(n.message);
    if (!m) return true;
    out.push({ kind: m[1] as 'cancel' | 'terminate', pid: Number(m[2]) });
    return false;
  });
  return out;
}

export const SHADOW_DDL = `CREATE SCHEMA IF NOT EXISTS ${S};
CREATE OR REPLACE VIEW ${S}.pg_locks AS
SELECT x.locktype, x.database, coalesce(x.relation, pg_catalog.to_regclass(x.relname)::oid) AS relation, x.page, x.tuple,
  x.virtualxid, x.transactionid, x.classid, x.objid, x.objsubid, x.virtualtransaction, x.pid, x.mode, x.granted, x.fastpath, x.waitstart
FROM pg_catalog.json_to_recordset(coalesce(${setting(G.locks)}, '[]')::json) AS x(locktype text, database oid, relation oid,
  relname text, page integer, tuple smallint, virtualxid text, transactionid xid, classid oid, objid oid, objsubid smallint,
  virtualtransaction text, pid integer, mode text, granted boolean, fastpath boolean, waitstart timestamp with time zone)
UNION ALL
SELECT l.locktype, l.database, l.relation, l.page, l.tuple, CASE WHEN l.locktype = 'virtualxid' THEN coalesce(s.vxid, l.virtualxid) END,
  l.transactionid, l.classid, l.objid, l.objsubid, coalesce(s.vxid, l.virtualtransaction), s.pid, l.mode, l.granted, l.fastpath, l.waitstart
FROM pg_catalog.pg_locks l,
  pg_catalog.json_to_record(coalesce(${setting(G.self)}, '{}')::json) AS s(pid integer, vxid text, vxid_row boolean, known text[])
WHERE l.pid = pg_catalog.pg_backend_pid() AND s.pid IS NOT NULL
  AND CASE l.locktype
    WHEN 'virtualxid' THEN s.vxid_row
    WHEN 'relation' THEN l.relation <> 'pg_catalog.pg_locks'::pg_catalog.regclass AND l.mode <> 'SIReadLock'
      AND NOT (l.relation::text || ':' || l.mode) = ANY (s.known || coalesce(${setting(G.baseline)}, '{}')::text[])
    ELSE false END;
CREATE OR REPLACE VIEW ${S}.pg_stat_activity AS
SELECT x.datid, x.datname, x.pid, x.leader_pid,
  CASE WHEN x.usename IS NOT NULL THEN pg_catalog.to_regrole(pg_catalog.quote_ident(x.usename::text))::oid END AS usesysid,
  x.usename, x.application_name, x.client_addr, x.client_hostname, x.client_port, x.backend_start, x.xact_start, x.query_start,
  x.state_change, x.wait_event_type, x.wait_event, x.state, x.backend_xid, x.backend_xmin, x.query_id, x.query, x.backend_type
FROM pg_catalog.json_to_recordset(coalesce(${setting(G.activity)}, '[]')::json) AS x(datid oid, datname name, pid integer,
  leader_pid integer, usename name, application_name text, client_addr inet, client_hostname text, client_port integer,
  backend_start timestamp with time zone, xact_start timestamp with time zone, query_start timestamp with time zone,
  state_change timestamp with time zone, wait_event_type text, wait_event text, state text, backend_xid xid, backend_xmin xid,
  query_id bigint, query text, backend_type text);
CREATE OR REPLACE VIEW ${S}.pg_prepared_statements AS
SELECT x.name, x.statement, x.prepare_time, x.parameter_types, x.result_types, x.from_sql, x.generic_plans, x.custom_plans
FROM pg_catalog.json_to_recordset(coalesce(${setting(G.prepared)}, '[]')::json) AS x(name text, statement text,
  prepare_time timestamp with time zone, parameter_types regtype[], result_types regtype[], from_sql boolean, generic_plans bigint,
  custom_plans bigint);
CREATE OR REPLACE FUNCTION ${S}.pg_backend_pid() RETURNS integer LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
  AS $$SELECT ${setting(G.pid)}::integer$$;
CREATE OR REPLACE FUNCTION ${S}.pg_blocking_pids(integer) RETURNS integer[] LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
  AS $$SELECT coalesce((${setting(G.blocking)}::json OPERATOR(pg_catalog.->>) $1::text)::integer[], '{}'::integer[])$$;
CREATE OR REPLACE FUNCTION ${S}.pg_isolation_test_session_is_blocked(integer, integer[]) RETURNS boolean LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
  AS $$SELECT ${S}.pg_blocking_pids($1) OPERATOR(pg_catalog.&&) $2$$;
CREATE OR REPLACE FUNCTION ${S}.signal_backend(text, integer) RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL SAFE
  SET client_min_messages = notice AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM ${S}.pg_stat_activity a WHERE a.pid = $2 AND a.backend_type = 'client backend') THEN
    RAISE NOTICE '${SIGNAL_MARK} % %', $1, $2;
    RETURN true;
  END IF;
  RAISE WARNING 'PID % is not a PostgreSQL backend process', $2;
  RETURN false;
END $fn$;
CREATE OR REPLACE FUNCTION ${S}.pg_cancel_backend(integer) RETURNS boolean LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
  AS $$SELECT ${S}.signal_backend('cancel'::text, $1)$$;
CREATE OR REPLACE FUNCTION ${S}.pg_terminate_backend(integer, bigint DEFAULT 0) RETURNS boolean LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
  AS $$SELECT ${S}.signal_backend('terminate'::text, $1)$$;
CREATE OR REPLACE FUNCTION ${S}.now() RETURNS timestamp with time zone LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$SELECT coalesce(${setting(G.xactNow)}::timestamp with time zone, pg_catalog.now())$$;
CREATE OR REPLACE FUNCTION ${S}.transaction_timestamp() RETURNS timestamp with time zone LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$SELECT coalesce(${setting(G.xactNow)}::timestamp with time zone, pg_catalog.transaction_timestamp())$$;
CREATE OR REPLACE FUNCTION ${S}.statement_timestamp() RETURNS timestamp with time zone LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$SELECT coalesce(${setting(G.stmtNow)}::timestamp with time zone, pg_catalog.statement_timestamp())$$;
CREATE OR REPLACE FUNCTION ${S}.clock_timestamp() RETURNS timestamp with time zone LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
  AS $$SELECT coalesce(${setting(G.clockNow)}::timestamp with time zone, pg_catalog.clock_timestamp())$$;`;

/**
 * PostgreSQL 18's auxiliary processes as a fresh server lists them, with pid offsets from the
 * first client backend (they start earlier): [offset, wait_event, backend_type, shows the user].
 */
const AUXILIARY: [number, string, string, boolean][] = [
  [-3, 'AutovacuumMain', 'autovacuum launcher', false],
  [-2, 'LogicalLauncherMain', 'logical replication launcher', true],
  [-10, 'IoWorkerMain', 'io worker', false],
  [-9, 'IoWorkerMain', 'io worker', false],
  [-8, 'IoWorkerMain', 'io worker', false],
  [-7, 'CheckpointerMain', 'checkpointer', false],
  [-6, 'BgwriterMain', 'background writer', false],
  [-4, 'WalWriterMain', 'walwriter', false],
];

/**
 * Approximate snapshot xmin: the oldest xid running in another session, else the next xid. A
 * snapshot always has one (GetSnapshotData starts from latestCompletedXid + 1), also when no
 * transaction has an xid yet.
 */
function approxXmin(s: SessionSnapshot, all: SessionSnapshot[], nextXid: number | undefined): number | null {
  const others = all.filter((o) => o.name !== s.name && o.xid !== null).map((o) => o.xid!);
  if (others.length) return Math.min(...others);
  const any = all.filter((o) => o.xid !== null).map((o) => o.xid!);
  return any.length ? Math.max(...any) + 1 : (nextXid ?? null);
}

/** Whether a session holds a snapshot now (so backend_xmin is set). */
function holdsSnapshot(s: SessionSnapshot, isMe: boolean): boolean {
  if (isMe || s.state === 'active' || s.state === 'waiting') return true;
  return s.state === 'idle in transaction' && s.isolation !== 'read committed' && s.xactStartMs !== null;
}

type Json = Record<string, string | number | boolean | null>;

function activityRow(s: SessionSnapshot, input: DiagnosticsInput): Json {
  const isMe = s.name === input.me;
  const now = input.clockMs;
  const pending = s.pending;
  let state: string;
  let waitType: string | null = null;
  let waitEvent: string | null = null;
  if (isMe) state = 'active';
  else if (s.state === 'waiting' || s.state === 'active') {
    state = 'active';
    if (pending?.wait) {
      waitType = 'Lock';
      waitEvent = pending.wait.tag.type;
    } else if (pending?.sleepUntilMs !== undefined) {
      waitType = 'Timeout';
      waitEvent = 'PgSleep';
    }
  } else {
    state = s.state;
    waitType = 'Client';
    waitEvent = 'ClientRead';
  }
  const queryStart = input.queryStartMs?.[s.name] ?? pending?.startedMs ?? (isMe ? now : s.query ? s.stateChangeMs : null);
  const xactStart = s.xactStartMs ?? (isMe ? (pending?.startedMs ?? now) : state === 'active' ? queryStart : null);
  const xmin =
    input.backendXmin && s.name in input.backendXmin
      ? input.backendXmin[s.name]!
      : holdsSnapshot(s, isMe)
        ? approxXmin(s, input.sessions, input.nextXid)
        : null;
  return {
    datid: input.databaseOid,
    datname: input.databaseName,
    pid: s.pid,
    leader_pid: null,
    usename: input.userName,
    application_name: s.name,
    client_addr: null,
    client_hostname: null,
    client_port: -1,
    backend_start: ts(0),
    xact_start: ts(xactStart),
    query_start: ts(queryStart),
    state_change: ts(isMe && !pending ? now : s.stateChangeMs),
    wait_event_type: waitType,
    wait_event: waitEvent,
    state,
    backend_xid: s.xid,
    backend_xmin: xmin,
    query_id: null,
    query: s.query,
    backend_type: 'client backend',
  };
}

function auxiliaryRows(input: DiagnosticsInput): Json[] {
  if (input.auxiliaryProcesses === false) return [];
  const first = input.sessions.length ? Math.min(...input.sessions.map((s) => s.pid)) : 4101;
  return AUXILIARY.map(([off, event, type, hasUser]) => ({
    pid: first + off,
    usename: hasUser ? input.userName : null,
    application_name: '',
    backend_start: ts(0),
    wait_event_type: 'Activity',
    wait_event: event,
    query: '',
    backend_type: type,
  }));
}

function lockJson(l: LockRow, relationOids: Record<string, number>): Json {
  const oid = l.relation === null ? undefined : relationOids[l.relation];
  return {
    locktype: l.locktype,
    database: l.database,
    relation: oid ?? null,
    relname: l.relation !== null && oid === undefined ? l.relation : null,
    page: l.page,
    tuple: l.tuple,
    virtualxid: l.virtualxid,
    transactionid: l.transactionid,
    classid: l.classid,
    objid: l.objid,
    objsubid: l.objsubid,
    virtualtransaction: l.virtualtransaction,
    pid: l.pid,
    mode: l.mode,
    granted: l.granted,
    fastpath: l.fastpath,
    waitstart: ts(l.waitstart),
  };
}

/**
 * One statement that hands the simulated state to the shadows (transaction-local settings).
 * It also records the relation locks this backend holds so far (replay, engine queries, the
 * shadows' creation): pg_locks then adds, for the running session, only the relation locks its
 * own statement takes (as PostgreSQL shows AccessShareLock on pg_locks) and its virtualxid.
 */
export function diagnosticsDataSql(input: DiagnosticsInput): string {
  const me = input.sessions.find((s) => s.name === input.me);
  if (!me) throw new Error(`diagnosticsDataSql: unknown session "${input.me}"`);
  const pidOf = new Map(input.sessions.map((s) => [s.name, s.pid]));
  const blocking: Record<string, string> = {};
  for (const s of input.sessions) {
    const pids = (input.blocking[s.name] ?? []).map((n) => pidOf.get(n)).filter((p): p is number => p !== undefined);
    if (pids.length) blocking[String(s.pid)] = `{${pids.join(',')}}`;
  }
  const mine = input.locks.filter((l) => l.session === input.me);
  const self = {
    pid: me.pid,
    vxid: me.vxid ?? mine.find((l) => !l.virtualtransaction.endsWith('/0'))?.virtualtransaction ?? null,
    vxid_row: !mine.some((l) => l.locktype === 'virtualxid'),
    known: mine
      .filter((l) => l.locktype === 'relation' && l.relation !== null && input.relationOids[l.relation] !== undefined)
      .map((l) => `${input.relationOids[l.relation!]}:${l.mode}`),
  };
  const activity = [...input.sessions.map((s) => activityRow(s, input)), ...auxiliaryRows(input)];
  const set = (name: string, value: string): string => `pg_catalog.set_config('${name}', ${lit(value)}, true)`;
  const xactStart = me.xactStartMs ?? me.pending?.startedMs ?? input.clockMs;
  return `SELECT ${[
    set(
      G.locks,
      JSON.stringify([
        ...input.locks.map((l) => lockJson(l, input.relationOids)),
        ...(input.predicateLocks ?? []).map((p) => ({
          ...p,
          database: input.databaseOid,
          mode: 'SIReadLock',
          granted: true,
          fastpath: false,
        })),
      ]),
    ),
    set(G.activity, JSON.stringify(activity)),
    set(G.blocking, JSON.stringify(blocking)),
    set(G.self, JSON.stringify(self)),
    set(G.pid, String(me.pid)),
    set(G.xactNow, virtualTimestamp(xactStart)),
    set(G.stmtNow, virtualTimestamp(me.pending?.startedMs ?? input.clockMs)),
    set(G.clockNow, virtualTimestamp(input.clockMs)),
    set(
      G.prepared,
      JSON.stringify(
        (input.prepared ?? []).map((p) => ({
          name: p.name,
          statement: p.statement,
          prepare_time: virtualTimestamp(p.atMs),
          parameter_types: p.parameterTypes,
          result_types: p.resultTypes,
          from_sql: true,
          generic_plans: p.genericPlans,
          custom_plans: p.customPlans,
        })),
      ),
    ),
    `pg_catalog.set_config('${G.baseline}', coalesce((SELECT pg_catalog.array_agg(l.relation::text || ':' || l.mode)::text FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation'), '{}'), true)`,
  ].join(',\n  ')};`;
}

/**
 * Diagnostics shadows: column lists and function signatures equal PostgreSQL 18's, the course's
 * diagnostics queries (postgres-deadlocks.ru.md) work unchanged on PGlite over a hand-made
 * two-session state, and the same queries give the same answers as real PostgreSQL 18 when the
 * shadows are fed the real server's state.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startPostgres, type PgServer } from '../../oracle/server';
import {
  diagnosticsDataSql,
  SHADOW_DDL,
  DIAGNOSTICS_SCHEMA,
  SIGNAL_MARK,
  takeSignals,
  virtualTimestamp,
  type DiagnosticsInput,
} from './diagnostics';
import { PgliteExecutor } from './executor';
import { shadowSearchPathSql } from './shadows';
import type { LockMode, LockRow, SessionSnapshot } from '../types';

const TEXT_TYPES = { getTypeParser: () => (v: string) => v };

/** The course's blocking-tree self-join, verbatim. */
const BLOCKING_TREE = `SELECT
    blocked.pid              AS blocked_pid,
    blocked_act.query        AS blocked_query,
    blocking.pid             AS blocking_pid,
    blocking_act.query       AS blocking_query,
    blocked_act.wait_event_type,
    blocked_act.wait_event
FROM pg_locks blocked
JOIN pg_stat_activity blocked_act   ON blocked.pid = blocked_act.pid
JOIN pg_locks blocking
    ON blocking.locktype = blocked.locktype
   AND blocking.database IS NOT DISTINCT FROM blocked.database
   AND blocking.relation IS NOT DISTINCT FROM blocked.relation
   AND blocking.transactionid IS NOT DISTINCT FROM blocked.transactionid
   AND blocking.pid <> blocked.pid
   AND blocking.granted
JOIN pg_stat_activity blocking_act  ON blocking.pid = blocking_act.pid
WHERE NOT blocked.granted;`;

/** The course's "what are backends doing" query, verbatim. */
const LONG_WAITERS = `SELECT pid, state, wait_event_type, wait_event,
       now() - xact_start AS xact_age, query
FROM pg_stat_activity
WHERE wait_event_type = 'Lock'          -- висят на блокировке
   OR state = 'idle in transaction'     -- опасное состояние: держит блокировки, ничего не делает
ORDER BY xact_age DESC;`;

const COLUMNS_SQL = (rel: string): string =>
  `SELECT attname, format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute WHERE attrelid = '${rel}'::regclass AND attnum > 0 ORDER BY attnum`;

const FUNCS_SQL = (schema: string): string =>
  `SELECT proname, pg_catalog.pg_get_function_identity_arguments(p.oid), prorettype::regtype::text, provolatile, proisstrict, proparallel, proretset
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = '${schema}' AND proname IN ('pg_blocking_pids','pg_backend_pid','pg_isolation_test_session_is_blocked','now','transaction_timestamp','statement_timestamp','clock_timestamp')
ORDER BY 1, 2`;

/** The shadows (re)created and fed in one go: tests drop the schema to time its creation. */
function diagnosticsSql(input: DiagnosticsInput): string {
  return `${SHADOW_DDL}\n${diagnosticsDataSql(input)}`;
}

/** The engine's search_path switch for the diagnostics shadows (pg/shadows.ts), for the transaction or the session. */
const shadowPath = (local = true) => shadowSearchPathSql([DIAGNOSTICS_SCHEMA], local);

describe('takeSignals', () => {
  it('takes the signal notices out, in order, and leaves the others', () => {
    const n = (message: string) => ({ severity: 'NOTICE', sqlstate: '00000', message });
    const raw = {
      notices: [n(`${SIGNAL_MARK} cancel 4102`), n('hello'), n(`${SIGNAL_MARK} terminate 4101`), n(`${SIGNAL_MARK} cancel x`)],
    };
    expect(takeSignals(raw)).toEqual([
      { kind: 'cancel', pid: 4102 },
      { kind: 'terminate', pid: 4101 },
    ]);
    expect(raw.notices.map((x) => x.message)).toEqual(['hello', `${SIGNAL_MARK} cancel x`]);
  });
});

describe('virtualTimestamp', () => {
  it('maps virtual ms from the epoch', () => {
    expect(virtualTimestamp(0)).toBe('2026-01-01 00:00:00+00');
    expect(virtualTimestamp(1500)).toBe('2026-01-01 00:00:01.5+00');
    expect(virtualTimestamp(3_723_004)).toBe('2026-01-01 01:02:03.004+00');
  });
});

// ───────────────────────── hand-made state on PGlite ─────────────────────────

function session(p: Partial<SessionSnapshot> & Pick<SessionSnapshot, 'name' | 'pid' | 'state'>): SessionSnapshot {
  return {
    isolation: 'read committed',
    xid: null,
    vxid: null,
    xactStartMs: null,
    stateChangeMs: 0,
    query: '',
    gucs: {},
    pending: null,
    last: null,
    ...p,
  };
}

function lock(p: Partial<LockRow> & Pick<LockRow, 'locktype' | 'pid' | 'session' | 'mode' | 'virtualtransaction'>): LockRow {
  return {
    database: null,
    relation: null,
    page: null,
    tuple: null,
    virtualxid: null,
    transactionid: null,
    classid: null,
    objid: null,
    objsubid: null,
    granted: true,
    fastpath: false,
    waitstart: null,
    ...p,
  };
}

const Q1 = 'UPDATE accounts SET balance = balance - 100 WHERE id = 1;';
const Q2 = 'UPDATE accounts SET balance = balance + 100 WHERE id = 1;';

/** s1 updated row 1 and is idle in transaction; s2's update of row 1 waits on s1's xid; obs asks. */
function handMade(db: { oid: number; name: string; user: string; rel: Record<string, number> }): DiagnosticsInput {
  const rel = (session: string, pid: number, vt: string, relation: string, mode: LockMode): LockRow =>
    lock({ locktype: 'relation', database: db.oid, relation, pid, session, mode, virtualtransaction: vt });
  return {
    me: 'obs',
    clockMs: 5_000,
    sessions: [
      session({
        name: 's1',
        pid: 4101,
        state: 'idle in transaction',
        xid: 745,
        vxid: '3/1',
        xactStartMs: 1_000,
        stateChangeMs: 1_000,
        query: Q1,
      }),
      session({
        name: 's2',
        pid: 4102,
        state: 'waiting',
        xid: 746,
        vxid: '4/1',
        xactStartMs: 2_000,
        stateChangeMs: 2_000,
        query: Q2,
        pending: {
          step: 's2upd',
          sql: Q2,
          startedMs: 2_000,
          results: [],
          wait: {
            tag: { type: 'transactionid', xid: 745 as never },
            mode: 'ShareLock',
            description: 'ShareLock on transaction 745',
            blockers: [{ session: 's1', kind: 'hard', mode: 'ExclusiveLock' }],
            sinceMs: 2_000,
          },
        },
      }),
      session({
        name: 'obs',
        pid: 4103,
        state: 'active',
        stateChangeMs: 5_000,
        query: 'SELECT * FROM pg_locks',
        pending: { step: 'obs', sql: 'SELECT * FROM pg_locks', startedMs: 5_000, results: [] },
      }),
    ],
    locks: [
      lock({
        locktype: 'transactionid',
        transactionid: 745,
        pid: 4102,
        session: 's2',
        mode: 'ShareLock',
        virtualtransaction: '4/1',
        granted: false,
        waitstart: 2_000,
      }),
      rel('s1', 4101, '3/1', 'accounts', 'RowExclusiveLock'),
      rel('s1', 4101, '3/1', 'accounts_pkey', 'RowExclusiveLock'),
      lock({ locktype: 'virtualxid', virtualxid: '3/1', pid: 4101, session: 's1', mode: 'ExclusiveLock', virtualtransaction: '3/1' }),
      lock({ locktype: 'transactionid', transactionid: 745, pid: 4101, session: 's1', mode: 'ExclusiveLock', virtualtransaction: '3/1' }),
      rel('s2', 4102, '4/1', 'accounts', 'RowExclusiveLock'),
      rel('s2', 4102, '4/1', 'accounts_pkey', 'RowExclusiveLock'),
      lock({ locktype: 'virtualxid', virtualxid: '4/1', pid: 4102, session: 's2', mode: 'ExclusiveLock', virtualtransaction: '4/1' }),
      lock({ locktype: 'transactionid', transactionid: 746, pid: 4102, session: 's2', mode: 'ExclusiveLock', virtualtransaction: '4/1' }),
      lock({
        locktype: 'tuple',
        database: db.oid,
        relation: 'accounts',
        page: 0,
        tuple: 1,
        pid: 4102,
        session: 's2',
        mode: 'ExclusiveLock',
        virtualtransaction: '4/1',
      }),
    ],
    blocking: { s2: ['s1'] },
    relationOids: db.rel,
    databaseOid: db.oid,
    databaseName: db.name,
    userName: db.user,
  };
}

describe('diagnostics shadows on PGlite', () => {
  let ex: PgliteExecutor;
  let input: DiagnosticsInput;
  let userPath: string;

  /** Runs `sql` with the shadows in place, inside a transaction that is rolled back; returns every result. */
  async function shadowed(sql: string, inp: DiagnosticsInput = input) {
    const r = await ex.run(`BEGIN;\n${diagnosticsSql(inp)}\n${shadowPath()}${sql};\nROLLBACK;`);
    if (r.error) {
      await ex.run('ROLLBACK');
      throw new Error(`${r.error.message} [${r.error.sqlstate}]`);
    }
    // BEGIN, SHADOW_DDL's statements, the data statement and SET; the user's results follow; ROLLBACK last.
    return r.results.slice(SHADOW_DDL.match(/^CREATE /gm)!.length + 3, -1);
  }

  beforeAll(async () => {
    ex = await PgliteExecutor.create();
    await ex.must('CREATE TABLE accounts (id int PRIMARY KEY, balance numeric); INSERT INTO accounts VALUES (1, 1000), (2, 1000);');
    const [[dbOid, dbName, user, path]] = (await ex.must(
      `SELECT d.oid, d.datname, current_user, current_setting('search_path') FROM pg_catalog.pg_database d WHERE d.datname = current_database()`,
    )) as string[][];
    userPath = path!;
    const rels = await ex.must(`SELECT relname, oid FROM pg_catalog.pg_class WHERE relname IN ('accounts', 'accounts_pkey')`);
    input = handMade({ oid: Number(dbOid), name: dbName!, user: user!, rel: Object.fromEntries(rels.map(([n, o]) => [n!, Number(o)])) });
  });
  afterAll(async () => ex?.close());

  it('runs the course blocking-tree self-join', async () => {
    const [r] = await shadowed(BLOCKING_TREE);
    expect(r!.columns).toEqual(['blocked_pid', 'blocked_query', 'blocking_pid', 'blocking_query', 'wait_event_type', 'wait_event']);
    expect(r!.rows).toEqual([['4102', Q2, '4101', Q1, 'Lock', 'transactionid']]);
  });

  it('runs the course pg_stat_activity query on the virtual clock', async () => {
    const [r] = await shadowed(LONG_WAITERS);
    expect(r!.rows).toEqual([
      ['4101', 'idle in transaction', 'Client', 'ClientRead', '00:00:04', Q1],
      ['4102', 'active', 'Lock', 'transactionid', '00:00:03', Q2],
    ]);
  });

  it('answers pg_blocking_pids, pg_backend_pid and the isolationtester probe', async () => {
    const [a, b, c] = await shadowed(
      `SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity ORDER BY pid;
       SELECT pg_backend_pid(), pg_blocking_pids(4102), pg_blocking_pids(99999), pg_blocking_pids(NULL);
       SELECT pg_isolation_test_session_is_blocked(4102, '{4101,4102,4103}'), pg_isolation_test_session_is_blocked(4102, '{4103}'),
              pg_isolation_test_session_is_blocked(4101, '{4101,4102,4103}');`,
    );
    expect(a!.rows).toEqual([
      ...['4091', '4092', '4093', '4094', '4095', '4097', '4098', '4099'].map((p) => [p, '{}']),
      ['4101', '{}'],
      ['4102', '{4101}'],
      ['4103', '{}'],
    ]);
    expect(b!.rows).toEqual([['4103', '{4101}', '{}', null]]);
    expect(c!.rows).toEqual([['t', 'f', 'f']]);
  });

  it('shows pg_stat_activity rows per session, the running one active', async () => {
    const [r] = await shadowed(
      `SELECT application_name, state, wait_event_type, wait_event, backend_xid, backend_xmin, xact_start, query_start, state_change, query, backend_type,
              datname = current_database(), usename = current_user, usesysid = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user), client_port
         FROM pg_stat_activity WHERE backend_type = 'client backend' ORDER BY pid`,
    );
    expect(r!.rows).toEqual([
      [
        's1',
        'idle in transaction',
        'Client',
        'ClientRead',
        '745',
        null,
        '2026-01-01 00:00:01+00',
        '2026-01-01 00:00:01+00',
        '2026-01-01 00:00:01+00',
        Q1,
        'client backend',
        't',
        't',
        't',
        '-1',
      ],
      [
        's2',
        'active',
        'Lock',
        'transactionid',
        '746',
        '745',
        '2026-01-01 00:00:02+00',
        '2026-01-01 00:00:02+00',
        '2026-01-01 00:00:02+00',
        Q2,
        'client backend',
        't',
        't',
        't',
        '-1',
      ],
      [
        'obs',
        'active',
        null,
        null,
        null,
        '745',
        '2026-01-01 00:00:05+00',
        '2026-01-01 00:00:05+00',
        '2026-01-01 00:00:05+00',
        'SELECT * FROM pg_locks',
        'client backend',
        't',
        't',
        't',
        '-1',
      ],
    ]);
  });

  it("shows the lock rows with relation::regclass, plus the running session's own locks", async () => {
    const [r] = await shadowed(
      `SELECT pid, locktype, relation::regclass, page, tuple, virtualxid, transactionid, virtualtransaction, mode, granted, waitstart FROM pg_locks`,
    );
    const rows = r!.rows!;
    expect(rows.slice(0, 10)).toEqual([
      ['4102', 'transactionid', null, null, null, null, '745', '4/1', 'ShareLock', 'f', '2026-01-01 00:00:02+00'],
      ['4101', 'relation', 'accounts', null, null, null, null, '3/1', 'RowExclusiveLock', 't', null],
      ['4101', 'relation', 'accounts_pkey', null, null, null, null, '3/1', 'RowExclusiveLock', 't', null],
      ['4101', 'virtualxid', null, null, null, '3/1', null, '3/1', 'ExclusiveLock', 't', null],
      ['4101', 'transactionid', null, null, null, null, '745', '3/1', 'ExclusiveLock', 't', null],
      ['4102', 'relation', 'accounts', null, null, null, null, '4/1', 'RowExclusiveLock', 't', null],
      ['4102', 'relation', 'accounts_pkey', null, null, null, null, '4/1', 'RowExclusiveLock', 't', null],
      ['4102', 'virtualxid', null, null, null, '4/1', null, '4/1', 'ExclusiveLock', 't', null],
      ['4102', 'transactionid', null, null, null, null, '746', '4/1', 'ExclusiveLock', 't', null],
      ['4102', 'tuple', 'accounts', '0', '1', null, null, '4/1', 'ExclusiveLock', 't', null],
    ]);
    // As in PostgreSQL: the asking session holds AccessShareLock on pg_locks and its own virtualxid.
    const own = rows.slice(10).map((row) => [row[0], row[1], row[2], row[8]]);
    expect(own).toEqual(
      expect.arrayContaining([
        ['4103', 'relation', 'pg_locks', 'AccessShareLock'],
        ['4103', 'virtualxid', null, 'ExclusiveLock'],
      ]),
    );
    expect(own).toHaveLength(2);
  });

  it.each([
    ['"$user", public', 'lockstep_sim, pg_catalog, "$user", public'],
    ['public, pg_catalog', 'lockstep_sim, public, pg_catalog'],
    ['app', 'lockstep_sim, pg_catalog, app'],
  ])("puts the shadows first on search_path %s, pg_catalog before the user's schemas unless listed", async (user, shown) => {
    const r = await ex.run(`SET search_path = ${user}; BEGIN; ${shadowPath()} SHOW search_path; ROLLBACK; RESET search_path`);
    expect(r.error).toBeUndefined();
    expect(r.results[3]!.rows).toEqual([[shown]]);
  });

  it('leaves no state behind after ROLLBACK (the executor installs the shadow objects once)', async () => {
    await shadowed('SELECT 1');
    const rows = await ex.must(
      `SELECT pg_catalog.to_regnamespace('${DIAGNOSTICS_SCHEMA}') IS NOT NULL, current_setting('search_path'), pg_backend_pid() <> 4103, ${DIAGNOSTICS_SCHEMA}.pg_backend_pid() IS NULL`,
    );
    expect(rows).toEqual([['t', userPath, 't', 't']]);
  });

  it('handles no locks, no blockers and repeated setup in one transaction', async () => {
    const empty: DiagnosticsInput = { ...input, locks: [], blocking: {} };
    const r = await ex.run(
      `BEGIN; ${diagnosticsSql(empty)} ${diagnosticsSql(input)} ${shadowPath()} SELECT count(*) FROM pg_locks WHERE pid <> 4103; ROLLBACK;`,
    );
    expect(r.error).toBeUndefined();
    expect(r.results.at(-2)!.rows).toEqual([['10']]);
  });

  it('is fast (prints its timing)', async () => {
    const N = 100;
    const time = async (sql: string): Promise<number> => {
      for (let i = 0; i < 10; i++) await ex.must(sql);
      const t = performance.now();
      for (let i = 0; i < N; i++) await ex.must(sql);
      return (performance.now() - t) / N;
    };
    const path = `${shadowPath()}`;
    const raw = await time('BEGIN; SELECT * FROM accounts WHERE id = 1 FOR UPDATE; ROLLBACK;');
    const setup = await time(`BEGIN; ${diagnosticsSql(input)} ROLLBACK;`);
    const tree = await time(`BEGIN; ${diagnosticsSql(input)} ${path} ${BLOCKING_TREE} ROLLBACK;`);
    // Installed once for good: only the data statement runs per dry run.
    await ex.must(SHADOW_DDL);
    const data = await time(`BEGIN; ${diagnosticsDataSql(input)} ROLLBACK;`);
    const dataTree = await time(`BEGIN; ${diagnosticsDataSql(input)} ${path} ${BLOCKING_TREE} ROLLBACK;`);
    await ex.must(`DROP SCHEMA ${DIAGNOSTICS_SCHEMA} CASCADE`);
    console.log(
      `PGlite, ms per BEGIN…ROLLBACK: raw FOR UPDATE ${raw.toFixed(2)}; diagnosticsSql ${setup.toFixed(2)} ` +
        `(+ blocking tree ${tree.toFixed(2)}); with SHADOW_DDL installed, diagnosticsDataSql ${data.toFixed(2)} ` +
        `(+ blocking tree ${dataTree.toFixed(2)})`,
    );
    expect(setup).toBeLessThan(50);
  });

  it('works with the shadows installed once and only the data set per transaction', async () => {
    await ex.must(SHADOW_DDL);
    try {
      const r = await ex.run(
        `BEGIN; ${diagnosticsDataSql(input)} ${shadowPath()} ${BLOCKING_TREE} ROLLBACK;` +
          `${shadowPath(false)} SELECT count(*) FROM pg_locks; SELECT count(*), pg_backend_pid(), pg_blocking_pids(4102) FROM pg_stat_activity; RESET search_path;`,
      );
      expect(r.error).toBeUndefined();
      expect(r.results[3]!.rows).toEqual([['4102', Q2, '4101', Q1, 'Lock', 'transactionid']]);
      // Outside that transaction the settings are gone: the shadows are empty, not failing.
      expect(r.results.at(-3)!.rows).toEqual([['0']]);
      expect(r.results.at(-2)!.rows).toEqual([['0', null, '{}']]);
    } finally {
      await ex.must(`DROP SCHEMA ${DIAGNOSTICS_SCHEMA} CASCADE`);
    }
  });

  it('resolves relations the engine gave no oid for by name', async () => {
    const [r] = await shadowed(
      `SELECT DISTINCT relation::regclass FROM pg_locks WHERE locktype IN ('relation', 'tuple') AND pid <> 4103 ORDER BY 1`,
      {
        ...input,
        relationOids: {},
      },
    );
    expect(r!.rows).toEqual([['accounts'], ['accounts_pkey']]);
  });
});

// ───────────────────────── against real PostgreSQL 18 ─────────────────────────

describe('diagnostics shadows against real PostgreSQL 18', () => {
  let server: PgServer | undefined;
  let url: string;
  let admin: pg.Client;
  const dbName = `lockstep_diag_${process.pid}`;

  beforeAll(async () => {
    let base = inject('pgUrl') as string | undefined;
    if (!base) {
      server = await startPostgres();
      base = server.url;
    }
    admin = new pg.Client({ connectionString: base, types: TEXT_TYPES } as never);
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
    await admin.query(`CREATE DATABASE ${dbName}`);
    url = base.replace(/\/postgres$/, `/${dbName}`);
  });
  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin?.end();
    await server?.stop();
  });

  async function client(app: string): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url, types: TEXT_TYPES, application_name: app } as never);
    await c.connect();
    return c;
  }

  it('has the same column names and types and function signatures', async () => {
    const ex = await PgliteExecutor.create();
    try {
      const db = { oid: 5, name: 'postgres', user: 'postgres', rel: {} };
      const shadows = await ex.run(
        `BEGIN; ${diagnosticsSql(handMade(db))} ${COLUMNS_SQL(`${DIAGNOSTICS_SCHEMA}.pg_locks`)}; ${COLUMNS_SQL(`${DIAGNOSTICS_SCHEMA}.pg_stat_activity`)}; ${FUNCS_SQL(DIAGNOSTICS_SCHEMA)}; ROLLBACK;`,
      );
      expect(shadows.error).toBeUndefined();
      const [locks, activity, funcs] = shadows.results.slice(-4, -1);
      const real = async (sql: string) => (await admin.query({ text: sql, rowMode: 'array' })).rows as string[][];
      const realLocks = await real(COLUMNS_SQL('pg_catalog.pg_locks'));
      const realActivity = await real(COLUMNS_SQL('pg_catalog.pg_stat_activity'));
      expect(realLocks).toHaveLength(16);
      expect(realActivity).toHaveLength(22);
      expect(locks!.rows).toEqual(realLocks);
      expect(activity!.rows).toEqual(realActivity);
      // clock_timestamp() is volatile in PostgreSQL; on the virtual clock it is constant per statement but stays volatile.
      expect(funcs!.rows).toEqual(await real(FUNCS_SQL('pg_catalog')));
    } finally {
      await ex.close();
    }
  });

  it('gives the same answers as PostgreSQL for the same two-session wait', async () => {
    const s1 = await client('s1');
    const s2 = await client('s2');
    const obs = await client('obs');
    const ex = await PgliteExecutor.create();
    try {
      const setup = 'CREATE TABLE accounts (id int PRIMARY KEY, balance numeric); INSERT INTO accounts VALUES (1, 1000), (2, 1000);';
      await obs.query(setup);
      await ex.must(setup);
      await s1.query('BEGIN');
      await s1.query(Q1);
      await s2.query('BEGIN');
      const waiting = s2.query(Q2).catch(() => {});
      const pids = Object.fromEntries(
        (await obs.query(`SELECT application_name, pid FROM pg_stat_activity WHERE datname = current_database()`)).rows.map((r) => [
          r.application_name,
          Number(r.pid),
        ]),
      ) as Record<string, number>;
      for (let i = 0; i < 500; i++) {
        const r = await obs.query(`SELECT pg_isolation_test_session_is_blocked($1, $2)`, [pids.s2, [pids.s1]]);
        if (r.rows[0].pg_isolation_test_session_is_blocked === 't') break;
        await new Promise((res) => setTimeout(res, 10));
      }
      // A backend that has just answered reports ClientRead only once it blocks reading its
      // socket: wait for s1 to get there, or the comparison races it.
      for (let i = 0; i < 500; i++) {
        const r = await obs.query(`SELECT wait_event FROM pg_stat_activity WHERE pid = $1`, [pids.s1]);
        if (r.rows[0]?.wait_event === 'ClientRead') break;
        await new Promise((res) => setTimeout(res, 10));
      }
      const name = new Map(Object.entries(pids).map(([n, p]) => [String(p), n]));
      const nm = (p: string | null): string | null => (p === null ? null : (name.get(p) ?? `?${p}`));

      // The course's queries on real PostgreSQL, pids as session names.
      const q = async (c: pg.Client, sql: string) => (await c.query({ text: sql, rowMode: 'array' })).rows as (string | null)[][];
      const FILTER = `application_name IN ('s1','s2')`;
      const WHO = `SELECT application_name, state, wait_event_type, wait_event, backend_xid IS NOT NULL, backend_xmin IS NOT NULL, query,
        (SELECT string_agg(b.application_name, ',' ORDER BY b.application_name) FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(a.pid)))
        FROM pg_stat_activity a WHERE ${FILTER} ORDER BY 1`;
      const LOCKS = `SELECT a.application_name, l.locktype, l.mode, l.granted, l.relation::regclass::text, l.page, l.tuple, l.waitstart IS NOT NULL
        FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE ${FILTER} ORDER BY 1, 2, 3, 4, 5`;
      const tree = (rows: (string | null)[][]) => rows.map(([bd, bq, bg, gq, t, e]) => [nm(bd), bq, nm(bg), gq, t, e]);
      const realTree = tree(await q(obs, BLOCKING_TREE));
      const realWho = await q(obs, WHO);
      const realLocks = await q(obs, LOCKS);
      const realWaiters = (await q(obs, LONG_WAITERS)).filter((r) => name.has(r[0]!)).map((r) => [nm(r[0]), r[1], r[2], r[3], r[5]]);
      const realSelf = await q(
        obs,
        `SELECT locktype, mode, relation::regclass::text, pid = pg_backend_pid() FROM pg_locks WHERE pid = pg_backend_pid() ORDER BY 1, 2`,
      );

      // The same state, read back from the real server, fed to the shadows on PGlite.
      const act = await q(
        obs,
        `SELECT application_name, pid, state, backend_xid::text, query FROM pg_stat_activity WHERE application_name IN ('s1','s2')`,
      );
      const vxidOf = new Map(
        (
          await q(
            obs,
            `SELECT pid, virtualtransaction FROM pg_locks WHERE locktype = 'virtualxid' AND pid = ANY ('{${pids.s1},${pids.s2}}')`,
          )
        ).map(([p, v]) => [p, v]),
      );
      const sessions: SessionSnapshot[] = act.map(([app, pid, state, xid, query]) =>
        session({
          name: app!,
          pid: Number(pid),
          state: app === 's2' ? 'waiting' : (state as SessionSnapshot['state']),
          xid: xid === null ? null : Number(xid),
          vxid: vxidOf.get(pid!) ?? null,
          // s1 began first (its xact_age is the larger one, as on the server).
          xactStartMs: app === 's1' ? 0 : 1,
          query: query!,
          ...(app === 's2'
            ? {
                pending: {
                  step: 's2',
                  sql: query!,
                  startedMs: 0,
                  results: [],
                  wait: { tag: { type: 'transactionid', xid: 0 as never }, mode: 'ShareLock', description: '', blockers: [], sinceMs: 0 },
                },
              }
            : {}),
        }),
      );
      sessions.push(session({ name: 'obs', pid: pids.obs!, state: 'active', query: LOCKS }));
      const lockRows = await q(
        obs,
        `SELECT l.locktype, l.database, c.relname, l.page, l.tuple, l.virtualxid, l.transactionid, l.virtualtransaction, l.pid, a.application_name, l.mode, l.granted, l.fastpath
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid LEFT JOIN pg_class c ON c.oid = l.relation WHERE a.application_name IN ('s1','s2')`,
      );
      const [[dbOid, dbName, user]] = (await ex.must(
        `SELECT d.oid, d.datname, current_user, current_setting('search_path') FROM pg_catalog.pg_database d WHERE d.datname = current_database()`,
      )) as string[][];
      const rels = await ex.must(`SELECT relname, oid FROM pg_catalog.pg_class WHERE relname IN ('accounts', 'accounts_pkey')`);
      const blocking: Record<string, string[]> = {};
      for (const s of ['s1', 's2']) {
        const [[arr]] = await q(obs, `SELECT pg_blocking_pids(${pids[s]})`);
        blocking[s] = arr!
          .replace(/[{}]/g, '')
          .split(',')
          .filter(Boolean)
          .map((p) => name.get(p)!);
      }
      const num = (v: string | null): number | null => (v === null ? null : Number(v));
      const input: DiagnosticsInput = {
        me: 'obs',
        clockMs: 1_000,
        sessions,
        locks: lockRows.map(
          ([locktype, database, relname, page, tuple, virtualxid, transactionid, vt, pid, app, mode, granted, fastpath]) =>
            lock({
              locktype: locktype as LockRow['locktype'],
              database: num(database) === null ? null : Number(dbOid),
              relation: relname,
              page: num(page),
              tuple: num(tuple),
              virtualxid,
              transactionid: num(transactionid),
              virtualtransaction: vt!,
              pid: Number(pid),
              session: app!,
              mode: mode as LockMode,
              granted: granted === 't',
              fastpath: fastpath === 't',
              waitstart: granted === 't' ? null : 500,
            }),
        ),
        blocking,
        relationOids: Object.fromEntries(rels.map(([n, o]) => [n!, Number(o)])),
        databaseOid: Number(dbOid),
        databaseName: dbName!,
        userName: user!,
      };
      const run = async (sql: string) => {
        const r = await ex.run(`BEGIN; ${diagnosticsSql(input)} ${shadowPath()} ${sql}; ROLLBACK;`);
        expect(r.error).toBeUndefined();
        return r.results.at(-2)!.rows!;
      };
      const simTree = tree(await run(BLOCKING_TREE.replace(/;$/, '')));
      const simWaiters = (await run(LONG_WAITERS.replace(/;$/, '')))
        .filter((r) => name.has(r[0]!))
        .map((r) => [nm(r[0]), r[1], r[2], r[3], r[5]]);

      expect(realTree).toEqual([['s2', Q2, 's1', Q1, 'Lock', 'transactionid']]);
      expect(simTree).toEqual(realTree);
      expect(await run(WHO)).toEqual(realWho);
      expect(await run(LOCKS)).toEqual(realLocks);
      expect(simWaiters).toEqual(realWaiters);
      expect(
        await run(
          `SELECT locktype, mode, relation::regclass::text, pid = pg_backend_pid() FROM pg_locks WHERE pid = pg_backend_pid() ORDER BY 1, 2`,
        ),
      ).toEqual(realSelf);
      await s1.query('ROLLBACK');
      await waiting;
      await s2.query('ROLLBACK');
    } finally {
      await Promise.all([s1.end(), s2.end(), obs.end(), ex.close()]);
    }
  });
});

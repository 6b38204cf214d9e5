/**
 * Row images: how the engine replays a session's earlier statements deterministically.
 *
 * Re-running SQL text is not deterministic (READ COMMITTED sees other sessions' later
 * commits, SKIP LOCKED sees different locks, sequences advance). So a data-changing or
 * row-locking statement is recorded as what it did to tuples: lock tuple X in mode M, set
 * row X to these values, delete X, insert these values, take this advisory lock. Tuples the
 * session created itself move between replays (their ctids drift), so each created version
 * is registered in a ctid map keyed by the ctid it had when it was recorded.
 *
 * Pure: produces SQL text only.
 */
import { ROW_LOCK_SQL } from '../model/locks/modes';
import type { LockMode, LockTag, RowLockMode } from '../model/locks/types';
import type { ImageOp, LogEntry, TupleRef } from '../model/log';
import { CTID_MAP } from './names';
import { Batch, type BatchResult } from './batch';
import { EXPORT_SNAPSHOT_SQL, importSnapshotBegin, usesStatementSnapshot } from './stmtSnapshot';
import type { EngineContext } from '../context';
import { EngineInternalError } from '../errors';
import { PIN_GID, type Sess } from '../state';
import type { PgMessage } from '../types';

export type { ImageOp, LogEntry, TupleRef } from '../model/log';

/** A quoted identifier. */
export function ident(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : '"' + s.replace(/"/g, '""') + '"';
}

/** A user table as SQL names it from any search_path: its catalog entry's qualified name, by relation name. */
export function relSql(eng: { catalog: readonly { name: string; sqlName?: string }[] }, name: string): string {
  return eng.catalog.find((c) => c.name === name)?.sqlName ?? ident(name);
}

/** A SQL literal for a PostgreSQL text value (unknown-typed, so it coerces to the column type). */
export function literal(v: string | null): string {
  return v === null ? 'NULL' : "'" + v.replace(/'/g, "''") + "'";
}

function target(t: TupleRef): string {
  return t.own
    ? `(SELECT cur FROM ${CTID_MAP} WHERE rel = ${t.rel} AND orig = '${t.ctid}' ORDER BY ctid DESC LIMIT 1)`
    : `'${t.ctid}'::tid`;
}

/** The locking clause of a row lock mode (FOR UPDATE for a delete or key update, FOR NO KEY UPDATE for an update). */
export function lockClause(mode: RowLockMode): string {
  return mode === 'NoKeyUpdate' ? 'FOR NO KEY UPDATE' : mode === 'Update' ? 'FOR UPDATE' : ROW_LOCK_SQL[mode];
}

/** A call taking an advisory lock as pg_locks reported it (field4 1: one bigint key, 2: two int keys). */
export function advisorySql(tag: LockTag & { type: 'advisory' }, mode: LockMode, level: 'session' | 'xact'): string {
  const fn = `pg_catalog.pg_advisory${level === 'xact' ? '_xact' : ''}_lock${mode === 'ShareLock' ? '_shared' : ''}`;
  if (tag.field4 === 2) return `SELECT ${fn}(${tag.key1 | 0}, ${tag.key2 | 0})`;
  const key = BigInt.asIntN(64, (BigInt(tag.key1 >>> 0) << 32n) | BigInt(tag.key2 >>> 0));
  return `SELECT ${fn}(${key}::bigint)`;
}

/**
 * SQL of one op; every op returns exactly one row when it replays correctly. A row is one
 * table's (ONLY): an inheritance parent's ctid names a row in each of its children too.
 */
export function opSql(op: ImageOp, rel: (name: string) => string = ident): string {
  switch (op.op) {
    case 'lock':
      return `SELECT ctid FROM ONLY ${rel(op.target.relation)} WHERE ctid = ${target(op.target)} ${lockClause(op.mode)}`;
    case 'delete':
      return `DELETE FROM ONLY ${rel(op.target.relation)} WHERE ctid = ${target(op.target)} RETURNING ctid`;
    case 'update': {
      const set = op.columns.map((c, i) => `${ident(c)} = ${literal(op.values[i])}`).join(', ');
      return `WITH u AS (UPDATE ONLY ${rel(op.target.relation)} SET ${set} WHERE ctid = ${target(op.target)} RETURNING ctid) INSERT INTO ${CTID_MAP} SELECT ${op.target.rel}, '${op.newCtid}', ctid FROM u`;
    }
    case 'insert': {
      const cols = op.columns.map(ident).join(', ');
      const vals = op.values.map(literal).join(', ');
      return `WITH i AS (INSERT INTO ${rel(op.relation)} (${cols}) OVERRIDING SYSTEM VALUE VALUES (${vals}) RETURNING ctid) INSERT INTO ${CTID_MAP} SELECT ${op.rel}, '${op.newCtid}', ctid FROM i`;
    }
    case 'advisory':
      return advisorySql(op.tag, op.mode, 'xact');
  }
}

/**
 * Replay SQL for a log, and a check per produced result (null = fine, else what went wrong).
 * `replica: false` leaves out the session_replication_role switch around row images: only for
 * logs whose images touch no table with triggers or rules (the engine decides, see
 * replayNeedsReplica), where it changes nothing but costs a plan-cache reset.
 */
export function replaySql(
  log: LogEntry[],
  opts: { replica?: boolean; rel?: (name: string) => string; role?: 'off' | 'around' } = {},
): { sql: string; checks: ((tag: string | undefined) => string | null)[] } {
  const parts: string[] = [];
  const checks: ((tag: string | undefined) => string | null)[] = [];
  if (opts.role) {
    // The replay is the engine's, not the session's: under a SET ROLE it runs as the superuser
    // (the engine's schema, session_replication_role), the role kept aside to be put back.
    parts.push(`SELECT pg_catalog.set_config('${ROLE_KEPT}', pg_catalog.current_setting('role'), true)`, 'SET LOCAL ROLE NONE');
    checks.push(
      () => null,
      () => null,
    );
  }
  const hasImages = opts.replica !== false && log.some((e) => e.kind === 'image');
  if (hasImages) {
    // Replay exactly the recorded effects: triggers (and foreign-key checks, whose row locks are
    // part of the image) must not fire a second time.
    parts.push('SET LOCAL session_replication_role = replica');
    checks.push(() => null);
  }
  for (const e of log) {
    if (e.kind === 'sql') {
      parts.push(e.sql);
      checks.push((tag) => (tag === e.command ? null : `"${e.sql.slice(0, 80)}": recorded ${e.command}, got ${tag ?? 'nothing'}`));
    } else {
      for (const op of e.ops) {
        parts.push(opSql(op, opts.rel));
        checks.push((tag) =>
          tag && / 1$/.test(tag) ? null : `row image of "${e.sql.slice(0, 60)}" (${op.op}) did not apply: ${tag ?? 'nothing'}`,
        );
      }
    }
  }
  if (hasImages) {
    parts.push('SET LOCAL session_replication_role = origin');
    checks.push(() => null);
  }
  if (opts.role === 'around') {
    parts.push(`SELECT pg_catalog.set_config('role', pg_catalog.current_setting('${ROLE_KEPT}'), true)`);
    checks.push(() => null);
  }
  return { sql: parts.map((p) => p + ';\n').join(''), checks };
}

/** A prepared transaction whose xid holds the xmin horizon behind every exported snapshot. */
const PIN_SQL = `BEGIN; SELECT pg_catalog.pg_current_xact_id(); PREPARE TRANSACTION '${PIN_GID}'`;

/**
 * How a replay transaction starts. READ COMMITTED: a plain BEGIN. REPEATABLE READ and
 * SERIALIZABLE: the session's snapshot from its first statement is imported, so later steps
 * see the database as that statement did (and PostgreSQL itself raises 40001 on conflicts);
 * the first statement exports it. Returns the SQL and how many results it produces.
 */
export async function beginSql(
  eng: EngineContext,
  s: Sess,
  takeSnapshot: boolean,
): Promise<{ sql: string; count: number; exporting: boolean }> {
  const txn = s.txn!;
  const begin = `BEGIN ISOLATION LEVEL ${txn.isolation.toUpperCase()};\n`;
  if (txn.isolation === 'read committed') {
    const kept = s.step?.stmtSnapshot;
    if (takeSnapshot && usesStatementSnapshot(txn.isolation, kept))
      return { ...importSnapshotBegin(await eng.ex.stageSnapshotImport(kept.content)), exporting: false };
    return { sql: begin, count: 1, exporting: false };
  }
  if (txn.snapshot) {
    const id = await eng.ex.stageSnapshotImport(txn.snapshot);
    return { sql: `${begin}SET TRANSACTION SNAPSHOT '${id}';\n`, count: 2, exporting: false };
  }
  if (!takeSnapshot) return { sql: begin, count: 1, exporting: false };
  // One pin, older than every exported snapshot, for as long as any session holds one: the
  // importing backend's xmin must not pass the snapshot's xmin.
  if (!eng.pinned) {
    await eng.ex.must(PIN_SQL);
    eng.pinned = true;
  }
  return { sql: `${begin}SELECT pg_catalog.pg_export_snapshot();\n`, count: 2, exporting: true };
}

/** Releases the pin once no session keeps a snapshot. */
export async function maybeUnpin(eng: EngineContext): Promise<void> {
  if (!eng.pinned || [...eng.sessions.values()].some((o) => o.txn?.snapshot || o.step?.stmtSnapshot)) return;
  await eng.ex.run(`ROLLBACK PREPARED '${PIN_GID}'`);
  eng.pinned = false;
}

/** Exports a snapshot of PGlite's state now (the one the statement's dry run saw) and returns the file's content. */
export async function exportStatementSnapshot(eng: EngineContext): Promise<string> {
  // The pin keeps the xmin horizon behind the snapshot; taken now, it is older than every later
  // change. Pin, export, the file's content and the end of the exporting transaction go in one
  // round trip: the file lives until that transaction ends, so it is read inside it.
  const pin = eng.pinned ? '' : `${PIN_SQL};\n`;
  const r = await eng.ex.run(`${pin}${EXPORT_SNAPSHOT_SQL};\nROLLBACK`);
  if (pin && r.results.length >= 3) eng.pinned = true;
  const content = r.error ? undefined : (r.results.at(-2)?.rows?.[0]?.[0] ?? undefined);
  if (r.error) await eng.ex.run('ROLLBACK');
  if (!content) throw new EngineInternalError(`could not export the statement's snapshot: ${r.error?.message ?? 'no snapshot'}`);
  return content;
}

/** Where replaySql keeps the session's role while the replay runs without it. */
const ROLE_KEPT = 'lockstep.kept_role';

/**
 * Whether the session's SETs change the role: the engine's replay and reads then step out of it
 * (replaySql's `role`), so a role without rights on the engine's own objects runs only its
 * statements under its rights.
 */
export function setsRole(eng: EngineContext, s: Sess): boolean {
  return /\brole\b/i.test(gucSql(eng, s));
}

/** The session's SET statements, in replay order (session, transaction, SET LOCAL). */
export function gucSql(eng: EngineContext, s: Sess): string {
  const t = s.txn;
  const all = [...s.sets, ...(t?.sets ?? []), ...(t?.localSets ?? [])];
  return all.map((x) => x + ';\n').join('');
}

/**
 * Whether replaying the session's row images needs session_replication_role = replica (so
 * that triggers, foreign-key checks and rules do not fire a second time). Setting that GUC
 * resets PostgreSQL's plan cache, so every prepared footprint query would be planned again in
 * each dry run; without triggers or rules on the tables the images change (and no DDL or GUC of
 * the session that could add or matter to them) the replay is the same without it.
 */
export function replayNeedsReplica(eng: EngineContext, s: Sess): boolean {
  if (/session_replication_role/i.test(gucSql(eng, s))) return true;
  for (const e of s.txn?.log ?? []) {
    if (e.kind === 'sql') {
      if (e.command !== 'SAVEPOINT' && e.command !== 'RELEASE') return true;
      continue;
    }
    for (const op of e.ops) {
      if (op.op === 'lock' || op.op === 'advisory') continue; // row locks and advisory locks fire nothing
      const oid = op.op === 'insert' ? op.rel : op.target.rel;
      if (eng.catalog.find((c) => c.oid === oid)?.triggersOrRules !== false) return true;
    }
  }
  return false;
}

/**
 * The session's SET lists once more, for after a replay of a statement that changed a setting
 * (`setsGucs`): it sets it again there, over a SET the session ran after it.
 */
export function replayedGucsAgain(eng: EngineContext, s: Sess): [string, string, number] {
  const again = s.txn?.log.some((e) => e.kind === 'sql' && e.setsGucs);
  return ['gucsAgain', again ? gucSql(eng, s) : '', again ? gucCount(eng, s) : 0];
}

/** How many results gucSql produces. */
export function gucCount(eng: EngineContext, s: Sess): number {
  const t = s.txn;
  return s.sets.length + (t?.sets.length ?? 0) + (t?.localSets.length ?? 0);
}

/** Replay must reproduce every recorded effect; anything else is a visible engine error. */
export function verifyReplay(eng: EngineContext, s: Sess, r: BatchResult, checks: ((tag: string | undefined) => string | null)[]): void {
  for (let i = 0; i < checks.length; i++) {
    const problem = checks[i](r.get('replay', i)?.command);
    if (problem) throw new EngineInternalError(`replay of session ${s.name} diverged: ${problem}${r.error ? ` (${r.error.message})` : ''}`);
  }
}

/**
 * Opens a transaction in PGlite with the session's log replayed (its settings too), for checks
 * that read what the transaction wrote; the caller commits or rolls it back. `roleOff`: the
 * session's role stays off to the end (see commitReplay).
 */
export async function openReplay(eng: EngineContext, s: Sess, roleOff = setsRole(eng, s)): Promise<{ error?: PgMessage }> {
  const replay = replaySql(s.txn!.log, {
    replica: replayNeedsReplica(eng, s),
    rel: (n) => relSql(eng, n),
    ...(roleOff ? { role: 'off' as const } : {}),
  });
  const begin = await beginSql(eng, s, false);
  const r = await new Batch()
    .add('begin', begin.sql, begin.count)
    .add('gucs', gucSql(eng, s), gucCount(eng, s))
    .add('replay', replay.sql, replay.checks.length)
    .add(...replayedGucsAgain(eng, s))
    .run(eng.ex);
  if (r.error) {
    await eng.ex.run('ROLLBACK');
    return { error: r.error };
  }
  verifyReplay(eng, s, r, replay.checks);
  return {};
}

/**
 * COMMIT in PGlite: the session's log replayed for real and committed. Returns PostgreSQL's
 * error when the commit fails (then rolled back), else the ctid map of the versions the
 * transaction created: "rel:recorded ctid" → their committed ctid. `check` runs after the replay,
 * in the same transaction, before the commit (the deferred constraints' checks): an error or a
 * wait it returns rolls the replay back.
 */
export async function commitReplay(
  eng: EngineContext,
  s: Sess,
  check?: () => Promise<PgMessage | 'wait' | undefined>,
): Promise<
  | { error: PgMessage; wait?: undefined }
  | { error?: undefined; wait: true }
  | { error?: undefined; wait?: undefined; committed: Map<string, string> }
> {
  // COMMIT reads the engine's ctid map after the replay: the role stays off to the end, and the
  // session's SET ROLE, committed with the rest, must not stay on PGlite's one backend for the
  // other sessions.
  const role = setsRole(eng, s);
  // The SETs, committed with the rest, would stay on PGlite's one backend for the other sessions
  // (RESET ALL leaves the role alone: GUC_NO_RESET_ALL).
  const resets = gucCount(eng, s) > 0 || s.txn!.log.some((e) => e.kind === 'sql');
  const end = `DELETE FROM ${CTID_MAP};\nCOMMIT;\nSELECT pg_catalog.pg_advisory_unlock_all()${resets ? ';\nRESET ALL' : ''}${role ? ';\nRESET ROLE' : ''}`;
  const endCount = 3 + Number(resets) + Number(role);
  const ctidMap = `SELECT rel::int, orig::text, cur::text FROM ${CTID_MAP};\n`;
  let r: BatchResult;
  if (check) {
    const opened = await openReplay(eng, s, role);
    if (opened.error) return { error: opened.error };
    const found = await check();
    if (found) {
      await eng.ex.run('ROLLBACK');
      return found === 'wait' ? { wait: true } : { error: found };
    }
    r = await new Batch().add('ctidMap', ctidMap, 1).add('end', end, endCount).run(eng.ex);
    if (r.error) {
      await eng.ex.run('ROLLBACK');
      return { error: r.error };
    }
  } else {
    const replay = replaySql(s.txn!.log, {
      replica: replayNeedsReplica(eng, s),
      rel: (n) => relSql(eng, n),
      ...(role ? { role: 'off' as const } : {}),
    });
    const begin = await beginSql(eng, s, false);
    r = await new Batch()
      .add('begin', begin.sql, begin.count)
      .add('gucs', gucSql(eng, s), gucCount(eng, s))
      .add('replay', replay.sql, replay.checks.length)
      .add(...replayedGucsAgain(eng, s))
      .add('ctidMap', ctidMap, 1)
      .add('end', end, endCount)
      .run(eng.ex);
    if (r.error) {
      await eng.ex.run('ROLLBACK');
      return { error: r.error };
    }
    verifyReplay(eng, s, r, replay.checks);
  }
  const mapRows = r.get('ctidMap')?.rows ?? [];
  return { committed: new Map(mapRows.map(([rel, orig, cur]) => [`${rel}:${orig}`, cur!])) };
}

/** The user catalog, sequences and housekeeping, read from PGlite. */
import type { EngineContext } from '../context';
import { calledFunctionNames } from '../approximations';
import { splitKey } from '../model/util';
import { parseCatalog, parseRelations, uniqueKeysSql } from './footprint';
import { CTID_MAP, INTERNAL_SCHEMA, OTHERS_ADVISORY } from './names';
import { ident, literal } from './replay';
import type { ImageOp } from '../model/log';
import type { PreparedText } from '../sql';
import type { Sess } from '../state';
import type { PgMessage } from '../types';

/** The engine's own functions (the advisory shadows in its lockstep_* schemas) are no user's. */
const NOT_ENGINE_FUNCTION = `p.pronamespace::pg_catalog.regnamespace::text NOT LIKE '${INTERNAL_SCHEMA}%'`;

/**
 * Whether one of the named functions is a user's VOLATILE SQL or PL/pgSQL function: its queries
 * take their own snapshots under READ COMMITTED.
 */
export async function callsQueryingFunction(eng: EngineContext, names: string[]): Promise<boolean> {
  if (!names.length) return false;
  const r = await eng.ex.run(
    `SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang WHERE p.proname = ANY(ARRAY[${names.map(literal).join(', ')}]::text[]) AND p.pronamespace <> 'pg_catalog'::pg_catalog.regnamespace AND ${NOT_ENGINE_FUNCTION} AND p.provolatile = 'v' AND l.lanname IN ('sql', 'plpgsql') LIMIT 1`,
  );
  return !r.error && (r.results[0]?.rows?.length ?? 0) > 0;
}

/**
 * Whether the statement calls a user SQL or PL/pgSQL function whose body locks rows with NOWAIT
 * or SKIP LOCKED. PostgreSQL gives each row-locking clause its own wait policy (the LockRows
 * node's); the lock model knows only the top-level statement's, so a row that such a function
 * locks is waited for where PostgreSQL fails or passes over it.
 */
export async function callsWaitPolicyFunction(eng: EngineContext, sql: string): Promise<boolean> {
  const names = calledFunctionNames(sql);
  if (!names.length) return false;
  const r = await eng.ex.run(
    `SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang WHERE p.proname = ANY(ARRAY[${names.map(literal).join(', ')}]::text[]) AND p.pronamespace <> 'pg_catalog'::pg_catalog.regnamespace AND ${NOT_ENGINE_FUNCTION} AND l.lanname IN ('sql', 'plpgsql') AND p.prosrc ~* '\\m(nowait|skip\\s+locked)\\M' LIMIT 1`,
  );
  return !r.error && (r.results[0]?.rows?.length ?? 0) > 0;
}

/**
 * Whether the statement's changes (`ops`) meet another open transaction's changes of a table with
 * an exclusion constraint where the lock model cannot check them (pg/exclusion.ts checks an
 * inserted row against other transactions' inserted rows only): an updated row on either side.
 */
export async function writesContendedExclusion(eng: EngineContext, s: Sess, ops: ImageOp[]): Promise<boolean> {
  const rels = (list: ImageOp[], kind: 'insert' | 'update') =>
    list.flatMap((op) =>
      op.op === 'insert' && kind === 'insert' ? [op.rel] : op.op === 'update' && kind === 'update' ? [op.target.rel] : [],
    );
  const excl = new Set(eng.catalog.filter((c) => c.exclusions?.length).map((c) => c.oid));
  if (!excl.size) return false;
  const myInserts = rels(ops, 'insert').filter((r) => excl.has(r));
  const myUpdates = rels(ops, 'update').filter((r) => excl.has(r));
  if (!myInserts.length && !myUpdates.length) return false;
  for (const o of eng.sessions.values()) {
    if (o === s || !o.txn) continue;
    const theirOps = o.txn.log.flatMap((e) => (e.kind === 'image' ? e.ops : []));
    const theirUpdates = new Set(rels(theirOps, 'update'));
    const theirWrites = new Set([...theirUpdates, ...rels(theirOps, 'insert')]);
    if (myUpdates.some((r) => theirWrites.has(r)) || myInserts.some((r) => theirUpdates.has(r))) return true;
  }
  return false;
}

/** Whether the statement calls a user PL/pgSQL function whose body has an EXCEPTION clause (read once per catalog). */
export async function callsExceptionFunction(eng: EngineContext, sql: string): Promise<boolean> {
  if (!eng.exceptionFunctions) {
    const r = await eng.ex.run('EXECUTE lockstep_exception_functions');
    eng.exceptionFunctions = new Set((r.results[0]?.rows ?? []).map((row) => row[0]!));
  }
  const known = eng.exceptionFunctions;
  // Parse only a statement that names one of them.
  const lower = sql.toLowerCase();
  if (![...known].some((n) => lower.includes(n.toLowerCase()))) return false;
  return calledFunctionNames(sql).some((n) => known.has(n));
}

/**
 * Whether a user-written SQL or PL/pgSQL function exists in the committed catalog (read once per
 * catalog: every row wait asks, and only committed DDL, which refreshes the catalog, changes it).
 */
export async function hasUserFunctions(eng: EngineContext): Promise<boolean> {
  eng.userFunctions ??= (await eng.ex.must('EXECUTE lockstep_user_functions')).length > 0;
  return eng.userFunctions;
}

/**
 * Whether a foreign key's action writes rows of table `oid` (ON DELETE / ON UPDATE CASCADE, SET
 * NULL, SET DEFAULT): ri_triggers.c runs that write through SPI, so a wait there has the
 * action's query in its CONTEXT even on a table the statement names (a tree's parent_id).
 */
export async function cascadesInto(eng: EngineContext, oid: number): Promise<boolean> {
  eng.cascadingTables ??= new Set(
    (
      await eng.ex.must(
        `SELECT conrelid::int FROM pg_catalog.pg_constraint WHERE contype = 'f' AND (confdeltype IN ('c', 'n', 'd') OR confupdtype IN ('c', 'n', 'd'))`,
      )
    ).map(([o]) => Number(o)),
  );
  return eng.cascadingTables.has(oid);
}

/** Reads the user tables, relations and sequences again (after setup or DDL). */
export async function refreshCatalog(eng: EngineContext): Promise<void> {
  eng.cascadingTables = null;
  // One round trip of prepared statements: every scenario start (and every explored order) pays it.
  // Whether a user function calls an advisory lock function is read here too: a dry run cannot
  // ask on its own once the snapshot it imports is staged for the next transaction. So are the
  // two "once per catalog" answers (user functions, EXCEPTION functions): nearly every scenario's
  // first statement asks for them, and they read the same committed catalog now as then.
  const r = await eng.ex.run(
    'EXECUTE lockstep_catalog; EXECUTE lockstep_relations; EXECUTE lockstep_sequences; EXECUTE lockstep_advisory_functions; ' +
      'EXECUTE lockstep_user_functions; EXECUTE lockstep_exception_functions',
  );
  eng.catalog = parseCatalog(r.results[0]?.rows ?? []);
  eng.relations = parseRelations(r.results[1]?.rows ?? []);
  eng.relNames = null;
  eng.sequences = (r.results[2]?.rows ?? []).map((row) => row[0]!);
  eng.advisoryFunctions = (r.results[3]?.rows?.length ?? 0) > 0;
  // Without their answers (an error in the round trip) they are asked again when needed.
  const answered = !r.error && r.results.length === 6;
  eng.userFunctions = answered ? (r.results[4].rows?.length ?? 0) > 0 : null;
  eng.exceptionFunctions = answered ? new Set((r.results[5].rows ?? []).map((row) => row[0]!)) : null;
}

/**
 * The sequences' states (last_value, is_called), to undo what a dry run consumed when the
 * statement does not happen yet (it waits and runs again later): nextval is not transactional,
 * and PostgreSQL's statement consumes its values once, when it runs.
 */
export async function sequenceStates(eng: EngineContext): Promise<string[] | null> {
  if (!eng.sequences.length) return null;
  const sql = eng.sequences.map((q) => `SELECT ${literal(q)}, last_value::text, is_called::text FROM ${q}`).join(' UNION ALL ');
  const r = await eng.ex.run(sql);
  return r.error ? null : (r.results[0]?.rows ?? []).map((row) => `SELECT pg_catalog.setval(${literal(row[0]!)}, ${row[1]}, ${row[2]})`);
}

/** Puts the sequences back as sequenceStates found them. */
export async function restoreSequences(eng: EngineContext, states: string[] | null): Promise<void> {
  if (states?.length) await eng.ex.run(states.join(';\n'));
}

/** The sequence a state from sequenceStates sets (its regclass text). */
export function stateSequence(state: string): string {
  return /setval\('((?:[^']|'')*)'/.exec(state)![1].replace(/''/g, "'");
}

/** The states of `states` whose sequences `of` has a state for (or, with `not`, has none for). */
export function statesOf(states: string[] | null, of: string[], not = false): string[] {
  const names = new Set(of.map(stateSequence));
  return (states ?? []).filter((x) => names.has(stateSequence(x)) !== not);
}

/**
 * The sequences a statement's own new row versions take values from: those its text names
 * (nextval('revs')), and the defaults and identity columns of `targetOid`, the table it writes.
 * The others are taken by triggers and cascades.
 */
export async function ownSequences(eng: EngineContext, sql: string, targetOid: number | undefined): Promise<Set<string>> {
  const own = new Set<string>();
  if (targetOid !== undefined)
    for (const [q] of await eng.ex.must(
      `SELECT s.oid::regclass::text FROM pg_catalog.pg_class s WHERE s.relkind = 'S' AND (
         EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = s.oid
                   AND d.refobjid = ${Number(targetOid)} AND d.deptype IN ('a', 'i'))
         OR EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef ad JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_attrdef'::regclass AND d.objid = ad.oid
                      WHERE ad.adrelid = ${Number(targetOid)} AND d.refobjid = s.oid))`,
    ))
      own.add(q!);
  const text = sql.toLowerCase();
  for (const q of eng.sequences) if (text.includes((q.split('.').pop() ?? q).replace(/"/g, '').toLowerCase())) own.add(q);
  return own;
}

/**
 * Rolled-back dry runs leave dead tuples behind, and every dry run scans the pages: vacuum the
 * user tables now and then, between transactions (live tuples never move, so ctids hold).
 */
export async function maybeVacuum(eng: EngineContext): Promise<void> {
  if (++eng.commitsSinceVacuum < 20) return;
  eng.commitsSinceVacuum = 0;
  // VACUUM updates pg_class's statistics and the visibility map, which a restore does not reset.
  eng.beyondRows = true;
  // The engine's own tables too: every replay writes the ctid map and rolls back (or deletes
  // its rows at COMMIT), so it only ever holds dead rows between transactions, and replays of
  // own versions read it.
  const tables = [...eng.catalog.map((c) => c.sqlName ?? ident(c.name)), CTID_MAP, OTHERS_ADVISORY];
  await eng.ex.run(`VACUUM ${tables.join(', ')}`);
}

/** For a 23505 from the dry run: an open transaction deleting the conflicting committed key. */
/**
 * For a 23505 from the dry run: is the conflicting committed key being updated or deleted by
 * an open transaction? Then PostgreSQL's _bt_check_unique waits for it. The keys of the rows
 * other sessions changed are read only here, when a duplicate actually shows up.
 */
export async function keyBlocker(eng: EngineContext, s: Sess, e: PgMessage): Promise<{ session: string; xid: number } | undefined> {
  const m = /^Key (.*) already exists\.$/.exec(e.detail ?? '');
  if (!m) return undefined;
  for (const { tuple, holders } of eng.rows.all()) {
    const h = holders.find((x) => x.session !== s.name && (x.mode === 'Update' || x.mode === 'NoKeyUpdate'));
    if (!h) continue;
    const cat = eng.catalog.find((c) => c.oid === tuple.oid);
    const sql = cat && uniqueKeysSql(cat, [`(${tuple.block},${tuple.offset})`]);
    if (!sql) continue;
    for (const row of await eng.ex.must(sql))
      for (const k of row.slice(1)) if (k && splitKey(cat!.name, k).key === m[1]) return { session: h.session, xid: h.xid };
  }
  return undefined;
}

/** PREPARE's parse analysis, in PGlite: PostgreSQL's error for a missing table or column, if any. */
export async function analyzePrepared(
  eng: EngineContext,
  p: PreparedText,
): Promise<{ error: PgMessage } | { parameterTypes: string; resultTypes: string | null }> {
  const probe = `${INTERNAL_SCHEMA}_probe`;
  const types = p.types.length ? ` (${p.types.join(', ')})` : '';
  const query = p.parts.map((x) => (typeof x === 'string' ? x : `$${x}`)).join('');
  const r = await eng.ex.run(`PREPARE ${probe}${types} AS ${query}`);
  if (r.error) return { error: r.error };
  // The types PostgreSQL's analysis gave the parameters and the result columns (pg_prepared_statements).
  const [row] = await eng.ex.must(
    `SELECT parameter_types::text, result_types::text FROM pg_catalog.pg_prepared_statements WHERE name = '${probe}'`,
  );
  await eng.ex.must(`DEALLOCATE ${probe}`);
  return { parameterTypes: row?.[0] ?? '{}', resultTypes: row?.[1] ?? null };
}

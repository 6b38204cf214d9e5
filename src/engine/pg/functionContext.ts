/**
 * The CONTEXT of a row wait inside a trigger or function. PostgreSQL's error context callbacks
 * stack up while a PL/pgSQL function runs a statement: XactLockTableWait's "while updating
 * tuple …", then the statement the function ran (`SQL statement "UPDATE …"`), then the
 * function's line (`PL/pgSQL function bump() line 3 at SQL statement`), and so on up to the
 * top-level statement. The dry run finds the row lock from the tuple headers, not from where it
 * was taken; this probe learns where by letting PGlite raise an error at that very row: a dry run
 * with a BEFORE ROW trigger on the row's table that fails when the statement reaches the row.
 * The error's CONTEXT, past the probe's own line, is the stack PostgreSQL shows at the lock.
 */
import type { EngineContext } from '../context';
import { EngineInternalError } from '../errors';
import { xactWaitContext } from '../model/messages';
import type { TupleId } from '../model/rowlocks';
import type { SsiWrite } from '../model/ssi';
import type { ParsedStatement } from '../sql';
import { cancelTimers, type Sess } from '../state';
import type { PgMessage } from '../types';
import { cascadesInto, hasUserFunctions, restoreSequences, sequenceStates } from './catalog';
import { dryRun } from './dryRun';
import { INTERNAL_SCHEMA } from './names';
import { keyShareBlocked, riCheckQuery } from './probes';
import { ident, relSql } from './replay';
import { shadowSearchPathSql } from './shadows';
import type { LockMode, LockTag } from '../model/locks/types';

/**
 * The probe's SQLSTATE: assert_failure, which a PL/pgSQL handler for OTHERS does not catch
 * (exception_matches_conditions leaves it, like query_canceled, to a handler that names it), so
 * a block with an EXCEPTION clause around the row does not swallow the probe. Its message starts
 * with PROBE_PREFIX.
 */
const PROBE_SQLSTATE = 'P0004';
const PROBE_PREFIX = 'lockstep-probe ';
const PROBE_FUNCTION = `${INTERNAL_SCHEMA}.wait_probe`;
/** Sorts before any name a user writes, so the probe fires first, as the row lock comes before every BEFORE trigger (GetTupleForTrigger). */
const PROBE_TRIGGER = '" lockstep_wait_probe"';

/**
 * deadlock_timeout and lock_timeout in milliseconds where the probe fires: ProcSleep arms both
 * timers with the values in effect at the lock, which a function's SET clause (proconfig) or a
 * SET / SET LOCAL it ran before may have changed from the session's.
 */
const TIMEOUTS_AT_ROW = `(SELECT pg_catalog.string_agg(setting, ' ' ORDER BY name) FROM pg_catalog.pg_settings WHERE name IN ('deadlock_timeout', 'lock_timeout'))`;

/**
 * SQL run inside the probe's dry run (rolled back with it): the probe function and its trigger on
 * the row's table, matching the row by position and contents (OLD has no ctid in PL/pgSQL).
 */
export function probeSql(tuple: TupleId, rel = ident(tuple.relation), fk = true): { sql: string; count: number } {
  const ctid = `(${tuple.block},${tuple.offset})`;
  const sql = `CREATE FUNCTION ${PROBE_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $lockstep$
DECLARE hit boolean;
BEGIN
  EXECUTE pg_catalog.format('SELECT EXISTS (SELECT 1 FROM ONLY %s t WHERE t.ctid = %L::tid AND t::text = $1::text)', TG_RELID::regclass, TG_ARGV[0]) INTO hit USING OLD;
  IF hit THEN RAISE EXCEPTION USING ERRCODE = '${PROBE_SQLSTATE}', MESSAGE = '${PROBE_PREFIX}' || TG_OP, DETAIL = ${TIMEOUTS_AT_ROW}; END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $lockstep$;
CREATE TRIGGER ${PROBE_TRIGGER} BEFORE UPDATE OR DELETE ON ${rel} FOR EACH ROW EXECUTE FUNCTION ${PROBE_FUNCTION}('${ctid}');
ALTER TABLE ${rel} ENABLE ALWAYS TRIGGER ${PROBE_TRIGGER};
`;
  if (!fk) return { sql, count: 3 };
  const fkSql = `CREATE FUNCTION ${PROBE_FUNCTION}_fk() RETURNS trigger LANGUAGE plpgsql AS $lockstep$
DECLARE parent jsonb; hit boolean;
BEGIN
  -- An UPDATE that keeps the referencing columns runs no check (RI_FKey_fk_upd_check_required).
  IF TG_OP = 'UPDATE' AND (SELECT pg_catalog.bool_and(pg_catalog.to_jsonb(NEW) -> f IS NOT DISTINCT FROM pg_catalog.to_jsonb(OLD) -> f)
                           FROM unnest(TG_ARGV[2]::text[]) AS f) THEN
    RETURN NEW;
  END IF;
  EXECUTE pg_catalog.format('SELECT pg_catalog.to_jsonb(p) FROM ONLY %s p WHERE p.ctid = %L::tid', TG_ARGV[0], TG_ARGV[1]) INTO parent;
  SELECT pg_catalog.bool_and(pg_catalog.to_jsonb(NEW) -> u.f = parent -> u.r) INTO hit FROM unnest(TG_ARGV[2]::text[], TG_ARGV[3]::text[]) AS u(f, r);
  IF hit THEN RAISE EXCEPTION USING ERRCODE = '${PROBE_SQLSTATE}', MESSAGE = '${PROBE_PREFIX}FK ' || TG_RELID::oid::text, DETAIL = ${TIMEOUTS_AT_ROW}; END IF;
  RETURN NEW;
END $lockstep$;
DO $lockstep$
DECLARE c record;
BEGIN
  FOR c IN
    SELECT con.oid, con.conrelid::regclass AS rel,
      ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(n, i)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i) AS fk,
      ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(n, i)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i) AS ref
    FROM pg_catalog.pg_constraint con JOIN pg_catalog.pg_class r ON r.oid = con.conrelid
    WHERE con.contype = 'f' AND r.relkind = 'r'
      AND (con.confrelid = ${Number(tuple.oid)} OR con.confrelid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors(${Number(tuple.oid)})))
  LOOP
    EXECUTE pg_catalog.format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION ${PROBE_FUNCTION}_fk(%L, %L, %L, %L)',
      ' lockstep_wait_probe_' || c.oid, c.rel, '${Number(tuple.oid)}'::regclass::text, '${ctid}', c.fk, c.ref);
    EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', c.rel, ' lockstep_wait_probe_' || c.oid);
  END LOOP;
END $lockstep$;
`;
  return { sql: sql + fkSql, count: 5 };
}

/**
 * The stack of a probe's error past the probe's own frame, with the operation the function did
 * to the row (the probe's message is TG_OP); undefined when the error is not the probe's.
 */
export function probeStack(
  error: { sqlstate: string; message: string; detail?: string; context?: string } | undefined,
): { op: string; stack: string; timeouts?: { deadlock: number; lock: number } } | undefined {
  if (error?.sqlstate !== PROBE_SQLSTATE || !error.message.startsWith(PROBE_PREFIX)) return undefined;
  const lines = (error.context ?? '').split('\n');
  const own = lines.findIndex(
    (l) => l.startsWith(`PL/pgSQL function ${PROBE_FUNCTION}(`) || l.startsWith(`PL/pgSQL function ${PROBE_FUNCTION}_fk(`),
  );
  const [deadlock, lock] = (error.detail ?? '').split(' ').map(Number);
  return {
    op: error.message.slice(PROBE_PREFIX.length),
    stack: lines.slice(own + 1).join('\n'),
    ...(Number.isFinite(deadlock) && Number.isFinite(lock) ? { timeouts: { deadlock, lock } } : {}),
  };
}

/** The statement's stack when it reaches `tuple` (probeStack), from a probe dry run. */
export async function stackAtRow(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  tuple: TupleId,
  fk = true,
): Promise<ReturnType<typeof probeStack>> {
  // nextval is not transactional: the probe gives back what its run took.
  const seqs = await sequenceStates(eng);
  let error: PgMessage | undefined;
  try {
    error = (await dryRun(eng, s, st, false, false, probeSql(tuple, relSql(eng, tuple.relation), fk))).raw.error;
  } catch (e) {
    // The probe's objects could not be made (a READ ONLY transaction): the tuple alone is named.
    if (!(e instanceof EngineInternalError)) throw e;
  } finally {
    await restoreSequences(eng, seqs);
  }
  return probeStack(error);
}

/**
 * A statement's write of a row in a table it does not name (a foreign key's cascade, a trigger)
 * failed its rw-conflict check: the error's CONTEXT is the stack that wrote it.
 */
export async function triggerWriteContext(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  w: SsiWrite | undefined,
): Promise<string | undefined> {
  if (w?.kind !== 'tuple') return undefined;
  const relation = eng.catalog.find((c) => c.oid === w.rel)?.name;
  if (!relation || (st.cls.kind === 'dml' && st.cls.relations.includes(relation))) return undefined;
  const found = await stackAtRow(eng, s, st, { oid: w.rel, relation, block: w.block, offset: w.offset });
  return found?.stack || undefined;
}

/**
 * A statement waiting for a row: when a function the statement ran took that row lock, the
 * wait's CONTEXT becomes PostgreSQL's (the operation the function did, then its stack).
 */
export async function functionWaitContext(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<void> {
  const w = s.step?.wait;
  if (!w) return;
  const t = w.tag;
  const tuple: TupleId | undefined =
    w.tuple ?? (t.type === 'tuple' ? { oid: t.oid, relation: t.relation, block: t.block, offset: t.offset } : undefined);
  if (!tuple) return;
  // A table the statement does not name is reached through a trigger: a user's, or a foreign
  // key's cascade (ri_triggers.c runs its DELETE / UPDATE through SPI as well).
  const named = st.cls.kind === 'dml' && st.cls.relations.includes(tuple.relation);
  // User-written functions (triggers, functions the statement calls) and a foreign key's action
  // writing the table again (a tree's ON DELETE CASCADE) are the other ways there; without them a
  // lock on a table the statement names is its own.
  if (named && !(await hasUserFunctions(eng)) && !(await cascadesInto(eng, tuple.oid))) return;
  // A foreign-key check locks the referenced row FOR KEY SHARE: it waits only for a holder that
  // deleted the row, changed its key or locked it FOR UPDATE. Behind any other holder (a trigger's
  // non-key UPDATE of the parent) the check passes and the wait is further on.
  const found = await stackAtRow(eng, s, st, tuple, keyShareBlocked(eng, s, tuple));
  if (!found?.stack) return;
  if (found.timeouts) armAtLock(eng, s, found.timeouts);
  if (found.op.startsWith('FK ')) {
    // The check of a row the function's statement wrote: the check's query, then that statement's stack.
    const query = w.tuple ? await riCheckQuery(eng, tuple.oid, [Number(found.op.slice(3))]) : undefined;
    if (query)
      w.context = `${xactWaitContext('lock', tuple.block, tuple.offset, tuple.relation)}\nSQL statement "${query}"\n${found.stack}`;
    return;
  }
  // A wait for the heavyweight tuple lock has no XactLockTableWait line of its own.
  const verb = found.op === 'DELETE' ? 'delete' : 'update';
  const head = t.type === 'transactionid' ? xactWaitContext(verb, tuple.block, tuple.offset, tuple.relation) : undefined;
  w.context = head ? `${head}\n${found.stack}` : found.stack;
}

/**
 * Arms the wait's timers with the timeouts in effect where a function took the lock, in place of
 * the session's (the wait began at this virtual moment: the probe runs before time moves on).
 */
function armAtLock(eng: EngineContext, s: Sess, at: { deadlock: number; lock: number }): void {
  const since = s.step!.wait!.sinceMs;
  if (at.deadlock !== s.timeouts.deadlock) eng.timers.set(s.name, 'deadlock_timeout', since + at.deadlock);
  if (at.lock === s.timeouts.lock) return;
  if (at.lock > 0) eng.timers.set(s.name, 'lock_timeout', since + at.lock);
  else cancelTimers(eng, s, ['lock_timeout']);
}

/** The schema of the advisory probe's functions, put before pg_catalog on the search_path. */
const ADVISORY_PROBE_SCHEMA = 'lockstep_advisory_probe';

/**
 * SQL run inside the advisory probe's dry run (rolled back with it): functions of PostgreSQL's
 * names that raise the probe's error when asked for the waited key in its mode, and take the
 * lock otherwise, ahead of pg_catalog on the search_path for the statement's unqualified calls.
 */
function advisoryProbeSql(tag: LockTag & { type: 'advisory' }, mode: LockMode): { sql: string; count: number } {
  const shared = mode === 'ShareLock' ? '_shared' : '';
  const key = BigInt.asIntN(64, (BigInt(tag.key1 >>> 0) << 32n) | BigInt(tag.key2 >>> 0));
  const [params, args, hit] =
    tag.field4 === 2 ? ['a int, b int', 'a, b', `a = ${tag.key1 | 0} AND b = ${tag.key2 | 0}`] : ['k bigint', 'k', `k = ${key}`];
  const fns = ['', '_xact'].map(
    (
      level,
    ) => `CREATE FUNCTION ${ADVISORY_PROBE_SCHEMA}.pg_advisory${level}_lock${shared}(${params}) RETURNS void LANGUAGE plpgsql AS $lockstep$
BEGIN
  IF ${hit} THEN RAISE EXCEPTION USING ERRCODE = '${PROBE_SQLSTATE}', MESSAGE = '${PROBE_PREFIX}advisory'; END IF;
  PERFORM pg_catalog.pg_advisory${level}_lock${shared}(${args});
END $lockstep$;
`,
  );
  return { sql: `CREATE SCHEMA ${ADVISORY_PROBE_SCHEMA};\n${fns.join('')}${shadowSearchPathSql([ADVISORY_PROBE_SCHEMA])}`, count: 4 };
}

/**
 * A statement waiting for an advisory lock that a function it calls asks for: the wait's CONTEXT
 * becomes PostgreSQL's, the function's statement and line (`SQL statement "SELECT
 * pg_advisory_xact_lock(…)"`, `PL/pgSQL function reserve(text,integer) line 4 at PERFORM`), the
 * stack of a probe dry run in which that call raises.
 */
export async function advisoryWaitContext(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<void> {
  const w = s.step?.wait;
  if (w?.tag.type !== 'advisory' || !(await hasUserFunctions(eng))) return;
  const seqs = await sequenceStates(eng);
  let error: PgMessage | undefined;
  try {
    error = (await dryRun(eng, s, st, false, false, advisoryProbeSql(w.tag, w.mode))).raw.error;
  } catch (e) {
    // The probe's objects could not be made (a READ ONLY transaction): no CONTEXT, as before.
    if (!(e instanceof EngineInternalError)) throw e;
  } finally {
    await restoreSequences(eng, seqs);
  }
  if (error?.sqlstate !== PROBE_SQLSTATE || error.message !== `${PROBE_PREFIX}advisory`) return;
  const lines = (error.context ?? '').split('\n');
  const own = lines.findIndex((l) => l.startsWith(`PL/pgSQL function ${ADVISORY_PROBE_SCHEMA}.`));
  const stack = lines.slice(own + 1).join('\n');
  if (stack) w.context = stack;
}

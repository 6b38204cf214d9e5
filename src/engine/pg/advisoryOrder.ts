/**
 * Where a statement's advisory locks fall among its row locks. PostgreSQL takes both in
 * execution order: a function that updates row 1, then calls pg_advisory_xact_lock(42), then
 * updates row 2 waits for 42 holding row 1; a WHERE clause's advisory lock is taken while the
 * scan finds a row, before that row is locked (upstream tuplelock-update). The dry run learns the
 * order from shadows of the advisory lock functions (ADVISORY_ORDER_SCHEMA, first on the
 * search_path): each call notes, before it takes the lock, which rows the transaction has locked
 * or changed so far (their tuple headers), in a transaction-local setting the dry run reads back.
 */
import type { EngineContext } from '../context';
import { HEAP_XMAX_INVALID, HEAP_XMAX_IS_MULTI } from '../model/rowbits';
import { USER_NS } from './footprint';
import { ADVISORY_MARKS_GUC, ADVISORY_ORDER_SCHEMA, INTERNAL_SCHEMA } from './names';
import type { ParsedStatement } from '../sql';

/** The advisory lock functions that can wait, shadowed to note the order (the pg_try_* ones never wait). */
const SHADOWED = ['pg_advisory_lock', 'pg_advisory_lock_shared', 'pg_advisory_xact_lock', 'pg_advisory_xact_lock_shared'];

/** Calls of the shadowed functions in a statement's own text. */
const CALLS_ADVISORY = /\bpg_advisory(?:_xact)?_lock(?:_shared)?\s*\(/i;

/**
 * The shadows and the function that notes a call (created once with the engine's objects).
 * The note lists every row version whose xmax is one of this transaction's xids (its top-level
 * xid, assigned before any subtransaction's, is the smallest; a subtransaction an EXCEPTION block
 * ended keeps its xid in the tuple header but no longer in pg_locks) or a multixact; the dry run
 * keeps those whose locker is the statement's own. A call in a subtransaction that rolls back
 * takes its note with it, as it does its lock. The note is taken with the engine's rights
 * (SECURITY DEFINER: pageinspect needs a superuser, a scenario may SET ROLE), and lives next to
 * the shadows, in the one engine schema every role may use.
 */
export function advisoryOrderDdl(): string {
  const note = `CREATE FUNCTION ${ADVISORY_ORDER_SCHEMA}.lockstep_note(tag text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $fn$
DECLARE rows text;
BEGIN
  WITH mine AS MATERIALIZED (SELECT l.locktype, l.relation, l.mode, l.transactionid FROM pg_catalog.pg_locks l
    WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype IN ('relation', 'transactionid')),
  top AS (SELECT min(m.transactionid::text::bigint) AS x FROM mine m WHERE m.locktype = 'transactionid'),
  rels AS MATERIALIZED (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid IN (SELECT m.relation FROM mine m WHERE m.locktype = 'relation' AND m.mode <> 'AccessShareLock') AND c.relkind = 'r' AND ${USER_NS})
  SELECT pg_catalog.string_agg(c.oid::int || '/' || b.blk || '/' || h.lp || '/' || h.t_xmax::text || '/' ||
      CASE WHEN h.t_infomask & ${HEAP_XMAX_IS_MULTI} <> 0 THEN
        coalesce((SELECT pg_catalog.string_agg(mm.xid::text, ',') FROM pg_catalog.pg_get_multixact_members(h.t_xmax) mm), '') ELSE '' END, ' ')
    INTO rows
  FROM rels c
  CROSS JOIN LATERAL pg_catalog.generate_series(0, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
  CROSS JOIN LATERAL ${INTERNAL_SCHEMA}.heap_page_items(${INTERNAL_SCHEMA}.get_raw_page(c.oid::regclass::text, b.blk)) h
  WHERE h.lp_flags = 1 AND h.t_infomask & ${HEAP_XMAX_INVALID} = 0
    AND (h.t_infomask & ${HEAP_XMAX_IS_MULTI} <> 0 OR h.t_xmax::text::bigint >= (SELECT x FROM top));
  PERFORM pg_catalog.set_config('${ADVISORY_MARKS_GUC}',
    coalesce(pg_catalog.current_setting('${ADVISORY_MARKS_GUC}', true), '') || tag || '=' || coalesce(rows, '') || ';', true);
END $fn$`;
  // Every role the scenario may SET calls the shadows, and through them the note.
  const out = [`CREATE SCHEMA ${ADVISORY_ORDER_SCHEMA}`, `GRANT USAGE ON SCHEMA ${ADVISORY_ORDER_SCHEMA} TO PUBLIC`, note];
  const low = `(CASE WHEN (k & 4294967295) >= 2147483648 THEN (k & 4294967295) - 4294967296 ELSE k & 4294967295 END)`;
  for (const name of SHADOWED) {
    const mode = name.endsWith('_shared') ? 'ShareLock' : 'ExclusiveLock';
    out.push(
      `CREATE FUNCTION ${ADVISORY_ORDER_SCHEMA}.${name}(k bigint) RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  PERFORM ${ADVISORY_ORDER_SCHEMA}.lockstep_note((k >> 32)::int || '/' || ${low} || '/1/${mode}');
  PERFORM pg_catalog.${name}(k);
END $fn$`,
      `CREATE FUNCTION ${ADVISORY_ORDER_SCHEMA}.${name}(a int, b int) RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  PERFORM ${ADVISORY_ORDER_SCHEMA}.lockstep_note(a || '/' || b || '/2/${mode}');
  PERFORM pg_catalog.${name}(a, b);
END $fn$`,
    );
  }
  return out.join(';\n');
}

/** Reads the notes the statement's advisory calls left (ADVISORY_MARKS_GUC), within the dry run. */
export const ADVISORY_MARKS_SQL = `SELECT pg_catalog.current_setting('${ADVISORY_MARKS_GUC}', true)`;

/**
 * Whether the statement may call an advisory lock function in a place the order matters: its own
 * text calls one, or a committed user function (or trigger function) whose body calls one exists
 * (read with the catalog, catalog.ts).
 */
export function notesAdvisoryOrder(eng: EngineContext, st: ParsedStatement): boolean {
  if (st.cls.kind !== 'dml') return false;
  return CALLS_ADVISORY.test(st.sql) || eng.advisoryFunctions === true;
}

/** The user functions whose body calls an advisory lock function (prepared with the engine's statements). */
export const ADVISORY_FUNCTIONS_DEF = `SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  WHERE p.oid >= 16384 AND n.nspname NOT LIKE '${INTERNAL_SCHEMA}%' AND p.prosrc ~* 'pg_advisory(_xact)?_lock' LIMIT 1`;

/** One call of a shadowed function: its lock ("key1/key2/field4/mode") and the rows locked by then. */
export interface AdvisoryCall {
  tag: string;
  rows: { place: string; xmax: number; members: number[] }[];
}

/** Parses the notes ("tag=oid/blk/lp/xmax/members …;" per call). */
export function parseAdvisoryMarks(text: string | null | undefined): AdvisoryCall[] {
  if (!text) return [];
  return text
    .split(';')
    .filter(Boolean)
    .map((call) => {
      const at = call.indexOf('=');
      const rows = call
        .slice(at + 1)
        .split(' ')
        .filter(Boolean)
        .map((r) => {
          const [oid, blk, lp, xmax, members] = r.split('/');
          return {
            place: `${oid}:${blk}:${lp}`,
            xmax: Number(xmax),
            members: members ? members.split(',').map(Number) : [],
          };
        });
      return { tag: call.slice(0, at), rows };
    });
}

/**
 * The index of the first call at which the statement (`stmtXids`) already held the row at
 * `oid`/`block`/`offset`, or undefined when it locked the row after every call.
 */
export function lockedBeforeCall(
  calls: AdvisoryCall[],
  stmtXids: ReadonlySet<number>,
  t: { oid: number; block: number; offset: number },
): number | undefined {
  const place = `${t.oid}:${t.block}:${t.offset}`;
  const i = calls.findIndex((c) =>
    c.rows.some((r) => r.place === place && (stmtXids.has(r.xmax) || r.members.some((m) => stmtXids.has(m)))),
  );
  return i < 0 ? undefined : i;
}

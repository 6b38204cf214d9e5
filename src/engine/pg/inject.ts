/**
 * Errors caught by a PL/pgSQL EXCEPTION block while the statement waited.
 *
 * A block with an EXCEPTION clause runs its body in a subtransaction. When a statement in that
 * body waits for a row and the wait ends in an error (the deadlock detector picks it as the
 * victim, lock_timeout or statement_timeout fires, a cancel arrives), PostgreSQL raises the error
 * inside the block: a handler for its SQLSTATE catches it, the subtransaction rolls back (with the
 * rows the body wrote and the locks it took) and the function goes on in the handler. PGlite never
 * waits, so the engine makes it take the same path: the statement's dry runs carry a BEFORE ROW
 * trigger on the waited row's table that raises that very error (SQLSTATE, message, DETAIL,
 * HINT) the first time the statement reaches the row. Whether the handler caught it is then
 * PGlite's answer. The trigger also sends a marker notice, which the dry run strips, so the engine
 * knows the error was raised at all (a row locked by SELECT … FOR UPDATE fires no trigger).
 */
import type { Injection } from '../model/log';
import type { TupleId } from '../model/rowlocks';
import type { PgMessage, RawResult } from '../types';
import { AFTER_MARK, ROW_MARK, ROW_PASS, type RowMarkFunctions } from '../epq';
import { INTERNAL_SCHEMA } from './names';
import { ident, literal } from './replay';

/**
 * PL/pgSQL of a BEFORE UPDATE OR DELETE trigger that sets `hit` when the row it fires for is the
 * version at the trigger's argument (a ctid): a trigger cannot read OLD's ctid, so the row there
 * is compared with OLD.
 */
const ROW_HIT = `  EXECUTE pg_catalog.format('SELECT EXISTS (SELECT 1 FROM ONLY %s t WHERE t.ctid = %L::tid AND t::text = $1::text)', TG_RELID::regclass, TG_ARGV[0]) INTO hit USING OLD;
`;

/** The marker notice's text, followed by the injection's number. */
const MARKER = 'lockstep-injected';

/**
 * SQL run inside a dry run (rolled back with it) that raises each injection's error the first
 * time the statement updates or deletes its row. A sequence counts the hits: nextval is not
 * rolled back with the block's subtransaction, so a handler that tries again reaches the row
 * without the error (and the engine's lock model decides whether it waits again).
 */
export function injectionSql(injections: readonly Injection[], rel: (name: string) => string = ident): { sql: string; count: number } {
  const parts = injections.map((inj, i) => {
    const fn = `${INTERNAL_SCHEMA}.inject_${i}`;
    const seq = `${INTERNAL_SCHEMA}.inject_seq_${i}`;
    const trigger = `" lockstep_inject_${i}"`;
    const table = rel(inj.tuple.relation);
    const e = inj.error;
    const using = [
      `ERRCODE = ${literal(e.sqlstate)}`,
      `MESSAGE = ${literal(e.message)}`,
      ...(e.detail !== undefined ? [`DETAIL = ${literal(e.detail)}`] : []),
      ...(e.hint !== undefined ? [`HINT = ${literal(e.hint)}`] : []),
    ].join(', ');
    return `CREATE SEQUENCE ${seq};
CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SET client_min_messages = notice AS $lockstep$
DECLARE hit boolean;
BEGIN
${ROW_HIT}  IF hit AND pg_catalog.nextval(${literal(seq)}) = 1 THEN
    RAISE NOTICE '${MARKER} ${i}';
    RAISE EXCEPTION USING ${using};
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $lockstep$;
CREATE TRIGGER ${trigger} BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}('(${inj.tuple.block},${inj.tuple.offset})');
ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger};
`;
  });
  return { sql: parts.join(''), count: 4 * injections.length };
}

/** Takes the injections' marker notices out of a dry run's result; returns how many there were. */
export function takeInjectionMarkers(raw: RawResult): number {
  const before = raw.notices.length;
  raw.notices = raw.notices.filter((n) => !(n.sqlstate === '00000' && n.message.startsWith(`${MARKER} `)));
  return before - raw.notices.length;
}

/** Whether a dry run's error is the injected one itself, not caught by any handler. */
export function isInjectedError(raw: RawResult, error: PgMessage): boolean {
  return raw.error?.sqlstate === error.sqlstate && raw.error.message === error.message;
}

/** The wait marker's notice text. */
const WAIT_MARK = 'lockstep-wait-mark';

/**
 * SQL run inside a dry run (rolled back with it) that sends a marker notice the first time the
 * statement reaches the given row of an UPDATE or DELETE: where PostgreSQL would wait for it.
 * PostgreSQL locks the row (and waits) after the row passed the statement's quals and before any
 * BEFORE ROW trigger runs (GetTupleForTrigger), so a BEFORE trigger named to sort before every
 * other marks that point: the notices before the marker reached the client before the wait.
 */
export function waitMarkSql(t: TupleId, rel: (name: string) => string = ident): { sql: string; count: number } {
  const fn = `${INTERNAL_SCHEMA}.wait_mark`;
  const seq = `${INTERNAL_SCHEMA}.wait_mark_seq`;
  // Two leading spaces: it fires before the injected errors' triggers (one) and user triggers.
  const trigger = `"  lockstep_wait_mark"`;
  const table = rel(t.relation);
  return {
    sql: `CREATE SEQUENCE ${seq};
CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SET client_min_messages = notice AS $lockstep$
DECLARE hit boolean;
BEGIN
${ROW_HIT}  IF hit AND pg_catalog.nextval(${literal(seq)}) = 1 THEN
    RAISE NOTICE '${WAIT_MARK}';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $lockstep$;
CREATE TRIGGER ${trigger} BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}('(${t.block},${t.offset})');
ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger};
`,
    count: 4,
  };
}

const isMark = (n: PgMessage) => n.sqlstate === '00000' && n.message === WAIT_MARK;

/** A marked dry run's notices up to its first marker; undefined when no marker was sent (the statement never reached the row). */
export function noticesBeforeMark(notices: readonly PgMessage[]): PgMessage[] | undefined {
  const at = notices.findIndex(isMark);
  return at < 0 ? undefined : notices.slice(0, at);
}

/**
 * SQL run inside a dry run (rolled back with it) that sends the wait marker for each
 * row an INSERT into `relation` forms, after the row's BEFORE triggers ran: PostgreSQL checks
 * the row's unique keys (and ON CONFLICT's arbiters) there, where it waits on a duplicate key.
 * The trigger's name sorts after every other (U+10FFFF), so it runs last.
 */
export function insertMarkSql(relation: string, rel: (name: string) => string = ident): { sql: string; count: number } {
  const fn = `${INTERNAL_SCHEMA}.insert_mark`;
  const trigger = `"\u{10FFFF}lockstep_insert_mark"`;
  const table = rel(relation);
  return {
    sql: `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SET client_min_messages = notice AS $lockstep$
BEGIN
  RAISE NOTICE '${WAIT_MARK}';
  RETURN NEW;
END $lockstep$;
CREATE TRIGGER ${trigger} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}();
ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger};
`,
    count: 3,
  };
}

/** How many wait markers a marked dry run sent. */
export function markCount(notices: readonly PgMessage[]): number {
  return notices.filter(isMark).length;
}

/** The functions a row-marked EvalPlanQual re-run calls (epq.ts, restrictToTuples). */
export const ROW_MARK_FUNCTIONS: RowMarkFunctions = { row: `${INTERNAL_SCHEMA}.row_mark`, pass: `${INTERNAL_SCHEMA}.row_pass` };

/**
 * SQL run inside a dry run (rolled back with it) for a row-marked re-run of an UPDATE or DELETE
 * on `table`: the marker functions its WHERE clause calls, and AFTER triggers named to fire
 * before every other that mark where each AFTER event (and the statement's) begins.
 */
export function rowMarkSql(table: string, rel: (name: string) => string = ident): { sql: string; count: number } {
  const t = rel(table);
  const fn = (name: string, mark: string) =>
    `CREATE FUNCTION ${INTERNAL_SCHEMA}.${name}(tid) RETURNS boolean LANGUAGE plpgsql VOLATILE SET client_min_messages = notice AS $lockstep$
BEGIN
  RAISE NOTICE '${mark} %', $1;
  RETURN true;
END $lockstep$;
`;
  return {
    sql: `${fn('row_mark', ROW_MARK)}${fn('row_pass', ROW_PASS)}CREATE FUNCTION ${INTERNAL_SCHEMA}.after_mark() RETURNS trigger LANGUAGE plpgsql SET client_min_messages = notice AS $lockstep$
BEGIN
  RAISE NOTICE '${AFTER_MARK} %', pg_catalog.lower(TG_LEVEL);
  RETURN NULL;
END $lockstep$;
CREATE TRIGGER "  lockstep_after_row" AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION ${INTERNAL_SCHEMA}.after_mark();
ALTER TABLE ${t} ENABLE ALWAYS TRIGGER "  lockstep_after_row";
CREATE TRIGGER "  lockstep_after_stmt" AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ${INTERNAL_SCHEMA}.after_mark();
ALTER TABLE ${t} ENABLE ALWAYS TRIGGER "  lockstep_after_stmt";
`,
    count: 7,
  };
}

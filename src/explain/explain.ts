/**
 * From a parsed deadlock report and its statements' facts to an explanation: the processes of the
 * cycle (named A, B, … from the victim on), each edge in plain-word data, the likely cause with the
 * lesson that teaches its fix, and what was not understood. Words are the UI's (both languages);
 * this module returns codes and values.
 */
import type { ContextTuple, DeadlockReport, LockObject, ParsedLog } from './parse';
import { reportCycle } from './parse';
import { namedRows, type StatementFacts } from './statements';

/** A statement as the parser saw it: its facts, or why there are none. */
export type StatementReading =
  | { ok: true; facts: StatementFacts | null }
  /** 'syntax': the parser rejects it (a truncated line, say); 'hidden': PostgreSQL did not show it. */
  | { ok: false; problem: 'syntax' | 'hidden'; message?: string };

/** One member of the cycle. */
export interface CycleProcess {
  name: string;
  pid: number;
  victim: boolean;
  sql?: string;
  reading?: StatementReading;
}

/** What an edge means, as data the UI words. */
export type EdgeMeaning =
  /** Waits for a transaction to end: it changed, inserted or locked a row the waiter needs. */
  | { kind: 'row'; insert: boolean; tuple?: ContextTuple }
  /** Queued for a row's tuple lock behind a process that is itself after that row. */
  | { kind: 'tuple-queue'; block: number; offset: number; relation: number }
  | { kind: 'relation'; relation: number; table?: string }
  | { kind: 'advisory'; key: string }
  | { kind: 'other'; object: string };

/** One "waits for" line of the report. */
export interface CycleEdge {
  from: string;
  to: string;
  mode: string;
  object: LockObject;
  objectText: string;
  meaning: EdgeMeaning;
}

/** The patterns the course teaches, each with its lesson. */
export type CauseKind = 'opposite-order' | 'fk-parent' | 'upsert-order' | 'lock-upgrade' | 'ddl' | 'advisory' | 'unknown';

/** The lesson that teaches the fix of each cause. */
export const CAUSE_LESSON: Readonly<Record<CauseKind, string>> = {
  'opposite-order': 'ordered-locking',
  'fk-parent': 'fk-key-share',
  'upsert-order': 'unique-insert-deadlock',
  'lock-upgrade': 'implicit-deadlocks',
  ddl: 'migration-lock-queue',
  advisory: 'advisory-locks',
  unknown: 'read-the-server-log',
};

/** The likely cause and the rows or tables it is about. */
export interface Cause {
  kind: CauseKind;
  table?: string;
  /** Key values named by the statements, in process order ("1", "2"). */
  keys: string[];
}

/** What could not be read; each is worded by the UI. */
export type Gap =
  | { code: 'no-statements' }
  | { code: 'open-cycle'; pids: number[] }
  | { code: 'statement-syntax'; name: string; pid: number; message: string }
  | { code: 'statement-hidden'; name: string; pid: number }
  | { code: 'statement-missing'; name: string; pid: number }
  /** The statement has $n parameters, whose values the report does not show. */
  | { code: 'statement-params'; name: string; pid: number };

/** A whole explanation of one report. */
export interface Explanation {
  report: DeadlockReport;
  processes: CycleProcess[];
  edges: CycleEdge[];
  cause: Cause;
  gaps: Gap[];
}

/** Session names in cycle order: A, B, … (then P27, P28 for very long cycles). */
export function processName(i: number): string {
  return i < 26 ? String.fromCharCode(65 + i) : `P${i + 1}`;
}

/** PostgreSQL's placeholders when it cannot show another backend's query (pgstat_get_backend_current_activity). */
const HIDDEN_QUERY = /^<(insufficient privilege|backend information not available|command string not enabled)>$/;

/** The statements of a report that need the SQL parser, by pid (placeholders left out). */
export function statementsToParse(r: DeadlockReport): { pid: number; sql: string }[] {
  return r.statements.filter((s) => !HIDDEN_QUERY.test(s.sql.trim()));
}

/** The explanation of a report, given the parser's reading of its statements (by pid). */
export function explainReport(report: DeadlockReport, readings: ReadonlyMap<number, StatementReading>): Explanation {
  const gaps: Gap[] = [];
  const cycle = reportCycle(report);
  // Without a closed cycle the members are still worth showing, in the order the lines name them.
  const order = cycle ?? [...new Set(report.waits.flatMap((w) => [w.pid, w.blockedBy]))];
  if (!cycle && report.waits.length) {
    const waiting = new Set(report.waits.map((w) => w.pid));
    gaps.push({ code: 'open-cycle', pids: report.waits.map((w) => w.blockedBy).filter((p) => !waiting.has(p)) });
  }
  const names = new Map(order.map((pid, i) => [pid, processName(i)]));
  const sqlOf = new Map(report.statements.map((s) => [s.pid, s.sql]));
  if (!report.statements.length) gaps.push({ code: 'no-statements' });
  const processes: CycleProcess[] = order.map((pid) => {
    const name = names.get(pid)!;
    const sql = sqlOf.get(pid);
    let reading: StatementReading | undefined;
    if (sql !== undefined && HIDDEN_QUERY.test(sql.trim())) {
      reading = { ok: false, problem: 'hidden' };
      gaps.push({ code: 'statement-hidden', name, pid });
    } else if (sql !== undefined) {
      reading = readings.get(pid);
      if (reading && !reading.ok) gaps.push({ code: 'statement-syntax', name, pid, message: reading.message ?? '' });
      if (reading?.ok && reading.facts?.params) gaps.push({ code: 'statement-params', name, pid });
    } else if (report.statements.length) gaps.push({ code: 'statement-missing', name, pid });
    return { name, pid, victim: pid === report.victim, ...(sql !== undefined ? { sql } : {}), ...(reading ? { reading } : {}) };
  });
  const factsOf = (pid: number) => {
    const r = processes.find((p) => p.pid === pid)?.reading;
    return r?.ok ? r.facts : null;
  };
  const edges: CycleEdge[] = report.waits
    .filter((w) => names.has(w.pid) && names.has(w.blockedBy))
    .map((w) => ({
      from: names.get(w.pid)!,
      to: names.get(w.blockedBy)!,
      mode: w.mode,
      object: w.object,
      objectText: w.objectText,
      meaning: edgeMeaning(w.object, factsOf(w.pid), w.pid === report.victim ? report.tuple : undefined),
    }));
  return { report, processes, edges, cause: likelyCause(report, processes), gaps };
}

function edgeMeaning(o: LockObject, facts: StatementFacts | null, tuple: ContextTuple | undefined): EdgeMeaning {
  switch (o.kind) {
    case 'transaction':
    case 'speculative':
      return { kind: 'row', insert: facts?.kind === 'insert', ...(tuple ? { tuple } : {}) };
    case 'tuple':
      return { kind: 'tuple-queue', block: o.block, offset: o.offset, relation: o.relation };
    case 'relation':
    case 'extend':
    case 'page':
      // The OID names no table; a statement on exactly one table is the likely one.
      return { kind: 'relation', relation: o.relation, ...(facts?.tables.length === 1 ? { table: facts.tables[0] } : {}) };
    case 'advisory':
      return { kind: 'advisory', key: advisoryKey(o) };
    default:
      return { kind: 'other', object: o.kind === 'virtualxid' ? `virtual transaction ${o.vxid}` : o.text };
  }
}

/** The key pg_advisory_lock was called with: one bigint (field4 = 1) or two ints (field4 = 2). */
export function advisoryKey(o: Extract<LockObject, { kind: 'advisory' }>): string {
  if (o.field4 === 2) return `${o.key1 | 0}, ${o.key2 | 0}`;
  return String(BigInt.asIntN(64, (BigInt(o.key1) << 32n) | BigInt(o.key2)));
}

/** The pattern behind the cycle, from the lock objects and the statements. */
export function likelyCause(report: DeadlockReport, processes: readonly CycleProcess[]): Cause {
  const facts = processes.map((p) => (p.reading?.ok ? p.reading.facts : null));
  const known = facts.filter((f): f is StatementFacts => f !== null);
  const rows = known.flatMap((f) => namedRows(f));
  const keys = [...new Set(rows.map((r) => r.value.sql))];
  const table = rows[0]?.table ?? known[0]?.tables[0];
  const base = { ...(table ? { table } : {}), keys };
  if (report.waits.some((w) => w.object.kind === 'advisory')) return { kind: 'advisory', ...base };
  if (known.some((f) => f.kind === 'ddl' || f.kind === 'lock') || report.waits.some((w) => w.object.kind === 'relation'))
    return { kind: 'ddl', ...base };
  if (/FOR KEY SHARE OF/.test(report.context ?? '')) return { kind: 'fk-parent', ...base };
  if (known.some((f) => f.kind === 'insert' && (f.insertRows.length > 1 || f.onConflict))) return { kind: 'upsert-order', ...base };
  const perProcess = known.map((f) =>
    namedRows(f)
      .map((r) => `${r.table}.${r.column}=${r.value.sql}`)
      .join(','),
  );
  if (known.length >= 2 && perProcess[0] !== '' && perProcess.every((r) => r === perProcess[0])) return { kind: 'lock-upgrade', ...base };
  if (known.length >= 2 && rows.length >= 2 && new Set(perProcess).size === perProcess.length) return { kind: 'opposite-order', ...base };
  return { kind: 'unknown', ...base };
}

/** Every report of a paste explained, in paste order. */
export function explainAll(log: ParsedLog, readings: ReadonlyMap<number, StatementReading>[]): Explanation[] {
  return log.reports.map((r, i) => explainReport(r, readings[i] ?? new Map()));
}

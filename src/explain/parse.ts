/**
 * Reads a pasted PostgreSQL log excerpt: deadlock reports (deadlock.c DeadLockReport: an ERROR
 * "deadlock detected" whose DETAIL has one "Process N waits for MODE on OBJECT; blocked by process M."
 * line per edge of the cycle and, in the server's copy, one "Process N: query" line per member),
 * log_lock_waits lines (proc.c ProcSleep) and the one-line forms client drivers log. Any
 * log_line_prefix is accepted: the field keyword ("ERROR:", "DETAIL:", …) splits prefix from text,
 * and the prefix is searched for a pid. Pure: no SQL parsing here (see statements.ts).
 */

/** What a DescribeLockTag text (lmgr.c) names. */
export type LockObject =
  | { kind: 'transaction'; xid: number }
  | { kind: 'virtualxid'; vxid: string }
  | { kind: 'relation'; relation: number; database: number }
  | { kind: 'extend'; relation: number; database: number }
  | { kind: 'page'; page: number; relation: number; database: number }
  | { kind: 'tuple'; block: number; offset: number; relation: number; database: number }
  | { kind: 'speculative'; token: number; xid: number }
  | { kind: 'advisory'; database: number; key1: number; key2: number; field4: number }
  | { kind: 'object'; text: string };

/** One "Process N waits for MODE on OBJECT; blocked by process M." line. */
export interface WaitLine {
  pid: number;
  mode: string;
  object: LockObject;
  /** The object as PostgreSQL worded it. */
  objectText: string;
  blockedBy: number;
}

/** The row a CONTEXT line names: `while updating tuple (0,1) in relation "accounts"`. */
export interface ContextTuple {
  action: string;
  block: number;
  offset: number;
  relation: string;
}

/** One deadlock report as the log shows it. */
export interface DeadlockReport {
  /** The process that got the ERROR: the pid in the line prefix, else the first DETAIL line's (DeadLockReport starts at MyProc). */
  victim: number | null;
  /** Where the victim came from: the prefix's pid, or the first wait line. */
  victimFrom: 'prefix' | 'detail' | null;
  waits: WaitLine[];
  /** Each process's query ("Process N: …" lines; only the server's copy has them). */
  statements: { pid: number; sql: string }[];
  hint?: string;
  context?: string;
  tuple?: ContextTuple;
  /** The STATEMENT field: the victim's whole query string. */
  statement?: string;
  /** The timestamp of the log line, as written. */
  at?: string;
  /** user@database and application name, when the prefix has them. */
  user?: string;
  database?: string;
  application?: string;
  /** 'server': a log with a prefix or the "Process N:" lines; 'client': an error text an application printed. */
  source: 'server' | 'client';
  /** 1-based line of the ERROR in the paste. */
  line: number;
}

/** A log_lock_waits line ("process N still waiting for … after … ms" and its siblings). */
export interface LockWaitLine {
  pid: number;
  event: 'still-waiting' | 'acquired' | 'detected-deadlock' | 'avoided-deadlock';
  mode: string;
  object: LockObject;
  objectText: string;
  afterMs: number;
  holders: number[];
  queue: number[];
  tuple?: ContextTuple;
  statement?: string;
  line: number;
}

/** Another database's deadlock message, recognised so that it can be named. */
export type ForeignDatabase = 'mysql' | 'sqlserver' | 'oracle' | 'sqlite' | 'db2';

/** A deadlock the paste mentions without a report: a client one-liner, or an ERROR whose DETAIL is missing. */
export interface BareDeadlock {
  line: number;
  text: string;
  source: 'server' | 'client';
}

/** Everything understood in a paste. */
export interface ParsedLog {
  reports: DeadlockReport[];
  lockWaits: LockWaitLine[];
  /** Deadlock errors with no DETAIL to read (pgx/pq one-liners, a report cut before its DETAIL). */
  bare: BareDeadlock[];
  foreign: { db: ForeignDatabase; line: number; text: string }[];
  /** Non-empty lines in the paste. */
  lines: number;
  /** Lines some message above was read from. */
  usedLines: number;
}

const FIELD_KEYWORDS = [
  'LOG',
  'ERROR',
  'FATAL',
  'PANIC',
  'WARNING',
  'NOTICE',
  'INFO',
  'DEBUG[1-5]?',
  'DETAIL',
  'HINT',
  'CONTEXT',
  'STATEMENT',
  'QUERY',
  'LOCATION',
];
/** JDBC's ServerErrorMessage words its fields this way; "Where" is CONTEXT. */
const JDBC_FIELDS: Record<string, string> = { Detail: 'DETAIL', Hint: 'HINT', Where: 'CONTEXT', Position: 'LOCATION' };
const FIELD_RE = new RegExp(`^(|.*?[\\s:\\]\\)>|,])(${FIELD_KEYWORDS.join('|')}|Detail|Hint|Where)(?:\\s*\\(\\w+\\))?:[ \\t]+(.*)$`);
const PRIMARY = new Set(['LOG', 'ERROR', 'FATAL', 'PANIC', 'WARNING', 'NOTICE', 'INFO']);

const WAIT_RE = /Process (\d+) waits for (\w+) on (.+?); blocked by process (\d+)\.?$/;
const STATEMENT_RE = /^Process (\d+): ?(.*)$/;
const TUPLE_CONTEXT_RE = /while ([a-z ]+?) tuple \((\d+),(\d+)\) in relation "((?:[^"]|"")+)"/;
const LOCK_WAIT_RE =
  /^process (\d+) (still waiting for|acquired|detected deadlock while waiting for|avoided deadlock for) (\w+) on (.+?)(?: by rearranging queue order)? after ([\d.]+) ms/;
const HOLDERS_RE = /Process(?:es)? holding the lock: ([\d, ]*)[.,] Wait queue: ([\d, ]*)\./;
const TIMESTAMP_RE = /\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: ?(?:[A-Z]{2,5}|[+-]\d\d(?::?\d\d)?|Z))?/;

/** lmgr.c DescribeLockTag's texts back into data; anything else is kept as text. */
export function parseLockObject(text: string): LockObject {
  const t = text.trim();
  let m: RegExpExecArray | null;
  if ((m = /^transaction (\d+)$/.exec(t))) return { kind: 'transaction', xid: Number(m[1]) };
  if ((m = /^virtual transaction (-?\d+\/\d+)$/.exec(t))) return { kind: 'virtualxid', vxid: m[1] };
  if ((m = /^relation (\d+) of database (\d+)$/.exec(t))) return { kind: 'relation', relation: Number(m[1]), database: Number(m[2]) };
  if ((m = /^extension of relation (\d+) of database (\d+)$/.exec(t)))
    return { kind: 'extend', relation: Number(m[1]), database: Number(m[2]) };
  if ((m = /^page (\d+) of relation (\d+) of database (\d+)$/.exec(t)))
    return { kind: 'page', page: Number(m[1]), relation: Number(m[2]), database: Number(m[3]) };
  if ((m = /^tuple \((\d+),(\d+)\) of relation (\d+) of database (\d+)$/.exec(t)))
    return { kind: 'tuple', block: Number(m[1]), offset: Number(m[2]), relation: Number(m[3]), database: Number(m[4]) };
  if ((m = /^speculative token (\d+) of transaction (\d+)$/.exec(t)))
    return { kind: 'speculative', token: Number(m[1]), xid: Number(m[2]) };
  if ((m = /^advisory lock \[(\d+),(\d+),(\d+),(\d+)\]$/.exec(t)))
    return { kind: 'advisory', database: Number(m[1]), key1: Number(m[2]), key2: Number(m[3]), field4: Number(m[4]) };
  return { kind: 'object', text: t };
}

/** The CONTEXT's row, if it names one. */
export function parseContextTuple(context: string | undefined): ContextTuple | undefined {
  const m = context ? TUPLE_CONTEXT_RE.exec(context) : null;
  return m ? { action: m[1], block: Number(m[2]), offset: Number(m[3]), relation: m[4].replace(/""/g, '"') } : undefined;
}

/** The pid a log_line_prefix shows: `postgres[123]`, `[123]`, `[123-1]`, `pid=123`. */
export function prefixPid(prefix: string): number | null {
  const m =
    /\b(?:postgres|postmaster|postgresql)\[(\d+)\]/.exec(prefix) ??
    /\bpid[=:]\s*(\d+)/i.exec(prefix) ??
    /\[(\d+)\](?!\s*\[?\d)/.exec(prefix.replace(/\[\d+-\d+\]/g, '')) ??
    /\[(\d+)-\d+\]/.exec(prefix);
  return m ? Number(m[1]) : null;
}

/** user@database and application name from a prefix such as `app@shop` or `user=app,db=shop,app=api`. */
function prefixWho(prefix: string): { user?: string; database?: string; application?: string } {
  const out: { user?: string; database?: string; application?: string } = {};
  const at = /(?:^|[\s:\]])([\w$-]+)@([\w$-]+)(?=[\s:[\]]|$)/.exec(prefix);
  if (at) {
    out.user = at[1];
    out.database = at[2];
  }
  const user = /\buser=([^,\s]+)/.exec(prefix);
  const db = /\b(?:db|database)=([^,\s]+)/.exec(prefix);
  const app = /\b(?:app|application_name|application)=([^,\s\]]+)/.exec(prefix);
  if (user && user[1] !== '[unknown]') out.user = user[1];
  if (db && db[1] !== '[unknown]') out.database = db[1];
  if (app && app[1] !== '[unknown]') out.application = app[1];
  return out;
}

/** One field of a message: the keyword, its text (continuation lines joined with "\n") and its prefix. */
interface Field {
  keyword: string;
  text: string;
  prefix: string;
  pid: number | null;
  line: number;
  lines: number;
}

/** A message: its primary field (LOG, ERROR, …) and the fields after it. */
interface Message {
  primary: Field;
  fields: Field[];
}

/** Splits lines into fields: a line with a field keyword starts one, any other line continues the last. */
function fields(lines: string[]): Field[] {
  const out: Field[] = [];
  lines.forEach((raw, i) => {
    // Syslog writes a tab as #011 and numbers a message's lines [n-1], [n-2], …
    const line = raw.replace(/#011/g, '\t').replace(/\r$/, '');
    if (line.trim() === '') return;
    // An indented line continues a field, except JDBC's indented "  Detail: …" fields.
    const jdbc = /^\s+(?:Detail|Hint|Where|Position): /.test(line);
    const continuation = !jdbc && (/^\s/.test(line) || /\[\d+-(?:[2-9]|\d\d+)\]\s*\t/.test(line));
    const m = continuation ? null : FIELD_RE.exec(jdbc ? line.trimStart() : line);
    if (m) {
      const keyword = JDBC_FIELDS[m[2]] ?? m[2];
      out.push({ keyword, text: m[3].trimEnd(), prefix: m[1], pid: prefixPid(m[1]), line: i + 1, lines: 1 });
      return;
    }
    const last = out.at(-1);
    const text = line.replace(/^.*\[\d+-\d+\]\s*/, '').trim();
    if (last) {
      last.text += `\n${text}`;
      last.lines++;
    } else {
      out.push({ keyword: '', text, prefix: '', pid: null, line: i + 1, lines: 1 });
    }
  });
  return out;
}

/** Groups fields into messages; a secondary field joins the latest primary of the same pid (logs of busy servers interleave). */
function messages(all: Field[]): Message[] {
  const out: Message[] = [];
  for (const f of all) {
    if (PRIMARY.has(f.keyword) || f.keyword === '') {
      out.push({ primary: f, fields: [] });
      continue;
    }
    const owner = [...out].reverse().find((m) => f.pid === null || m.primary.pid === null || m.primary.pid === f.pid);
    if (owner) owner.fields.push(f);
    else out.push({ primary: f, fields: [] });
  }
  return out;
}

const field = (m: Message, keyword: string) => m.fields.find((f) => f.keyword === keyword)?.text;

/** Reads the DETAIL of a deadlock report: wait lines, then "Process N: query" lines (multi-line queries continue). */
function readDetail(detail: string): { waits: WaitLine[]; statements: { pid: number; sql: string }[] } {
  const waits: WaitLine[] = [];
  const statements: { pid: number; sql: string }[] = [];
  for (const line of detail.split('\n')) {
    const w = WAIT_RE.exec(line.trim());
    if (w) {
      waits.push({ pid: Number(w[1]), mode: w[2], object: parseLockObject(w[3]), objectText: w[3], blockedBy: Number(w[4]) });
      continue;
    }
    const s = STATEMENT_RE.exec(line.trim());
    if (s) statements.push({ pid: Number(s[1]), sql: s[2] });
    else if (statements.length) statements[statements.length - 1].sql += `\n${line}`;
  }
  for (const s of statements) s.sql = s.sql.trim();
  return { waits, statements };
}

const DEADLOCK_TEXT = /deadlock detected(?! while waiting)/i;
const CLIENT_MARK = /\(SQLSTATE 40P01\)|\bpq: |DeadlockDetected|PSQLException|SQLSTATE\[40P01\]|\bSqlState: 40P01|\b40P01\b/;

const FOREIGN: { db: ForeignDatabase; re: RegExp }[] = [
  { db: 'mysql', re: /Deadlock found when trying to get lock|\bERROR 1213\b|LATEST DETECTED DEADLOCK/i },
  { db: 'sqlserver', re: /was deadlocked on (?:lock|communication buffer|thread|lock \| communication buffer) resources|\bMsg 1205\b/i },
  { db: 'oracle', re: /\bORA-00060\b/ },
  { db: 'sqlite', re: /\bSQLITE_BUSY\b|database is locked/ },
  { db: 'db2', re: /SQLCODE=-911|SQLSTATE=40001.*DB2|\bDB2 SQL Error\b/i },
];

/** Everything this module understands in a paste. */
export function parseLog(text: string): ParsedLog {
  const lines = text.split('\n');
  const all = fields(lines);
  const msgs = messages(all);
  const reports: DeadlockReport[] = [];
  const lockWaits: LockWaitLine[] = [];
  const bare: BareDeadlock[] = [];
  const used = new Set<number>();
  const use = (m: Message) => {
    for (const f of [m.primary, ...m.fields]) for (let k = 0; k < f.lines; k++) used.add(f.line + k);
  };

  for (const m of msgs) {
    const p = m.primary;
    const first = p.text.split('\n')[0];
    if ((p.keyword === 'ERROR' || p.keyword === '') && DEADLOCK_TEXT.test(first)) {
      const detail = field(m, 'DETAIL');
      const client = CLIENT_MARK.test(p.prefix + first) && !/sql_error_code = 40P01/.test(p.prefix);
      if (!detail) {
        bare.push({ line: p.line, text: (p.prefix + first).trim(), source: client || p.keyword === '' ? 'client' : 'server' });
        use(m);
        continue;
      }
      const { waits, statements } = readDetail(detail);
      const context = field(m, 'CONTEXT');
      const fromPrefix = p.pid;
      const at = TIMESTAMP_RE.exec(p.prefix)?.[0];
      reports.push({
        victim: fromPrefix ?? waits[0]?.pid ?? null,
        victimFrom: fromPrefix !== null ? 'prefix' : waits.length ? 'detail' : null,
        waits,
        statements,
        hint: field(m, 'HINT'),
        context,
        tuple: parseContextTuple(context),
        statement: field(m, 'STATEMENT'),
        ...(at ? { at } : {}),
        ...prefixWho(p.prefix),
        source: statements.length || p.prefix.trim() !== '' ? (client && !statements.length ? 'client' : 'server') : 'client',
        line: p.line,
      });
      use(m);
      continue;
    }
    const lw = p.keyword === 'LOG' ? LOCK_WAIT_RE.exec(first) : null;
    if (lw) {
      const holders = HOLDERS_RE.exec(field(m, 'DETAIL') ?? '');
      const list = (s: string | undefined) =>
        (s ?? '')
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
          .map(Number);
      const event = lw[2].startsWith('still')
        ? 'still-waiting'
        : lw[2] === 'acquired'
          ? 'acquired'
          : lw[2].startsWith('detected')
            ? 'detected-deadlock'
            : 'avoided-deadlock';
      lockWaits.push({
        pid: Number(lw[1]),
        event,
        mode: lw[3],
        object: parseLockObject(lw[4]),
        objectText: lw[4],
        afterMs: Number(lw[5]),
        holders: list(holders?.[1]),
        queue: list(holders?.[2]),
        tuple: parseContextTuple(field(m, 'CONTEXT')),
        statement: field(m, 'STATEMENT'),
        line: p.line,
      });
      use(m);
    }
  }

  // Client one-liners that carry no field keyword at all ("pq: deadlock detected").
  lines.forEach((line, i) => {
    if (used.has(i + 1)) return;
    if (/\bpq: deadlock detected\b/.test(line) || (/deadlock detected/i.test(line) && CLIENT_MARK.test(line))) {
      bare.push({ line: i + 1, text: line.trim(), source: 'client' });
      used.add(i + 1);
    }
  });

  const foreign: ParsedLog['foreign'] = [];
  lines.forEach((line, i) => {
    const hit = FOREIGN.find((f) => f.re.test(line));
    if (hit && !used.has(i + 1)) foreign.push({ db: hit.db, line: i + 1, text: line.trim() });
  });

  return {
    reports,
    lockWaits,
    bare: bare.sort((a, b) => a.line - b.line),
    foreign,
    lines: lines.filter((l) => l.trim() !== '').length,
    usedLines: [...used].filter((n) => (lines[n - 1] ?? '').trim() !== '').length,
  };
}

/**
 * The cycle of a report as pids in wait order, starting at the victim: each waits for the next.
 * Null when the wait lines do not close a cycle (a truncated paste).
 */
export function reportCycle(r: DeadlockReport): number[] | null {
  if (!r.waits.length) return null;
  const next = new Map<number, number>();
  for (const w of r.waits) if (!next.has(w.pid)) next.set(w.pid, w.blockedBy);
  const start = r.victim !== null && next.has(r.victim) ? r.victim : r.waits[0].pid;
  const out: number[] = [];
  for (let cur: number | undefined = start; cur !== undefined; cur = next.get(cur)) {
    if (out.includes(cur)) return cur === start ? out : null;
    out.push(cur);
  }
  return null;
}

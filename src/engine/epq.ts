/**
 * READ COMMITTED's EvalPlanQual, emulated. When a waiting UPDATE, DELETE or SELECT … FOR UPDATE
 * wakes up, PostgreSQL rechecks only the rows its scan originally found, on their newest
 * versions; rows that start matching only now, or were inserted meanwhile, are not picked up
 * (the docs' `DELETE FROM website WHERE hits = 10` example). The engine re-runs the statement
 * with its target restricted to those rows: the WHERE clause gains `AND target.ctid = ANY(…)`.
 *
 * The clause is placed with PostgreSQL's own tokenizer (libpg-query), never by guessing.
 */
import { parseSync, scanSync } from 'libpg-query';

const SELECT_TAIL = new Set(['GROUP', 'HAVING', 'WINDOW', 'ORDER', 'LIMIT', 'OFFSET', 'FETCH', 'FOR']);
const DML_TAIL = new Set(['RETURNING']);
const SET_OPS = new Set(['UNION', 'INTERSECT', 'EXCEPT']);

/** The statement's tokens (libpg-query's scanner, byte offsets) and a slice of its UTF-8 text; null when it does not scan. */
function scanned(sql: string): { bytes: Uint8Array; slice: (a: number, b: number) => string; tokens: SqlToken[] } | null {
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  try {
    const tokens = (scanSync(sql) as unknown as { tokens: SqlToken[] }).tokens;
    return { bytes, slice: (a, b) => dec.decode(bytes.slice(a, b)), tokens };
  } catch {
    return null;
  }
}

/**
 * The rows of `t` a re-run may see: one the scan found (`found`), one the session's own
 * transaction wrote (its xids, as pg_locks lists them in the dry run), and `older` (an `OR …`).
 */
function eligible(t: string, found: string, older = ''): string {
  return `(${found} OR ${t}.xmin::text::bigint IN (SELECT l.transactionid::text::bigint FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'transactionid')${older})`;
}

/**
 * The row versions a statement's snapshot saw, as a re-run with a new snapshot finds them: those
 * committed before its first run (`horizon`, a PGlite xid), and the newest versions of those a
 * committed update replaced since (`beyond`, epqKeys): PostgreSQL's scan met the old version and
 * followed its update chain to the newest (EvalPlanQual), which a new snapshot sees in its place.
 */
export interface SeenRows {
  horizon: number;
  beyond?: readonly string[];
}

/** ` OR …` for the rows `seen` names (a bare number: a horizon alone); empty without it. */
function seenClause(t: string, seen: number | SeenRows | undefined): string {
  if (seen === undefined) return '';
  const { horizon, beyond } = typeof seen === 'number' ? { horizon: seen, beyond: undefined } : seen;
  return ` OR ${t}.xmin::text::bigint < ${Math.trunc(horizon)}${beyond?.length ? ` OR ${keyMatch(t, beyond)}` : ''}`;
}

/** Whether a row of `t` is one of `keys`: ctids, or "oid:(block,offset)" for an inheritance family's rows (epqKey). */
function keyMatch(t: string, keys: readonly string[]): string {
  const list = `'{${keys.map((c) => `"${c}"`).join(',')}}'`;
  return keys.some((c) => c.includes(':'))
    ? `(${t}.tableoid::pg_catalog.int8::pg_catalog.text || ':' || ${t}.ctid::pg_catalog.text) = ANY(${list}::pg_catalog.text[])`
    : `${t}.ctid = ANY(${list}::tid[])`;
}

/** The statement with its target restricted to the given tuples, or null when it cannot be done safely. */
export function restrictToTuples(
  sql: string,
  verb: 'select' | 'update' | 'delete',
  target: string,
  ctids: string[],
  horizon?: number | SeenRows,
  ordered = false,
  marks?: RowMarkFunctions,
): string | null {
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  const tail = verb === 'select' ? SELECT_TAIL : DML_TAIL;
  const t = quote(target);
  let depth = 0;
  let where = -1;
  let end = bytes.length;
  // A locking SELECT's ORDER BY: the byte offset after its BY.
  let orderBy = -1;
  let limited = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const word = t.text.toUpperCase();
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0) {
      if (SET_OPS.has(word)) return null;
      if (word === 'WHERE' && where < 0) where = t.end;
      else if (tail.has(word) && t.start > Math.max(where, 0) && end === bytes.length) end = t.start;
      if (verb === 'select' && word === 'ORDER' && tokens[i + 1]?.text.toUpperCase() === 'BY' && orderBy < 0) orderBy = tokens[i + 1].end;
      if (verb === 'select' && (word === 'LIMIT' || word === 'FETCH' || word === 'OFFSET')) limited = true;
    }
  }
  // WHERE CURRENT OF resolves to the newest version of the cursor's row (TidRecheck): the row itself, followed.
  const currentOf = where >= 0 && /^current$/i.test(tokens.find((x) => x.start >= where)?.text ?? '');
  if (currentOf)
    return `${slice(0, where)} ${t}.ctid = ANY('{${ctids.map((c) => `"${c}"`).join(',')}}'::tid[]) ${slice(end, bytes.length)}`.trim();
  // Row versions the session created itself cannot have been changed by anyone else: they stay eligible.

  // With a horizon (the PGlite xid of the statement's first run), the rows its snapshot saw stay
  // eligible too: a scan that stopped early (LIMIT) goes on past the rows it had found, over the
  // rows its snapshot saw (the newest versions of those updated since); rows inserted later are not among them.
  const older = seenClause(t, horizon);
  const list = `'{${ctids.map((c) => `"${c}"`).join(',')}}'::tid[]`;
  // An inheritance parent's rows are keyed "oid:(block,offset)": a ctid alone names a row in each child.
  const qualified = ctids.some((c) => c.includes(':'));
  const found = qualified
    ? `(${t}.tableoid::pg_catalog.int8::pg_catalog.text || ':' || ${t}.ctid::pg_catalog.text) = ANY('{${ctids.map((c) => `"${c}"`).join(',')}}'::pg_catalog.text[])`
    : `${t}.ctid = ANY(${list})`;
  const restriction = eligible(t, found, older);
  // PostgreSQL's LockRows sits above the Sort: the rows were sorted on the values the statement's
  // snapshot saw, and EvalPlanQual rechecks only the WHERE clause of a row's newest version, so a
  // row keeps its place even when the update it waited for changed its sort key. The rows the
  // scan first found come first, in the order it locked them; the rest (past a LIMIT) follow in
  // the statement's own order. Only when `ctids` are all in that order (`ordered`): a row the
  // session had locked before took no new lock, so its place among them is not known.
  // Without ORDER BY the rows come in the scan's order, and a LIMIT stops the scan: PostgreSQL's
  // goes on from the row it waited for, the re-run's would meet that row's new version last and
  // stop before it. So the re-run sorts the found rows into the order the scan locked them, the
  // rest after them in their physical order (a sequential scan's).
  const tailSql = qualified
    ? slice(end, bytes.length)
    : ordered && orderBy >= 0
      ? `${slice(end, orderBy)} pg_catalog.array_position(${list}, ${t}.ctid),${slice(orderBy, bytes.length)}`
      : ordered && limited
        ? `ORDER BY pg_catalog.array_position(${list}, ${t}.ctid), ${t}.ctid ${slice(end, bytes.length)}`
        : slice(end, bytes.length);
  // Row marks (an UPDATE or DELETE whose quals or triggers raise notices): PostgreSQL's scan goes
  // on after the wait over the rows its snapshot saw, evaluating their quals (and raising their
  // notices) even where they do not match. The re-run evaluates the quals of every row older than
  // the statement (`horizon`) or found, marks each row's notices with its ctid, and keeps only the
  // found rows; a CASE keeps the planner from evaluating the restriction first.
  if (marks && where >= 0 && !qualified && horizon !== undefined && verb !== 'select') {
    const seen = `(${seenClause(t, horizon).slice(' OR '.length)} OR ${restriction})`;
    const quals = costOrdered(
      tokens.filter((x) => x.start >= where && x.end <= end && x.text !== ';'),
      slice,
    );
    const body = `CASE WHEN ${seen} AND ${marks.row}(${t}.ctid) THEN (${quals}) AND ${restriction} AND ${marks.pass}(${t}.ctid) ELSE false END`;
    return `${slice(0, where)} ${body} ${tailSql}`.trim();
  }
  if (where >= 0) return `${slice(0, where)} (${slice(where, end).trim()}) AND ${restriction} ${tailSql}`.trim();
  return `${slice(0, end).trimEnd()} WHERE ${restriction} ${tailSql}`.trim();
}

/**
 * The statement with the given rows of its target left out of its scan: under the statement's
 * kept snapshot, the rows a committed transaction deleted after it (heap_lock_tuple, heap_update
 * and heap_delete return TM_Deleted there, and READ COMMITTED passes over the row where
 * REPEATABLE READ fails). The scan goes on over the rest under the same snapshot, so a LIMIT takes
 * the next row. Keys are ctids, or "oid:(block,offset)" for an inheritance family's rows (epqKey).
 * Null when it cannot be done safely (a set operation, WHERE CURRENT OF).
 */
export function excludeTuples(sql: string, verb: 'select' | 'update' | 'delete', target: string, keys: string[]): string | null {
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  const tail = verb === 'select' ? SELECT_TAIL : DML_TAIL;
  const t = quote(target);
  let depth = 0;
  let where = -1;
  let end = bytes.length;
  for (const tok of tokens) {
    const word = tok.text.toUpperCase();
    if (tok.text === '(') depth++;
    else if (tok.text === ')') depth--;
    else if (depth === 0) {
      if (SET_OPS.has(word)) return null;
      if (word === 'WHERE' && where < 0) where = tok.end;
      else if (tail.has(word) && tok.start > Math.max(where, 0) && end === bytes.length) end = tok.start;
    }
  }
  if (where >= 0 && /^current$/i.test(tokens.find((x) => x.start >= where)?.text ?? '')) return null;
  const gone = keyMatch(t, keys);
  if (where >= 0) return `${slice(0, where)} (${slice(where, end).trim()}) AND NOT (${gone}) ${slice(end, bytes.length)}`.trim();
  return `${slice(0, end).trimEnd()} WHERE NOT (${gone}) ${slice(end, bytes.length)}`.trim();
}

/**
 * A query for the rows a locking SELECT's scan returns (before its LockRows): the target's table
 * OID and ctid for each, from its FROM list and WHERE clause, without ordering, limit or locking
 * clause. Run under the statement's snapshot, it names the rows whose quals the snapshot's
 * versions pass, which PostgreSQL then locks (and rechecks, when a committed update replaced
 * them). Null when the statement is not such a SELECT.
 */
export function scanRowsSql(sql: string, target: string): string | null {
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  let depth = 0;
  let from = -1;
  let end = -1;
  for (const tok of tokens) {
    const word = tok.text.toUpperCase();
    if (tok.text === '(') depth++;
    else if (tok.text === ')') depth--;
    else if (depth === 0) {
      if (SET_OPS.has(word) || word === 'WITH') return null;
      if (word === 'FROM' && from < 0) from = tok.start;
      else if (from >= 0 && end < 0 && (SELECT_TAIL.has(word) || tok.text === ';')) end = tok.start;
    }
  }
  if (!/^select$/i.test(tokens[0]?.text ?? '') || from < 0) return null;
  const t = quote(target);
  return `SELECT ${t}.tableoid::pg_catalog.int4, ${t}.ctid::pg_catalog.text ${slice(from, end < 0 ? bytes.length : end).trim()}`;
}

/**
 * A single-table UPDATE or DELETE as the locking SELECT of its rows: its target (with alias) and
 * WHERE clause, `FOR mode`. It scans the rows in the statement's order and locks each as the
 * statement's change would, so its cursor tells how many rows come before one that fails. Also
 * the columns an UPDATE sets. Null with a FROM or USING list, WITH, or WHERE CURRENT OF.
 */
export function lockingProbeOf(sql: string, verb: 'update' | 'delete', mode: string): string | null {
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  const first = tokens[0]?.text.toUpperCase();
  if (first !== verb.toUpperCase()) return null;
  let depth = 0;
  let relStart = verb === 'delete' ? tokens[2]?.start : tokens[1]?.start;
  let relEnd = -1;
  let where = -1;
  let end = bytes.length;
  for (const tok of tokens.slice(1)) {
    const word = tok.text.toUpperCase();
    if (tok.text === '(') depth++;
    else if (tok.text === ')') depth--;
    else if (depth === 0) {
      if (word === 'FROM' && verb === 'update' && relEnd >= 0) return null;
      if (word === 'USING' || word === 'WITH') return null;
      if (relEnd < 0 && (word === 'SET' || word === 'WHERE' || word === 'RETURNING' || tok.text === ';')) relEnd = tok.start;
      if (word === 'WHERE' && where < 0) where = tok.end;
      else if ((word === 'RETURNING' || tok.text === ';') && end === bytes.length) end = tok.start;
    }
  }
  if (relStart === undefined) return null;
  if (relEnd < 0) relEnd = end;
  if (where >= 0 && /^current$/i.test(tokens.find((x) => x.start >= where)?.text ?? '')) return null;
  relStart = Math.min(relStart, relEnd);
  const quals = where >= 0 ? ` WHERE ${slice(where, end).trim()}` : '';
  return `SELECT 1 FROM ${slice(relStart, relEnd).trim()}${quals} FOR ${mode}`;
}

/** The columns an UPDATE's SET list names (lower case as parsed); empty when it does not parse. */
export function updatedColumns(sql: string): string[] {
  try {
    const stmt = (parseSync(sql) as { stmts?: { stmt: { UpdateStmt?: { targetList?: { ResTarget?: { name?: string } }[] } } }[] })
      .stmts?.[0]?.stmt;
    return (stmt?.UpdateStmt?.targetList ?? []).flatMap((t) => (t.ResTarget?.name ? [t.ResTarget.name] : []));
  } catch {
    return [];
  }
}

/**
 * A MERGE restricted as EvalPlanQual sees its target: the join ran under the statement's
 * snapshot, so a target row joins only if that snapshot saw it (a version committed before the
 * statement started, `horizon`), the session wrote it, or it is the newest version of a row the
 * statement found (and locked, then rechecked). A row committed by another transaction after the
 * snapshot is not there for the join: its source row goes to WHEN NOT MATCHED (an INSERT that
 * then meets the committed key, 23505), as in PostgreSQL, where a re-run under a new snapshot
 * would have matched it. The restriction joins the ON condition. Null when it cannot be placed
 * (a WHEN NOT MATCHED BY SOURCE clause: the re-run then sees the target afresh).
 */
export function restrictMerge(sql: string, target: string, ctids: string[], horizon: number | SeenRows): string | null {
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  let depth = 0;
  let using = false;
  let on = -1;
  let when = -1;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const word = tok.text.toUpperCase();
    if (tok.text === '(') depth++;
    else if (tok.text === ')') depth--;
    else if (depth === 0) {
      if (word === 'USING') using = true;
      else if (word === 'ON' && using && on < 0) on = tok.end;
      else if (word === 'WHEN' && on >= 0 && when < 0) when = tok.start;
      // WHEN NOT MATCHED BY SOURCE: a row the snapshot did not see is not there for it either,
      // but its condition cannot take the restriction (no subqueries in a WHEN condition).
      else if (word === 'SOURCE' && when >= 0 && tokens[i - 1]?.text.toUpperCase() === 'BY') return null;
    }
  }
  // Rows keyed by table (an inheritance family) are not restricted here.
  if (on < 0 || when < 0 || ctids.some((c) => c.includes(':'))) return null;
  const t = quote(target);
  const found = `${t}.ctid = ANY('{${ctids.map((c) => `"${c}"`).join(',')}}'::tid[])`;
  const restriction = eligible(t, found, seenClause(t, horizon));
  return `${slice(0, on)} (${slice(on, when).trim()}) AND ${restriction} ${slice(when, bytes.length)}`;
}

/**
 * The statement with the body of its locking CTE `cte` restricted as restrictToTuples restricts a
 * locking SELECT, and the rest left as it is: the CTE's LockRows waited, so it is the CTE's scan
 * that rechecks the row and goes on to the next one of its input (a `LIMIT 1` job queue), while
 * the outer statement joins whatever rows the CTE returns. Null when it cannot be done safely.
 */
export function restrictCte(
  sql: string,
  cte: string,
  target: string,
  ctids: string[],
  horizon?: number | SeenRows,
  ordered = false,
): string | null {
  return rewriteCte(sql, cte, (body) => restrictToTuples(body, 'select', target, ctids, horizon, ordered));
}

/** The statement with the body of its CTE `cte` rewritten by `rewrite`; null when either cannot be done. */
export function rewriteCte(sql: string, cte: string, rewrite: (body: string) => string | null): string | null {
  const tokens = scanned(sql)?.tokens;
  if (!tokens) return null;
  const unquote = (t: string) => (t.startsWith('"') ? t.slice(1, -1).replace(/""/g, '"') : t.toLowerCase());
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].text;
    if (t === '(') depth++;
    else if (t === ')') depth--;
    if (depth !== 0 || unquote(t) !== cte || tokens[i + 1]?.text.toUpperCase() !== 'AS') continue;
    let open = i + 2;
    while (open < tokens.length && tokens[open].text !== '(') open++;
    return rewriteParenthesized(sql, tokens, open, rewrite);
  }
  return null;
}

/** A scanned token: byte offsets into the statement's UTF-8 text, as libpg-query's scanner gives them. */
export interface SqlToken {
  start: number;
  end: number;
  text: string;
}

/**
 * The statement with the SELECT inside the parentheses that open at `tokens[open]` (a CTE's body,
 * a subquery) rewritten by `rewrite` (restrictToTuples, excludeTuples), and the rest left as it
 * is. Null when the parentheses do not close or the body cannot be rewritten.
 */
export function rewriteParenthesized(
  sql: string,
  tokens: readonly SqlToken[],
  open: number,
  rewrite: (body: string) => string | null,
): string | null {
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  const slice = (a: number, b: number) => dec.decode(bytes.slice(a, b));
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    if (tokens[j].text === '(') depth++;
    else if (tokens[j].text === ')' && --depth === 0) {
      const body = rewrite(slice(tokens[open].end, tokens[j].start));
      return body === null ? null : `${slice(0, tokens[open].end)}${body}${slice(tokens[j].start, bytes.length)}`;
    }
  }
  return null;
}

/** The name of the column tagOrder appends (no user column can clash with a leading space). */
export const ORDER_COLUMN = ' lockstep_order';

/**
 * The statement with one more output column, last: the ctid of the row version its scan found,
 * so the engine can put a re-run's rows back in the order PostgreSQL's scan met them. After a
 * wait, PostgreSQL goes on with the newest version of the row where its scan met the old one
 * (EvalPlanQual); the re-run, a new scan, meets it where it now lies, usually last. UPDATE and
 * DELETE return `old.ctid` (PostgreSQL 18's RETURNING OLD) after their RETURNING list; a locking
 * SELECT without ORDER BY returns the target's ctid after its select list (`qualified`: prefixed
 * by the row's table OID). Null when the statement has no such list, or names `old` itself.
 */
export function tagOrder(sql: string, verb: 'select' | 'update' | 'delete', target: string, qualified = false): string | null {
  if (/\bold\b/i.test(sql)) return null;
  const scan = scanned(sql);
  if (!scan) return null;
  const { bytes, slice, tokens } = scan;
  const col = `"${ORDER_COLUMN}"`;
  let depth = 0;
  let returning = false;
  let from = -1;
  let ordered = false;
  let end = bytes.length;
  for (const t of tokens) {
    const word = t.text.toUpperCase();
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0) {
      if (word === 'RETURNING') returning = true;
      else if (word === 'FROM' && from < 0) from = t.start;
      else if (word === 'ORDER') ordered = true;
      else if (t.text === ';') end = Math.min(end, t.start);
    }
  }
  // `qualified`: an inheritance parent's rows, keyed by table and ctid (epqKey).
  const tag = (rel: string) =>
    qualified ? `${rel}.tableoid::pg_catalog.int8::pg_catalog.text || ':' || ${rel}.ctid::pg_catalog.text` : `${rel}.ctid::text`;
  if (verb === 'select') {
    if (from < 0 || ordered) return null;
    return `${slice(0, from).trimEnd()}, ${tag(quote(target))} AS ${col} ${slice(from, bytes.length)}`;
  }
  if (!returning) return null;
  return `${slice(0, end).trimEnd()}, ${tag('old')} AS ${col}${slice(end, bytes.length)}`;
}

function quote(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : '"' + s.replace(/"/g, '""') + '"';
}

/**
 * A WHERE clause's top-level AND-ed quals in the order PostgreSQL evaluates them
 * (order_qual_clauses sorts them by cost, keeping the written order among equals): those without
 * a function call or a subquery first. Inside the re-run's CASE the planner no longer reorders
 * them. The clause as written when it has a top-level OR, or nothing to reorder.
 */
export function costOrdered(tokens: readonly SqlToken[], slice: (a: number, b: number) => string): string {
  if (!tokens.length) return '';
  const parts: { start: number; end: number; costly: boolean }[] = [];
  let depth = 0;
  let cases = 0;
  let between = 0;
  let start = tokens[0].start;
  let costly = false;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const word = tok.text.toUpperCase();
    if (tok.text === '(') {
      // A call (a name right before the parenthesis) or a subquery makes the qual costly.
      if (i > 0 && /^[A-Za-z_"]/.test(tokens[i - 1].text) && !/^(AND|OR|NOT|IN|ANY|ALL|SOME|EXISTS|ARRAY|ROW)$/i.test(tokens[i - 1].text))
        costly = true;
      if (/^(EXISTS|IN|ANY|ALL|SOME|ARRAY)$/i.test(tokens[i - 1]?.text ?? '') || tokens[i + 1]?.text.toUpperCase() === 'SELECT')
        costly = true;
      depth++;
    } else if (tok.text === ')') depth--;
    else if (depth === 0 && word === 'CASE') cases++;
    else if (depth === 0 && word === 'END') cases--;
    else if (depth === 0 && cases === 0 && word === 'BETWEEN') between++;
    else if (depth === 0 && cases === 0 && word === 'OR') return slice(tokens[0].start, tokens[tokens.length - 1].end);
    else if (depth === 0 && cases === 0 && word === 'AND') {
      if (between > 0) between--;
      else {
        parts.push({ start, end: tokens[i - 1].end, costly });
        start = tokens[i + 1]?.start ?? tok.end;
        costly = false;
      }
    }
  }
  parts.push({ start, end: tokens[tokens.length - 1].end, costly });
  const ordered = [...parts.filter((p) => !p.costly), ...parts.filter((p) => p.costly)];
  return ordered.map((p) => `(${slice(p.start, p.end)})`).join(' AND ');
}

/** The functions a row-marked re-run calls (pg/inject.ts, rowMarkSql creates them). */
export interface RowMarkFunctions {
  /** Sends the row's marker notice, before its quals run; returns true. */
  row: string;
  /** Sends the marker of a row that passed its quals (the statement changes it); returns true. */
  pass: string;
}

/** The notice texts of a row-marked re-run: a row's start, its passing the quals, an AFTER event's start. */
export const ROW_MARK = 'lockstep-row-mark';
export const ROW_PASS = 'lockstep-row-pass';
export const AFTER_MARK = 'lockstep-after-mark';

/** A notice as the re-run's markers need it. */
interface Notice {
  sqlstate?: string;
  message: string;
}

const markOf = (n: Notice, mark: string): string | undefined =>
  n.sqlstate === '00000' && n.message.startsWith(`${mark} `) ? n.message.slice(mark.length + 1) : undefined;

const tidRank = (c: string): [number, number] => {
  const [b, o] = c.slice(1, -1).split(',').map(Number);
  return [b, o];
};

/**
 * A row-marked re-run's notices in the order PostgreSQL's scan raises them. The re-run meets the
 * newest version of a row the statement waited for where it now lies; PostgreSQL meets it where
 * its scan met the old one (`origin` maps a newest version's ctid to the one the scan found), and
 * its AFTER ROW triggers fire in the order the rows changed. Before the wait the scan had raised
 * what came before the row it waited for (`waitedAt`, a found ctid), and those notices were sent
 * then: they are left out. Markers come out; a run without them is returned as it is.
 */
export function orderRowNotices<N extends Notice>(notices: readonly N[], origin: Readonly<Record<string, string>>, waitedAt?: string): N[] {
  if (!notices.some((n) => markOf(n, ROW_MARK) !== undefined)) return notices.filter((n) => markOf(n, AFTER_MARK) === undefined);
  const prefix: N[] = [];
  const rows: { at: string; passed: boolean; items: N[] }[] = [];
  const events: { row: boolean; items: N[] }[] = [];
  for (const n of notices) {
    const row = markOf(n, ROW_MARK);
    const after = markOf(n, AFTER_MARK);
    if (after !== undefined) events.push({ row: after === 'row', items: [] });
    else if (events.length) events[events.length - 1].items.push(n);
    else if (row !== undefined) rows.push({ at: origin[row] ?? row, passed: false, items: [] });
    else if (markOf(n, ROW_PASS) !== undefined) {
      if (rows.length) rows[rows.length - 1].passed = true;
    } else if (rows.length) rows[rows.length - 1].items.push(n);
    else prefix.push(n);
  }
  const cmp = (a: string, b: string) => {
    const [ab, ao] = tidRank(a);
    const [bb, bo] = tidRank(b);
    return ab - bb || ao - bo;
  };
  // Each AFTER ROW event belongs to the k-th row the re-run changed.
  const changed = rows.filter((r) => r.passed);
  const rowEvents = events.filter((e) => e.row);
  const byRow = new Map<string, N[][]>();
  if (rowEvents.length === changed.length)
    rowEvents.forEach((e, k) => byRow.set(changed[k].at, [...(byRow.get(changed[k].at) ?? []), e.items]));
  const sorted = rows.map((r, i) => ({ r, i })).sort((a, b) => cmp(a.r.at, b.r.at) || a.i - b.i);
  const kept = waitedAt === undefined ? sorted : sorted.filter(({ r }) => cmp(r.at, waitedAt) >= 0);
  const out: N[] = waitedAt === undefined ? [...prefix] : [];
  for (const { r } of kept) out.push(...r.items);
  if (byRow.size) {
    for (const { r } of sorted) for (const items of byRow.get(r.at)?.splice(0, 1) ?? []) out.push(...items);
    for (const e of events) if (!e.row) out.push(...e.items);
  } else for (const e of events) out.push(...e.items);
  return out;
}

/**
 * Uncorrelated subqueries of a statement that re-runs after a row wait. PostgreSQL plans a
 * subquery that does not refer to the outer query as an InitPlan (`= (SELECT max(id) …)`,
 * `EXISTS (SELECT …)`, `ARRAY(SELECT …)`) or, for `IN (SELECT …)`, as a hashed SubPlan or a
 * semi-join whose rows are carried into the recheck (ROW_MARK_COPY). Either way it reads under
 * the statement's snapshot, once, before the scan reaches the row it waits for, and
 * EvalPlanQual reuses what it read: only the target row is replaced by its newest version
 * (execMain.c EvalPlanQualStart copies the InitPlans' values; the recheck's subplans run with
 * the original estate's snapshot).
 *
 * The engine's recheck re-runs the statement under a new snapshot (epq.ts), so it first reads
 * each such subquery under the statement's kept snapshot and puts its rows in place of the
 * subquery as a VALUES list of typed literals: the re-run then sees what PostgreSQL's recheck
 * sees. A subquery that refers to the outer query fails when run alone: it stays as it is (its
 * own uncorrelated subqueries are still frozen). Locking subqueries (`FOR UPDATE`) are the
 * scan that waits and are left to sublink.ts.
 *
 * Found with PostgreSQL's own parser and tokenizer (libpg-query), never by guessing.
 */
import { parseSync, scanSync } from 'libpg-query';
import type { SqlToken } from './epq';

type Node = Record<string, unknown>;

/** A subquery's body: the byte offsets just inside its parentheses. */
export interface SubqueryBody {
  /** Byte offset of the first byte after '('. */
  start: number;
  /** Byte offset of the closing ')'. */
  end: number;
  body: string;
}

/** The statement's top node when it is one of `types`, with its tokens; undefined when it does not parse. */
function parseTop(sql: string, types: string[]): { body: Node; tokens: SqlToken[] } | undefined {
  try {
    const stmt = (parseSync(sql) as { stmts?: { stmt: Node }[] }).stmts?.[0]?.stmt;
    if (!stmt) return undefined;
    const [type, body] = Object.entries(stmt)[0] as [string, Node];
    if (!types.includes(type)) return undefined;
    return { body, tokens: (scanSync(sql) as unknown as { tokens: SqlToken[] }).tokens };
  } catch {
    return undefined;
  }
}

/** Whether a parse subtree holds a locking clause (FOR UPDATE / SHARE …) anywhere. */
function locks(node: unknown): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(locks);
  const n = node as Node;
  if (Array.isArray(n.lockingClause) && n.lockingClause.length > 0) return true;
  return Object.values(n).some(locks);
}

/**
 * The bodies of the statement's SubLinks outside its WITH clause, outermost first (a subquery
 * nested in another comes after it), skipping those that lock rows. Empty when the statement
 * does not parse or is not an UPDATE, DELETE or SELECT.
 */
export function subqueryBodies(sql: string): SubqueryBody[] {
  const top = parseTop(sql, ['UpdateStmt', 'DeleteStmt', 'SelectStmt']);
  if (!top) return [];
  const { body, tokens } = top;
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  const locations: number[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const link = (node as Node).SubLink as Node | undefined;
    if (link && typeof link.location === 'number' && !locks(link.subselect)) locations.push(link.location);
    for (const [k, v] of Object.entries(node as Node)) if (k !== 'withClause') visit(v);
  };
  visit(body);
  const out: SubqueryBody[] = [];
  for (const location of locations) {
    // The SubLink's location is its '(' for `(SELECT …)`, its IN, operator, EXISTS or ARRAY
    // otherwise: the subquery is the first parenthesized SELECT or VALUES from there.
    const open = tokens.findIndex((t) => t.start >= location && t.text === '(');
    if (open < 0) continue;
    const first = tokens[open + 1]?.text.toUpperCase();
    if (first !== 'SELECT' && first !== 'VALUES' && first !== 'WITH' && first !== 'TABLE') continue;
    let depth = 0;
    for (let j = open; j < tokens.length; j++) {
      if (tokens[j].text === '(') depth++;
      else if (tokens[j].text === ')' && --depth === 0) {
        const start = tokens[open].end;
        const end = tokens[j].start;
        out.push({ start, end, body: dec.decode(bytes.slice(start, end)) });
        break;
      }
    }
  }
  return out.sort((a, b) => a.start - b.start || b.end - a.end);
}

/** The query reading a subquery's column count (it fails when the subquery refers to the outer query). */
export function shapeQuery(body: string): string {
  return `SELECT * FROM (${body}) AS lockstep_q0 LIMIT 0`;
}

/**
 * The query reading a subquery's rows as typed text: a first column true on each row (NULL
 * when there is none, so that the types still come back), then type and value of each column.
 */
export function rowsQuery(body: string, columns: number): string {
  const names = Array.from({ length: columns }, (_, i) => `c${i + 1}`);
  const picks = names.map((c) => `pg_catalog.pg_typeof(q.${c})::text, q.${c}::text`).join(', ');
  return (
    `SELECT q.p, ${picks} FROM (SELECT 1) AS lockstep_d LEFT JOIN ` +
    `(SELECT true, lockstep_q0.* FROM (${body}) AS lockstep_q0) AS q(p, ${names.join(', ')}) ON true`
  );
}

function literal(value: string | null, type: string): string {
  return value === null ? `NULL::${type}` : `'${value.replace(/'/g, "''")}'::${type}`;
}

/** The subquery body standing for the rows rowsQuery read. */
export function valuesBody(rows: (string | null)[][], columns: number): string {
  const types = Array.from({ length: columns }, (_, i) => rows[0][1 + 2 * i] ?? 'text');
  if (rows.length === 1 && rows[0][0] === null) return `SELECT ${types.map((t) => literal(null, t)).join(', ')} WHERE false`;
  return `VALUES ${rows.map((r) => `(${types.map((t, i) => literal(r[2 + 2 * i], t)).join(', ')})`).join(', ')}`;
}

/** The statement with each given body replaced (bodies must not overlap). */
export function replaceBodies(sql: string, replacements: { start: number; end: number; text: string }[]): string {
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  let out = '';
  let at = 0;
  for (const r of [...replacements].sort((a, b) => a.start - b.start)) {
    out += dec.decode(bytes.slice(at, r.start)) + r.text;
    at = r.end;
  }
  return out + dec.decode(bytes.slice(at));
}

/** A reference to a table in the statement other than its target: the bytes of its name and alias. */
export interface OtherRelation {
  start: number;
  end: number;
  /** The table as written (schema-qualified when it was), for reading it. */
  name: string;
  /** The name the statement refers to it by. */
  ref: string;
}

/**
 * The tables an UPDATE or DELETE reads besides its target: its FROM / USING list, its subqueries
 * and CTEs; for a locking SELECT, those besides the tables its locking clauses name. EvalPlanQual rechecks the target row alone: these rows are the ones the statement
 * read under its snapshot (ROW_MARK_REFERENCE / ROW_MARK_COPY refetch the same versions, subplans
 * run with the original snapshot). Skipped: tables under a locking clause (they are rechecked
 * too), ONLY references and aliases with column lists; none at all when a CTE changes data.
 */
export function otherRelations(sql: string): OtherRelation[] {
  const top = parseTop(sql, ['UpdateStmt', 'DeleteStmt', 'SelectStmt']);
  if (!top) return [];
  const { body, tokens } = top;
  // A locking SELECT's targets are the tables its locking clauses name (FOR UPDATE OF a1); the
  // others in its FROM list get ROW_MARK_REFERENCE, which refetches the version first joined.
  // Without OF every table is locked, and without a locking clause nothing is rechecked.
  const locked = new Set<string>();
  if (body.lockingClause !== undefined || !('relation' in body)) {
    const clauses = ((body.lockingClause as Node[] | undefined) ?? []).map((c) => c.LockingClause as Node | undefined);
    if (!clauses.length || clauses.some((c) => !c || !Array.isArray(c.lockedRels) || !c.lockedRels.length)) return [];
    for (const c of clauses) for (const r of c!.lockedRels as Node[]) locked.add((r.RangeVar as Node | undefined)?.relname as string);
  }
  const ctes = (((body.withClause as Node | undefined)?.ctes as Node[] | undefined) ?? []).map(
    (c) => (c.CommonTableExpr as Node | undefined)?.ctequery as Node | undefined,
  );
  if (ctes.some((q) => !q || !q.SelectStmt)) return [];
  const cteNames = new Set(
    (((body.withClause as Node | undefined)?.ctes as Node[] | undefined) ?? []).map((c) => (c.CommonTableExpr as Node).ctename as string),
  );
  const target = body.relation as Node | undefined;
  const found: Node[] = [];
  // `nested`: inside a subquery, where the statement's locking clause names no table.
  const visit = (node: unknown, nested: boolean): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n, nested);
      return;
    }
    const n = node as Node;
    if (Array.isArray(n.lockingClause) && n.lockingClause.length > 0) return;
    const r = n.RangeVar as Node | undefined;
    if (r) {
      const ref = ((r.alias as Node | undefined)?.aliasname as string | undefined) ?? (r.relname as string);
      if (!nested && locked.has(ref)) return;
      if (r !== target && !(r.schemaname === undefined && cteNames.has(r.relname as string))) found.push(r);
      return;
    }
    for (const [k, v] of Object.entries(n)) visit(v, nested || k === 'SelectStmt');
  };
  for (const [k, v] of Object.entries(body)) if (k !== 'relation' && k !== 'lockingClause' && k !== 'withClause') visit(v, false);
  visit(body.withClause, true);
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  const out: OtherRelation[] = [];
  for (const r of found) {
    const alias = r.alias as Node | undefined;
    if (r.inh !== true || alias?.colnames || typeof r.location !== 'number') continue;
    let i = tokens.findIndex((t) => t.start === r.location);
    if (i < 0) continue;
    const first = i;
    if (r.schemaname !== undefined) i += 2;
    if (!tokens[i]) continue;
    const name = dec.decode(bytes.slice(tokens[first].start, tokens[i].end));
    let end = tokens[i].end;
    let ref = tokens[i].text;
    if (alias) {
      let j = i + 1;
      if (tokens[j]?.text.toUpperCase() === 'AS') j++;
      if (!tokens[j]) continue;
      end = tokens[j].end;
      ref = tokens[j].text;
    }
    out.push({ start: tokens[first].start, end, name, ref });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The query reading a table's columns (quoted names and types) when it is a plain table. */
export function columnsQuery(name: string): string {
  const rel = `'${name.replace(/'/g, "''")}'::pg_catalog.regclass`;
  return (
    `SELECT pg_catalog.quote_ident(a.attname), pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a ` +
    `JOIN pg_catalog.pg_class c ON c.oid = a.attrelid WHERE a.attrelid = ${rel} AND a.attnum > 0 AND NOT a.attisdropped ` +
    `AND c.relkind IN ('r', 'p') ORDER BY a.attnum`
  );
}

/** The query reading a table's rows as text, column by column. */
export function tableRowsQuery(name: string, columns: string[]): string {
  return `SELECT ${columns.map((c) => `${c}::text`).join(', ')} FROM ${name}`;
}

/** The table as a VALUES list of typed literals, under the name the statement refers to it by. */
export function valuesTable(ref: string, columns: string[], types: string[], rows: (string | null)[][]): string {
  const body = rows.length
    ? `VALUES ${rows.map((r) => `(${types.map((t, i) => literal(r[i], t)).join(', ')})`).join(', ')}`
    : `SELECT ${types.map((t) => literal(null, t)).join(', ')} WHERE false`;
  return `(${body}) AS ${ref}(${columns.join(', ')})`;
}

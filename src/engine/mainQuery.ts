/**
 * READ COMMITTED after EvalPlanQual: a statement keeps its snapshot for everything but the rows it
 * locks after a wait. In `WITH t AS (INSERT … ON CONFLICT DO UPDATE …) SELECT * FROM colors`, the
 * data-modifying CTE locks and updates the newest version of the row it waited for, while the
 * main query scans `colors` under the statement's snapshot (and never sees the CTE's changes,
 * which share that snapshot). The engine forms the CTE's effects with a new snapshot (epq.ts) and
 * reads the main query's rows again under the kept one; this module gives that main query.
 *
 * The main query is the statement with the body of each data-modifying CTE replaced by an empty
 * `SELECT`: an unreferenced CTE that only reads is never run, so the rest reads exactly what it
 * reads in the statement. That holds only when no part of the statement references the
 * data-modifying CTEs (their rows are the ones formed from the newest versions); otherwise null.
 *
 * Pure: SQL text only, placed with PostgreSQL's own parser and tokenizer (libpg-query).
 */
import { parseSync, scanSync } from 'libpg-query';

type Node = Record<string, unknown>;

const MODIFYING = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

/** The statement's main query with its data-modifying CTEs emptied, or null when that is not the same read. */
export function mainQueryOf(sql: string): string | null {
  let sel: Node | undefined;
  try {
    const stmt = (parseSync(sql) as unknown as { stmts: { stmt: Node }[] }).stmts;
    if (stmt.length !== 1) return null;
    sel = stmt[0].stmt.SelectStmt as Node | undefined;
  } catch {
    return null;
  }
  // A locking main query locks rows too, and reads their newest versions after a wait.
  if (!sel || sel.intoClause || (Array.isArray(sel.lockingClause) && sel.lockingClause.length)) return null;
  const ctes = (((sel.withClause as Node | undefined)?.ctes as Node[] | undefined) ?? []).map((c) => c.CommonTableExpr as Node);
  const modifying = ctes.filter((c) => Object.keys((c.ctequery as Node | undefined) ?? {}).some((k) => MODIFYING.has(k)));
  if (!modifying.length) return null;
  const names = new Set(modifying.map((c) => String(c.ctename)));
  // Every reference to a data-modifying CTE, its own body included (another CTE may read it).
  let referenced = false;
  const walk = (n: unknown): void => {
    if (referenced || !n || typeof n !== 'object') return;
    if (Array.isArray(n)) return n.forEach(walk);
    const rv = (n as Node).RangeVar as Node | undefined;
    if (rv && !rv.schemaname && names.has(String(rv.relname))) referenced = true;
    for (const v of Object.values(n as Node)) walk(v);
  };
  walk(sel);
  if (referenced) return null;
  return emptyBodies(
    sql,
    modifying.map((c) => Number(c.location ?? -1)),
  );
}

/** The SQL with the parenthesized body of the CTE named at each byte offset replaced by `SELECT`. */
function emptyBodies(sql: string, locations: number[]): string | null {
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  let tokens: { start: number; end: number; text: string }[];
  try {
    tokens = (scanSync(sql) as unknown as { tokens: { start: number; end: number; text: string }[] }).tokens;
  } catch {
    return null;
  }
  const spans: [number, number][] = [];
  for (const at of locations) {
    let i = tokens.findIndex((t) => t.start === at);
    if (i < 0) return null;
    while (i < tokens.length && tokens[i].text !== '(') i++;
    const open = i;
    let depth = 0;
    for (; i < tokens.length; i++) {
      if (tokens[i].text === '(') depth++;
      else if (tokens[i].text === ')' && --depth === 0) break;
    }
    if (i >= tokens.length) return null;
    spans.push([tokens[open].end, tokens[i].start]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let from = 0;
  for (const [a, b] of spans) {
    out += dec.decode(bytes.slice(from, a)) + 'SELECT';
    from = b;
  }
  return out + dec.decode(bytes.slice(from));
}

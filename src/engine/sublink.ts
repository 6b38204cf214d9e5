/**
 * A locking subquery in the WHERE clause of an UPDATE or DELETE: `DELETE FROM jobs WHERE id =
 * (SELECT id FROM jobs ORDER BY id FOR UPDATE LIMIT 1)`. PostgreSQL plans the subquery as an
 * InitPlan (a SubPlan for `IN`/`ANY`) with a LockRows node of its own, so when it waits for a row
 * it is the subquery's scan that rechecks the row afterwards (nodeLockRows.c: a deleted row is
 * skipped, an updated one is rechecked against the subquery's WHERE through EvalPlanQual) and goes
 * on to the next row of its sorted input, while the LIMIT counts only the rows it returns. The
 * outer statement then reads whatever the subquery returns. The engine restricts the subquery's
 * body after the wait as it restricts a locking CTE's (epq.ts), and leaves the outer statement
 * as it is.
 *
 * Found with PostgreSQL's own parser and tokenizer (libpg-query), never by guessing.
 */
import { parseSync, scanSync } from 'libpg-query';
import { restrictToTuples, rewriteParenthesized, type SeenRows, type SqlToken } from './epq';

type Node = Record<string, unknown>;

/** The relation a locking subquery scans: its name and how the subquery refers to it. */
export interface LockingSublink {
  relname: string;
  ref: string;
  /** The subquery has an ORDER BY: its LockRows locks the rows in that order, not the outer scan's. */
  ordered?: true;
}

/** The first SubLink of a WHERE clause whose subquery is a single-table locking SELECT, with its byte location. */
function findSublink(where: unknown): { sublink: LockingSublink; location: number } | undefined {
  let found: { sublink: LockingSublink; location: number } | undefined;
  const visit = (node: unknown): void => {
    if (found || !node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const link = (node as Node).SubLink as Node | undefined;
    const q = (link?.subselect as Node | undefined)?.SelectStmt as Node | undefined;
    if (
      link &&
      q &&
      Array.isArray(q.lockingClause) &&
      q.lockingClause.length > 0 &&
      Array.isArray(q.fromClause) &&
      q.fromClause.length === 1
    ) {
      const r = (q.fromClause[0] as Node).RangeVar as Node | undefined;
      if (r && typeof r.relname === 'string' && typeof link.location === 'number') {
        const ref = ((r.alias as Node | undefined)?.aliasname as string | undefined) ?? r.relname;
        const ordered = Array.isArray(q.sortClause) && q.sortClause.length > 0;
        found = { sublink: { relname: r.relname, ref, ...(ordered ? { ordered: true as const } : {}) }, location: link.location };
        return;
      }
    }
    for (const v of Object.values(node as Node)) visit(v);
  };
  visit(where);
  return found;
}

/** The locking subquery in the WHERE clause of a parsed UPDATE or DELETE, if it has one. */
export function lockingSublinkOf(type: string, body: Node): LockingSublink | undefined {
  if (type !== 'UpdateStmt' && type !== 'DeleteStmt') return undefined;
  return findSublink(body.whereClause)?.sublink;
}

/**
 * The UPDATE or DELETE with the body of its locking subquery restricted as restrictToTuples
 * restricts a locking SELECT, and the rest left as it is. Null when it cannot be done safely.
 */
export function restrictSublink(sql: string, target: string, ctids: string[], horizon?: number | SeenRows, ordered = false): string | null {
  return rewriteSublink(sql, (body) => restrictToTuples(body, 'select', target, ctids, horizon, ordered));
}

/** The UPDATE or DELETE with the body of its locking subquery rewritten by `rewrite`; null when either cannot be done. */
export function rewriteSublink(sql: string, rewrite: (body: string) => string | null): string | null {
  let tokens: SqlToken[];
  let location: number | undefined;
  try {
    const stmt = (parseSync(sql) as { stmts?: { stmt: Node }[] }).stmts?.[0]?.stmt;
    const [type, body] = stmt ? (Object.entries(stmt)[0] as [string, Node]) : ['', {}];
    if (type === 'UpdateStmt' || type === 'DeleteStmt') location = findSublink(body.whereClause)?.location;
    tokens = (scanSync(sql) as unknown as { tokens: SqlToken[] }).tokens;
  } catch {
    return null;
  }
  if (location === undefined) return null;
  // The SubLink's location is its '(' for `= (SELECT …)`, its IN or operator for `IN (SELECT …)`
  // and `= ANY (SELECT …)`: the subquery is the first parenthesized SELECT from there.
  const open = tokens.findIndex((t) => t.start >= location && t.text === '(');
  if (open < 0 || tokens[open + 1]?.text.toUpperCase() !== 'SELECT') return null;
  return rewriteParenthesized(sql, tokens, open, rewrite);
}

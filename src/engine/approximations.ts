/**
 * Where the simulator knowingly approximates PostgreSQL (docs/engine.md, "Limits"), it says so
 * on the step that touched the approximation, instead of showing a confident answer that may be
 * wrong. Each note is Lockstep's own (PostgreSQL sends nothing of the kind): an `approximation`
 * event, and the finished step's `approximations`, which the session pane shows under the step.
 *
 * Pure: topics, their English text (the CLI's; the UI translates by topic), and the detectors
 * that need only the statement text.
 */
import { parseSync } from 'libpg-query';

/** One approximation a statement can touch. */
export type ApproximationTopic =
  | 'index-order'
  | 'join-recheck'
  | 'deferred-commit'
  | 'temp-table'
  | 'serializable-read-only'
  | 'fk-wait-rerun'
  | 'function-snapshot'
  | 'notices-wait'
  | 'recheck-order'
  | 'exception-block'
  | 'matview-serializable'
  | 'function-wait-policy'
  | 'exclusion-constraint'
  | 'self-modified-recheck'
  | 'subquery-lock-order'
  | 'merge-cardinality-wait'
  | 'sequence-recheck'
  | 'upsert-cardinality-wait'
  | 'fk-check-snapshot'
  | 'cte-lock-order';

/** The English note for each topic (`play --json` events; the UI has its own dictionary entries). */
export const APPROXIMATION_TEXT: Record<ApproximationTopic, string> = {
  'index-order':
    'Lockstep: this statement locks several rows through an index scan; the simulator locks them in physical (ctid) order, as a sequential scan does, so the order in which it meets other sessions may differ from PostgreSQL’s.',
  'join-recheck':
    'Lockstep: this statement waited, and PostgreSQL then rechecks only the rows it locked (EvalPlanQual); for a join or subquery the simulator reads the other tables afresh, so rows committed meanwhile can appear.',
  'deferred-commit':
    'Lockstep: this transaction changed a table with a deferred constraint trigger; the simulator does not run such triggers at COMMIT, so an error they raise there, or a lock their statements take, is not shown (deferred unique and foreign-key checks are modelled).',
  'temp-table':
    'Lockstep: temporary tables are approximated; the simulator does not carry their rows between statements of an open transaction the way PostgreSQL does.',
  'notices-wait':
    'Lockstep: this statement raised notices around a wait for a row; after the wait PostgreSQL raises only those of its recheck of the row’s newest version and of the rest of its scan, while the simulator shows those of its re-run, which can repeat or miss some, or come in another order.',
  'serializable-read-only':
    'Lockstep: DEFERRABLE is not modelled for SERIALIZABLE READ ONLY transactions; the simulator does not wait for a safe snapshot, so the transaction starts at once on a snapshot that may later prove unsafe.',
  'fk-wait-rerun':
    'Lockstep: this statement waits before its foreign-key check; after the wait the simulator runs the whole statement again with a new snapshot, where PostgreSQL takes one only for the check, so rows committed meanwhile can appear.',
  'recheck-order':
    'Lockstep: this statement waited for a row another transaction then updated; PostgreSQL goes on with that row’s new version where its scan met the row, while the simulator meets the new version where it now lies, so rows come in another order (RETURNING, triggers, the order of later waits).',
  'exception-block':
    'Lockstep: this statement runs a PL/pgSQL block with an EXCEPTION clause, and its wait ended in an error; PostgreSQL raises that error inside the block, where a handler may catch it, but the simulator can raise it there only at a row the block updates or deletes, so here the error is shown uncaught.',
  'matview-serializable':
    'Lockstep: this transaction is SERIALIZABLE and refreshes a materialized view; the simulator does not track what REFRESH MATERIALIZED VIEW reads and writes for serializable conflicts, so a serialization failure (40001) PostgreSQL reports for it, at this statement or a later one, is not reported.',
  'function-snapshot':
    'Lockstep: this statement waited and runs again under the snapshot it started with; a function it calls runs its own queries under that snapshot too, where PostgreSQL’s READ COMMITTED takes a new one for each, so rows committed meanwhile are not seen.',
  'function-wait-policy':
    'Lockstep: this statement waited for a row or a table and calls a function that locks with NOWAIT or SKIP LOCKED; PostgreSQL applies that clause to the locks the function’s own statement takes (failing at once, or passing over the rows), while the simulator makes every lock of the statement wait, so this wait may not happen in PostgreSQL.',
  'exclusion-constraint':
    'Lockstep: this statement and another open transaction changed a table with an exclusion constraint, and one of them updated a row of it; PostgreSQL checks every new row version against the other transaction’s uncommitted ones, waits for it to end and then fails with 23P01 if it committed, while the simulator checks an inserted row against other transactions’ inserted rows only, so such a conflict is reported later (at COMMIT) or not at all.',
  'self-modified-recheck':
    'Lockstep: this statement waited for a row, and a function it calls changed again a row version the statement itself had just written; PostgreSQL’s recheck follows the waited row’s update chain to that version and fails with 27000 (“already modified by an operation triggered by the current command”) when a later command wrote it, while the simulator re-runs the statement with a new snapshot, which passes over the row, so that error is not reported.',
  'subquery-lock-order':
    'Lockstep: this statement waited for a row it locks through a subquery with ORDER BY … FOR UPDATE; PostgreSQL’s subquery locks its rows in that order, before the outer statement writes them, while the simulator locks them in physical (ctid) order, so the rows it holds when it waits, and whether it waits at all, may differ from PostgreSQL’s.',
  'sequence-recheck':
    'Lockstep: this statement calls nextval, waited for a row another transaction then changed, and had already formed other rows before it; PostgreSQL keeps the values it drew for those rows and draws a new one only for the rechecked row (EvalPlanQual), while the simulator forms every row again with new values, so the sequence values of the rows before the wait differ.',
  'upsert-cardinality-wait':
    'Lockstep: this INSERT … ON CONFLICT DO UPDATE failed because it would change one row a second time (21000) while another transaction held row locks; PostgreSQL first updates the row for the first proposed row, so if another transaction holds that row it waits for it to end (and rechecks the newest version) before failing, while the simulator reports the error at once.',
  'fk-check-snapshot':
    'Lockstep: this statement’s foreign-key check waited for a referenced row that the other transaction then deleted or changed; PostgreSQL’s check keeps the snapshot it started with, so a matching row committed during the wait (the key inserted again) does not satisfy it and the check fails (23503), while the simulator checks again with a new snapshot, which sees such a row.',
  'cte-lock-order':
    'Lockstep: this statement has several data-modifying CTEs and waited for a row; PostgreSQL runs them in the order its plan reads them (those the main query does not read, after it), so that order decides which rows it holds while it waits, while the simulator locks their rows in physical (ctid) order, so the rows it holds, and a deadlock with another session, may differ from PostgreSQL’s.',
  'merge-cardinality-wait':
    'Lockstep: this MERGE failed because a target row matched more than one source row (21000) while another transaction held row locks; PostgreSQL first changes the row for the first source row, so if another transaction holds that row it waits for it to end (and rechecks the newest version) before failing, while the simulator reports the error at once.',
};

/** Whether some node of the statement's parse tree satisfies `test` (false when it does not parse). */
function treeHas(sql: string, test: (node: Record<string, unknown>) => boolean): boolean {
  let tree: unknown;
  try {
    tree = parseSync(sql);
  } catch {
    return false;
  }
  const visit = (n: unknown): boolean =>
    !!n && typeof n === 'object' && (test(n as Record<string, unknown>) || Object.values(n).some(visit));
  return visit(tree);
}

/** The names of the functions the statement calls, except those qualified with pg_catalog. */
export function calledFunctionNames(sql: string): string[] {
  const names = new Set<string>();
  treeHas(sql, (o) => {
    const parts = ((o.FuncCall as Record<string, unknown> | undefined)?.funcname as { String?: { sval?: string } }[] | undefined)?.map(
      (p) => p.String?.sval ?? '',
    );
    if (parts?.length && !(parts.length > 1 && parts[0] === 'pg_catalog')) names.add(parts[parts.length - 1]);
    return false;
  });
  return [...names];
}

/**
 * The `set_config(name, value, is_local)` calls written in the statement itself, by setting name
 * (lower case) → is_local, for calls whose name and is_local are constants.
 */
export function setConfigCalls(sql: string): Map<string, boolean> {
  const calls = new Map<string, boolean>();
  treeHas(sql, (o) => {
    const call = o.FuncCall as { funcname?: { String?: { sval?: string } }[]; args?: Record<string, unknown>[] } | undefined;
    if (call?.funcname?.at(-1)?.String?.sval !== 'set_config' || call.args?.length !== 3) return false;
    const [name, , local] = call.args.map((a) => a.A_Const as { sval?: { sval?: string }; boolval?: { boolval?: boolean } } | undefined);
    if (name?.sval?.sval !== undefined && local?.boolval) calls.set(name.sval.sval.toLowerCase(), local.boolval.boolval === true);
    return false;
  });
  return calls;
}

/** Whether the statement is a DO block with an EXCEPTION clause. */
export function doBlockWithException(sql: string): boolean {
  return /\bexception\b/i.test(sql) && treeHas(sql, (o) => 'DoStmt' in o);
}

/** Whether the statement creates a temporary table (CREATE TEMP TABLE, CREATE TEMP TABLE … AS). */
export function createsTempTable(sql: string): boolean {
  return treeHas(sql, (o) => o.relpersistence === 't');
}

/** Whether a BEGIN / SET TRANSACTION asks for DEFERRABLE. */
export function asksDeferrable(sql: string): boolean {
  return treeHas(sql, (o) => o.defname === 'transaction_deferrable' && JSON.stringify(o.arg ?? '').includes('"ival":1'));
}

/**
 * The relations an `EXPLAIN (FORMAT JSON)` plan reads through an index, and how: `index` (Index
 * Scan, Index Only Scan) meets rows in index order, `bitmap` (Bitmap Heap Scan) in the order of
 * the heap places the index entries point to (a HOT-updated row at its chain's root, where it
 * was first inserted); neither in the order of the row versions' own places, as a sequential
 * scan meets them.
 */
export function indexScannedRelations(planJson: string | null | undefined): Map<string, 'index' | 'bitmap'> {
  const out = new Map<string, 'index' | 'bitmap'>();
  if (!planJson) return out;
  const walk = (node: Record<string, unknown>) => {
    const type = node['Node Type'];
    const rel = node['Relation Name'];
    if (typeof rel === 'string' && (type === 'Index Scan' || type === 'Index Only Scan')) out.set(rel, 'index');
    else if (typeof rel === 'string' && type === 'Bitmap Heap Scan' && !out.has(rel)) out.set(rel, 'bitmap');
    for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  try {
    for (const top of JSON.parse(planJson) as { Plan: Record<string, unknown> }[]) walk(top.Plan);
  } catch {
    return out;
  }
  return out;
}

/** Whether the statement has two or more data-modifying CTEs (at any depth). */
export function modifyingCteCount(sql: string): number {
  let n = 0;
  treeHas(sql, (o) => {
    const cte = o.CommonTableExpr as { ctequery?: Record<string, unknown> } | undefined;
    const q = cte?.ctequery;
    if (q && ('InsertStmt' in q || 'UpdateStmt' in q || 'DeleteStmt' in q || 'MergeStmt' in q)) n++;
    return false;
  });
  return n;
}

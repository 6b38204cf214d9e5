/**
 * What a deadlock report's statement does, read from PostgreSQL's own parse tree (libpg-query's
 * JSON, produced by the caller: a Worker in the page, parseSync in tests): the command, its table,
 * the key values its WHERE names, the columns it sets, the rows it inserts. Pure; never parses SQL itself.
 */

/** A constant from the statement, with the SQL type it suggests. */
export interface Literal {
  type: 'int' | 'numeric' | 'text' | 'bool';
  /** The constant as SQL: `1`, `2.5`, `'abc'`, `true`. */
  sql: string;
}

/** What one statement does, as far as a minimal reconstruction needs. */
export interface StatementFacts {
  kind: 'update' | 'delete' | 'insert' | 'select' | 'lock' | 'ddl' | 'other';
  /** The command tag-like name: UPDATE, INSERT, ALTER TABLE, CREATE INDEX, LOCK TABLE, SELECT … */
  command: string;
  /** Tables named, the target first. */
  tables: string[];
  /** WHERE's `column = constant` and `column IN (constants)` conditions (ANDed). */
  keys: { column: string; values: Literal[] }[];
  /** UPDATE's SET columns; `numeric` when set by arithmetic or a number. */
  setColumns: { column: string; numeric: boolean }[];
  /** INSERT's column list and VALUES rows of constants. */
  insertColumns: string[];
  insertRows: Literal[][];
  onConflict?: 'update' | 'nothing';
  /** SELECT's locking clause, worded as SQL. */
  locking?: 'FOR UPDATE' | 'FOR NO KEY UPDATE' | 'FOR SHARE' | 'FOR KEY SHARE';
  /** pg_advisory_(xact_)lock keys called. */
  advisoryKeys: number[][];
  /** The statement has parameters ($1, …): an application's prepared statement, its values not in the text. */
  params: boolean;
}

type Node = Record<string, unknown>;

const isObj = (x: unknown): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (n: unknown): string | undefined => (isObj(n) && isObj(n.String) ? (n.String.sval as string) : undefined);

/** A_Const as a Literal. */
function literal(node: unknown): Literal | null {
  if (!isObj(node)) return null;
  if (isObj(node.TypeCast)) return literal(node.TypeCast.arg);
  if (isObj(node.A_Expr) && node.A_Expr.kind === 'AEXPR_OP' && !node.A_Expr.lexpr && str((node.A_Expr.name as unknown[])?.[0]) === '-') {
    const inner = literal(node.A_Expr.rexpr);
    return inner && (inner.type === 'int' || inner.type === 'numeric') ? { ...inner, sql: `-${inner.sql}` } : null;
  }
  const c = node.A_Const;
  if (!isObj(c)) return null;
  if (isObj(c.ival)) return { type: 'int', sql: String(c.ival.ival ?? 0) };
  if (isObj(c.fval)) return { type: 'numeric', sql: String(c.fval.fval) };
  if (isObj(c.sval)) return { type: 'text', sql: `'${String(c.sval.sval).replace(/'/g, "''")}'` };
  if (isObj(c.boolval)) return { type: 'bool', sql: c.boolval.boolval ? 'true' : 'false' };
  return null;
}

/** The last name of a ColumnRef (`a.id` → id). */
function columnName(node: unknown): string | undefined {
  if (!isObj(node) || !isObj(node.ColumnRef)) return undefined;
  const fields = node.ColumnRef.fields as unknown[];
  return str(fields?.at(-1));
}

/** `col = const`, `const = col`, `col IN (…)` conditions of an AND tree. */
function whereKeys(node: unknown, out: StatementFacts['keys']): void {
  if (!isObj(node)) return;
  if (isObj(node.BoolExpr) && node.BoolExpr.boolop === 'AND_EXPR') {
    for (const a of node.BoolExpr.args as unknown[]) whereKeys(a, out);
    return;
  }
  const e = node.A_Expr;
  if (!isObj(e)) return;
  const op = str((e.name as unknown[])?.[0]);
  if (e.kind === 'AEXPR_OP' && op === '=') {
    const [col, val] = columnName(e.lexpr) ? [columnName(e.lexpr), literal(e.rexpr)] : [columnName(e.rexpr), literal(e.lexpr)];
    if (col && val) out.push({ column: col, values: [val] });
  } else if (e.kind === 'AEXPR_IN' && op === '=') {
    const col = columnName(e.lexpr);
    const items = isObj(e.rexpr) && isObj(e.rexpr.List) ? (e.rexpr.List.items as unknown[]) : [];
    const values = items.map(literal);
    if (col && values.length && values.every((v) => v)) out.push({ column: col, values: values as Literal[] });
  }
}

/** Relations named anywhere in a subtree (RangeVar nodes), in document order. */
function relations(node: unknown, out: string[]): void {
  if (Array.isArray(node)) for (const x of node) relations(x, out);
  else if (isObj(node)) {
    if (typeof node.relname === 'string' && !out.includes(node.relname)) out.push(node.relname);
    for (const v of Object.values(node)) relations(v, out);
  }
}

/** Calls of pg_advisory_lock-like functions with constant keys. */
function advisoryCalls(node: unknown, out: number[][]): void {
  if (Array.isArray(node)) for (const x of node) advisoryCalls(x, out);
  else if (isObj(node)) {
    const f = node.FuncCall;
    if (isObj(f) && /^pg_(try_)?advisory_(xact_)?lock(_shared)?$/.test(str((f.funcname as unknown[])?.at(-1)) ?? '')) {
      const keys = ((f.args as unknown[]) ?? []).map(literal);
      if (keys.length && keys.every((k) => k?.type === 'int')) out.push(keys.map((k) => Number(k!.sql)));
    }
    for (const v of Object.values(node)) advisoryCalls(v, out);
  }
}

/** True when an expression is a number or arithmetic over columns and numbers. */
function numericExpr(node: unknown): boolean {
  const lit = literal(node);
  if (lit) return lit.type === 'int' || lit.type === 'numeric';
  return isObj(node) && isObj(node.A_Expr) && ['+', '-', '*', '/'].includes(str((node.A_Expr.name as unknown[])?.[0]) ?? '');
}

const LOCKING: Record<string, StatementFacts['locking']> = {
  LCS_FORUPDATE: 'FOR UPDATE',
  LCS_FORNOKEYUPDATE: 'FOR NO KEY UPDATE',
  LCS_FORSHARE: 'FOR SHARE',
  LCS_FORKEYSHARE: 'FOR KEY SHARE',
};

const DDL: Record<string, string> = {
  AlterTableStmt: 'ALTER TABLE',
  IndexStmt: 'CREATE INDEX',
  CreateStmt: 'CREATE TABLE',
  DropStmt: 'DROP',
  TruncateStmt: 'TRUNCATE',
  VacuumStmt: 'VACUUM',
  ReindexStmt: 'REINDEX',
  ClusterStmt: 'CLUSTER',
  RenameStmt: 'ALTER … RENAME',
  CreateTrigStmt: 'CREATE TRIGGER',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  GrantStmt: 'GRANT',
};

/** The facts of the first statement of a parse result that is not transaction control; null when there is none. */
export function statementFacts(parse: { stmts?: { stmt?: unknown }[] }): StatementFacts | null {
  const stmt = (parse.stmts ?? []).map((s) => s.stmt).find((s) => isObj(s) && !('TransactionStmt' in s) && !('VariableSetStmt' in s));
  if (!isObj(stmt)) return null;
  const [type, body] = Object.entries(stmt)[0] as [string, Node];
  const facts: StatementFacts = {
    kind: 'other',
    command: type.replace(/Stmt$/, '').toUpperCase(),
    tables: [],
    keys: [],
    setColumns: [],
    insertColumns: [],
    insertRows: [],
    advisoryKeys: [],
    params: JSON.stringify(body).includes('"ParamRef"'),
  };
  relations(body, facts.tables);
  advisoryCalls(body, facts.advisoryKeys);
  switch (type) {
    case 'UpdateStmt':
      facts.kind = 'update';
      facts.command = 'UPDATE';
      whereKeys(body.whereClause, facts.keys);
      for (const t of (body.targetList as unknown[]) ?? []) {
        const rt = isObj(t) && isObj(t.ResTarget) ? t.ResTarget : null;
        if (rt && typeof rt.name === 'string') facts.setColumns.push({ column: rt.name, numeric: numericExpr(rt.val) });
      }
      break;
    case 'DeleteStmt':
      facts.kind = 'delete';
      facts.command = 'DELETE';
      whereKeys(body.whereClause, facts.keys);
      break;
    case 'InsertStmt': {
      facts.kind = 'insert';
      facts.command = 'INSERT';
      facts.insertColumns = ((body.cols as unknown[]) ?? []).map((c) => (isObj(c) && isObj(c.ResTarget) ? String(c.ResTarget.name) : ''));
      const sel = isObj(body.selectStmt) && isObj(body.selectStmt.SelectStmt) ? body.selectStmt.SelectStmt : null;
      for (const row of (sel?.valuesLists as unknown[]) ?? []) {
        const items = isObj(row) && isObj(row.List) ? (row.List.items as unknown[]) : [];
        const values = items.map(literal);
        if (values.every((v) => v)) facts.insertRows.push(values as Literal[]);
      }
      const oc = isObj(body.onConflictClause) ? body.onConflictClause : null;
      if (oc) facts.onConflict = oc.action === 'ONCONFLICT_UPDATE' ? 'update' : 'nothing';
      break;
    }
    case 'SelectStmt': {
      facts.kind = 'select';
      facts.command = 'SELECT';
      whereKeys(body.whereClause, facts.keys);
      const lc = ((body.lockingClause as unknown[]) ?? []).find(isObj);
      const strength = lc && isObj(lc.LockingClause) ? String(lc.LockingClause.strength) : '';
      if (LOCKING[strength]) facts.locking = LOCKING[strength];
      break;
    }
    case 'LockStmt':
      facts.kind = 'lock';
      facts.command = 'LOCK TABLE';
      break;
    default:
      if (DDL[type]) {
        facts.kind = 'ddl';
        facts.command = DDL[type];
      }
  }
  return facts;
}

/** The rows a statement names by key: `[table, column, value]` triples (UPDATE/DELETE/SELECT by WHERE, INSERT by its first column). */
export function namedRows(f: StatementFacts): { table: string; column: string; value: Literal }[] {
  const table = f.tables[0];
  if (!table) return [];
  if (f.kind === 'insert') {
    const column = f.insertColumns[0];
    return column ? f.insertRows.map((r) => ({ table, column, value: r[0] })) : [];
  }
  const key = f.keys[0];
  return key ? key.values.map((value) => ({ table, column: key.column, value })) : [];
}

/** What the parser makes of a statement: its facts, or the parser's complaint (e.g. a line cut short). */
export function readStatement(
  sql: string,
  parse: (sql: string) => { stmts?: { stmt?: unknown }[] },
): { ok: true; facts: StatementFacts | null } | { ok: false; problem: 'syntax'; message: string } {
  try {
    return { ok: true, facts: statementFacts(parse(sql)) };
  } catch (e) {
    return { ok: false, problem: 'syntax', message: e instanceof Error ? e.message : String(e) };
  }
}

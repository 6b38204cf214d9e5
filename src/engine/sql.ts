/**
 * Statement splitting and classification with PostgreSQL's own parser (libpg-query).
 * The engine never guesses at SQL: it asks the real grammar what a statement is.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import { lockingSublinkOf, type LockingSublink } from './sublink';

let loaded: Promise<void> | null = null;
/** Loads the parser's wasm once. */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

export type TxnControl =
  | { kind: 'begin'; isolation?: string; readOnly?: boolean; command: 'BEGIN' | 'START TRANSACTION' }
  | { kind: 'commit' }
  | { kind: 'rollback' }
  | { kind: 'savepoint'; name: string }
  | { kind: 'release'; name: string }
  | { kind: 'rollback-to'; name: string };

/** What the engine needs to know about one statement. */
export type Classified =
  | { kind: 'txn'; ctl: TxnControl }
  | {
      kind: 'set';
      local: boolean;
      name: string | null;
      reset: boolean;
      resetAll: boolean;
      setTransaction: boolean;
      isolation?: string;
      readOnly?: boolean;
    }
  | { kind: 'show'; name: string }
  | { kind: 'sleep'; seconds: number }
  /**
   * A statement the engine cannot stage. `refusedInBlock`: PostgreSQL's own statement name when
   * it refuses the statement inside a transaction block (PreventInTransactionBlock); there it
   * gets PostgreSQL's error, and 0A000 only where PostgreSQL would have run it.
   */
  | { kind: 'unsupported'; what: string; refusedInBlock?: string }
  /** PREPARE / EXECUTE / DEALLOCATE: prepared statements live in each session's own namespace. */
  | { kind: 'prepare'; name: string; prepared: PreparedText }
  | { kind: 'execute'; name: string; args: string[] }
  | { kind: 'deallocate'; name: string | null }
  | {
      kind: 'dml';
      /** Row-locking clause waits: NOWAIT or SKIP LOCKED anywhere in the statement. */
      waitPolicy: 'block' | 'nowait' | 'skip';
      /** LOCK TABLE … NOWAIT. */
      lockNowait: boolean;
      /** Relation names in the order the parser meets them (parse-analysis lock order). */
      relations: string[];
      /**
       * 1-based character position, in the whole query string, of the first reference to each
       * relation of a SELECT/INSERT/UPDATE/DELETE/MERGE: parse analysis opens (and locks) those
       * tables under parser_errposition, so a wait or an error there reports "at character N".
       */
      relationPositions?: Record<string, number>;
      /** Statement type for CONTEXT lines ("while updating tuple …"). */
      verb: 'select' | 'update' | 'delete' | 'insert' | 'merge' | 'lock' | 'other';
      mentionsAdvisory: boolean;
      mentionsDiagnostics: boolean;
      /** A top-level SELECT with a locking clause and no data-modifying WITH: it can run as a cursor, row by row. */
      lockingSelect: boolean;
      /** DROP INDEX: the indexes it names (each locked right after its table, before the table's partitions). */
      droppedIndexes?: string[];
      /** The one relation whose rows an UPDATE/DELETE/locking SELECT targets: its name and how the statement refers to it. */
      target?: { relname: string; ref: string };
      /** MERGE: its target table and how the statement refers to it (EvalPlanQual restricts its join, epq.ts restrictMerge). */
      mergeTarget?: { relname: string; ref: string };
      /** A CTE of the statement that is a single-table locking SELECT (`WITH job AS (SELECT … FOR UPDATE LIMIT 1) UPDATE …`). */
      lockingCte?: { name: string; relname: string; ref: string };
      /** A locking subquery in the WHERE clause of an UPDATE/DELETE (`WHERE id = (SELECT … FOR UPDATE LIMIT 1)`, sublink.ts). */
      lockingSublink?: LockingSublink;
      /** INSERT … ON CONFLICT somewhere in the statement: its waits come from the speculative pre-check. */
      onConflict?: true;
      /** ON CONFLICT names its conflict target (columns or a constraint): its arbiters are the indexes inferred from it. */
      onConflictTarget?: true;
      /** `WHERE CURRENT OF cursor`: the statement targets the cursor's current row. */
      currentOf?: true;
      /**
       * VACUUM of one table, staged as the LOCK TABLE of the lock it takes (maintenanceLock):
       * its own command tag, and PostgreSQL's refusal inside a block.
       */
      maintenance?: { command: string; refusedInBlock?: string; skipLocked?: string };
      /**
       * TRUNCATE and DROP TABLE: the LOCK TABLE of the ACCESS EXCLUSIVE locks they take on the
       * tables they name before any check that may fail (a referencing foreign key, a dependent
       * object), so a failing one waits for those locks first.
       */
      locksBeforeCheck?: string;
      /** SET CONSTRAINTS: the constraint names it sets (null for ALL) and the mode. */
      constraintsSet?: { names: string[] | null; deferred: boolean };
    };

/**
 * A prepared statement's text: the query split at its parameter references, and the declared
 * parameter types (text as written). PostgreSQL's count of parameters is the larger of the
 * declared types and the highest `$n`.
 */
export interface PreparedText {
  /** The PREPARE statement as written (for the analysis probe). */
  sql: string;
  parts: (string | number)[];
  types: string[];
  paramCount: number;
}

/** The prepared statement's query with each `$n` replaced by the n-th argument, cast to its declared type. */
export function bindPrepared(p: PreparedText, args: string[]): string {
  return p.parts
    .map((x) => (typeof x === 'string' ? x : p.types[x - 1] !== undefined ? `(${args[x - 1]})::${p.types[x - 1]}` : `(${args[x - 1]})`))
    .join('');
}

interface Token {
  start: number;
  end: number;
  text: string;
}

/** The texts between the parenthesis at token `open` and its match, split at top-level commas. */
function parenList(bytes: Uint8Array, tokens: Token[], open: number): { items: string[]; close: number } {
  const dec = new TextDecoder();
  const items: string[] = [];
  let depth = 0;
  let from = tokens[open].end;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i].text;
    if (t === '(' || t === '[') depth++;
    else if (t === ')' || t === ']') depth--;
    if ((t === ',' && depth === 1) || depth === 0) {
      items.push(dec.decode(bytes.slice(from, tokens[i].start)).trim());
      from = tokens[i].end;
    }
    if (depth === 0) return { items: items.filter((x, j) => x !== '' || j > 0), close: i };
  }
  return { items, close: tokens.length - 1 };
}

function prepareText(sql: string): PreparedText {
  const bytes = new TextEncoder().encode(sql);
  const dec = new TextDecoder();
  const tokens = (scanSync(sql) as { tokens: Token[] }).tokens;
  // PREPARE name [ ( type, … ) ] AS query
  let i = 2;
  let types: string[] = [];
  if (tokens[i]?.text === '(') {
    const l = parenList(bytes, tokens, i);
    types = l.items;
    i = l.close + 1;
  }
  const queryStart = tokens[i + 1]?.start ?? bytes.length;
  const params: { n: number; start: number; end: number }[] = [];
  for (const t of tokens)
    if (t.start >= queryStart && /^\$\d+$/.test(t.text)) params.push({ n: Number(t.text.slice(1)), start: t.start, end: t.end });
  const parts: (string | number)[] = [];
  let at = queryStart;
  for (const p of params) {
    parts.push(dec.decode(bytes.slice(at, p.start)), p.n);
    at = p.end;
  }
  parts.push(dec.decode(bytes.slice(at)));
  return { sql, parts, types, paramCount: Math.max(types.length, ...params.map((p) => p.n)) };
}

function executeArgs(sql: string): string[] {
  const bytes = new TextEncoder().encode(sql);
  const tokens = (scanSync(sql) as { tokens: Token[] }).tokens;
  // EXECUTE name [ ( arg, … ) ]
  return tokens[2]?.text === '(' ? parenList(bytes, tokens, 2).items : [];
}

export interface ParsedStatement {
  sql: string;
  cls: Classified;
  /** An EvalPlanQual re-run that returns one more column, last: the found version's ctid (epq.ts, tagOrder). */
  orderTag?: boolean;
  /**
   * An EvalPlanQual re-run whose rows' notices are marked (epq.ts, restrictToTuples): the table
   * the marker triggers go on, the first scan's ctid of each followed row's newest version, and
   * the found row the statement last waited for.
   */
  rowMarks?: { table: string; origin: Record<string, string>; waitedAt?: string };
}

/** Thrown when the text does not parse; the engine then lets PostgreSQL word the error. */
export class ParseFailure extends Error {}

type Node = Record<string, unknown>;

function walk(node: unknown, visit: (key: string, value: Node) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Node)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) visit(k, v as Node);
      walk(v, visit);
    }
  }
}

function constString(n: unknown): string | undefined {
  const c = (n as Node | undefined)?.A_Const as Node | undefined;
  if (!c) return undefined;
  const s = (c.sval as Node | undefined)?.sval;
  if (typeof s === 'string') return s;
  const f = (c.fval as Node | undefined)?.fval;
  if (typeof f === 'string') return f;
  const i = c.ival as Node | undefined;
  if (i) return String((i.ival as number | undefined) ?? 0);
  return undefined;
}

function isolationOf(options: unknown): string | undefined {
  let iso: string | undefined;
  walk(options, (k, v) => {
    if (k === 'DefElem' && v.defname === 'transaction_isolation') iso = constString(v.arg);
  });
  return iso;
}

/** READ ONLY (true) or READ WRITE (false) among BEGIN / SET TRANSACTION options, if either is given (the last one counts). */
function readOnlyOf(options: unknown): boolean | undefined {
  let ro: boolean | undefined;
  walk(options, (k, v) => {
    if (k === 'DefElem' && v.defname === 'transaction_read_only') ro = constString(v.arg) === '1';
  });
  return ro;
}

const UNSUPPORTED: Record<string, string> = {
  VacuumStmt: 'VACUUM / ANALYZE inside a session',
  ListenStmt: 'LISTEN',
  UnlistenStmt: 'UNLISTEN',
  NotifyStmt: 'NOTIFY',
  CheckPointStmt: 'CHECKPOINT',
  ClusterStmt: 'CLUSTER',
  ReindexStmt: 'REINDEX',
  CreatedbStmt: 'CREATE DATABASE',
  DropdbStmt: 'DROP DATABASE',
  DiscardStmt: 'DISCARD',
  LoadStmt: 'LOAD',
  CreateSubscriptionStmt: 'CREATE SUBSCRIPTION',
};

/**
 * The statement name PostgreSQL's PreventInTransactionBlock reports for a statement that cannot
 * run inside a transaction block (utility.c, vacuum.c, indexcmds.c, tablecmds.c, cluster.c,
 * discard.c, xact.c), or undefined when the statement may run there.
 */
function refusedInBlock(type: string, body: Node): string | undefined {
  switch (type) {
    case 'VacuumStmt':
      // ANALYZE alone may run in a block; VACUUM (with or without ANALYZE) may not.
      return body.is_vacuumcmd === true ? 'VACUUM' : undefined;
    case 'IndexStmt':
      return body.concurrent === true ? 'CREATE INDEX CONCURRENTLY' : undefined;
    case 'DropStmt':
      return body.concurrent === true && body.removeType === 'OBJECT_INDEX' ? 'DROP INDEX CONCURRENTLY' : undefined;
    case 'ReindexStmt': {
      const concurrently = (body.params as Node[] | undefined)?.some((p) => (p.DefElem as Node | undefined)?.defname === 'concurrently');
      if (concurrently) return 'REINDEX CONCURRENTLY';
      return {
        REINDEX_OBJECT_SCHEMA: 'REINDEX SCHEMA',
        REINDEX_OBJECT_SYSTEM: 'REINDEX SYSTEM',
        REINDEX_OBJECT_DATABASE: 'REINDEX DATABASE',
      }[String(body.kind)];
    }
    case 'AlterSystemStmt':
      return 'ALTER SYSTEM';
    case 'CreatedbStmt':
      return 'CREATE DATABASE';
    case 'DropdbStmt':
      return 'DROP DATABASE';
    case 'CreateTableSpaceStmt':
      return 'CREATE TABLESPACE';
    case 'DropTableSpaceStmt':
      return 'DROP TABLESPACE';
    case 'ClusterStmt':
      // CLUSTER of one table may run in a block; CLUSTER of every clustered table may not.
      return body.relation ? undefined : 'CLUSTER';
    case 'DiscardStmt':
      return body.target === 'DISCARD_ALL' ? 'DISCARD ALL' : undefined;
    case 'AlterTableStmt': {
      let detach = false;
      walk(body.cmds, (k, v) => {
        if (k === 'PartitionCmd' && v.concurrent === true) detach = true;
      });
      return detach ? 'ALTER TABLE ... DETACH CONCURRENTLY' : undefined;
    }
    case 'TransactionStmt':
      return body.kind === 'TRANS_STMT_COMMIT_PREPARED'
        ? 'COMMIT PREPARED'
        : body.kind === 'TRANS_STMT_ROLLBACK_PREPARED'
          ? 'ROLLBACK PREPARED'
          : undefined;
  }
  return undefined;
}

function classify(stmt: Node, sql: string, charAt: (byteOffset: number) => number = (b) => b + 1): Classified {
  const [type, body] = Object.entries(stmt)[0] as [string, Node];
  // The engine dry-runs every statement inside a transaction block, so none of these can be staged.
  const refused = refusedInBlock(type, body);
  if (refused) return { kind: 'unsupported', what: refused, refusedInBlock: refused };
  switch (type) {
    case 'TransactionStmt': {
      switch (body.kind) {
        case 'TRANS_STMT_BEGIN':
          return {
            kind: 'txn',
            ctl: { kind: 'begin', isolation: isolationOf(body.options), readOnly: readOnlyOf(body.options), command: 'BEGIN' },
          };
        case 'TRANS_STMT_START':
          return {
            kind: 'txn',
            ctl: {
              kind: 'begin',
              isolation: isolationOf(body.options),
              readOnly: readOnlyOf(body.options),
              command: 'START TRANSACTION',
            },
          };
        case 'TRANS_STMT_COMMIT':
          return { kind: 'txn', ctl: { kind: 'commit' } };
        case 'TRANS_STMT_ROLLBACK':
          return { kind: 'txn', ctl: { kind: 'rollback' } };
        case 'TRANS_STMT_SAVEPOINT':
          return { kind: 'txn', ctl: { kind: 'savepoint', name: String(body.savepoint_name) } };
        case 'TRANS_STMT_RELEASE':
          return { kind: 'txn', ctl: { kind: 'release', name: String(body.savepoint_name) } };
        case 'TRANS_STMT_ROLLBACK_TO':
          return { kind: 'txn', ctl: { kind: 'rollback-to', name: String(body.savepoint_name) } };
        case 'TRANS_STMT_PREPARE':
          return { kind: 'unsupported', what: 'PREPARE TRANSACTION' };
        case 'TRANS_STMT_COMMIT_PREPARED':
          return { kind: 'unsupported', what: 'COMMIT PREPARED' };
        case 'TRANS_STMT_ROLLBACK_PREPARED':
          return { kind: 'unsupported', what: 'ROLLBACK PREPARED' };
        default:
          return { kind: 'unsupported', what: String(body.kind) };
      }
    }
    case 'VariableSetStmt': {
      const name = typeof body.name === 'string' ? body.name.toLowerCase() : null;
      if (body.kind === 'VAR_SET_MULTI') {
        if (name === 'transaction' || name === 'session characteristics')
          return {
            kind: 'set',
            local: name === 'transaction',
            name,
            reset: false,
            resetAll: false,
            setTransaction: true,
            isolation: isolationOf(body.args),
            readOnly: readOnlyOf(body.args),
          };
      }
      return {
        kind: 'set',
        local: body.is_local === true,
        name,
        reset: body.kind === 'VAR_RESET' || body.kind === 'VAR_SET_DEFAULT',
        resetAll: body.kind === 'VAR_RESET_ALL',
        setTransaction: false,
      };
    }
    case 'PrepareStmt':
      return { kind: 'prepare', name: String(body.name), prepared: prepareText(sql) };
    case 'ExecuteStmt':
      return { kind: 'execute', name: String(body.name), args: executeArgs(sql) };
    case 'DeallocateStmt':
      return { kind: 'deallocate', name: body.isall === true ? null : String(body.name) };
    case 'VariableShowStmt':
      return { kind: 'show', name: String(body.name).toLowerCase() };
    case 'CopyStmt':
      if (body.is_from === true && !body.filename) return { kind: 'unsupported', what: 'COPY … FROM STDIN' };
      break;
    case 'IndexStmt':
      if (body.concurrent === true) return { kind: 'unsupported', what: 'CREATE INDEX CONCURRENTLY' };
      break;
  }
  if (UNSUPPORTED[type] && !(type === 'VacuumStmt' && analyzeOfOneTable(body))) return { kind: 'unsupported', what: UNSUPPORTED[type] };

  let waitPolicy: 'block' | 'nowait' | 'skip' = 'block';
  const relations: string[] = [];
  const positions: Record<string, number> = {};
  let sleep: number | undefined;
  let sleepElsewhere = false;
  let onConflict = false;
  let onConflictTarget = false;
  let currentOf = false;
  walk(stmt, (k, v) => {
    if (k === 'onConflictClause' || k === 'OnConflictClause') {
      onConflict = true;
      if (v.infer) onConflictTarget = true;
    }
    if (k === 'CurrentOfExpr') currentOf = true;
    if (k === 'LockingClause') {
      if (v.waitPolicy === 'LockWaitSkip') waitPolicy = 'skip';
      else if (v.waitPolicy === 'LockWaitError' && waitPolicy === 'block') waitPolicy = 'nowait';
    } else if (k === 'RangeVar' || k === 'relation') {
      if (typeof v.relname === 'string' && !relations.includes(v.relname)) relations.push(v.relname);
      if (typeof v.relname === 'string' && typeof v.location === 'number' && !(v.relname in positions))
        positions[v.relname] = charAt(v.location);
    } else if (k === 'FuncCall') {
      const fn = (v.funcname as Node[] | undefined)?.map((p) => (p.String as Node | undefined)?.sval).at(-1);
      if (fn === 'pg_sleep' || fn === 'pg_sleep_for' || fn === 'pg_sleep_until') {
        const arg = constString((v.args as unknown[] | undefined)?.[0]);
        if (fn === 'pg_sleep' && arg !== undefined && !Number.isNaN(Number(arg))) sleep = Number(arg);
        else sleepElsewhere = true;
      }
    }
  });
  if (sleep !== undefined || sleepElsewhere) {
    const sel = stmt.SelectStmt as Node | undefined;
    const simple = sel && !sel.fromClause && (sel.targetList as unknown[]).length === 1 && !sleepElsewhere;
    if (!simple) return { kind: 'unsupported', what: 'pg_sleep other than a plain "SELECT pg_sleep(seconds)"' };
    return { kind: 'sleep', seconds: sleep ?? 0 };
  }
  const verb =
    type === 'SelectStmt'
      ? 'select'
      : type === 'UpdateStmt'
        ? 'update'
        : type === 'DeleteStmt'
          ? 'delete'
          : type === 'InsertStmt'
            ? 'insert'
            : type === 'MergeStmt'
              ? 'merge'
              : type === 'LockStmt'
                ? 'lock'
                : 'other';
  const lower = sql.toLowerCase();
  let modifyingCte = false;
  walk((stmt.SelectStmt as Node | undefined)?.withClause, (k) => {
    if (k === 'InsertStmt' || k === 'UpdateStmt' || k === 'DeleteStmt' || k === 'MergeStmt') modifyingCte = true;
  });
  const sel = stmt.SelectStmt as Node | undefined;
  const lockingSelect = !!sel && Array.isArray(sel.lockingClause) && sel.lockingClause.length > 0 && !modifyingCte && !sel.intoClause;
  let target: { relname: string; ref: string } | undefined;
  const rv = (n: unknown) => {
    const r = (n as Node | undefined)?.RangeVar as Node | undefined;
    return r ?? (n as Node | undefined);
  };
  const named = (r: Node | undefined) =>
    r && typeof r.relname === 'string'
      ? { relname: r.relname, ref: ((r.alias as Node | undefined)?.aliasname as string | undefined) ?? r.relname }
      : undefined;
  if (type === 'UpdateStmt' || type === 'DeleteStmt') target = named(rv(body.relation));
  else if (lockingSelect && Array.isArray(sel!.fromClause) && sel!.fromClause.length === 1)
    target = named((sel!.fromClause[0] as Node).RangeVar as Node | undefined);
  const mergeTarget = type === 'MergeStmt' ? named(rv(body.relation)) : undefined;
  let lockingCte: { name: string; relname: string; ref: string } | undefined;
  for (const c of ((body.withClause as Node | undefined)?.ctes as Node[] | undefined) ?? []) {
    const cte = c.CommonTableExpr as Node | undefined;
    const q = (cte?.ctequery as Node | undefined)?.SelectStmt as Node | undefined;
    if (!q || !Array.isArray(q.lockingClause) || !Array.isArray(q.fromClause) || q.fromClause.length !== 1) continue;
    const r = named((q.fromClause[0] as Node).RangeVar as Node | undefined);
    if (r) {
      lockingCte = { name: String(cte!.ctename), ...r };
      break;
    }
  }
  const lockingSublink = lockingSublinkOf(type, body);
  const droppedIndexes = type === 'DropStmt' && body.removeType === 'OBJECT_INDEX' ? droppedNames(body.objects) : [];
  const locksBeforeCheck = locksBeforeCheckOf(type, body);
  const constraintsSet =
    type === 'ConstraintsSetStmt'
      ? {
          names: Array.isArray(body.constraints)
            ? (body.constraints as Node[]).map((c) => String(((c.RangeVar as Node | undefined) ?? c).relname))
            : null,
          deferred: body.deferred === true,
        }
      : undefined;
  return {
    lockingSelect,
    ...(constraintsSet ? { constraintsSet } : {}),
    ...(droppedIndexes.length ? { droppedIndexes } : {}),
    ...(locksBeforeCheck ? { locksBeforeCheck } : {}),
    ...(target ? { target } : {}),
    ...(mergeTarget ? { mergeTarget } : {}),
    ...(lockingCte ? { lockingCte } : {}),
    ...(lockingSublink ? { lockingSublink } : {}),
    ...(onConflict ? { onConflict: true as const } : {}),
    ...(onConflictTarget ? { onConflictTarget: true as const } : {}),
    ...(currentOf ? { currentOf: true as const } : {}),
    kind: 'dml',
    waitPolicy,
    lockNowait: type === 'LockStmt' && body.nowait === true,
    relations,
    ...(verb !== 'lock' && verb !== 'other' && Object.keys(positions).length ? { relationPositions: positions } : {}),
    verb,
    mentionsAdvisory: lower.includes('advisory'),
    mentionsDiagnostics:
      /pg_locks|pg_stat_activity|pg_blocking_pids|pg_backend_pid|pg_cancel_backend|pg_terminate_backend|pg_prepared_statements/.test(lower),
  };
}

/** The last name of each qualified name in a DROP statement's object list. */
function droppedNames(objects: unknown): string[] {
  if (!Array.isArray(objects)) return [];
  return objects.flatMap((o) => {
    const items = (o as { List?: { items?: { String?: { sval?: string } }[] } }).List?.items ?? [];
    const last = items.at(-1)?.String?.sval;
    return last ? [last] : [];
  });
}

/**
 * Parsed step texts: the same texts come back in every permutation of a spec, every undo of the
 * player and every retry in the retry lab. A pure function of the text; entries are frozen (the
 * engine never changes a parsed statement) and the cache is dropped when it grows past a bound.
 */
const parsed = new Map<string, readonly ParsedStatement[]>();
const PARSED_MAX = 2000;

/** Splits a step's text into statements (PostgreSQL's own boundaries) and classifies each. */
export function parseStatements(text: string): ParsedStatement[] {
  let hit = parsed.get(text);
  if (!hit) {
    hit = deepFreeze(parseUncached(text));
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(text, hit);
  }
  return [...hit];
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

function parseUncached(text: string): ParsedStatement[] {
  let tree: { stmts?: { stmt: Node; stmt_location?: number; stmt_len?: number }[] };
  try {
    tree = parseSync(text) as typeof tree;
  } catch (e) {
    throw new ParseFailure((e as Error).message);
  }
  // stmt_location/stmt_len count bytes of UTF-8, not UTF-16 code units.
  const bytes = new TextEncoder().encode(text);
  const dec = new TextDecoder();
  // PostgreSQL's error positions count characters (code points), 1-based, in the whole string.
  const charAt = (b: number) => [...dec.decode(bytes.slice(0, b))].length + 1;
  return (tree.stmts ?? []).map((s) => {
    const start = s.stmt_location ?? 0;
    const end = s.stmt_len ? start + s.stmt_len : bytes.length;
    const sql = dec.decode(bytes.slice(start, end)).trim().replace(/;\s*$/, '');
    const staged = maintenanceLock(s.stmt);
    if (staged) {
      const [lock] = parseUncached(staged.sql);
      if (lock?.cls.kind === 'dml') return { sql: staged.sql, cls: { ...lock.cls, maintenance: staged.maintenance } };
    }
    return { sql, cls: classify(s.stmt, sql, charAt) };
  });
}

/**
 * VACUUM and VACUUM FULL of one named table change nothing a session can see: what they do to
 * the others is the lock they wait for and hold (vacuum_rel). VACUUM (with or without ANALYZE)
 * takes SHARE UPDATE EXCLUSIVE, so it queues behind DDL and ANALYZE but not behind DML; VACUUM
 * FULL rewrites the table under ACCESS EXCLUSIVE, so it waits for every reader and every later
 * reader waits for it. PGlite cannot run VACUUM inside the dry run's transaction block, so it is
 * staged as the LOCK TABLE of that lock, held until the end of its implicit transaction, with its
 * own command tag. Options that change what it reports or whether it waits (VERBOSE,
 * SKIP_LOCKED, …), several tables (each is processed in a transaction of its own) and a whole
 * database stay unstaged.
 */
function maintenanceLock(
  stmt: Node,
): { sql: string; maintenance: { command: string; refusedInBlock?: string; skipLocked?: string } } | undefined {
  const body = stmt.VacuumStmt as Node | undefined;
  if (!body) return undefined;
  const opt = (name: string) => ((body.options as Node[] | undefined) ?? []).some((o) => (o.DefElem as Node).defname === name);
  if (body.is_vacuumcmd !== true) {
    // ANALYZE (SKIP_LOCKED) asks for its lock conditionally; without the option it runs as it is.
    const rv = oneTableOf(body, ['skip_locked']);
    if (!rv || !opt('skip_locked')) return undefined;
    return {
      sql: `LOCK TABLE ${qualified(rv)} IN SHARE UPDATE EXCLUSIVE MODE NOWAIT`,
      maintenance: { command: 'ANALYZE', skipLocked: `skipping analyze of "${rv.relname as string}" --- lock not available` },
    };
  }
  const rv = oneTableOf(body, ['full', 'analyze', 'freeze', 'skip_locked']);
  if (!rv) return undefined;
  const full = opt('full');
  // SKIP_LOCKED: vacuum_open_relation asks with ConditionalLockRelationOid and, when the lock is
  // not free (held or asked for ahead by a conflicting mode), skips the table with a WARNING.
  const skip = opt('skip_locked');
  return {
    sql: `LOCK TABLE ${qualified(rv)} IN ${full ? 'ACCESS EXCLUSIVE' : 'SHARE UPDATE EXCLUSIVE'} MODE${skip ? ' NOWAIT' : ''}`,
    maintenance: {
      command: 'VACUUM',
      refusedInBlock: 'VACUUM',
      ...(skip ? { skipLocked: `skipping vacuum of "${rv.relname as string}" --- lock not available` } : {}),
    },
  };
}

/** A RangeVar's name as SQL text, quoted, with its schema when it has one. */
function qualified(rv: Node): string {
  const q = (n: string) => `"${n.replace(/"/g, '""')}"`;
  return `${typeof rv.schemaname === 'string' ? `${q(rv.schemaname)}.` : ''}${q(rv.relname as string)}`;
}

/**
 * The LOCK TABLE of what TRUNCATE and DROP TABLE lock before their checks: ExecuteTruncate
 * opens each named table (and, without ONLY, its children) in ACCESS EXCLUSIVE mode before
 * heap_truncate_check_FKs; RemoveRelations locks each named table before the dependency walk
 * that refuses to drop what other objects depend on.
 */
function locksBeforeCheckOf(type: string, body: Node): string | undefined {
  if (type === 'TruncateStmt') {
    const rels = ((body.relations as Node[] | undefined) ?? []).map((n) => (n.RangeVar as Node | undefined) ?? n);
    if (!rels.length || rels.some((r) => typeof r.relname !== 'string')) return undefined;
    return `LOCK TABLE ${rels.map((r) => `${r.inh === false ? 'ONLY ' : ''}${qualified(r)}`).join(', ')} IN ACCESS EXCLUSIVE MODE`;
  }
  if (type === 'DropStmt' && body.removeType === 'OBJECT_TABLE' && body.missing_ok !== true) {
    const names = droppedNames(body.objects);
    if (!names.length) return undefined;
    return `LOCK TABLE ${names.map((n) => `ONLY "${n.replace(/"/g, '""')}"`).join(', ')} IN ACCESS EXCLUSIVE MODE`;
  }
  return undefined;
}

/**
 * ANALYZE (without VACUUM) of one named table may run in a transaction block, so its dry run runs
 * it as it is: PGlite takes its SHARE UPDATE EXCLUSIVE lock on the table and ACCESS SHARE on its
 * indexes, held until the block ends, and changes nothing a session reads.
 */
function analyzeOfOneTable(body: Node): boolean {
  return body.is_vacuumcmd !== true && oneTableOf(body, []) !== undefined;
}

/** The one table a VACUUM / ANALYZE names, when its options are among `allowed` and take no argument. */
function oneTableOf(body: Node, allowed: string[]): Node | undefined {
  const rels = (body.rels as Node[] | undefined) ?? [];
  if (rels.length !== 1) return undefined;
  const opts = ((body.options as Node[] | undefined) ?? []).map((o) => o.DefElem as Node | undefined);
  if (opts.some((o) => !o || o.arg !== undefined || !allowed.includes(String(o.defname)))) return undefined;
  const rv = (rels[0].VacuumRelation as Node | undefined)?.relation as Node | undefined;
  return rv && typeof rv.relname === 'string' ? rv : undefined;
}

/**
 * A setup whose effect a TRUNCATE of its tables and a re-run of its data statements restore
 * exactly (sim/simDriver.ts, the explorer's cheaper start): per setup block, the text of its
 * INSERT / UPDATE / DELETE statements. Null when any statement is something else than a plain
 * permanent `CREATE TABLE` or a non-concurrent `CREATE INDEX` in schema public, or when such a
 * statement comes after a data statement: an index built over existing rows is laid out by a
 * bulk build, not by the inserts a restore would make, so only empty tables may get indexes.
 */
export function restorableSetup(blocks: readonly string[]): string[][] | null {
  let data = false;
  const out: string[][] = [];
  for (const text of blocks) {
    const dml: string[] = [];
    let tree: { stmts?: { stmt: Node; stmt_location?: number; stmt_len?: number }[] };
    try {
      tree = parseSync(text) as typeof tree;
    } catch {
      return null;
    }
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    for (const s of tree.stmts ?? []) {
      const [kind, body] = Object.entries(s.stmt)[0] as [string, Node];
      const rel = body.relation as { schemaname?: string; relpersistence?: string } | undefined;
      const inPublic = rel !== undefined && (rel.schemaname === undefined || rel.schemaname === 'public');
      if (kind === 'InsertStmt' || kind === 'UpdateStmt' || kind === 'DeleteStmt') {
        data = true;
        const start = s.stmt_location ?? 0;
        dml.push(dec.decode(bytes.slice(start, s.stmt_len ? start + s.stmt_len : bytes.length)).trim());
      } else if (data) return null;
      else if (kind === 'CreateStmt' && inPublic && rel.relpersistence === 'p' && !body.ofTypename && !body.partbound) continue;
      else if (kind === 'IndexStmt' && inPublic && !body.concurrent) continue;
      else return null;
    }
    out.push(dml);
  }
  return out;
}

/** Whether every statement of `text` is a DROP (a spec's teardown that only undoes what its setup created). */
export function onlyDrops(text: string): boolean {
  try {
    const stmts = (parseSync(text) as { stmts?: { stmt: Node }[] }).stmts ?? [];
    return stmts.every((s) => 'DropStmt' in s.stmt);
  } catch {
    return false;
  }
}

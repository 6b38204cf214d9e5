/**
 * The #/locks page's logic (pure): the sample schema, what a measured or documented lock
 * conflicts with, which everyday statements it blocks (derived from lock.c's conflict table in
 * engine/model/locks/modes.ts), the documented locks of statements PostgreSQL refuses inside a
 * transaction block, and the safer alternative for a statement, read from its parse tree.
 */
import { LOCK_CONFLICTS, TABLE_LOCK_MODES, conflicts, lockModeNumber } from '../../engine/model/locks/modes';
import type { LockMode } from '../../engine/model/locks/types';
import type { LocksAnswer, RelationLock, RowLock, StatementLocks } from '../../worker/protocol';
import { cellKey, type MatrixLights } from './matrix';

/** The sample schema: accounts, a table referencing it, and a materialized view over it (with a unique index). */
export const SAMPLE_SCHEMA = `CREATE TABLE accounts (id int PRIMARY KEY, balance numeric);
INSERT INTO accounts VALUES (1, 100), (2, 200), (3, 300);
CREATE TABLE transfers (
  id int PRIMARY KEY,
  from_id int NOT NULL REFERENCES accounts (id),
  to_id int NOT NULL REFERENCES accounts (id),
  amount numeric NOT NULL
);
INSERT INTO transfers VALUES (1, 1, 2, 10);
CREATE MATERIALIZED VIEW balances AS SELECT id, balance FROM accounts;
CREATE UNIQUE INDEX balances_id ON balances (id);`;

/** Statements the page offers to try on the sample schema. */
export const EXAMPLES: readonly string[] = [
  'ALTER TABLE accounts ADD COLUMN note text',
  'CREATE INDEX ON accounts (balance)',
  'CREATE INDEX CONCURRENTLY ON accounts (balance)',
  'UPDATE transfers SET from_id = 3 WHERE id = 1',
  'ALTER TABLE transfers ADD CONSTRAINT amount_positive CHECK (amount > 0)',
  'ALTER TABLE transfers ADD FOREIGN KEY (to_id) REFERENCES accounts (id) NOT VALID',
  'TRUNCATE transfers',
  'VACUUM FULL accounts',
  'REINDEX TABLE accounts',
  'REFRESH MATERIALIZED VIEW CONCURRENTLY balances',
  'CLUSTER accounts USING accounts_pkey',
  'LOCK TABLE accounts IN SHARE MODE',
  'GRANT SELECT ON accounts TO PUBLIC',
  'CREATE TRIGGER t BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()',
  'SELECT * FROM accounts WHERE id = 1 FOR UPDATE',
];

/**
 * Everyday statements and the table lock each takes on its table (PostgreSQL documentation
 * 13.3.1; the engine-side test measures each one). What a lock blocks is derived from these
 * modes and the conflict table, never listed per statement.
 */
export const EVERYDAY = [
  { id: 'select', sql: 'SELECT', mode: 'AccessShareLock' },
  { id: 'forUpdate', sql: 'SELECT … FOR UPDATE / FOR SHARE', mode: 'RowShareLock' },
  { id: 'dml', sql: 'INSERT / UPDATE / DELETE', mode: 'RowExclusiveLock' },
  { id: 'vacuum', sql: 'VACUUM / ANALYZE', mode: 'ShareUpdateExclusiveLock' },
  { id: 'createIndexConcurrently', sql: 'CREATE INDEX CONCURRENTLY', mode: 'ShareUpdateExclusiveLock' },
  { id: 'createIndex', sql: 'CREATE INDEX', mode: 'ShareLock' },
  { id: 'createTrigger', sql: 'CREATE TRIGGER', mode: 'ShareRowExclusiveLock' },
  { id: 'alterTable', sql: 'ALTER TABLE … ADD COLUMN / TRUNCATE / DROP', mode: 'AccessExclusiveLock' },
] as const satisfies readonly { id: string; sql: string; mode: LockMode }[];

export type EverydayId = (typeof EVERYDAY)[number]['id'];

/**
 * The everyday statements a lock in `mode` blocks (they would wait for it) and is blocked by
 * (it would wait for them, had they got there first). lock.c's table is symmetric, so both
 * lists are the same; they are computed each way all the same.
 */
export function everydayConflicts(mode: LockMode): { blocks: EverydayId[]; blockedBy: EverydayId[] } {
  return {
    blocks: EVERYDAY.filter((e) => conflicts(e.mode, mode)).map((e) => e.id),
    blockedBy: EVERYDAY.filter((e) => conflicts(mode, e.mode)).map((e) => e.id),
  };
}

/** The 8×8 matrix lit for one held lock: its row, the modes it conflicts with, and those cells. */
export function conflictLights(mode: LockMode): MatrixLights<LockMode> {
  const held = new Set<LockMode>(LOCK_CONFLICTS[mode]);
  return { waits: [], requested: new Set([mode]), held, conflicts: new Set([...held].map((h) => cellKey(mode, h))) };
}

/** Where a documented lock is stated: a section of PostgreSQL 18's documentation. */
export type DocSource = 'explicit-locking' | 'sql-dropindex' | 'sql-altertable';

/** A lock the documentation names for a statement that cannot be measured in a transaction block. */
export interface DocumentedLock {
  /** The relation the statement names; null when it names none (all tables of the database). */
  relation: string | null;
  /** What the relation is to the statement: its table, its index, or each table it works on. */
  role: 'table' | 'index' | 'each-table' | 'partitioned-table';
  mode: LockMode;
  source: DocSource;
}

type Node = Record<string, unknown>;

/** The statement's one node (`{ IndexStmt: {...} }` → ['IndexStmt', {...}]). */
function unwrap(stmt: unknown): [string, Node] {
  const [kind, body] = Object.entries((stmt ?? {}) as Record<string, unknown>)[0] ?? ['', {}];
  return [kind, (body ?? {}) as Node];
}

function relname(v: unknown): string | null {
  const r = v as { relname?: string; schemaname?: string } | undefined;
  return r?.relname ? (r.schemaname ? `${r.schemaname}.${r.relname}` : r.relname) : null;
}

function hasOption(body: Node, key: 'options' | 'params', name: string): boolean {
  const list = (body[key] as { DefElem?: { defname?: string } }[] | undefined) ?? [];
  return list.some((d) => d.DefElem?.defname === name);
}

function alterCmds(body: Node): Node[] {
  return ((body.cmds as { AlterTableCmd?: Node }[] | undefined) ?? []).map((c) => c.AlterTableCmd ?? {});
}

/**
 * The locks PostgreSQL's documentation gives for a statement refused inside a transaction block
 * (13.3.1 "Table-Level Locks", or the command's own reference page); null when it names none.
 */
export function documentedLocks(stmt: unknown): DocumentedLock[] | null {
  const [kind, body] = unwrap(stmt);
  switch (kind) {
    case 'IndexStmt':
      if (body.concurrent)
        return [{ relation: relname(body.relation), role: 'table', mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }];
      return null;
    case 'ReindexStmt': {
      if (!hasOption(body, 'params', 'concurrently')) return null;
      const target = relname(body.relation);
      const role = body.kind === 'REINDEX_OBJECT_INDEX' ? 'index' : target ? 'table' : 'each-table';
      return [{ relation: target, role, mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }];
    }
    case 'DropStmt': {
      if (!body.concurrent || body.removeType !== 'OBJECT_INDEX') return null;
      const names = ((body.objects as { List?: { items?: { String?: { sval?: string } }[] } }[] | undefined) ?? []).map(
        (o) => o.List?.items?.map((i) => i.String?.sval ?? '').join('.') ?? null,
      );
      return names.map((relation) => ({ relation, role: 'index', mode: 'ShareUpdateExclusiveLock', source: 'sql-dropindex' }));
    }
    case 'VacuumStmt': {
      if (!body.is_vacuumcmd) return null;
      const mode: LockMode = hasOption(body, 'options', 'full') ? 'AccessExclusiveLock' : 'ShareUpdateExclusiveLock';
      const rels = ((body.rels as { VacuumRelation?: { relation?: unknown } }[] | undefined) ?? []).map((r) =>
        relname(r.VacuumRelation?.relation),
      );
      if (!rels.length) return [{ relation: null, role: 'each-table', mode, source: 'explicit-locking' }];
      return rels.map((relation) => ({ relation, role: 'table', mode, source: 'explicit-locking' }));
    }
    case 'ClusterStmt':
      return [
        {
          relation: relname(body.relation),
          role: body.relation ? 'table' : 'each-table',
          mode: 'AccessExclusiveLock',
          source: 'explicit-locking',
        },
      ];
    case 'AlterTableStmt': {
      const detach = alterCmds(body).find((c) => c.subtype === 'AT_DetachPartition');
      if (!(detach?.def as { PartitionCmd?: { concurrent?: boolean } } | undefined)?.PartitionCmd?.concurrent) return null;
      return [{ relation: relname(body.relation), role: 'partitioned-table', mode: 'ShareUpdateExclusiveLock', source: 'sql-altertable' }];
    }
    default:
      return null;
  }
}

/** The safer ways the page suggests; the UI words them in both languages. */
export type Alternative =
  | 'create-index-concurrently'
  | 'reindex-concurrently'
  | 'drop-index-concurrently'
  | 'refresh-concurrently'
  | 'not-valid-validate'
  | 'lock-timeout-retry';

/**
 * What the course and PostgreSQL offer instead of `stmts` (parse trees), given the table locks
 * they take: the CONCURRENTLY form, NOT VALID + VALIDATE CONSTRAINT for a constraint checked
 * against every row, and, for any lock that blocks writers on an existing relation, a short
 * lock_timeout with a retry (a waiting ALTER queues every later SELECT behind it).
 */
export function alternatives(stmts: readonly unknown[], modes: readonly LockMode[]): Alternative[] {
  const out = new Set<Alternative>();
  for (const stmt of stmts) {
    const [kind, body] = unwrap(stmt);
    if (kind === 'IndexStmt' && !body.concurrent) out.add('create-index-concurrently');
    if (kind === 'ReindexStmt' && !hasOption(body, 'params', 'concurrently') && body.kind !== 'REINDEX_OBJECT_SYSTEM')
      out.add('reindex-concurrently');
    if (kind === 'DropStmt' && body.removeType === 'OBJECT_INDEX' && !body.concurrent) out.add('drop-index-concurrently');
    if (kind === 'RefreshMatViewStmt' && !body.concurrent) out.add('refresh-concurrently');
    if (kind === 'AlterTableStmt')
      for (const cmd of alterCmds(body)) {
        const c = (cmd.def as { Constraint?: Node } | undefined)?.Constraint;
        if (
          cmd.subtype === 'AT_AddConstraint' &&
          c &&
          (c.contype === 'CONSTR_FOREIGN' || c.contype === 'CONSTR_CHECK') &&
          !c.skip_validation
        )
          out.add('not-valid-validate');
      }
  }
  if (modes.some((m) => conflicts(m, 'RowExclusiveLock'))) out.add('lock-timeout-retry');
  return [...out];
}

/** One line of the result: a lock the statement holds, measured in PGlite or read from the documentation. */
export interface LockLine {
  /** The relation (null: a documented lock on every table the statement works on). */
  relation: string | null;
  mode: LockMode;
  source: 'measured' | 'documented';
  /** Measured: the relation's kind and owner; documented: its role in the statement. */
  kind: RelationLock['kind'] | DocumentedLock['role'];
  of?: string;
  /** The statement created the relation: nobody else can see it before the commit. */
  created: boolean;
  docSource?: DocSource;
}

/** What the page shows for one answer. */
export type LocksReport =
  | { kind: 'syntax'; where: 'schema' | 'statement'; message: string; line: number; column: number }
  | { kind: 'empty' }
  | { kind: 'transaction-control' }
  | { kind: 'schema-failed'; message: string; sqlstate: string }
  | { kind: 'failed'; message: string; sqlstate: string; detail?: string; hint?: string }
  | {
      kind: 'locks';
      /** The statement ran inside a transaction block and these were read from pg_locks. */
      measured: boolean;
      /** PostgreSQL refused it inside a block: its message (the statement must run on its own). */
      refusal?: string;
      /** Run on its own it failed: PostgreSQL's error. */
      aloneError?: { message: string; sqlstate: string };
      lines: LockLine[];
      rows: RowLock[];
      /** Notices and warnings PostgreSQL sent while the statement ran ("WARNING: …"). */
      notices: string[];
      xid: boolean;
      alternatives: Alternative[];
    };

/** The worker's answer as the page shows it. */
export function locksReport(answer: LocksAnswer): LocksReport {
  if (answer.kind !== 'result') {
    if (answer.kind === 'syntax') return { kind: 'syntax', where: answer.where, ...answer.problem };
    return answer;
  }
  const r: StatementLocks = answer.result;
  switch (r.outcome) {
    case 'schema-failed':
      return { kind: 'schema-failed', message: r.error.message, sqlstate: r.error.sqlstate };
    case 'failed':
      return {
        kind: 'failed',
        message: r.error.message,
        sqlstate: r.error.sqlstate,
        ...(r.error.detail ? { detail: r.error.detail } : {}),
        ...(r.error.hint ? { hint: r.error.hint } : {}),
      };
    case 'measured': {
      const lines: LockLine[] = r.relations.map((l) => ({
        relation: l.relation,
        mode: l.mode,
        source: 'measured',
        kind: l.kind,
        ...(l.of ? { of: l.of } : {}),
        created: l.created,
      }));
      const held = lines.filter((l) => !l.created).map((l) => l.mode);
      return {
        kind: 'locks',
        measured: true,
        lines,
        rows: r.rows,
        notices: r.notices.map(noticeText),
        xid: r.xid,
        alternatives: alternatives(answer.statements, held),
      };
    }
    case 'outside-block': {
      const lines: LockLine[] = answer.statements.flatMap((s) =>
        (documentedLocks(s) ?? []).map((d) => ({
          relation: d.relation,
          mode: d.mode,
          source: 'documented' as const,
          kind: d.role,
          created: false,
          docSource: d.source,
        })),
      );
      return {
        kind: 'locks',
        measured: false,
        refusal: r.refusal.message,
        ...(r.error ? { aloneError: { message: r.error.message, sqlstate: r.error.sqlstate } } : {}),
        lines,
        rows: [],
        notices: r.notices.map(noticeText),
        xid: false,
        alternatives: alternatives(
          answer.statements,
          lines.map((l) => l.mode),
        ),
      };
    }
  }
}

/** A notice as psql prints it: "NOTICE:  message". */
function noticeText(n: { severity: string; message: string }): string {
  return `${n.severity}:  ${n.message}`;
}

/** The line the page selects first: the strongest lock on a relation the statement did not create. */
export function firstLine(lines: readonly LockLine[]): number {
  let best = -1;
  lines.forEach((l, i) => {
    if (l.created) return;
    if (best < 0 || lockModeNumber(l.mode) > lockModeNumber(lines[best]!.mode)) best = i;
  });
  return best < 0 ? 0 : best;
}

/** The documentation page of a source, for the link the page shows. */
export function docUrl(source: DocSource): string {
  return `https://www.postgresql.org/docs/18/${source}.html${source === 'explicit-locking' ? '#LOCKING-TABLES' : ''}`;
}

export { TABLE_LOCK_MODES };

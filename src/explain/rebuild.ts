/**
 * A lab scenario rebuilt from an explained deadlock: a minimal schema and rows inferred from the
 * statements (their tables, key columns and the rows WHERE names), and one session per process.
 * The log shows only each process's last statement; what it had done before is inferred from the
 * edge that waits for it: it holds what its waiter needs. Each session first takes that
 * (`BEGIN; …`), then runs its logged statement, then commits. The victim waits first, so with the
 * default deadlock_timeout its check runs first and finds the cycle, as the log says it did.
 */
import type { LabScenario } from '../scenario/labScenario';
import type { CycleEdge, CycleProcess, Explanation } from './explain';
import { namedRows, type Literal, type StatementFacts } from './statements';

/** Why a scenario could not be rebuilt. */
/** 'batch': a multi-row statement deadlocks inside itself, which steps of whole statements cannot replay. */
/** 'foreign-key': the cycle runs through a foreign-key check, and the schema the rebuild infers has no foreign keys. */
export type RebuildProblem = 'no-statements' | 'open-cycle' | 'unreadable-statement' | 'no-table' | 'batch' | 'parameters' | 'foreign-key';

/** The rebuilt scenario, the parts that are guesses, or why there is none. */
export type Rebuild =
  | {
      ok: true;
      scenario: LabScenario;
      /** The same sessions with the course's fix applied, when the fix is a change of these steps. */
      fixed?: LabScenario;
      guessed: { table: string; column: string }[];
    }
  | { ok: false; problem: RebuildProblem; name?: string };

/** A column of an inferred table. */
interface Column {
  name: string;
  type: 'int' | 'numeric' | 'text' | 'bool';
}

interface Table {
  name: string;
  key?: Column;
  columns: Column[];
  rows: Map<string, Literal>;
}

const SQL_TYPE: Record<Column['type'], string> = { int: 'int', numeric: 'numeric', text: 'text', bool: 'boolean' };
/** Placeholder values for the columns no statement gives a value; the lab lets the user correct them. */
const PLACEHOLDER: Record<Column['type'], string> = { int: '0', numeric: '1000', text: "''", bool: 'false' };

/** An identifier as SQL: bare when it is a plain lower-case name, quoted otherwise. */
export function ident(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** The weakest table lock mode that conflicts with `mode` (lock.c's conflict table), as LOCK TABLE words it. */
const WEAKEST_CONFLICT: Record<string, string> = {
  AccessShareLock: 'ACCESS EXCLUSIVE',
  RowShareLock: 'EXCLUSIVE',
  RowExclusiveLock: 'SHARE',
  ShareUpdateExclusiveLock: 'SHARE UPDATE EXCLUSIVE',
  ShareLock: 'ROW EXCLUSIVE',
  ShareRowExclusiveLock: 'ROW EXCLUSIVE',
  ExclusiveLock: 'ROW SHARE',
  AccessExclusiveLock: 'ACCESS SHARE',
};

function tablesOf(facts: StatementFacts[]): Map<string, Table> {
  const tables = new Map<string, Table>();
  const table = (name: string) => {
    let t = tables.get(name);
    if (!t) tables.set(name, (t = { name, columns: [], rows: new Map() }));
    return t;
  };
  const column = (t: Table, name: string, type: Column['type']) => {
    if (t.key?.name === name || t.columns.some((c) => c.name === name)) return;
    t.columns.push({ name, type });
  };
  for (const f of facts) {
    const target = f.tables[0];
    if (!target) continue;
    const t = table(target);
    for (const r of namedRows(f)) {
      t.key ??= { name: r.column, type: r.value.type };
      // Rows an INSERT creates must not exist yet; rows others name must.
      if (f.kind !== 'insert' && r.column === t.key.name) t.rows.set(r.value.sql, r.value);
    }
    for (const s of f.setColumns) column(t, s.column, s.numeric ? 'numeric' : 'text');
    f.insertColumns.forEach((c, i) => column(t, c, f.insertRows[0]?.[i]?.type ?? 'text'));
    for (const k of f.keys.slice(1)) column(t, k.column, k.values[0].type);
  }
  for (const t of tables.values()) t.columns = t.columns.filter((c) => c.name !== t.key?.name);
  return tables;
}

function createTable(t: Table): string {
  const cols = [
    ...(t.key ? [`${ident(t.key.name)} ${SQL_TYPE[t.key.type]} PRIMARY KEY`] : []),
    ...t.columns.map((c) => `${ident(c.name)} ${SQL_TYPE[c.type]}`),
  ];
  if (!cols.length) cols.push('id int PRIMARY KEY');
  const create = `CREATE TABLE ${ident(t.name)} (${cols.join(', ')});`;
  if (!t.key || !t.rows.size) return create;
  const rows = sortedValues([...t.rows.values()]).map((v) => `(${[v.sql, ...t.columns.map((c) => PLACEHOLDER[c.type])].join(', ')})`);
  return `${create}\nINSERT INTO ${ident(t.name)} VALUES ${rows.join(', ')};`;
}

const statementText = (sql: string) => (/;\s*$/.test(sql) ? sql.trim() : `${sql.trim()};`);

/** What `holder` must already hold for `edge` (waiter → holder) to wait: a statement, or null when its own wait is enough. */
function prepFor(edge: CycleEdge, waiter: CycleProcess, sameRow: boolean): string | null {
  const facts = waiter.reading?.ok ? waiter.reading.facts : null;
  if (!facts || !waiter.sql) return null;
  const table = facts.tables[0];
  switch (edge.meaning.kind) {
    case 'row': {
      const rows = namedRows(facts);
      // A lock upgrade: both first share the row, then both want to change it.
      if (sameRow && rows.length && table) {
        const where = rows.map((r) => `${ident(r.column)} = ${r.value.sql}`).join(' OR ');
        return `SELECT * FROM ${ident(table)} WHERE ${where} FOR SHARE;`;
      }
      return statementText(waiter.sql);
    }
    case 'tuple-queue':
      return null;
    case 'relation': {
      const t = edge.meaning.table ?? table;
      if (!t) return null;
      const mode = WEAKEST_CONFLICT[edge.mode];
      if (mode === 'ACCESS SHARE') return `SELECT count(*) FROM ${ident(t)};`;
      return mode ? `LOCK TABLE ${ident(t)} IN ${mode} MODE;` : null;
    }
    case 'advisory':
      return `SELECT pg_advisory_xact_lock(${edge.meaning.key});`;
    case 'other':
      return null;
  }
}

/** The scenario that replays the explained deadlock, or why it cannot be rebuilt. */
export function rebuildScenario(ex: Explanation, title: string): Rebuild {
  if (ex.gaps.some((g) => g.code === 'open-cycle')) return { ok: false, problem: 'open-cycle' };
  if (ex.gaps.some((g) => g.code === 'no-statements')) return { ok: false, problem: 'no-statements' };
  const unreadable = ex.processes.find((p) => !p.reading?.ok || !p.reading.facts || !p.sql);
  if (unreadable) return { ok: false, problem: 'unreadable-statement', name: unreadable.name };
  const facts = ex.processes.map((p) => (p.reading as { ok: true; facts: StatementFacts }).facts);
  if (facts.some((f) => f.params)) return { ok: false, problem: 'parameters' };
  if (ex.cause.kind === 'fk-parent') return { ok: false, problem: 'foreign-key' };
  if (facts.some((f) => f.kind === 'insert' && f.insertRows.length > 1)) return { ok: false, problem: 'batch' };
  const tables = tablesOf(facts);
  if (!tables.size) return { ok: false, problem: 'no-table' };
  const sameRow = ex.cause.kind === 'lock-upgrade';
  const byName = new Map(ex.processes.map((p) => [p.name, p]));
  const prep = new Map<string, string[]>();
  for (const e of ex.edges) {
    const sql = prepFor(e, byName.get(e.from)!, sameRow);
    if (sql && !(prep.get(e.to) ?? []).includes(sql)) prep.set(e.to, [...(prep.get(e.to) ?? []), sql]);
  }
  const sessions = ex.processes.map((p) => {
    const id = p.name.toLowerCase();
    return {
      name: p.name,
      steps: [
        { name: `${id}1`, sql: ['BEGIN;', ...(prep.get(p.name) ?? [])].join(' ') },
        { name: `${id}2`, sql: statementText(p.sql!) },
        { name: `${id}3`, sql: 'COMMIT;' },
      ],
    };
  });
  // Processes are in cycle order from the victim (each waits for the next): the victim waits
  // first, and once it is cancelled the process waiting for it goes on, then the one before that.
  const ids = sessions.map((s) => s.name.toLowerCase());
  const commits = [ids[0], ...ids.slice(1).reverse()];
  const order = [...ids.map((i) => `${i}1`), ...ids.map((i) => `${i}2`), ...commits.map((i) => `${i}3`)].join(' ');
  const list = [...tables.values()];
  const scenario: LabScenario = {
    title,
    setup: list.map(createTable),
    teardown: list.map((t) => `DROP TABLE ${ident(t.name)};`).join(' '),
    sessions,
    order,
  };
  const fixed = fixedScenario(ex, facts, scenario);
  return {
    ok: true,
    scenario,
    ...(fixed ? { fixed } : {}),
    guessed: list.flatMap((t) => t.columns.filter(() => t.rows.size > 0).map((c) => ({ table: t.name, column: c.name }))),
  };
}

/** Literals in key order: numbers by value, anything else as text. */
function sortedValues(values: Literal[]): Literal[] {
  const numeric = values.every((v) => v.type === 'int' || v.type === 'numeric');
  return [...values].sort((a, b) => (numeric ? Number(a.sql) - Number(b.sql) : a.sql < b.sql ? -1 : a.sql > b.sql ? 1 : 0));
}

/**
 * The course's fix as a change of the rebuilt steps. Opposite order: every transaction first locks
 * all the rows it will change, in key order (`… WHERE id IN (…) ORDER BY id FOR UPDATE`). A lock
 * upgrade: the first read takes FOR UPDATE instead of FOR SHARE. Other causes change more than
 * these steps (the schema, the migration's timing), so the user applies them in the lab.
 */
function fixedScenario(ex: Explanation, facts: StatementFacts[], sc: LabScenario): LabScenario | undefined {
  const title = `${sc.title} + fix`;
  if (ex.cause.kind === 'lock-upgrade') {
    const sessions = sc.sessions.map((s) => ({
      ...s,
      steps: s.steps.map((st, i) => (i === 0 ? { ...st, sql: st.sql.replace(/ FOR SHARE;$/, ' FOR UPDATE;') } : st)),
    }));
    return { ...sc, title, sessions };
  }
  if (ex.cause.kind !== 'opposite-order') return undefined;
  const rows = facts.flatMap((f) => namedRows(f));
  const [first] = rows;
  if (!first || rows.some((r) => r.table !== first.table || r.column !== first.column)) return undefined;
  const values = sortedValues([...new Map(rows.map((r) => [r.value.sql, r.value])).values()]);
  const col = ident(first.column);
  const lockAll = `SELECT * FROM ${ident(first.table)} WHERE ${col} IN (${values.map((v) => v.sql).join(', ')}) ORDER BY ${col} FOR UPDATE;`;
  const sessions = sc.sessions.map((s) => ({
    ...s,
    steps: s.steps.map((st, i) => (i === 0 ? { ...st, sql: st.sql.replace(/^BEGIN;/, `BEGIN; ${lockAll}`) } : st)),
  }));
  return { ...sc, title, sessions };
}

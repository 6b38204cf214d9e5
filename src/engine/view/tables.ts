/** Table contents for the data view: committed rows and each session's MVCC view. */
import type { EngineContext } from '../context';
import type { CatalogTable } from '../model/facts';
import type { LogEntry } from '../model/log';
import { beginSql, ident } from '../pg/replay';
import type { RowSnapshot, StatementResult, TableSnapshot } from '../types';

/**
 * Reads table contents for the data view (async: asks PGlite): the committed rows with their
 * row-lock owners, and for every session in a transaction what a plain SELECT would show it
 * now (its own uncommitted changes, and — under REPEATABLE READ — its snapshot).
 */
export async function refreshTablesOf(eng: EngineContext): Promise<void> {
  const selects = eng.catalog.map((t) => `SELECT ctid::text AS ctid, * FROM ${ident(t.name)} ORDER BY ctid LIMIT 200`);
  if (!selects.length) {
    eng.tables = [];
    eng.views = {};
    return;
  }
  const locks = eng.rows.all();
  const toTables = (results: StatementResult[], withLocks: boolean): TableSnapshot[] =>
    eng.catalog.flatMap((t, i) => {
      const res = results[i];
      if (!res?.columns) return [];
      return [
        {
          name: t.name,
          columns: res.columns.slice(1),
          rows: (res.rows ?? []).map((row) => {
            const ctid = row[0]!;
            const holders = withLocks
              ? (locks.find((l) => l.tuple.oid === t.oid && `(${l.tuple.block},${l.tuple.offset})` === ctid)?.holders ?? [])
              : [];
            return { ctid, values: row.slice(1), lockers: holders.map((h) => ({ session: h.session, mode: h.mode })) };
          }),
        },
      ];
    });
  const committed = await eng.ex.run(selects.join(';\n'));
  eng.tables = toTables(committed.results, true);
  // A session's view is computed, not replayed: a replay would leave dead tuples behind and
  // change where later row versions go, so undo would no longer restore identical ctids.
  const views: Record<string, TableSnapshot[]> = {};
  for (const s of eng.sessions.values()) {
    if (!s.txn || s.txn.aborted || (!s.txn.log.length && !s.txn.snapshot)) continue;
    let base = eng.tables;
    if (s.txn.snapshot) {
      // REPEATABLE READ: the rows its snapshot sees (a read-only transaction writes nothing).
      const begin = await beginSql(eng, s, false);
      const r = await eng.ex.run(`${begin.sql}${selects.join(';\n')};\nROLLBACK`);
      if (r.error) {
        await eng.ex.run('ROLLBACK');
        continue;
      }
      base = toTables(r.results.slice(begin.count, begin.count + selects.length), false);
    }
    views[s.name] = applyImages(base, eng.catalog, s.txn.log);
  }
  eng.views = views;
}

/** A session's own uncommitted changes (its row images) applied over the rows it can see. */
export function applyImages(base: TableSnapshot[], catalog: CatalogTable[], log: LogEntry[]): TableSnapshot[] {
  const tables = base.map((t) => ({
    ...t,
    rows: t.rows.map((r) => ({ ...r, lockers: [] as RowSnapshot['lockers'], values: [...r.values] })),
  }));
  const own = new Map<string, RowSnapshot>();
  const byOid = (oid: number) => {
    const name = catalog.find((c) => c.oid === oid)?.name;
    return tables.find((t) => t.name === name);
  };
  const find = (ref: { rel: number; ctid: string; own: boolean }) =>
    ref.own ? own.get(`${ref.rel}:${ref.ctid}`) : byOid(ref.rel)?.rows.find((r) => r.ctid === ref.ctid);
  const setValues = (t: TableSnapshot, row: RowSnapshot, cols: string[], vals: (string | null)[]) =>
    cols.forEach((c, i) => {
      const at = t.columns.indexOf(c);
      if (at >= 0) row.values[at] = vals[i];
    });
  for (const e of log) {
    if (e.kind !== 'image') continue;
    for (const op of e.ops) {
      if (op.op === 'lock' || op.op === 'advisory') continue;
      const t = byOid(op.op === 'insert' ? op.rel : op.target.rel);
      if (!t) continue;
      if (op.op === 'insert') {
        const row: RowSnapshot = { ctid: '', values: t.columns.map(() => null), lockers: [] };
        setValues(t, row, op.columns, op.values);
        t.rows.push(row);
        own.set(`${op.rel}:${op.newCtid}`, row);
        continue;
      }
      const row = find(op.target);
      if (!row) continue;
      if (op.op === 'delete') t.rows = t.rows.filter((r) => r !== row);
      else {
        setValues(t, row, op.columns, op.values);
        row.ctid = '';
        own.set(`${op.target.rel}:${op.newCtid}`, row);
      }
    }
  }
  return tables;
}

/** Table contents for the data view: committed rows and each session's MVCC view (pure; pg/tables.ts reads them). */
import type { CatalogTable } from '../model/facts';
import type { LogEntry } from '../model/log';
import type { RowLockTable } from '../model/rowlocks';
import type { RowSnapshot, StatementResult, TableSnapshot } from '../types';

/** Table snapshots from `SELECT ctid, *` results in catalog order, each row with the row locks in `locks` on it. */
export function tableSnapshots(
  catalog: CatalogTable[],
  locks: ReturnType<RowLockTable['all']>,
  results: StatementResult[],
): TableSnapshot[] {
  return catalog.flatMap((t, i) => {
    const res = results[i];
    if (!res?.columns) return [];
    return [
      {
        name: t.name,
        columns: res.columns.slice(1),
        rows: (res.rows ?? []).map((row) => {
          const ctid = row[0]!;
          const holders = locks.find((l) => l.tuple.oid === t.oid && `(${l.tuple.block},${l.tuple.offset})` === ctid)?.holders ?? [];
          return { ctid, values: row.slice(1), lockers: holders.map((h) => ({ session: h.session, mode: h.mode })) };
        }),
      },
    ];
  });
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

/** Reads the tables for the data view from PGlite; view/tables.ts shapes them. */
import type { EngineContext } from '../context';
import type { StatementResult, TableSnapshot } from '../types';
import { applyImages, tableSnapshots } from '../view/tables';
import { Batch } from './batch';
import { beginSql, ident } from './replay';

/**
 * Reads table contents for the data view (async: asks PGlite): the committed rows with their
 * row-lock owners, and for every session in a transaction what a plain SELECT would show it
 * now (its own uncommitted changes, and — under REPEATABLE READ — its snapshot).
 */
export async function refreshTablesOf(eng: EngineContext): Promise<void> {
  const selects = eng.catalog.map((t) => `SELECT ctid::text AS ctid, * FROM ${t.sqlName ?? ident(t.name)} ORDER BY ctid LIMIT 200`);
  if (!selects.length) {
    eng.tables = [];
    eng.views = {};
    return;
  }
  const locks = eng.rows.all();
  const toTables = (results: StatementResult[], withLocks: boolean) => tableSnapshots(eng.catalog, withLocks ? locks : [], results);
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
      const r = await new Batch()
        .add('begin', begin.sql, begin.count)
        .add('selects', `${selects.join(';\n')};\n`, selects.length)
        .add('rollback', 'ROLLBACK', 1)
        .run(eng.ex);
      if (r.error) {
        await eng.ex.run('ROLLBACK');
        continue;
      }
      base = toTables(r.all('selects'), false);
    }
    views[s.name] = applyImages(base, eng.catalog, s.txn.log);
  }
  eng.views = views;
}

/** A locking SELECT run as a cursor, one row per FETCH, to learn the order it locks rows in. */
import type { EngineContext } from '../context';
import { EngineInternalError } from '../errors';
import { parseLockSample } from './footprint';
import { FOOTPRINT_SQL, scanRowsFromPages, splitFootprint } from './pageScan';
import type { ParsedStatement } from '../sql';
import type { RawResult, StatementResult } from '../types';
import { Batch, type BatchResult } from './batch';

/**
 * Runs the statement being tried. A locking SELECT runs as a cursor, one row per FETCH, each
 * FETCH in its own savepoint: every row's lock then carries a distinct subtransaction id, which
 * tells the order PostgreSQL locked the rows in (what ORDER BY … FOR UPDATE is about).
 */
export async function runStatement(
  eng: EngineContext,
  st: ParsedStatement,
  all: BatchResult,
): Promise<{ raw: RawResult; order: boolean; afterRows?: (string | null)[][]; scanRows?: (string | null)[][]; rowsBeforeError?: number }> {
  const order = true;
  if (st.cls.kind !== 'dml' || !st.cls.lockingSelect) return { raw: await eng.ex.run(st.sql), order: false };
  // The dry run's first round trip declared the cursor and ran a first batch of fetches and, in
  // a savepoint, the footprint queries (addCursor).
  const notices = all.noticesFrom('cursor');
  if (all.all('cursor').length < 2) {
    await eng.ex.run('ROLLBACK TO SAVEPOINT lockstep_c');
    return { raw: await eng.ex.run(st.sql), order: false };
  }
  const rows: (string | null)[][] = [];
  let columns: string[] | undefined;
  // FETCH results of one batch from `from` on (SAVEPOINT, FETCH pairs); true once the cursor is exhausted.
  const take = (batch: StatementResult[], from: number): boolean | 'error' => {
    for (let k = 0; k < CURSOR_BATCH; k++) {
      const fetched = batch[from + 2 * k + 1];
      if (!fetched) return 'error';
      columns ??= fetched.columns;
      if (!fetched.rows?.length) return true;
      rows.push(...fetched.rows);
    }
    return false;
  };
  let done = take(all.raw.results, all.batch.start('fetches'));
  if (done === 'error' && !all.error) throw new EngineInternalError('a FETCH of a locking SELECT returned nothing');
  if (done === 'error') return { raw: { results: [], error: all.error, notices }, order, rowsBeforeError: rows.length };
  const result = () => ({ results: [{ command: `SELECT ${rows.length}`, ...(columns ? { columns } : {}), rows }], notices });
  if (all.error) {
    await eng.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
    throw new EngineInternalError(`footprint of a locking SELECT failed: ${all.error.message}`);
  }
  if (done) {
    const fp = splitFootprint(all.get('after')?.rows ?? []);
    const scanRows = await scanRowsFromPages(eng.ex, fp.pages, parseLockSample(fp.sample, eng.relations).xids);
    return { raw: result(), order, afterRows: fp.sample, scanRows };
  }
  // More rows than one batch: undo the footprint queries' own locks and go on fetching; the
  // dry run then samples and scans on its own.
  let undo = 'ROLLBACK TO SAVEPOINT lockstep_s;\n';
  while (!done) {
    const f = await new Batch()
      .add('undo', undo, undo ? 1 : 0)
      .add('fetches', FETCH_PAIR.repeat(CURSOR_BATCH), 2 * CURSOR_BATCH)
      .run(eng.ex);
    notices.push(...f.raw.notices);
    done = take(f.raw.results, f.batch.start('fetches'));
    if (done === 'error') return { raw: { results: [], error: f.error, notices }, order, rowsBeforeError: rows.length };
    undo = '';
  }
  return { raw: result(), order };
}

/** FETCHes a locking SELECT's cursor runs per round trip (each in its own savepoint, see runStatement). */
export const CURSOR_BATCH = 8;
export const FETCH_PAIR = 'SAVEPOINT lockstep_f;\nFETCH 1 FROM lockstep_cursor;\n';

/**
 * A locking SELECT as a cursor (decision 2), with a first batch of fetches and the footprint
 * queries, in a savepoint of their own (their AccessShareLocks are undone if more rows follow).
 * Fetches past the end return nothing and lock nothing. Slots: cursor (SAVEPOINT, DECLARE),
 * fetches (SAVEPOINT/FETCH pairs), footprint (its SAVEPOINT), after (the lock sample and the
 * pages of the tuple scan, pageScan.ts).
 */
export function addCursor(b: Batch, sql: string): Batch {
  return b
    .add('cursor', `;\nSAVEPOINT lockstep_c;\nDECLARE lockstep_cursor NO SCROLL CURSOR FOR ${sql};\n`, 2)
    .add('fetches', FETCH_PAIR.repeat(CURSOR_BATCH), 2 * CURSOR_BATCH)
    .add('footprint', 'SAVEPOINT lockstep_s;\n', 1)
    .add('after', FOOTPRINT_SQL, 1);
}

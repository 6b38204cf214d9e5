/** Session settings (GUCs) as PGlite computes them: timeouts and the isolation default. */
import type { EngineContext } from '../context';
import { gucSql } from './replay';
import type { ParsedStatement } from '../sql';
import type { Sess } from '../state';
import type { IsolationLevel } from '../types';

/** After a SET/RESET/SHOW: record it for replay and refresh the values the engine needs. */
export async function afterSet(eng: EngineContext, s: Sess, st: ParsedStatement): Promise<void> {
  if (st.cls.kind !== 'set') return;
  const txn = s.txn!;
  // GUC statements are replayed from their own lists, not from the data log. A SET belongs to
  // its transaction, an implicit one too (a query string of several statements): it becomes the
  // session's at COMMIT and is undone when the block fails.
  if (st.cls.local) txn.localSets.push(st.sql);
  else {
    txn.sets.push(st.sql);
    // A SET after a SET LOCAL of the transaction overrides it, and the SET LOCAL list is
    // replayed after the SET list: the SET goes there too, to stay after it.
    if (txn.localSets.length) txn.localSets.push(st.sql);
  }
  await refreshSessionGucs(eng, s);
}

/** Reads the effective timeouts and isolation default of a session (or all sessions) from PGlite. */
export async function refreshSessionGucs(eng: EngineContext, only?: Sess): Promise<void> {
  for (const s of only ? [only] : eng.sessions.values()) {
    // A session with no SET of its own has the server defaults (read once by the executor).
    const sets = gucSql(eng, s);
    const rows = !sets ? eng.ex.defaultGucs : (eng.ex.gucMemo.get(sets) ?? (await readGucs(eng, sets)));
    for (const [name, setting, unit, shown] of rows) {
      s.gucs[name!] = shown!;
      const ms = Number(setting) * (unit === 's' ? 1000 : unit === 'min' ? 60000 : 1);
      if (name === 'deadlock_timeout') s.timeouts.deadlock = ms;
      else if (name === 'lock_timeout') s.timeouts.lock = ms;
      else if (name === 'statement_timeout') s.timeouts.statement = ms;
      else if (name === 'idle_in_transaction_session_timeout') s.timeouts.idle = ms;
      else if (name === 'default_transaction_isolation') s.defaultIsolation = setting as IsolationLevel;
      else if (name === 'default_transaction_read_only') s.defaultReadOnly = setting === 'on';
    }
  }
}

/**
 * The settings a list of SET statements leaves, as PGlite computes them. They depend on nothing
 * but the statements and the server's defaults (no data, no catalog: a role's or database's
 * defaults apply only at connection start), so the executor remembers them: every explored order
 * and every undo runs the same session setups again.
 */
async function readGucs(eng: EngineContext, sets: string): Promise<(string | null)[][]> {
  const r = await eng.ex.run(`BEGIN;\n${sets}EXECUTE lockstep_gucs;\nROLLBACK`);
  const rows = r.results.find((x) => x.columns?.length === 4)?.rows;
  if (!rows) return [];
  if (eng.ex.gucMemo.size >= GUC_MEMO_SIZE) eng.ex.gucMemo.clear();
  eng.ex.gucMemo.set(sets, rows);
  return rows;
}

/** Distinct SET lists remembered per executor before the memo starts over. */
const GUC_MEMO_SIZE = 512;

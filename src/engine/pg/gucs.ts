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
    const rows = !gucSql(eng, s)
      ? eng.ex.defaultGucs
      : ((await eng.ex.run(`BEGIN;\n${gucSql(eng, s)}EXECUTE lockstep_gucs;\nROLLBACK`)).results.find((x) => x.columns?.length === 4)
          ?.rows ?? []);
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

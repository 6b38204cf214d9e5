/** Session settings (GUCs) as PGlite computes them: timeouts and the isolation default. */
import type { EngineContext } from '../context';
import { gucSql, literal } from './replay';
import { calledFunctionNames, setConfigCalls } from '../approximations';
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

/**
 * The settings a statement changed without being a SET: `set_config(…)`, or a SET or set_config
 * inside a function it called (one without its own SET clause for that setting, which would have
 * put it back on return). Each change is recorded as the SET that makes it, in the transaction's
 * lists like a SET statement (afterSet), so it becomes the session's at COMMIT, goes with a failed
 * block or ROLLBACK TO, and the timers read it. Returns whether anything changed.
 */
export async function afterStatementGucs(eng: EngineContext, s: Sess, st: ParsedStatement, rows: (string | null)[][]): Promise<boolean> {
  const was = new Map(eng.ex.defaultGucs.map((r) => [r[0]!, r[3]]));
  for (const [name, shown] of Object.entries(s.gucs)) was.set(name, shown);
  const changed = rows.filter((r) => r[0] && was.get(r[0]) !== r[3]);
  if (!changed.length) return false;
  const written = setConfigCalls(st.sql);
  const txn = s.txn!;
  for (const [name, , , shown] of changed) {
    const local = written.get(name!) ?? (await localInFunction(eng, name!, calledFunctionNames(st.sql)));
    const sql = `SET ${local ? 'LOCAL ' : ''}${name} = ${literal(shown ?? '')}`;
    if (local) txn.localSets.push(sql);
    else {
      txn.sets.push(sql);
      if (txn.localSets.length) txn.localSets.push(sql);
    }
  }
  await refreshSessionGucs(eng, s);
  return true;
}

/**
 * Whether a change of `name` made inside a function was a transaction-local one: the source of
 * a function the statement calls (of any user function that sets it, when the change came from
 * deeper down) sets it with SET LOCAL or set_config(…, true). The source is read as text, not
 * parsed, so a function that does both ways is taken as local.
 */
async function localInFunction(eng: EngineContext, name: string, called: string[]): Promise<boolean> {
  const r = await eng.ex.must(
    `SELECT p.proname, p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prosrc ILIKE ${literal(`%${name}%`)}`,
  );
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const setLocal = new RegExp(`\\bset\\s+local\\s+${esc}\\b`, 'i');
  const configLocal = new RegExp(`set_config\\s*\\(\\s*'${esc}'[^;]*,\\s*true\\s*\\)`, 'i');
  const direct = r.filter(([fn]) => called.includes(fn!));
  return (direct.length ? direct : r).some(([, src]) => setLocal.test(src ?? '') || configLocal.test(src ?? ''));
}

/**
 * Deferred unique constraints, checked at COMMIT and at SET CONSTRAINTS … IMMEDIATE.
 *
 * A DEFERRABLE unique constraint's index takes a duplicate in (UNIQUE_CHECK_PARTIAL) and queues
 * a recheck of the new row (unique_key_recheck), which the index insert asks for only when it met
 * a possible duplicate. The recheck runs _bt_check_unique for real: it waits for an open
 * transaction that inserted the key, or that updated or deleted a committed row with it, and
 * raises 23505 when a live row holds the key (a committed one, or another of the transaction's
 * own). The replay in PGlite sits on the committed rows and the transaction's own, so a query
 * there finds those duplicates; the model knows the other transactions' keys and changed rows.
 */
import type { EngineContext } from '../context';
import { keyOwner, waitOnXid } from '../model/acquire';
import { PG, xactWaitContext } from '../model/messages';
import { groupBy } from '../model/util';
import type { Sess, UniqueKey } from '../state';
import type { PgMessage } from '../types';
import { keyBlocker } from './catalog';
import { uniqueKeysSql } from './footprint';

/**
 * Runs the checks of `keys` (in the order they went in) inside a PGlite transaction that has the
 * session's log replayed: 'wait' when one waits for another transaction (the step's wait is set),
 * the error when one fails, undefined when all pass.
 */
export async function checkDeferredKeys(eng: EngineContext, s: Sess, keys: UniqueKey[]): Promise<PgMessage | 'wait' | undefined> {
  const duplicated = await replayedDuplicates(eng, keys);
  for (const k of keys) {
    // An open transaction's key this one met when it went in: _bt_check_unique waits for it.
    const owner = k.openConflict ? keyOwner(eng, s, k.index, k.key) : undefined;
    if (owner) {
      const waited = waitForKey(eng, s, k, owner);
      if (waited) return waited;
    }
    if (!duplicated.has(`${k.index}\u0001${k.key}`)) continue;
    const error = PG.uniqueViolation(k.index, k.key);
    // A committed row with the key that an open transaction updated or deleted is waited for.
    const blocker = await keyBlocker(eng, s, error);
    return (blocker && waitForKey(eng, s, k, blocker)) || error;
  }
  return undefined;
}

/** The keys among `keys` that two live rows hold in the replayed transaction ("index\u0001key"). */
async function replayedDuplicates(eng: EngineContext, keys: UniqueKey[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [table, list] of groupBy(keys, (k) => k.table ?? '')) {
    const cat = eng.catalog.find((c) => c.name === table);
    const sql = cat && uniqueKeysSql(cat, 'all');
    if (!sql) continue;
    const cols = cat.uniqueIndexes.map((_, i) => `k${i}`);
    const wanted = new Set(list.map((k) => `${k.index}\u0001${k.key}`));
    const rows = await eng.ex.must(
      `SELECT key FROM (${sql}) AS u(c, ${cols.join(', ')}) CROSS JOIN LATERAL unnest(ARRAY[${cols.join(', ')}]) AS x(key) WHERE key IS NOT NULL GROUP BY key HAVING count(*) > 1`,
    );
    for (const [key] of rows) if (key && wanted.has(key)) out.add(key);
  }
  return out;
}

/** The check's wait for the transaction that holds the key: "while inserting index tuple" of the own row. */
function waitForKey(eng: EngineContext, s: Sess, k: UniqueKey, holder: { session: string; xid: number }): PgMessage | 'wait' | undefined {
  const [b, o] = (k.ctid ?? '').slice(1, -1).split(',').map(Number);
  const context = k.ctid ? xactWaitContext('insert', b, o, k.index) : undefined;
  const r = waitOnXid(eng, s, holder.session, holder.xid, undefined, 'insert', context);
  if (r === 'wait') return 'wait';
  // A deadlock found at once fails the step; otherwise the holder was no longer running.
  return s.step?.error;
}

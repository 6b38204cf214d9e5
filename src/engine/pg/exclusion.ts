/**
 * Exclusion constraints against other transactions' uncommitted rows. PostgreSQL checks a new
 * index entry against every conflicting entry, committed or not (check_exclusion_or_unique_constraint):
 * a conflicting row of an open transaction makes the inserter wait for that transaction, and
 * after it the check runs again (23P01 when it committed; ON CONFLICT DO NOTHING then skips the
 * row). The lock model matches keys by equality, so each row a statement inserts into such a
 * table gets a key of its own (`#session:version id`), and a new row that the constraint's operators
 * find in conflict with another open transaction's row gets a plan item for that row's key: the
 * model then waits for its owner as for a duplicate unique key.
 */
import type { EngineContext } from '../context';
import type { DryRun, PlanItem } from '../model/facts';
import type { ImageOp } from '../model/log';
import type { Sess } from '../state';
import { literal } from './replay';

type Insert = Extract<ImageOp, { op: 'insert' }>;

const exclusionKey = (session: string, ctid: string) => `#${session}:${ctid}`;

/** The keys of the statement's own rows, and the plan items of its conflicts with other open transactions' rows. */
export async function exclusionKeys(
  eng: EngineContext,
  s: Sess,
  ops: ImageOp[],
  ctidOf: (versionId: string) => string | undefined,
): Promise<{ own: DryRun['inserted']; waits: Extract<PlanItem, { kind: 'key' }>[] }> {
  const own: DryRun['inserted'] = [];
  const waits: Extract<PlanItem, { kind: 'key' }>[] = [];
  const inserts = ops.filter((op): op is Insert => op.op === 'insert');
  const pairs: { item: Extract<PlanItem, { kind: 'key' }>; cond: string }[] = [];
  for (const n of inserts) {
    const cat = eng.catalog.find((c) => c.oid === n.rel);
    for (const x of cat?.exclusions ?? []) {
      const ctid = ctidOf(n.newCtid);
      own.push({ table: n.relation, index: x.name, key: exclusionKey(s.name, n.newCtid), ...(ctid ? { ctid } : {}) });
      const value = (op: Insert, k: number) => {
        const i = op.columns.indexOf(x.columns[k]);
        return i < 0 ? undefined : op.values[i];
      };
      for (const o of eng.sessions.values()) {
        if (o === s || !o.txn || o.txn.aborted) continue;
        for (const e of o.txn.log) {
          if (e.kind !== 'image') continue;
          for (const u of e.ops) {
            if (u.op !== 'insert' || u.rel !== n.rel) continue;
            const conds: string[] = [];
            for (let k = 0; k < x.columns.length; k++) {
              const a = value(n, k);
              const b = value(u, k);
              if (a === undefined || b === undefined) break;
              conds.push(`(${literal(a)}::${x.types[k]} ${x.ops[k]} ${literal(b)}::${x.types[k]})`);
            }
            if (conds.length !== x.columns.length) continue;
            pairs.push({
              item: {
                kind: 'key',
                index: x.name,
                key: exclusionKey(o.name, u.newCtid),
                table: n.relation,
                ctid: n.newCtid,
                exclusion: true,
              },
              cond: `(${conds.join(' AND ')}) IS TRUE`,
            });
          }
        }
      }
    }
  }
  if (pairs.length) {
    const r = await eng.ex.run(`SELECT ${pairs.map((p) => p.cond).join(', ')}`);
    const row = r.results[0]?.rows?.[0];
    if (!r.error && row) pairs.forEach((p, i) => row[i] === 't' && waits.push(p.item));
  }
  return { own, waits };
}

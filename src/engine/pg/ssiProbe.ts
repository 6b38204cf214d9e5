/** SERIALIZABLE: the SIREAD targets and writes of a statement, probed in PGlite. */
import type { EngineContext } from '../context';
import type { DryRun, LockSample } from '../model/facts';
import type { RowLockMode } from '../model/locks/types';
import { type SsiWrite, targetKey } from '../model/ssi';
import { indexPagesSql } from './footprint';
import { INTERNAL_SCHEMA } from './names';
import { ident, literal, relSql } from './replay';
import type { ParsedStatement } from '../sql';

/**
 * SERIALIZABLE: the statement's SIREAD targets (as PostgreSQL took them in the dry run; the
 * ones already there before it ran came from replaying the session's own work) and its writes.
 */
export async function ssiFootprint(
  eng: EngineContext,
  before: LockSample,
  after: LockSample,
  touched: {
    touched: { oid: number; block: number; offset: number; mode: RowLockMode; own: boolean }[];
    inserted: { oid: number; relation: string; ctid: string }[];
  },
): Promise<NonNullable<DryRun['ssi']>> {
  const had = new Set(before.predicate.map(targetKey));
  const writes = new Map<string, SsiWrite>();
  const add = (w: SsiWrite, key: string) => writes.set(key, w);
  for (const t of touched.touched)
    if (t.mode === 'NoKeyUpdate' || t.mode === 'Update')
      if (t.own) add({ kind: 'relation', rel: t.oid }, `r${t.oid}`);
      else add({ kind: 'tuple', rel: t.oid, block: t.block, offset: t.offset }, `t${t.oid}:${t.block}:${t.offset}`);
  for (const t of touched.inserted) add({ kind: 'relation', rel: t.oid }, `r${t.oid}`);
  if (touched.inserted.length) {
    // Index entries: an index insert checks the leaf page it lands on, and a later reader whose
    // index scan reaches the entry has a conflict out to this transaction.
    const tables = new Set(touched.inserted.map((t) => t.relation));
    const indexes = [...eng.relations].filter(([, r]) => r.isIndex && tables.has(r.table)).map(([oid]) => oid);
    const entries = indexes.length
      ? await eng.ex.must(
          indexPagesSql(
            indexes,
            touched.inserted.map((t) => t.ctid),
          ),
        )
      : [];
    // The rows behind the entries, to match them against a later reader's index condition.
    const rows = new Map<string, string>();
    for (const table of tables) {
      const ctids = touched.inserted.filter((t) => t.relation === table).map((t) => `"${t.ctid}"`);
      // `t.*` names the row even when the table has a column called t (plain `t` would be that column).
      for (const [ctid, json] of await eng.ex.must(
        `SELECT ctid::text, pg_catalog.row_to_json(t.*)::text FROM ${relSql(eng, table)} t WHERE ctid = ANY('{${ctids.join(',')}}'::tid[])`,
      ))
        rows.set(`${table}:${ctid}`, json!);
    }
    for (const [oid, blk, tid] of entries) {
      const table = eng.relations.get(Number(oid))!.table;
      const json = rows.get(`${table}:${tid}`);
      add({ kind: 'index', rel: Number(oid), block: Number(blk), ...(json ? { row: { table, json } } : {}) }, `i${oid}:${blk}:${tid}`);
    }
  }
  return { scope: after.predicate, added: after.predicate.filter((t) => !had.has(targetKey(t))), writes: [...writes.values()] };
}

/**
 * The leaf page a key of a unique index would go to. Exact while the index is a single leaf
 * page (its root); for deeper indexes the root stands in (docs/engine.md).
 */
export async function uniqueIndexPage(eng: EngineContext, index: string | undefined): Promise<SsiWrite | undefined> {
  const oid = [...eng.relations].find(([, r]) => r.isIndex && r.name === index)?.[0];
  if (oid === undefined) return undefined;
  const rows = await eng.ex.run(`SELECT root FROM ${INTERNAL_SCHEMA}.bt_metap(${oid}::regclass::text)`);
  const root = rows.results[0]?.rows?.[0]?.[0];
  return root ? { kind: 'index', rel: oid, block: Number(root) } : { kind: 'relation', rel: oid };
}

/**
 * Which of another transaction's index entries (on pages this statement's index scans locked)
 * the scans reached: the plan's Index Cond for that index, evaluated on the entry's row. A
 * condition that cannot be evaluated alone (joins, parameters, subplans) counts as reached, as
 * does an index the plan does not show (a function's own queries): both err on PostgreSQL's
 * side of a page-level conflict.
 */
export async function indexReached(
  eng: EngineContext,
  st: ParsedStatement,
  candidates: (SsiWrite & { kind: 'index' })[],
): Promise<Set<SsiWrite>> {
  const reached = new Set<SsiWrite>();
  const plan = await eng.ex.run(`EXPLAIN (FORMAT JSON) ${st.sql}`);
  const scans: { index: string; alias: string; cond?: string }[] = [];
  const walk = (node: Record<string, unknown>, alias: string | undefined) => {
    const a = (node['Alias'] as string | undefined) ?? alias;
    if (typeof node['Index Name'] === 'string')
      scans.push({
        index: node['Index Name'],
        alias: a ?? '',
        ...(typeof node['Index Cond'] === 'string' ? { cond: node['Index Cond'] } : {}),
      });
    for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child, a);
  };
  const text = plan.results[0]?.rows?.[0]?.[0];
  if (plan.error || !text) return new Set(candidates);
  for (const top of JSON.parse(text) as { Plan: Record<string, unknown> }[]) walk(top.Plan, undefined);
  for (const c of candidates) {
    const name = eng.relations.get(c.rel)?.name;
    const uses = scans.filter((x) => x.index === name);
    if (!c.row || !uses.length || uses.some((u) => !u.cond || !u.alias)) {
      reached.add(c);
      continue;
    }
    const probes = uses.map(
      (u) =>
        `EXISTS (SELECT 1 FROM pg_catalog.json_populate_record(NULL::${relSql(eng, c.row!.table)}, ${literal(c.row!.json)}::json) AS ${ident(u.alias)} WHERE ${u.cond})`,
    );
    const r = await eng.ex.run(`SELECT ${probes.join(' OR ')}`);
    if (r.error || r.results[0]?.rows?.[0]?.[0] === 't') reached.add(c);
  }
  return reached;
}

/**
 * Did the scan look at a heap page (where a doomed transaction's conflict-out check raises)?
 * A tuple or page lock says so; a relation lock only if the table has a page (on real
 * PostgreSQL, one holding committed rows or another session's open writes); an index scan
 * only if it returned an entry (its own rows included, which take no SIRead lock).
 */
export function readsHeapPage(eng: EngineContext, dry: NonNullable<DryRun['ssi']>, reached: ReadonlySet<SsiWrite> | undefined): boolean {
  if ((reached?.size ?? 0) > 0 || (dry.indexEntriesRead ?? 0) > 0) return true;
  for (const t of dry.scope) {
    if (eng.relations.get(t.rel)?.isIndex) continue;
    if (t.kind !== 'relation') return true;
    if (eng.ssi.all().some((o) => o.writes.some((x) => x.w.rel === t.rel))) return true;
    if (!dry.emptyTables?.has(t.rel)) return true;
  }
  return false;
}

/** Index entries returned by scans of user indexes in the current transaction (and, `withEmpty`, the user tables with no page yet). */
export function indexEntriesSql(eng: EngineContext, withEmpty = false): string {
  const oids = (index: boolean) => [...eng.relations].filter(([, r]) => r.isIndex === index).map(([oid]) => oid);
  const empty = `, (SELECT coalesce(string_agg(c::text, ','), '') FROM pg_catalog.unnest('{${oids(false).join(',')}}'::oid[]) c WHERE pg_catalog.pg_relation_size(c) = 0)`;
  return `SELECT coalesce(sum(pg_catalog.pg_stat_get_xact_tuples_returned(c)), 0)::int${withEmpty ? empty : ''} FROM pg_catalog.unnest('{${oids(true).join(',')}}'::oid[]) c`;
}

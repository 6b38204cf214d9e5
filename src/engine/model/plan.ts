/** The acquisition plan: what a statement locked, in the order PostgreSQL acquires it. */
import type { LockSample, PlanItem } from './facts';
import { conflicts, lockModeNumber } from './locks/modes';
import type { RowLockMode } from './locks/types';
import { sameTag } from './util';
import type { ParsedStatement } from '../sql';
import type { ModelState, Sess } from '../state';

/** Orders what the statement acquired the way PostgreSQL acquires it. */
export function buildPlan(
  eng: ModelState,
  st: ParsedStatement,
  before: LockSample,
  after: LockSample,
  touched: { oid: number; relation: string; block: number; offset: number; mode: RowLockMode; newCtid?: string; call?: number }[],
  advisoryCalls: readonly string[] = [],
): PlanItem[] {
  const order = st.cls.kind === 'dml' ? st.cls.relations : [];
  const rank = (name: string) => {
    const i = order.indexOf(name);
    return i < 0 ? order.length : i;
  };
  const had = new Set(before.relations.map((r) => `${r.oid}/${r.mode}`));
  // Several modes on one relation: the statement opened the relation with the strongest
  // (REFRESH MATERIALIZED VIEW's AccessExclusiveLock, ALTER SEQUENCE's ShareRowExclusiveLock, the
  // target of an UPDATE before its own subquery's AccessShareLock), and the weaker ones it asks
  // for afterwards are granted at once because it already holds the strong one.
  const rels = after.relations
    .filter((r) => !had.has(`${r.oid}/${r.mode}`))
    .sort(
      (a, b) =>
        Number(a.isIndex) - Number(b.isIndex) ||
        rank(a.table) - rank(b.table) ||
        a.oid - b.oid ||
        lockModeNumber(b.mode) - lockModeNumber(a.mode),
    );
  // DROP INDEX locks the index's table, then the index, and only then (a partitioned index) the
  // table's partitions (RangeVarCallbackForDropRelation, then RemoveRelations' find_all_inheritors).
  const dropped = st.cls.kind === 'dml' ? (st.cls.droppedIndexes ?? []) : [];
  for (const r of rels.filter((x) => x.isIndex && dropped.includes(x.name))) {
    const at = rels.findIndex((x) => !x.isIndex && x.name === r.table);
    if (at < 0) continue;
    rels.splice(rels.indexOf(r), 1);
    rels.splice(at + 1, 0, r);
  }
  const plan: PlanItem[] = rels.map((r) => ({
    kind: 'rel',
    tag: { type: 'relation', relation: r.name, oid: r.oid },
    mode: r.mode,
    name: r.name,
  }));
  const hadAdv = new Map<string, number>();
  for (const a of before.advisory)
    hadAdv.set(`${a.key1}/${a.key2}/${a.field4}/${a.mode}`, (hadAdv.get(`${a.key1}/${a.key2}/${a.field4}/${a.mode}`) ?? 0) + 1);
  for (const a of after.advisory) {
    const k = `${a.key1}/${a.key2}/${a.field4}/${a.mode}`;
    const n = hadAdv.get(k) ?? 0;
    if (n > 0) {
      hadAdv.set(k, n - 1);
      continue;
    }
    const call = advisoryCalls.indexOf(k);
    plan.push({
      kind: 'adv',
      tag: { type: 'advisory', key1: a.key1, key2: a.key2, field4: a.field4 },
      mode: a.mode,
      sessionLevel: false,
      ...(call >= 0 ? { call } : {}),
    });
  }
  // Before the rows here; placed among them once the rows are in processing order (inCallOrder).
  for (const t of touched)
    plan.push({
      kind: 'row',
      tuple: { oid: t.oid, relation: t.relation, block: t.block, offset: t.offset },
      mode: t.mode,
      ...(t.mode === 'Update' && !t.newCtid ? { deletes: true as const } : {}),
      ...(t.call !== undefined ? { lockedBefore: t.call } : {}),
    });
  return plan;
}

/**
 * Advisory locks and row locks in execution order. PostgreSQL takes each lock where the
 * statement gets to it: an advisory lock in the WHERE clause or target list is evaluated while
 * the scan finds a row, before that row is locked (isolation spec tuplelock-update relies on
 * it), and a function that locks a row and then asks for an advisory lock waits for it holding
 * the row. The dry run notes, at each advisory call, which rows were locked by then
 * (pg/advisoryOrder.ts): each advisory lock goes before the first row not yet locked at its
 * first call, or last when every row was. Rows keep their order, and the items that follow a
 * row (its new version's index entries) stay with it. Advisory locks without a note (a
 * schema-qualified call, pg_try_*) stay before the rows.
 */
export function inCallOrder(plan: PlanItem[]): PlanItem[] {
  const noted = plan.filter((p): p is Extract<PlanItem, { kind: 'adv' }> => p.kind === 'adv' && p.call !== undefined);
  if (!noted.length) return plan;
  const out = plan.filter((p) => !(p.kind === 'adv' && p.call !== undefined));
  for (const adv of noted.sort((a, b) => a.call! - b.call!)) {
    const at = out.findIndex((p) => p.kind === 'row' && (p.lockedBefore ?? Infinity) > adv.call!);
    if (at < 0) out.push(adv);
    else out.splice(at, 0, adv);
  }
  return out;
}

/** Whether another session holds one of the plan's rows in a conflicting mode. */
export function hasRowConflicts(eng: ModelState, s: Sess, plan: PlanItem[]): boolean {
  return plan.some((p) => p.kind === 'row' && eng.rows.conflicting(p.tuple, p.mode, s.name).length > 0);
}

/** Whether another session holds one of the plan's rows, relation or advisory locks in a conflicting mode. */
export function hasConflicts(eng: ModelState, s: Sess, plan: PlanItem[]): boolean {
  if (hasRowConflicts(eng, s, plan)) return true;
  const held = eng.lm.entries().filter((e) => e.granted && e.proc !== s.proc);
  return plan.some((p) => (p.kind === 'rel' || p.kind === 'adv') && held.some((e) => sameTag(e.tag, p.tag) && conflicts(p.mode, e.mode)));
}

/** The plan items a statement takes before it locks rows: its relation locks and advisory locks. */
export const HEAVYWEIGHT_ITEMS: ReadonlySet<PlanItem['kind']> = new Set(['rel', 'adv']);

/**
 * INSERT … ON CONFLICT handles its rows one at a time, in the order its source yields them
 * (ExecInsert per row): a row that conflicts is locked and updated (DO UPDATE), a row that does
 * not has its index entries inserted, before the next row is formed. The versions it creates go
 * onto the heap in that order, so the position of the version each row created orders the row
 * locks of DO UPDATE and the keys of the inserted rows; the tuple-header scan lists the locked
 * rows in heap order instead. `created` maps a locked row ("oid:(block,offset)") to the ctid of
 * the version the statement made of it. Each table's items are ordered among their own places
 * (ctids of different tables do not compare); row locks without a new version (a DO UPDATE whose
 * WHERE failed) and every other item keep their places.
 */
export function inProcessingOrder(plan: PlanItem[], created: ReadonlyMap<string, string>): PlanItem[] {
  const placed = (p: PlanItem): { table: string; at: [number, number, number] } | undefined => {
    const ctid =
      p.kind === 'row' ? created.get(`${p.tuple.oid}:(${p.tuple.block},${p.tuple.offset})`) : p.kind === 'key' ? p.ctid : undefined;
    const table = p.kind === 'row' ? p.tuple.relation : p.kind === 'key' ? p.table : undefined;
    if (!ctid || !table) return undefined;
    const [block, offset] = ctid.slice(1, -1).split(',').map(Number);
    // A row's lock comes before the index entries of the version that replaces it.
    return { table, at: [block, offset, p.kind === 'row' ? 0 : 1] };
  };
  const byTable = new Map<string, { slots: number[]; items: { item: PlanItem; at: [number, number, number] }[] }>();
  plan.forEach((item, i) => {
    const p = placed(item);
    if (!p) return;
    let g = byTable.get(p.table);
    if (!g) byTable.set(p.table, (g = { slots: [], items: [] }));
    g.slots.push(i);
    g.items.push({ item, at: p.at });
  });
  const out = [...plan];
  for (const g of byTable.values()) {
    g.items.sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1] || a.at[2] - b.at[2]);
    g.slots.forEach((slot, i) => (out[slot] = g.items[i].item));
  }
  return out;
}

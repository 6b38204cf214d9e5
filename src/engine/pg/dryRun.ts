/**
 * The dry run: replays the session's open work in PGlite, runs the statement, reads what it
 * locked and changed (facts for the model), and rolls back.
 */
import type { EngineContext } from '../context';
import { EngineInternalError } from '../errors';
import { indexScannedRelations } from '../approximations';
import type { CatalogTable, DryRun, LockSample, PlanItem } from '../model/facts';
import type { LockMode, RowLockMode } from '../model/locks/types';
import type { ImageOp, LogEntry, TupleRef } from '../model/log';
import { buildPlan, inCallOrder, inProcessingOrder } from '../model/plan';
import { snapshotXmin } from '../model/txn';
import { groupBy, sameTag, splitKey } from '../model/util';
import { addCursor, runStatement } from './cursor';
import { Batch } from './batch';
import { decodeTuples, LOCK_SAMPLE_SQL, parseLockSample, TUPLE_SCAN_SQL, uniqueKeysSql } from './footprint';
import { CTID_MAP, INTERNAL_SCHEMA } from './names';
import {
  advisorySql,
  beginSql,
  gucCount,
  gucSql,
  ident,
  literal,
  lockClause,
  relSql,
  replayNeedsReplica,
  replaySql,
  replayedGucsAgain,
  setsRole,
  verifyReplay,
} from './replay';
import { takeSignals } from './diagnostics';
import { exclusionKeys } from './exclusion';
import { injectionSql, rowMarkSql, takeInjectionMarkers } from './inject';
import { orderRowNotices } from '../epq';
import { shadowSql } from './shadows';
import { hasUserFunctions } from './catalog';
import { usesStatementSnapshot } from './stmtSnapshot';
import { indexEntriesSql, ssiFootprint } from './ssiProbe';
import { FOOTPRINT_SQL, scanRowsFromPages, splitFootprint, versionValues, type RawPage, type SubcommittedScan } from './pageScan';
import { ADVISORY_MARKS_SQL, lockedBeforeCall, notesAdvisoryOrder, parseAdvisoryMarks } from './advisoryOrder';
import { constraintDeferred } from '../model/deferred';
import type { ParsedStatement } from '../sql';
import type { Sess } from '../state';
import type { RawResult } from '../types';

/**
 * What one dry run keeps while it runs: rows read ahead of use (see prefetch), what the end of
 * the dry run returned when prefetch also rolled it back, and the version ids its row images
 * hand out. A fresh one per dry run: nothing carries over to the next statement.
 */
export interface DryRunContext {
  prefetched: Map<string, (string | null)[][]>;
  rolledBack: RawResult | null;
  versionIds: Map<string, string>;
  /** The heap pages the footprint returned right after the statement (versionValues reads new versions from them). */
  pages: RawPage[];
}

function newRun(): DryRunContext {
  return { prefetched: new Map(), rolledBack: null, versionIds: new Map(), pages: [] };
}

/** Replays the session's open work, runs the statement in a savepoint, reads what it locked, rolls back. */
export async function dryRun(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  stageOthers = false,
  triggersOff = false,
  prelude?: { sql: string; count: number },
): Promise<DryRun> {
  const staged: string[] = [];
  if (stageOthers) {
    for (const o of eng.sessions.values()) {
      if (o === s || !o.txn) continue;
      // A transaction whose subtransaction failed is aborted but keeps what it did before the
      // failed savepoint level (AbortSubTransaction releases only that level's locks) until
      // ROLLBACK TO or ROLLBACK; one that failed at the top level holds nothing more.
      const sps = o.txn.savepoints;
      if (o.txn.aborted && !sps.length) continue;
      const log = o.txn.aborted ? o.txn.log.slice(0, sps[sps.length - 1].logLen) : o.txn.log;
      const partial = o.txn.aborted ? '' : stagedPartialLocks(o);
      if (!log.length && !partial) continue;
      const gid = `lockstep_${o.index}`;
      const begin = await beginSql(eng, o, false);
      const r = await eng.ex.run(
        `${begin.sql}${gucSql(eng, o)}${replaySql(log, { replica: replayNeedsReplica(eng, o), rel: (n) => relSql(eng, n), ...(setsRole(eng, o) ? { role: 'around' as const } : {}) }).sql}${partial}PREPARE TRANSACTION '${gid}'`,
      );
      if (r.error) {
        await eng.ex.run('ROLLBACK');
        for (const g of staged) await eng.ex.run(`ROLLBACK PREPARED '${g}'`);
        throw new EngineInternalError(`could not stage session ${o.name}: ${r.error.message}`);
      }
      staged.push(gid);
    }
  }
  try {
    return await dryRunInner(eng, s, st, triggersOff, prelude);
  } finally {
    for (const g of staged) await eng.ex.run(`ROLLBACK PREPARED '${g}'`);
  }
}

/**
 * The rows a waiting statement of `o` locked before it waited (not in its log yet, but held, as
 * heap_lock_tuple left them): locked again in its staged transaction so that SKIP LOCKED passes
 * over them. SKIP LOCKED here too, so a row the model gives to `o` alone can never block PGlite.
 */
function stagedPartialLocks(o: Sess): string {
  const rows = o.step?.wait ? (o.step.rowsBeforeWait ?? []) : [];
  return rows
    .map(
      (r) =>
        `SELECT ctid FROM ONLY ${ident(r.tuple.relation)} WHERE ctid = '(${r.tuple.block},${r.tuple.offset})'::tid ${lockClause(r.mode)} SKIP LOCKED;\n`,
    )
    .join('');
}

/**
 * A multi-row UPDATE or DELETE whose plan reads its target through an index (`id IN (…)` on the
 * primary key: a Bitmap Heap Scan, or an Index Scan with `id = ANY (…)`) meets its rows in the
 * order the index leads to them, not in the order of the versions' own places, which the
 * tuple-header scan lists them in. An UPDATE's new versions go onto the heap in the order it
 * processed the rows (inProcessingOrder). A DELETE writes none: a bitmap scan's order is that
 * of the rows' HOT chain roots (heapRootOrder); an Index Scan's key order is not known here.
 */
async function inScanOrder(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  plan: PlanItem[],
  created: ReadonlyMap<string, string>,
): Promise<PlanItem[]> {
  const cls = st.cls;
  if (cls.kind !== 'dml' || !cls.target || (cls.verb !== 'update' && cls.verb !== 'delete')) return plan;
  const scan = await targetIndexScan(eng, s, st, plan);
  if (!scan) return plan;
  if (cls.verb === 'update') return inProcessingOrder(plan, created);
  return scan === 'bitmap' ? heapRootOrder(eng, plan, cls.target.relname) : plan;
}

/**
 * How an UPDATE's or DELETE's plan reads its target, of which it locks two rows or more, when
 * through an index (indexScannedRelations); undefined otherwise.
 */
export async function targetIndexScan(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  plan: PlanItem[],
): Promise<'index' | 'bitmap' | undefined> {
  const cls = st.cls;
  if (cls.kind !== 'dml' || (cls.verb !== 'update' && cls.verb !== 'delete') || !cls.target) return undefined;
  if (plan.filter((p) => p.kind === 'row' && p.tuple.relation === cls.target!.relname).length < 2) return undefined;
  // The session's settings (enable_seqscan, …) choose the plan too; the block undoes them.
  const r = await eng.ex.run(`BEGIN;\n${gucSql(eng, s)}EXPLAIN (FORMAT JSON) ${st.sql}`);
  await eng.ex.run('ROLLBACK');
  const explained = r.error ? undefined : r.results[1 + gucCount(eng, s)]?.rows?.[0]?.[0];
  return indexScannedRelations(explained).get(cls.target.relname);
}

/**
 * The plan's rows of `relname` in the order of their HOT chains' roots (the line pointer an
 * index entry points to: a redirect, or the first version of the chain), as a Bitmap Heap Scan
 * meets them; other items keep their places.
 */
async function heapRootOrder(eng: EngineContext, plan: PlanItem[], relname: string): Promise<PlanItem[]> {
  const slots = plan.flatMap((p, i) => (p.kind === 'row' && p.tuple.relation === relname ? [i] : []));
  const first = slots.length ? (plan[slots[0]] as Extract<PlanItem, { kind: 'row' }>).tuple.oid : 0;
  const blocks = [...new Set(slots.map((i) => (plan[i] as Extract<PlanItem, { kind: 'row' }>).tuple.block))];
  const root = new Map<string, number>();
  for (const blk of blocks) {
    const r = await eng.ex.run(
      `SELECT lp, lp_flags, lp_off, t_ctid::text, t_infomask2 FROM ${INTERNAL_SCHEMA}.heap_page_items(${INTERNAL_SCHEMA}.get_raw_page(${first}::regclass::text, ${blk}))`,
    );
    if (r.error) return plan;
    const rows = (r.results[0]?.rows ?? []).map(([lp, flags, off, ctid, im2]) => ({
      lp: Number(lp),
      flags: Number(flags),
      off: Number(off),
      ctid: ctid ?? '',
      im2: Number(im2 ?? 0),
    }));
    const HEAP_HOT_UPDATED = 0x4000;
    const HEAP_ONLY_TUPLE = 0x8000;
    const next = new Map<number, number>();
    for (const t of rows) {
      if (t.flags === 2) next.set(t.lp, t.off);
      else if (t.flags === 1 && t.im2 & HEAP_HOT_UPDATED) {
        const [b, o] = t.ctid.slice(1, -1).split(',').map(Number);
        if (b === blk && o !== t.lp) next.set(t.lp, o);
      }
    }
    for (const t of rows) {
      if (!(t.flags === 2 || (t.flags === 1 && !(t.im2 & HEAP_ONLY_TUPLE)))) continue;
      const seen = new Set<number>();
      for (let at: number | undefined = t.lp; at !== undefined && !seen.has(at); at = next.get(at)) {
        seen.add(at);
        root.set(`${blk}:${at}`, t.lp);
      }
    }
  }
  const items = slots.map((i) => plan[i] as Extract<PlanItem, { kind: 'row' }>);
  const key = (p: Extract<PlanItem, { kind: 'row' }>) => [p.tuple.block, root.get(`${p.tuple.block}:${p.tuple.offset}`) ?? p.tuple.offset];
  const sorted = items
    .map((p, i) => ({ p, i, k: key(p) }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.i - b.i)
    .map((x) => x.p);
  const out = [...plan];
  slots.forEach((slot, i) => (out[slot] = sorted[i]));
  return out;
}

/**
 * `triggersOff`: the statement runs with session_replication_role = replica (after the replay,
 * which sets it itself). `prelude`: statements run after the replay, before the statement (a probe's objects).
 */
export async function dryRunInner(
  eng: EngineContext,
  s: Sess,
  st: ParsedStatement,
  triggersOff = false,
  prelude?: { sql: string; count: number },
): Promise<DryRun> {
  const run = newRun();
  const txn = s.txn!;
  // A lock the session holds n times is taken n times, so an unlock gives back one of them.
  const advisoryHolds = s.sessionAdvisory.flatMap((a) =>
    Array.from({ length: a.count }, () => advisorySql(a.tag, a.mode, 'session') + ';\n'),
  );
  const advisoryPrefix = advisoryHolds.join('');
  const role = setsRole(eng, s);
  const replay = replaySql(txn.log, {
    replica: replayNeedsReplica(eng, s),
    rel: (n) => relSql(eng, n),
    ...(role ? { role: 'around' as const } : {}),
  });
  // SET, SHOW and LOCK TABLE run without a snapshot (PlannedStmtRequiresSnapshot): under
  // REPEATABLE READ / SERIALIZABLE the transaction snapshot is taken by the first other statement.
  const needsSnapshot = !(st.cls.kind === 'set' || st.cls.kind === 'show' || (st.cls.kind === 'dml' && st.cls.verb === 'lock'));
  // A setting the statement changes (set_config, a SET in a function it calls) is read back after
  // it. Asked before beginSql: a staged snapshot import expects the very next transaction.
  const mayChangeGucs = st.cls.kind === 'dml' && (/set_config/i.test(st.sql) || (await hasUserFunctions(eng)));
  const begin = await beginSql(eng, s, needsSnapshot);
  // A probe's own shadows (prelude) come first on the search_path: the order is not noted then.
  const noteOrder = !prelude && notesAdvisoryOrder(eng, st);
  const shadow = shadowSql(eng, s, st, noteOrder);
  if (triggersOff) {
    shadow.sql = `SET LOCAL session_replication_role = replica;\n${shadow.sql}`;
    shadow.count++;
  }
  if (prelude) {
    shadow.sql = `${prelude.sql}${shadow.sql}`;
    shadow.count += prelude.count;
  }
  // A row-marked EvalPlanQual re-run's marker functions and triggers (inject.ts, rowMarkSql).
  if (st.rowMarks) {
    const marks = rowMarkSql(st.rowMarks.table, (n) => relSql(eng, n));
    shadow.sql = `${marks.sql}${shadow.sql}`;
    shadow.count += marks.count;
  }
  // Errors an EXCEPTION block of the statement caught while it waited are raised again where they were (inject.ts).
  const injections = s.step?.injected ?? [];
  if (injections.length) {
    const inj = injectionSql(injections, (n) => relSql(eng, n));
    shadow.sql = `${inj.sql}${shadow.sql}`;
    shadow.count += inj.count;
  }
  // With nothing replayed (no open work, no session-level advisory lock, no shadow data) the
  // transaction holds no lock the sample reads before the statement runs: it is not taken.
  const sampleBefore = txn.log.length > 0 || advisoryPrefix !== '' || shadow.sql !== '' || txn.isolation === 'serializable';
  // A doomed serializable transaction: how many index entries user-index scans returned so far
  // in this transaction (the replay's own), to tell what the statement itself returns.
  const entriesSql = txn.sx?.doomed ? indexEntriesSql(eng) : '';
  const b = new Batch()
    .add('begin', begin.sql, begin.count)
    // Each session is its own connection in PostgreSQL, named after the session (as isolationtester
    // and pg_stat_activity name it): a trigger or query reading current_setting('application_name')
    // sees that name. Set first, so the session's own SET of it still wins.
    .add('appName', `SET LOCAL application_name = ${literal(s.name)};\n`, 1)
    .add('gucs', gucSql(eng, s), gucCount(eng, s))
    .add('advisory', advisoryPrefix, advisoryHolds.length)
    .add('replay', replay.sql, replay.checks.length)
    .add(...replayedGucsAgain(eng, s))
    .add('shadow', shadow.sql, shadow.count)
    .add('entries', entriesSql ? `${indexEntriesSql(eng, true)};\n` : '', entriesSql ? 1 : 0)
    // READ ONLY after the replay (a transaction may turn read-only after it wrote): PGlite
    // refuses the statement's writes and row locks as PostgreSQL does (25006).
    .add('savepoint', `${txn.readOnly ? 'SET TRANSACTION READ ONLY;\n' : ''}SAVEPOINT lockstep_q`, txn.readOnly ? 2 : 1)
    .add('sampleBefore', sampleBefore ? `;\n${LOCK_SAMPLE_SQL}` : '', sampleBefore ? 1 : 0);
  // One round trip for the usual case: replay, the statement, and what it locked. A locking
  // SELECT runs row by row as a cursor, in the same round trip (addCursor, runStatement).
  const merged = !(st.cls.kind === 'dml' && st.cls.lockingSelect);
  // A plain SELECT (or SET/SHOW) locks and writes no rows unless a function in it does: its
  // tuple scan runs only if the sample shows that it took a transaction id.
  const scanAlong =
    st.cls.kind === 'dml' ? st.cls.verb !== 'select' || st.cls.lockingSelect : st.cls.kind !== 'set' && st.cls.kind !== 'show';
  const first = merged ? 'statement' : 'cursor';
  const watchGucs = mayChangeGucs && merged;
  if (merged)
    b.add('statement', `;\n${st.sql}`, 1)
      // Under a SET ROLE, what the engine reads after the statement (raw pages) is read as the superuser.
      .add('unrole', role ? ';\nSET LOCAL ROLE NONE' : '', role ? 1 : 0)
      // With the tuple scan, the sample and the scan's pages come in one statement (pageScan.ts).
      .add('after', `;\n${scanAlong ? FOOTPRINT_SQL : LOCK_SAMPLE_SQL}`, 1)
      .add('gucsAfter', watchGucs ? ';\nEXECUTE lockstep_gucs' : '', watchGucs ? 1 : 0);
  else addCursor(b, st.sql);
  const all = await b.run(eng.ex);
  // An error before the statement is the replay's: an engine error, not the statement's.
  const preError = all.reached(first) ? undefined : all.error;
  if (preError) {
    await eng.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
    throw new EngineInternalError(`replay of session ${s.name} failed: ${preError.message}`);
  }
  if (begin.exporting) txn.snapshot = eng.ex.readExportedSnapshot(all.get('begin', 1)!.rows![0][0]!);
  if (begin.exporting && txn.isolation === 'serializable' && !txn.sx) {
    txn.sx = eng.ssi.begin(s.name, snapshotXmin(eng, s), txn.readOnly === true);
    txn.sx.vxid = txn.vxid;
  }
  try {
    verifyReplay(eng, s, all, replay.checks);
  } catch (e) {
    await eng.ex.run('ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()');
    throw e;
  }
  const before = parseLockSample(sampleBefore ? (all.get('sampleBefore')!.rows ?? []) : [], eng.relations);
  let raw: RawResult;
  let order = false;
  let afterRows: (string | null)[][] | undefined;
  let scanRows: (string | null)[][] | undefined;
  let rowsBeforeError: number | undefined;
  const sub: SubcommittedScan = { after: 0, subcommitted: new Set() };
  if (merged) {
    const notices = all.noticesFrom('statement');
    raw = all.error ? { results: [], error: all.error, notices } : { results: [all.get('statement')!], notices };
    afterRows = all.get('after')?.rows;
    if (scanAlong && afterRows) {
      const fp = splitFootprint(afterRows);
      afterRows = fp.sample;
      run.pages = fp.pages;
      const xids = parseLockSample(fp.sample, eng.relations).xids;
      scanRows = await scanRowsFromPages(eng.ex, fp.pages, xids, subScan(before.xids, xids, sub));
    }
  } else ({ raw, order, afterRows, scanRows, rowsBeforeError } = await runStatement(eng, st, all));
  const signals = st.cls.kind === 'dml' && st.cls.mentionsDiagnostics ? takeSignals(raw) : [];
  const injectedFired = injections.length ? takeInjectionMarkers(raw) : 0;
  if (st.rowMarks) raw.notices = orderRowNotices(raw.notices, st.rowMarks.origin, st.rowMarks.waitedAt);
  // A statement replayed as SQL (a DO block) whose block caught an error would take the other
  // path when replayed later, once the row it waited for has changed: its effects are kept as
  // row images instead.
  const images = recordsImage(st) || (injections.length > 0 && st.cls.kind === 'dml');
  let after: LockSample = before;
  let plan: PlanItem[] = [];
  const inserted: DryRun['inserted'] = [];
  let assignsXid = false;
  let ops: ImageOp[] = [];
  let ssi: DryRun['ssi'];
  let remodified = false;
  // INSERT … ON CONFLICT: each locked row of the target → the ctid of the version made of it.
  const created = new Map<string, string>();
  if (!raw.error) {
    if (!afterRows) {
      const a = await eng.ex.run(`${LOCK_SAMPLE_SQL};\n${TUPLE_SCAN_SQL}`);
      afterRows = a.results[0]?.rows;
      scanRows = a.results[1]?.rows;
    }
    after = parseLockSample(afterRows ?? [], eng.relations);
    const calls = noteOrder && after.advisory.length ? parseAdvisoryMarks((await eng.ex.must(ADVISORY_MARKS_SQL))[0]?.[0]) : [];
    const stmtXids = new Set([...after.xids].filter((x) => !before.xids.has(x)));
    assignsXid = stmtXids.size > 0;
    const ownXids = new Set([...before.xids]);
    let touched: Awaited<ReturnType<typeof decodeTuples>> = { touched: [], inserted: [] };
    if (stmtXids.size && !scanRows) {
      // A plain SELECT that took an xid: a function it called wrote or locked rows, maybe inside
      // an EXCEPTION block, so the scan looks for ended subtransactions too.
      const fp = splitFootprint((await eng.ex.run(FOOTPRINT_SQL)).results[0]?.rows ?? []);
      run.pages = fp.pages;
      scanRows = await scanRowsFromPages(eng.ex, fp.pages, after.xids, subScan(before.xids, after.xids, sub));
    }
    for (const x of sub.subcommitted) stmtXids.add(x);
    if (stmtXids.size) touched = await decodeTuples(eng.ex, scanRows ?? [], stmtXids, ownXids);
    // Each row locked before an advisory lock was asked for carries the first such call.
    if (calls.length)
      for (const t of touched.touched) {
        const call = lockedBeforeCall(calls, stmtXids, t);
        if (call !== undefined) t.call = call;
      }
    remodified = touched.inserted.some((t) => t.next !== undefined || t.deleted);
    const byTable = groupBy(touched.inserted, (t) => t.relation);
    // The rest of the dry run's reads in one round trip; the rollback rides along unless
    // SERIALIZABLE still reads the dry run (ssiFootprint).
    const end = txn.sx ? undefined : dryRunEnd(s.sessionAdvisory.length > 0 || after.advisory.length > 0);
    await prefetch(
      eng,
      run,
      st,
      byTable,
      touched.touched.some((t) => t.own),
      end,
      images,
    );
    // Unique keys of the tuples this statement created (new row versions included).
    for (const [table, list] of byTable) {
      const cat = eng.catalog.find((c) => c.name === table);
      const sql =
        cat &&
        uniqueKeysSql(
          cat,
          list.map((t) => t.ctid),
        );
      if (!sql) continue;
      for (const row of await must(eng, run, sql))
        for (const k of row.slice(1)) if (k) inserted.push({ ...splitKey(table, k), ctid: row[0]! });
    }
    const others = touched.touched.filter((t) => !t.own);
    // Changing its own new version of a committed row is, for everyone else, a change of that
    // row: README.tuplock lockers follow the update chain (a later key update of the own
    // version conflicts with another session's FOR KEY SHARE on the row).
    const ownTouched = touched.touched.filter((t) => t.own);
    if (ownTouched.length && txn.originOf.size) {
      const back = await ctidBackMap(eng, run);
      for (const t of ownTouched) {
        const orig = back.get(`${t.oid}:(${t.block},${t.offset})`) ?? `(${t.block},${t.offset})`;
        const origin = txn.originOf.get(`${t.oid}:${orig}`);
        if (origin) others.push({ ...t, block: origin.block, offset: origin.offset, own: false, newCtid: undefined });
      }
    }
    // Rows are locked in processing order: for a locking SELECT, the order its cursor returned them.
    // Subtransaction ids are handed out in FETCH order, so they sort the rows by processing order.
    if (order) others.sort((a, b) => a.xid - b.xid);
    plan = buildPlan(
      eng,
      st,
      before,
      after,
      others,
      calls.map((c) => c.tag),
    );
    for (const t of others) if (t.newCtid) created.set(`${t.oid}:(${t.block},${t.offset})`, t.newCtid);
    // Under the kept statement snapshot a lock can land on an old version (pg/stmtSnapshot.ts).
    if (images)
      ops = await imageOps(eng, run, touched.touched, touched.inserted, plan, usesStatementSnapshot(txn.isolation, s.step?.stmtSnapshot));
    if (txn.sx) {
      ssi = await ssiFootprint(eng, before, after, touched);
      // A doomed transaction fails at its first heap fetch: count the index entries its index
      // scans returned (each leads to one), from this transaction's own statistics.
      if (entriesSql) {
        const n = await eng.ex.must(entriesSql);
        const [beforeN, empty] = all.get('entries')?.rows?.[0] ?? [];
        ssi.indexEntriesRead = Number(n[0]?.[0] ?? 0) - Number(beforeN ?? 0);
        ssi.emptyTables = new Set((empty ?? '').split(',').filter(Boolean).map(Number));
      }
    }
  }
  // A failed statement may have taken session-level advisory locks before its error: they
  // survive the rollback, so read them (and release them in PGlite) then too.
  const needSessionAdvisory = s.sessionAdvisory.length > 0 || after.advisory.length > 0 || !!raw.error;
  const end = run.rolledBack ?? (await eng.ex.run(dryRunEnd(needSessionAdvisory)));
  let sessionAdvisory: DryRun['sessionAdvisory'] = null;
  if (needSessionAdvisory) {
    sessionAdvisory = (end.results[1]?.rows ?? []).map(([k1, k2, f4, mode, n]) => ({
      key1: Number(k1),
      key2: Number(k2),
      field4: Number(f4) as 1 | 2,
      mode: mode as LockMode,
      count: Number(n),
    }));
    // Advisory locks that survived the rollback are session-level: they are not replayed as part of the transaction.
    for (const a of sessionAdvisory) {
      const item = plan.find(
        (p) => p.kind === 'adv' && p.tag.key1 === a.key1 && p.tag.key2 === a.key2 && p.tag.field4 === a.field4 && p.mode === a.mode,
      );
      if (item && item.kind === 'adv') item.sessionLevel = true;
    }
    ops = ops.filter(
      (o) => !(o.op === 'advisory' && plan.some((p) => p.kind === 'adv' && p.sessionLevel && sameTag(p.tag, o.tag) && p.mode === o.mode)),
    );
  }
  for (const k of inserted) {
    const ix = eng.catalog.find((c) => c.name === k.table)?.uniqueIndexes.find((i) => i.name === k.index);
    plan.push({
      kind: 'key',
      index: k.index,
      key: k.key,
      table: k.table,
      ...(k.ctid ? { ctid: k.ctid } : {}),
      ...(constraintDeferred(txn, ix?.deferrable) ? { deferred: true as const } : {}),
    });
  }
  if (!raw.error && eng.catalog.some((c) => c.exclusions?.length)) {
    const ctids = new Map([...run.versionIds].map(([k, id]) => [id, k.slice(k.indexOf(':') + 1)]));
    const excl = await exclusionKeys(eng, s, ops, (id) => ctids.get(id));
    plan.push(...excl.waits);
    inserted.push(...excl.own);
  }
  if (st.cls.kind === 'dml' && st.cls.onConflict) plan = inProcessingOrder(plan, created);
  else if (!raw.error) plan = await inScanOrder(eng, s, st, plan, created);
  plan = inCallOrder(plan);
  let entry: LogEntry | null = null;
  if (!raw.error && st.cls.kind !== 'set' && st.cls.kind !== 'show') {
    const command = raw.results.at(-1)?.command ?? '';
    if (images) entry = ops.length ? { kind: 'image', ops, command, sql: st.sql } : null;
    else entry = { kind: 'sql', sql: st.sql, command };
  }
  // The dry run's own (top-level) xid: every version committed before it ran has a smaller xmin.
  const horizon = !raw.error && after.xids.size ? Math.min(...after.xids) : undefined;
  const gucsAfter = watchGucs && !raw.error ? all.get('gucsAfter')?.rows : undefined;
  return {
    raw,
    plan,
    assignsXid,
    inserted,
    sessionAdvisory,
    entry,
    ...(signals.length ? { signals } : {}),
    ...(injectedFired ? { injectedFired } : {}),
    ...(ssi ? { ssi } : {}),
    ...(horizon !== undefined ? { horizon } : {}),
    ...(remodified ? { remodified: true as const } : {}),
    ...(gucsAfter ? { gucsAfter } : {}),
    ...(raw.error && rowsBeforeError ? { rowsBeforeError } : {}),
  };
}

/**
 * The subtransaction scan of a dry run whose statement took an xid (`sub`, filled in), or none:
 * the statement's xids are those `after` lists and `before` did not; every xid it assigned is
 * larger than the smallest of them.
 */
function subScan(before: Set<number>, after: Set<number>, sub: SubcommittedScan): SubcommittedScan | undefined {
  let first = Infinity;
  for (const x of after) if (!before.has(x) && x < first) first = x;
  if (first === Infinity) return undefined;
  sub.after = first;
  return sub;
}

/** The replay's own versions: "rel:current ctid" → the version id they were recorded under. */
export async function ctidBackMap(eng: EngineContext, run: DryRunContext): Promise<Map<string, string>> {
  const back = new Map<string, string>();
  for (const [rel, orig, cur] of await must(eng, run, CTID_BACK_SQL)) back.set(`${rel}:${cur}`, orig!);
  return back;
}

/**
 * Reads what the rest of a dry run asks of it once the tuple scan is in — the values of the
 * versions the statement created and their unique keys, the ctid map of the session's own
 * versions — in one round trip instead of one each, and with it, when given, the end of the
 * dry run (`end`: its ROLLBACK). The queries are the very ones `must` is asked later; the
 * unique keys ("index\u0001(cols)=(values)", uniqueKeysSql) are built from the values when
 * every key column is one of them. Without `end`, anything not read here runs on its own;
 * after the rollback, a read not prepared here is an engine error.
 */
export async function prefetch(
  eng: EngineContext,
  run: DryRunContext,
  st: ParsedStatement,
  created: Map<string, { ctid: string }[]>,
  ownTouched: boolean,
  end?: string,
  images = recordsImage(st),
): Promise<void> {
  const sqls: string[] = [];
  const derived: { keys: string; values: string; cat: CatalogTable }[] = [];
  // Values read from the footprint's pages (versionValues) need no query; the rollback still
  // goes where it went when they were queried, so every later read sees the same state.
  let decoded = 0;
  for (const [table, list] of created) {
    const cat = eng.catalog.find((c) => c.name === table);
    if (!cat) continue;
    const keys = uniqueKeysSql(
      cat,
      list.map((t) => t.ctid),
    );
    const values = images ? valuesSql(cat, list) : null;
    if (keys && values && cat.uniqueIndexes.every((ix) => ix.pred === undefined && ix.columns.every((c) => cat.writable.includes(c))))
      derived.push({ keys, values, cat });
    else if (keys) sqls.push(keys);
    if (!values) continue;
    const fromPages = versionValues(
      run.pages,
      cat,
      list.map((t) => t.ctid),
    );
    if (fromPages) {
      run.prefetched.set(values, fromPages);
      decoded++;
    } else sqls.push(values);
  }
  if (ownTouched) sqls.push(CTID_BACK_SQL);
  const queried = sqls.length + decoded;
  if (!queried || (queried < 2 && !end)) return deriveKeys(run, derived);
  if (!sqls.length && !end) return deriveKeys(run, derived);
  const r = await eng.ex.run(sqls.join(';\n') + (end ? `${sqls.length ? ';\n' : ''}${end}` : ''));
  if (r.error || r.results.length < sqls.length) {
    if (!end) return deriveKeys(run, derived);
    await eng.ex.run(`ROLLBACK;\nSELECT pg_catalog.pg_advisory_unlock_all()`);
    throw new EngineInternalError(`reading a dry run's footprint failed: ${r.error?.message ?? 'no result'}`);
  }
  sqls.forEach((sql, i) => run.prefetched.set(sql, r.results[i].rows ?? []));
  deriveKeys(run, derived);
  if (end) run.rolledBack = { results: r.results.slice(sqls.length), notices: [] };
}

/** The unique keys of new versions, built from their prefetched values (uniqueKeysSql's text). */
function deriveKeys(run: DryRunContext, derived: { keys: string; values: string; cat: CatalogTable }[]): void {
  for (const d of derived) {
    const rows = run.prefetched.get(d.values);
    if (!rows) continue;
    const at = d.cat.uniqueIndexes.map((ix) => ix.columns.map((c) => d.cat.writable.indexOf(c) + 1));
    run.prefetched.set(
      d.keys,
      rows.map((row) => [
        row[0],
        ...d.cat.uniqueIndexes.map((ix, k) => {
          const vals = at[k].map((i) => row[i]);
          if (ix.nullsNotDistinct) return `${ix.name}\u0001(${ix.columns.join(', ')})=(${vals.map((v) => v ?? 'null').join(', ')})`;
          return vals.some((v) => v === null) ? null : `${ix.name}\u0001(${ix.columns.join(', ')})=(${vals.join(', ')})`;
        }),
      ]),
    );
  }
}

/** `ex.must`, answered from the dry run's prefetched rows when it was read ahead. */
export async function must(eng: EngineContext, run: DryRunContext, sql: string): Promise<(string | null)[][]> {
  const rows = run.prefetched.get(sql);
  if (rows) return rows;
  if (run.rolledBack) throw new EngineInternalError(`a dry run read after its rollback: ${sql.slice(0, 200)}`);
  return eng.ex.must(sql);
}

/** What the statement did to tuples, as replayable row images (see images.ts). */
export async function imageOps(
  eng: EngineContext,
  run: DryRunContext,
  touched: {
    oid: number;
    relation: string;
    block: number;
    offset: number;
    mode: RowLockMode;
    newCtid?: string;
    next?: string;
    movedPartition?: true;
    own: boolean;
  }[],
  created: { oid: number; relation: string; ctid: string; next?: string; deleted?: true }[],
  plan: PlanItem[],
  newestVisible = false,
): Promise<ImageOp[]> {
  // Own versions are named by the ctid they had when recorded: map this run's ctids back.
  const back = touched.some((t) => t.own) ? await ctidBackMap(eng, run) : new Map<string, string>();
  const ref = (t: { oid: number; relation: string; block: number; offset: number; own: boolean }): TupleRef => {
    const ctid = `(${t.block},${t.offset})`;
    return { rel: t.oid, relation: t.relation, ctid: t.own ? (back.get(`${t.oid}:${ctid}`) ?? ctid) : ctid, own: t.own };
  };
  // Every version the statement created gets a version id: ctids of own versions are not stable
  // between replays (line pointers freed by VACUUM or pruning are reused).
  const idOf = (oid: number, ctid: string) => {
    const k = `${oid}:${ctid}`;
    let id = run.versionIds.get(k);
    if (!id) run.versionIds.set(k, (id = `v${++eng.versionSeq}`));
    return id;
  };
  // Values of every version the statement created.
  const values = new Map<string, (string | null)[]>();
  const cols = new Map<number, string[]>();
  for (const [table, list] of groupBy(created, (c) => c.relation)) {
    const cat = eng.catalog.find((c) => c.name === table);
    if (!cat) throw new EngineInternalError(`no catalog entry for table ${table}`);
    cols.set(cat.oid, cat.writable);
    const rows = await must(eng, run, valuesSql(cat, list));
    for (const r of rows) values.set(`${cat.oid}:${r[0]}`, r.slice(1));
  }
  // A created version a later command of the statement updated or deleted again (a function
  // called by it): the row's image is the chain's last version, or a delete when none is left.
  const createdBy = new Map(created.map((c) => [`${c.oid}:${c.ctid}`, c]));
  const lastOf = (oid: number, ctid: string): string | undefined => {
    let c = createdBy.get(`${oid}:${ctid}`);
    for (let hops = 0; c?.next && hops < createdBy.size; hops++) {
      ctid = c.next;
      c = createdBy.get(`${oid}:${ctid}`);
    }
    return c?.deleted ? undefined : ctid;
  };
  const ops: ImageOp[] = [];
  const updatedNew = new Set<string>();
  for (const t of touched) {
    if (t.mode === 'NoKeyUpdate' || t.mode === 'Update') {
      const last = t.newCtid && lastOf(t.oid, t.newCtid);
      if (last) {
        const k = `${t.oid}:${last}`;
        const v = values.get(k);
        if (!v) throw new EngineInternalError(`new version ${last} of ${t.relation} not found`);
        updatedNew.add(k);
        ops.push({ op: 'update', target: ref(t), ...updatedColumns(eng, t.oid, cols.get(t.oid)!, v), newCtid: idOf(t.oid, last) });
      } else ops.push({ op: 'delete', target: ref(t), ...(t.movedPartition ? { moved: true as const } : {}) });
    } else {
      // A later version locked only because the statement locked an updated one before it
      // (heap_lock_updated_tuple follows the chain): replaying the first lock locks it again,
      // and under a snapshot that cannot see it, locking it by ctid would find nothing.
      const ctid = `(${t.block},${t.offset})`;
      // READ COMMITTED replays with a new snapshot, which sees only the newest version: the lock
      // is recorded there (a statement that kept its snapshot locked the old one, pg/stmtSnapshot.ts).
      const later = (u: (typeof touched)[number]) => u !== t && u.oid === t.oid && !u.own && u.mode === t.mode;
      if (newestVisible) {
        if (!t.own && t.next && touched.some((u) => later(u) && `(${u.block},${u.offset})` === t.next)) continue;
      } else if (!t.own && touched.some((u) => later(u) && u.next === ctid)) continue;
      ops.push({ op: 'lock', target: ref(t), mode: t.mode });
    }
  }
  for (const c of created) {
    const k = `${c.oid}:${c.ctid}`;
    if (updatedNew.has(k) || c.next || c.deleted) continue;
    ops.push({
      op: 'insert',
      rel: c.oid,
      relation: c.relation,
      columns: cols.get(c.oid)!,
      values: values.get(k)!,
      newCtid: idOf(c.oid, c.ctid),
    });
  }
  for (const p of plan) if (p.kind === 'adv') ops.push({ op: 'advisory', tag: p.tag, mode: p.mode });
  return ops;
}

/** The session-level advisory locks held, with their counts, then released (executor.ts). */
export const ADVISORY_SESSION_SQL = `SELECT key1, key2, field4, mode, n FROM ${INTERNAL_SCHEMA}.advisory_release_all()`;

/** The end of a dry run: ROLLBACK, and the session-level advisory locks that survive it (then released). */
export function dryRunEnd(needSessionAdvisory: boolean): string {
  return `ROLLBACK${needSessionAdvisory ? `;\n${ADVISORY_SESSION_SQL}` : ''}`;
}

/** The replay's ctid map: own versions' current ctids and the version ids they were recorded under. */
export const CTID_BACK_SQL = `SELECT rel::text, orig::text, cur::text FROM ${CTID_MAP}`;

/** The values of the given versions of a table (the columns a row image sets), by ctid. */
export function valuesSql(cat: CatalogTable, list: { ctid: string }[]): string {
  const sel = cat.writable.map((c) => `${ident(c)}::text`).join(', ');
  return `SELECT ctid::text, ${sel} FROM ${cat.sqlName ?? ident(cat.name)} WHERE ctid = ANY('{${list.map((c) => `"${c.ctid}"`).join(',')}}'::tid[])`;
}

/**
 * The columns an update's row image sets: every writable one but the identity columns GENERATED
 * ALWAYS, which an UPDATE may not assign a value (rewriteTargetListIU's 428C9); the replayed row
 * keeps the value it has, the one the statement's UPDATE kept unless it set it to DEFAULT.
 */
function updatedColumns(
  eng: EngineContext,
  oid: number,
  columns: string[],
  values: (string | null)[],
): { columns: string[]; values: (string | null)[] } {
  const always = eng.catalog.find((c) => c.oid === oid)?.identityAlways;
  if (!always) return { columns, values };
  const keep = columns.map((c) => !always.includes(c));
  return { columns: columns.filter((_, i) => keep[i]), values: values.filter((_, i) => keep[i]) };
}

/** Statements whose effects are replayed as row images rather than as SQL text. */
export function recordsImage(st: ParsedStatement): boolean {
  return (
    st.cls.kind === 'dml' &&
    (st.cls.verb === 'select' ||
      st.cls.verb === 'update' ||
      st.cls.verb === 'delete' ||
      st.cls.verb === 'insert' ||
      st.cls.verb === 'merge')
  );
}

/**
 * What a statement locked, read back from PGlite inside the dry run: relation and advisory
 * locks from pg_locks, row locks from tuple headers (pageinspect), unique keys it inserted.
 */
import type { LockMode, RowLockMode } from '../model/locks/types';
import type { CatalogTable, InsertedTuple, LockSample, RelationInfo, TupleTouch } from '../model/facts';
import { HEAP_XMAX_INVALID, HEAP_XMAX_IS_MULTI, multiMemberMode, singleXmaxMode } from '../model/rowbits';
import type { PgliteExecutor } from './executor';
import { INTERNAL_SCHEMA, ADVISORY_SHADOW_SCHEMA } from './names';
import { DIAGNOSTICS_SCHEMA } from './diagnostics';

export type { CatalogTable, InsertedTuple, LockSample, RelationInfo, TupleTouch } from '../model/facts';

export const USER_NS = `n.nspname NOT IN ('pg_catalog','information_schema','${INTERNAL_SCHEMA}','${ADVISORY_SHADOW_SCHEMA}','${DIAGNOSTICS_SCHEMA}') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'`;

/** The user's PL/pgSQL functions whose body has an EXCEPTION clause (catalog.ts, callsExceptionFunction). */
export const EXCEPTION_FUNCTIONS_SQL = `SELECT DISTINCT p.proname::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang WHERE p.oid >= 16384 AND l.lanname = 'plpgsql' AND p.prosrc ~* '\\mexception\\M'`;

/** The user sequences, as regclass text (their values live outside transactions: dry runs advance them). */
export const SEQUENCES_SQL = `SELECT c.oid::regclass::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND ${USER_NS} ORDER BY c.oid`;

/** This backend's granted locks, raw: names are resolved in TypeScript (a join costs ~1 ms). */
export const LOCK_SAMPLE_DEF = `SELECT l.locktype, l.relation::int, l.mode, l.transactionid::text, l.classid::int, l.objid::int, l.objsubid::int, l.page::int, l.tuple::int
FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.granted AND l.locktype IN ('relation', 'transactionid', 'advisory', 'page', 'tuple')`;

/** Runs the prepared sample (see PgliteExecutor.create). */
export const LOCK_SAMPLE_SQL = 'EXECUTE lockstep_sample';

/** Parses LOCK_SAMPLE_SQL rows; relation locks on anything but user relations are dropped. */
export function parseLockSample(rows: (string | null)[][], relations: ReadonlyMap<number, RelationInfo>): LockSample {
  const out: LockSample = { relations: [], advisory: [], xids: new Set(), predicate: [] };
  for (const [locktype, relation, mode, xid, classid, objid, objsubid, page, tuple] of rows) {
    if (mode === 'SIReadLock') {
      // SERIALIZABLE: the predicate locks PostgreSQL took for what the transaction read.
      const rel = Number(relation);
      if (!relations.has(rel)) continue;
      if (locktype === 'relation') out.predicate.push({ kind: 'relation', rel });
      else if (locktype === 'page') out.predicate.push({ kind: 'page', rel, block: Number(page) });
      else if (locktype === 'tuple') out.predicate.push({ kind: 'tuple', rel, block: Number(page), offset: Number(tuple) });
    } else if (locktype === 'transactionid') out.xids.add(Number(xid));
    else if (locktype === 'relation') {
      const r = relations.get(Number(relation));
      if (r) out.relations.push({ oid: Number(relation), name: r.name, mode: mode as LockMode, isIndex: r.isIndex, table: r.table });
    } else if (locktype === 'advisory')
      out.advisory.push({ key1: Number(classid), key2: Number(objid), field4: Number(objsubid) as 1 | 2, mode: mode as LockMode });
  }
  return out;
}

/**
 * The user relations a session can hold a lock on, by OID (prepared once): tables and indexes,
 * and the views, materialized views and sequences PostgreSQL locks like tables (a SELECT from a
 * view holds AccessShareLock on it, CREATE OR REPLACE VIEW and REFRESH MATERIALIZED VIEW take
 * AccessExclusiveLock, REFRESH … CONCURRENTLY ExclusiveLock, nextval RowExclusiveLock on the
 * sequence and ALTER SEQUENCE ShareRowExclusiveLock), so each of those waits as on a table.
 */
export const RELATIONS_DEF = `SELECT c.oid::int, c.relname, c.relkind, coalesce(t.relname, c.relname)
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
WHERE c.relkind IN ('r', 'p', 'i', 'I', 'v', 'm', 'S') AND ${USER_NS}`;

/** Parses RELATIONS_DEF rows. */
export function parseRelations(rows: (string | null)[][]): Map<number, RelationInfo> {
  return new Map(
    rows.map(([oid, name, kind, table]) => [Number(oid), { name: name!, isIndex: kind === 'i' || kind === 'I', table: table! }]),
  );
}

/** t_ctid of a tuple whose row an UPDATE moved to another partition (InvalidBlockNumber, MovedPartitionsOffsetNumber). */
export const MOVED_PARTITIONS_CTID = '(4294967295,65533)';

/** Runs the prepared tuple scan over the tables this transaction may have written (see PgliteExecutor.create). */
export const TUPLE_SCAN_SQL = 'EXECUTE lockstep_scan';

/**
 * SQL scanning user heap pages for tuples whose xmin/xmax involve the given xids or a multixact,
 * with the members of each multixact xmax ("xid:mode,…", in pg_get_multixact_members' order).
 * With 'mine', the xids and the tables come from one read of this backend's pg_locks: the user
 * tables it holds more than AccessShareLock on (only those can have rows it wrote or row-locked),
 * found from the locks rather than by scanning pg_class.
 */
export function tupleScanSql(xids: number[] | 'mine'): string {
  const list =
    xids === 'mine'
      ? `SELECT m.transactionid::text::bigint FROM mine m WHERE m.locktype = 'transactionid'`
      : xids.length
        ? xids.join(',')
        : '-1';
  // The tables are settled before any page is read (a materialized CTE): the engine's own tables,
  // which every replay writes to, are never scanned.
  return `WITH mine AS MATERIALIZED (SELECT l.locktype, l.relation, l.mode, l.transactionid FROM pg_catalog.pg_locks l
  WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype IN ('relation', 'transactionid')),
rels AS MATERIALIZED (SELECT c.oid, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.oid IN (SELECT m.relation FROM mine m WHERE m.locktype = 'relation' AND m.mode <> 'AccessShareLock') AND c.relkind = 'r' AND ${USER_NS})
SELECT c.oid::int, c.relname, b.blk, h.lp, h.t_xmin::text, h.t_xmax::text, h.t_infomask, h.t_infomask2, h.t_ctid::text,
  CASE WHEN h.t_infomask & ${HEAP_XMAX_IS_MULTI} <> 0 AND h.t_infomask & ${HEAP_XMAX_INVALID} = 0 THEN
    (SELECT string_agg(mm.xid::text || ':' || mm.mode, ',' ORDER BY mm.ord) FROM pg_catalog.pg_get_multixact_members(h.t_xmax) WITH ORDINALITY AS mm(xid, mode, ord)) END
FROM rels c
CROSS JOIN LATERAL pg_catalog.generate_series(0, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
CROSS JOIN LATERAL ${INTERNAL_SCHEMA}.heap_page_items(${INTERNAL_SCHEMA}.get_raw_page(c.oid::regclass::text, b.blk)) h
WHERE h.lp_flags = 1
  AND (h.t_xmin::text::bigint IN (${list}) OR (h.t_infomask & ${HEAP_XMAX_INVALID} = 0 AND (h.t_xmax::text::bigint IN (${list}) OR h.t_infomask & ${HEAP_XMAX_IS_MULTI} <> 0)))
ORDER BY c.oid, b.blk, h.lp`;
}

/**
 * SQL finding the btree and GiST leaf pages (and hash primary bucket pages) that hold index entries pointing at the given heap tuples
 * (SERIALIZABLE: an index insert checks the SIREAD locks on the page it lands on).
 */
export function indexPagesSql(indexOids: number[], ctids: string[]): string {
  const arr = `'{${ctids.map((c) => `"${c}"`).join(',')}}'::tid[]`;
  return `SELECT c.oid::int, b.blk, x.tid::text FROM pg_catalog.pg_class c
CROSS JOIN LATERAL pg_catalog.generate_series(1, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
CROSS JOIN LATERAL ${INTERNAL_SCHEMA}.bt_page_items(${INTERNAL_SCHEMA}.get_raw_page(c.oid::regclass::text, b.blk)) i
CROSS JOIN LATERAL pg_catalog.unnest(coalesce(i.tids, ARRAY[i.htid])) AS x(tid)
WHERE c.oid = ANY('{${indexOids.join(',')}}'::oid[]) AND c.relam = 403 AND x.tid = ANY(${arr})
UNION ALL
${hashPagesSql(indexOids, arr)}
UNION ALL
${gistPagesSql(indexOids, arr)}`;
}

/** The GiST half of indexPagesSql: gistdoinsert checks the SIREAD locks on the leaf page the entry goes to. */
function gistPagesSql(indexOids: number[], arr: string): string {
  const ns = INTERNAL_SCHEMA;
  return `SELECT t.oid::int, t.blk, x.ctid::text
FROM (SELECT c.oid, b.blk, ${ns}.get_raw_page(c.oid::regclass::text, b.blk) AS raw FROM pg_catalog.pg_class c
  CROSS JOIN LATERAL pg_catalog.generate_series(0, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
  WHERE c.oid = ANY('{${indexOids.join(',')}}'::oid[]) AND c.relam = 783) t
CROSS JOIN LATERAL ${ns}.gist_page_items_bytea(t.raw) x
WHERE 'leaf' = ANY((${ns}.gist_page_opaque_info(t.raw)).flags) AND x.ctid = ANY(${arr})`;
}

/**
 * The hash-index half of indexPagesSql: _hash_doinsert checks the SIREAD locks on the primary
 * bucket page of the key, also when the entry lands on one of the bucket's overflow pages.
 */
function hashPagesSql(indexOids: number[], arr: string): string {
  const ns = INTERNAL_SCHEMA;
  return `SELECT h.oid::int, (SELECT min(p.blk) FROM (SELECT q.oid, q.blk, (${ns}.hash_page_stats(q.raw)).hasho_bucket AS bucket
      FROM (SELECT c2.oid, b2.blk, ${ns}.get_raw_page(c2.oid::regclass::text, b2.blk) AS raw FROM pg_catalog.pg_class c2
        CROSS JOIN LATERAL pg_catalog.generate_series(1, (pg_catalog.pg_relation_size(c2.oid) / 8192)::int - 1) AS b2(blk) WHERE c2.oid = h.oid) q
      WHERE ${ns}.hash_page_type(q.raw) = 'bucket') p WHERE p.bucket = h.bucket), x.ctid::text
FROM (SELECT t.oid, t.raw, (${ns}.hash_page_stats(t.raw)).hasho_bucket AS bucket
  FROM (SELECT c.oid, ${ns}.get_raw_page(c.oid::regclass::text, b.blk) AS raw FROM pg_catalog.pg_class c
    CROSS JOIN LATERAL pg_catalog.generate_series(1, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)
    WHERE c.oid = ANY('{${indexOids.join(',')}}'::oid[]) AND c.relam = 405) t
  WHERE ${ns}.hash_page_type(t.raw) IN ('bucket', 'overflow')) h
CROSS JOIN LATERAL ${ns}.hash_page_items(h.raw) x
WHERE x.ctid = ANY(${arr})`;
}

/** Decodes a tuple scan into the tuples touched by `stmtXids` and those it created; `ownXids` are all of the session's xids. */
export async function decodeTuples(
  ex: PgliteExecutor,
  rows: (string | null)[][],
  stmtXids: Set<number>,
  ownXids: Set<number>,
): Promise<{ touched: TupleTouch[]; inserted: InsertedTuple[] }> {
  const touched: TupleTouch[] = [];
  const inserted: InsertedTuple[] = [];
  const multis = new Map<string, { xid: number; mode: RowLockMode }[]>();
  for (const r of rows) {
    const [oid, relname, blk, lp, xmin, xmax, im, im2, tctid, memberList] = r;
    const infomask = Number(im);
    const ctid = `(${blk},${lp})`;
    if (stmtXids.has(Number(xmin))) {
      // A version this statement created is not also a target of it, but a later command of the
      // statement (a function in it) may have updated or deleted it again: the row image then
      // holds the end of that chain, as the intermediate version is dead to everyone.
      const ins: InsertedTuple = { oid: Number(oid), relation: relname!, ctid };
      if (!(infomask & HEAP_XMAX_INVALID) && !(infomask & HEAP_XMAX_IS_MULTI) && stmtXids.has(Number(xmax))) {
        const m = singleXmaxMode(infomask, Number(im2));
        if (m === 'NoKeyUpdate' || m === 'Update') {
          if (tctid && tctid !== ctid && tctid !== MOVED_PARTITIONS_CTID) ins.next = tctid;
          else ins.deleted = true;
        }
      }
      inserted.push(ins);
      continue;
    }
    if (infomask & HEAP_XMAX_INVALID) continue;
    let mode: RowLockMode | undefined;
    let byXid = Number(xmax);
    if (infomask & HEAP_XMAX_IS_MULTI) {
      let members = multis.get(xmax!);
      if (!members) {
        // The scan lists the members; a scan without that column (or an empty list) asks for them.
        const mrows = memberList
          ? memberList.split(',').map((x) => x.split(':'))
          : await ex.must(`SELECT xid::text, mode FROM pg_catalog.pg_get_multixact_members('${xmax}'::xid)`);
        members = mrows.map(([x, m]) => ({ xid: Number(x), mode: multiMemberMode(m!) }));
        multis.set(xmax!, members);
      }
      for (const m of members)
        if (stmtXids.has(m.xid)) {
          mode = mode ? strongest(mode, m.mode) : m.mode;
          byXid = m.xid;
        }
    } else if (stmtXids.has(Number(xmax))) {
      mode = singleXmaxMode(infomask, Number(im2));
    }
    if (!mode) continue;
    const t: TupleTouch = {
      oid: Number(oid),
      relation: relname!,
      block: Number(blk),
      offset: Number(lp),
      mode,
      own: ownXids.has(Number(xmin)),
      xid: byXid,
    };
    // An update that moves the row to another partition deletes it here (its new version is an
    // insert into the other partition) and marks t_ctid with ItemPointerSetMovedPartitions.
    if (mode === 'Update' && tctid === MOVED_PARTITIONS_CTID) t.movedPartition = true;
    else if ((mode === 'NoKeyUpdate' || mode === 'Update') && tctid !== ctid) t.newCtid = tctid!;
    else if (tctid === MOVED_PARTITIONS_CTID) continue;
    else if (mode !== 'NoKeyUpdate' && mode !== 'Update' && tctid && tctid !== ctid) t.next = tctid;
    touched.push(t);
  }
  return { touched, inserted };
}

function strongest(a: RowLockMode, b: RowLockMode): RowLockMode {
  const rank: Record<RowLockMode, number> = { ForKeyShare: 1, ForShare: 2, ForNoKeyUpdate: 3, NoKeyUpdate: 3.5, ForUpdate: 4, Update: 4.5 };
  return rank[a] >= rank[b] ? a : b;
}

/** Reads user tables, their columns and unique indexes (plain-column ones). */
/** User tables, their columns and unique indexes (prepared once: see PgliteExecutor.create). */
export const CATALOG_DEF = `SELECT c.oid::int, c.relname,
  (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''),
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_object('name', ic.relname,
       'cols', (SELECT pg_catalog.json_agg(pg_catalog.pg_get_indexdef(i.indexrelid, k.ord, false) ORDER BY k.ord) FROM pg_catalog.generate_series(1, i.indnkeyatts::int) k(ord)),
       'pred', pg_catalog.pg_get_expr(i.indpred, i.indrelid), 'nnd', i.indnullsnotdistinct,
       'con', uc.conname, 'def', uc.condeferrable, 'idf', uc.condeferred) ORDER BY ic.oid)::text
     FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
       LEFT JOIN pg_catalog.pg_constraint uc ON uc.conindid = i.indexrelid AND uc.conrelid = c.oid AND uc.contype IN ('u', 'p')
     WHERE i.indrelid = c.oid AND i.indisunique),
  c.relhastriggers OR c.relhasrules,
  pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname),
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_object('name', ic.relname,
       'cols', (SELECT pg_catalog.json_agg(a.attname ORDER BY k.ord) FROM pg_catalog.generate_series(1, i.indnkeyatts::int) k(ord) JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[k.ord - 1]),
       'types', (SELECT pg_catalog.json_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) ORDER BY k.ord) FROM pg_catalog.generate_series(1, i.indnkeyatts::int) k(ord) JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[k.ord - 1]),
       'ops', (SELECT pg_catalog.json_agg('OPERATOR(' || pg_catalog.quote_ident(opn.nspname) || '.' || o.oprname || ')' ORDER BY k.ord) FROM pg_catalog.generate_series(1, i.indnkeyatts::int) k(ord) JOIN pg_catalog.pg_operator o ON o.oid = x.conexclop[k.ord] JOIN pg_catalog.pg_namespace opn ON opn.oid = o.oprnamespace),
       'n', i.indnkeyatts) ORDER BY ic.oid)::text
     FROM pg_catalog.pg_constraint x JOIN pg_catalog.pg_index i ON i.indexrelid = x.conindid JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
     WHERE x.conrelid = c.oid AND x.contype = 'x' AND i.indpred IS NULL),
  (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attidentity = 'a'),
  CASE WHEN NOT c.relhassubclass THEN (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(a.attname, a.atttypid::int, a.attlen, a.attalign, a.attisdropped) ORDER BY a.attnum)::text
    FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0) END
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND ${USER_NS} ORDER BY c.oid`;

/** Parses CATALOG_DEF rows. */
export function parseCatalog(rows: (string | null)[][]): CatalogTable[] {
  return rows.map(([oid, name, cols, wcols, idx, trig, sqlName, excl, always, attrs]) => ({
    oid: Number(oid),
    name: name!,
    ...(sqlName ? { sqlName } : {}),
    columns: cols ? cols.split(',') : [],
    writable: wcols ? wcols.split(',') : [],
    ...(always ? { identityAlways: always.split(',') } : {}),
    uniqueIndexes: idx
      ? (
          JSON.parse(idx) as {
            name: string;
            cols: string[];
            pred: string | null;
            nnd: boolean;
            con: string | null;
            def: boolean | null;
            idf: boolean | null;
          }[]
        ).map((ix) => ({
          name: ix.name,
          columns: ix.cols,
          ...(ix.pred !== null ? { pred: ix.pred } : {}),
          ...(ix.nnd ? { nullsNotDistinct: true as const } : {}),
          // A DEFERRABLE unique constraint's index only notes a possible duplicate; the check
          // (unique_key_recheck) runs at the end of the statement, or at COMMIT when deferred.
          ...(ix.def && ix.con ? { deferrable: { constraint: ix.con, initiallyDeferred: ix.idf === true } } : {}),
        }))
      : [],
    triggersOrRules: trig !== 'f',
    // An exclusion constraint on an expression (a key column that is no plain column) is left out.
    ...(excl
      ? {
          exclusions: (
            JSON.parse(excl) as { name: string; cols: string[] | null; types: string[] | null; ops: string[] | null; n: number }[]
          )
            .filter((x) => x.cols?.length === x.n && x.types?.length === x.n && x.ops?.length === x.n)
            .map((x) => ({ name: x.name, columns: x.cols!, types: x.types!, ops: x.ops! })),
        }
      : {}),
    ...(attrs
      ? {
          attributes: (JSON.parse(attrs) as [string, number, number, string, boolean][]).map(([name, type, len, align, dropped]) => ({
            name,
            type,
            len,
            align,
            ...(dropped ? { dropped: true as const } : {}),
          })),
        }
      : {}),
  }));
}

/** SQL computing unique-key descriptions ("(id)=(1)", as BuildIndexValueDescription words them) for tuples by ctid, or for every row. */
export function uniqueKeysSql(table: CatalogTable, ctids: string[] | 'all'): string | null {
  if (!table.uniqueIndexes.length || !ctids.length) return null;
  const q = (s: string) => '"' + s.replace(/"/g, '""') + '"';
  // Key columns are SQL as pg_get_indexdef prints them (a quoted name, or an expression), evaluated
  // on the row; a partial index holds the row only when its predicate does. A key with a NULL
  // conflicts with nothing, except in a NULLS NOT DISTINCT index, where NULL equals NULL and
  // BuildIndexValueDescription prints it as null.
  const parts = table.uniqueIndexes.map((ix) => {
    const conds = ix.nullsNotDistinct ? [] : ix.columns.map((c) => `(${c}) IS NOT NULL`);
    const vals = ix.columns.map((c) => (ix.nullsNotDistinct ? `coalesce((${c})::text, 'null')` : `(${c})::text`)).join(` || ', ' || `);
    if (ix.pred !== undefined) conds.push(`(${ix.pred}) IS TRUE`);
    return `CASE WHEN ${conds.length ? conds.join(' AND ') : 'true'} THEN '${ix.name.replace(/'/g, "''")}' || chr(1) || '(${ix.columns.join(', ').replace(/'/g, "''")})=(' || ${vals} || ')' END`;
  });
  const where = ctids === 'all' ? '' : ` WHERE ctid = ANY('{${ctids.map((c) => `"${c}"`).join(',')}}'::tid[])`;
  return `SELECT ctid::text, ${parts.join(', ')} FROM ${table.sqlName ?? q(table.name)}${where}`;
}

/**
 * The lock sample and the tuple scan in one statement, with the heap pages decoded here.
 *
 * The dry run asks, right after the statement, for this backend's locks (LOCK_SAMPLE_DEF) and
 * for the tuple headers of the tables it wrote (tupleScanSql). Run as two statements, pg_locks is
 * read twice, and pageinspect's heap_page_items builds a full row (data bytea, null bitmap) for
 * every line pointer of every page; together that is about a third of a DML dry run. Here one
 * prepared statement reads pg_locks once and returns the locks and the raw pages of the same
 * tables; the page header, line pointers and tuple headers are read in TypeScript
 * (bufpage.h, itemid.h, htup_details.h), and rows equal to the tuple scan's are rebuilt from them.
 */
import { HEAP_XMAX_INVALID, HEAP_XMAX_IS_MULTI } from '../model/rowbits';
import { INTERNAL_SCHEMA } from './names';
import { USER_NS } from './footprint';
import type { PgliteExecutor } from './executor';

/**
 * The backend's granted locks (LOCK_SAMPLE_DEF's columns, as text, after three NULLs), then one
 * row per heap page of every user table it holds more than AccessShareLock on: oid, name, block
 * and the page as bytea text, the lock columns NULL. The locks are read once, before any page
 * (the CTE is materialized by the first branch), so the pages' own AccessShareLocks are not in it.
 */
export const FOOTPRINT_DEF = `WITH mine AS MATERIALIZED (SELECT l.locktype, l.relation, l.mode, l.transactionid, l.classid, l.objid, l.objsubid, l.page, l.tuple
  FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.granted AND l.locktype IN ('relation', 'transactionid', 'advisory', 'page', 'tuple')),
rels AS MATERIALIZED (SELECT c.oid, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.oid IN (SELECT m.relation FROM mine m WHERE m.locktype = 'relation' AND m.mode <> 'AccessShareLock') AND c.relkind = 'r' AND ${USER_NS})
SELECT NULL::int, NULL::name, NULL::int, NULL::text, m.locktype, m.relation::int, m.mode, m.transactionid::text, m.classid::int, m.objid::int, m.objsubid::int, m.page::int, m.tuple::int FROM mine m
UNION ALL
SELECT c.oid::int, c.relname, b.blk, ${INTERNAL_SCHEMA}.get_raw_page(c.oid::regclass::text, b.blk)::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM rels c CROSS JOIN LATERAL pg_catalog.generate_series(0, (pg_catalog.pg_relation_size(c.oid) / 8192)::int - 1) AS b(blk)`;

/** Runs the prepared footprint (see PgliteExecutor.create). */
export const FOOTPRINT_SQL = 'EXECUTE lockstep_footprint';

/** One raw heap page of the footprint. */
export interface RawPage {
  oid: string;
  relname: string;
  blk: string;
  hex: string;
}

/** Splits the footprint's rows into lock-sample rows (LOCK_SAMPLE_DEF's shape) and raw pages. */
export function splitFootprint(rows: (string | null)[][]): { sample: (string | null)[][]; pages: RawPage[] } {
  const sample: (string | null)[][] = [];
  const pages: RawPage[] = [];
  for (const r of rows) {
    if (r[0] === null) sample.push(r.slice(4));
    else pages.push({ oid: r[0], relname: r[1]!, blk: r[2]!, hex: r[3]! });
  }
  return { sample, pages };
}

const BLCKSZ = 8192;
const SIZE_OF_PAGE_HEADER = 24;
const LP_NORMAL = 1;
/** MAXALIGN(SizeofHeapTupleHeader): heap_page_items reads a tuple header only from a line pointer at least this long. */
const MIN_HEAP_TUPLE_SIZE = 24;

/** Hex digit values by character code (-1: not a hex digit). */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[65 + i] = HEX[97 + i] = 10 + i;

/**
 * Little-endian reads from a page given as bytea text output ("\\x", two hex digits a byte),
 * straight from the text: a scan reads a few hundred of the page's 8,192 bytes.
 */
export class HexPage {
  readonly length: number;
  constructor(private readonly hex: string) {
    if (!hex.startsWith('\\x') || hex.length % 2 !== 0) throw new Error('raw page: expected bytea hex output');
    this.length = (hex.length - 2) >> 1;
  }

  /** Byte `at`. */
  u8(at: number): number {
    if (at < 0 || at >= this.length) throw new Error(`raw page: byte ${at} out of range`);
    const j = 2 + 2 * at;
    const hi = HEX[this.hex.charCodeAt(j) & 127];
    const lo = HEX[this.hex.charCodeAt(j + 1) & 127];
    if (hi < 0 || lo < 0) throw new Error('raw page: not a hex digit');
    return (hi << 4) | lo;
  }

  /** The unsigned 16-bit integer at `at`. */
  u16(at: number): number {
    return this.u8(at) | (this.u8(at + 1) << 8);
  }

  /** The unsigned 32-bit integer at `at`. */
  u32(at: number): number {
    return (this.u16(at) | (this.u16(at + 2) << 16)) >>> 0;
  }
}

/**
 * A scan that also finds the rows a statement's ended subtransactions wrote or locked: a
 * PL/pgSQL block with an EXCEPTION clause runs its body in a subtransaction, whose xid leaves
 * pg_locks when the block completes (CommitSubTransaction's XactLockTableDelete) while its row
 * versions and row locks stay the transaction's. `after`: the statement's first xid (every xid
 * it assigns is larger, and in the single-user PGlite no other transaction assigns one meanwhile);
 * `subcommitted` receives those that committed into the transaction.
 */
export interface SubcommittedScan {
  after: number;
  subcommitted: Set<number>;
}

/**
 * The tuple scan's rows (tupleScanSql's columns: oid, relname, blk, lp, xmin, xmax, infomask,
 * infomask2, ctid, multixact members) from raw pages: tuples whose xmin is one of `xids`, or
 * whose xmax is valid and one of `xids` or a multixact, in (oid, blk, lp) order. Members of the
 * multixacts are read in one query (the scan's per-row subquery, pg_get_multixact_members order).
 */
export async function scanRowsFromPages(
  ex: PgliteExecutor,
  pages: RawPage[],
  xids: Set<number>,
  sub?: SubcommittedScan,
): Promise<(string | null)[][]> {
  const rows: (string | null)[][] = [];
  const multis: string[] = [];
  // Xids newer than the statement's first one that pg_locks no longer lists: subtransactions of
  // the statement that have ended (see SubcommittedScan). Which of them committed is asked below.
  const later = (x: number) => sub !== undefined && x > sub.after && !xids.has(x);
  const candidates = new Set<number>();
  const sorted = [...pages].sort((a, b) => Number(a.oid) - Number(b.oid) || Number(a.blk) - Number(b.blk));
  for (const p of sorted) {
    const page = new HexPage(p.hex);
    if (page.length !== BLCKSZ) throw new Error(`raw page of ${p.relname} has ${page.length} bytes`);
    const lower = page.u16(12);
    const count = lower > SIZE_OF_PAGE_HEADER ? (lower - SIZE_OF_PAGE_HEADER) >> 2 : 0;
    for (let i = 0; i < count; i++) {
      const id = page.u32(SIZE_OF_PAGE_HEADER + 4 * i);
      const off = id & 0x7fff;
      const flags = (id >>> 15) & 3;
      const len = id >>> 17;
      // heap_page_items: a tuple header only where the line pointer holds one, aligned and in the page.
      if (flags !== LP_NORMAL || len < MIN_HEAP_TUPLE_SIZE || off % 8 !== 0 || off + len > BLCKSZ) continue;
      const xmin = page.u32(off);
      const xmax = page.u32(off + 4);
      const ctidBlock = ((page.u16(off + 12) << 16) | page.u16(off + 14)) >>> 0;
      const ctidPos = page.u16(off + 16);
      const infomask2 = page.u16(off + 18);
      const infomask = page.u16(off + 20);
      const xmaxValid = (infomask & HEAP_XMAX_INVALID) === 0;
      const multi = xmaxValid && (infomask & HEAP_XMAX_IS_MULTI) !== 0;
      const xminLater = later(xmin);
      const xmaxLater = xmaxValid && !multi && later(xmax);
      if (!(xids.has(xmin) || xminLater || xmaxLater || (xmaxValid && (xids.has(xmax) || multi)))) continue;
      if (xminLater) candidates.add(xmin);
      if (xmaxLater) candidates.add(xmax);
      if (multi) multis.push(String(xmax));
      rows.push([
        p.oid,
        p.relname,
        p.blk,
        String(i + 1),
        String(xmin),
        String(xmax),
        String(infomask),
        String(infomask2),
        `(${ctidBlock},${ctidPos})`,
        multi ? String(xmax) : null,
      ]);
    }
  }
  if (candidates.size && sub) {
    // pg_xact_status says 'in progress' for a subtransaction that committed into this one
    // (TransactionIdIsCurrentTransactionId) and 'aborted' for one rolled back: its writes and
    // row locks are gone, as if never made. The xid8 carries the current epoch.
    for (const [x, status] of await ex.must(
      `SELECT u.x::text, pg_catalog.pg_xact_status((((pg_catalog.pg_current_xact_id()::text::int8 >> 32) << 32) | u.x::text::int8)::text::xid8)
       FROM pg_catalog.unnest('{${[...candidates].join(',')}}'::xid[]) AS u(x)`,
    ))
      if (status === 'in progress') sub.subcommitted.add(Number(x));
    const gone = (x: string | null) => candidates.has(Number(x)) && !sub.subcommitted.has(Number(x));
    const kept = rows.filter((r) => {
      const [, , , , xmin, xmax, , , , multi] = r;
      const mine = (x: string | null) => xids.has(Number(x)) || sub.subcommitted.has(Number(x));
      return mine(xmin) || (multi !== null ? true : mine(xmax)) || !(gone(xmin) || gone(xmax));
    });
    rows.length = 0;
    rows.push(...kept);
  }
  if (multis.length) {
    // A MultiXactId's members are fixed when it is created and the id is never handed out again
    // (rolled-back dry runs consume theirs too), so the executor keeps every list it has read.
    const members = ex.multiMembers;
    const unread = [...new Set(multis)].filter((x) => !members.has(x));
    if (unread.length)
      for (const [x, list] of await ex.must(
        `SELECT u.x::text, (SELECT string_agg(mm.xid::text || ':' || mm.mode, ',' ORDER BY mm.ord) FROM pg_catalog.pg_get_multixact_members(u.x) WITH ORDINALITY AS mm(xid, mode, ord))
         FROM pg_catalog.unnest('{${unread.join(',')}}'::xid[]) AS u(x)`,
      ))
        members.set(x!, list);
    for (const r of rows) if (r[9] !== null) r[9] = members.get(r[9]) ?? null;
  }
  return rows;
}

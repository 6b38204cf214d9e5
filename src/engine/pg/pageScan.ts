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
import { HEAP_XMAX_INVALID, HEAP_XMAX_IS_MULTI, HEAP_XMAX_LOCK_ONLY } from '../model/rowbits';
import type { CatalogTable } from '../model/facts';
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

  /** `n` bytes from `at`. */
  bytes(at: number, n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u8(at + i);
    return out;
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

/** Types whose text output versionValues writes itself, with their attlen: bool, int8, int2, int4, text, varchar. */
const DECODED_TYPES = new Map([
  [16, 1],
  [20, 8],
  [21, 2],
  [23, 4],
  [25, -1],
  [1043, -1],
]);
const HEAP_HASNULL = 0x0001;
const HEAP_HASEXTERNAL = 0x0004;
const HEAP_NATTS_MASK = 0x07ff;
const ALIGN: Record<string, number> = { c: 1, s: 2, i: 4, d: 8 };
const utf8 = new TextDecoder();

/**
 * The values of a table's new row versions as `SELECT ctid::text, <writable>::text … WHERE ctid =
 * ANY(…)` returns them in the dry run right after the footprint (dryRun.ts, valuesSql): one row
 * per distinct ctid in ctid order (a TID scan sorts its list), read from the footprint's pages
 * (htup_details.h: null bitmap, attribute alignment, varlena headers; tupmacs.h's
 * att_align_pointer). Null — read them with SQL — unless every version is there to read:
 * its page in the footprint, a normal line pointer, no xmax but a locker's (so the read's
 * snapshot sees it), as many attributes as the table (none missing after an ADD COLUMN),
 * nothing toasted or compressed, and every writable column of a type in DECODED_TYPES.
 */
export function versionValues(pages: readonly RawPage[], cat: CatalogTable, ctids: readonly string[]): (string | null)[][] | null {
  const attrs = cat.attributes;
  if (!attrs) return null;
  const wanted = cat.writable.map((c) => attrs.findIndex((a) => !a.dropped && a.name === c));
  if (wanted.some((i) => i < 0 || DECODED_TYPES.get(attrs[i].type) !== attrs[i].len)) return null;
  const places = [...new Set(ctids)]
    .map((c) => {
      const m = /^\((\d+),(\d+)\)$/.exec(c);
      return m ? { ctid: c, block: Number(m[1]), offset: Number(m[2]) } : null;
    })
    .sort((a, b) => (a && b ? a.block - b.block || a.offset - b.offset : 0));
  const rows: (string | null)[][] = [];
  for (const place of places) {
    if (!place) return null;
    const raw = pages.find((p) => Number(p.oid) === cat.oid && Number(p.blk) === place.block);
    if (!raw) return null;
    const values = tupleValues(new HexPage(raw.hex), place.offset, attrs);
    if (!values) return null;
    rows.push([place.ctid, ...wanted.map((i) => values[i])]);
  }
  return rows;
}

/** One tuple's attributes as `::text` gives them (null where NULL, or not a DECODED_TYPES type), or null when it cannot be read here. */
function tupleValues(page: HexPage, offset: number, attrs: NonNullable<CatalogTable['attributes']>): (string | null)[] | null {
  const lower = page.u16(12);
  if (offset < 1 || SIZE_OF_PAGE_HEADER + 4 * offset > lower) return null;
  const id = page.u32(SIZE_OF_PAGE_HEADER + 4 * (offset - 1));
  const off = id & 0x7fff;
  const len = id >>> 17;
  if (((id >>> 15) & 3) !== LP_NORMAL || len < MIN_HEAP_TUPLE_SIZE || off + len > BLCKSZ) return null;
  const infomask2 = page.u16(off + 18);
  const infomask = page.u16(off + 20);
  if (!(infomask & HEAP_XMAX_INVALID) && !(infomask & HEAP_XMAX_LOCK_ONLY)) return null;
  if (infomask & HEAP_HASEXTERNAL || (infomask2 & HEAP_NATTS_MASK) !== attrs.length) return null;
  const hasNulls = (infomask & HEAP_HASNULL) !== 0;
  const end = off + len;
  let at = off + page.u8(off + 22);
  const out: (string | null)[] = [];
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i];
    if (hasNulls && !(page.u8(off + 23 + (i >> 3)) & (1 << (i & 7)))) {
      out.push(null);
      continue;
    }
    const align = ALIGN[a.align];
    if (!align) return null;
    if (a.len > 0) {
      at = alignUp(at, off, align);
      if (at + a.len > end) return null;
      out.push(a.dropped ? null : fixedText(page, at, a.type, a.len));
      at += a.len;
    } else if (a.len === -1) {
      // A varlena: a non-zero first byte is a 1-byte header, never padded; else pad, then a 4-byte header.
      if (page.u8(at) === 0) at = alignUp(at, off, align);
      const first = page.u8(at);
      let start: number;
      let size: number;
      if (first === 0x01) return null; // a TOAST pointer
      if (first & 0x01) {
        start = at + 1;
        size = (first >> 1) & 0x7f;
      } else {
        const header = page.u32(at);
        if ((header & 0x03) !== 0) return null; // compressed inline
        start = at + 4;
        size = header >>> 2;
      }
      if (at + size > end || start > at + size) return null;
      out.push(a.dropped ? null : DECODED_TYPES.has(a.type) ? utf8.decode(page.bytes(start, at + size - start)) : null);
      at += size;
    } else return null;
  }
  return out;
}

/** `at` rounded up to `align` bytes from the tuple's start (which is MAXALIGNed, as t_hoff is). */
function alignUp(at: number, tupleStart: number, align: number): number {
  const rel = at - tupleStart;
  return tupleStart + Math.ceil(rel / align) * align;
}

/** A fixed-width attribute as its cast to text writes it (bool's cast says true/false, not boolout's t/f). */
function fixedText(page: HexPage, at: number, type: number, len: number): string | null {
  if (type === 16 && len === 1) return page.u8(at) ? 'true' : 'false';
  if (type === 21 && len === 2) return String((page.u16(at) << 16) >> 16);
  if (type === 23 && len === 4) return String(page.u32(at) | 0);
  if (type === 20 && len === 8) return BigInt.asIntN(64, (BigInt(page.u32(at + 4)) << 32n) | BigInt(page.u32(at))).toString();
  return null;
}

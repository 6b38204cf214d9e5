/**
 * The backend's answer to one simple Query message, read straight from the wire bytes.
 *
 * PGlite's own protocol parser copies every field into a fresh ArrayBuffer and builds an Error
 * (with a stack trace) for each ErrorResponse; on the engine's hot path that cost more than
 * PostgreSQL's work for small statements. This reads only what `PgliteExecutor.run` reports —
 * RowDescription (names), DataRow, CommandComplete, EmptyQueryResponse, NoticeResponse,
 * ErrorResponse — with the same field mapping as PGlite's parser; other messages are skipped.
 * Text is UTF-8 (PGlite's client encoding), decoded with TextDecoder like PGlite does.
 */
import type { PgMessage, StatementResult } from '../types';
import type { RawResult } from './executor';

const decoder = new TextDecoder('utf-8');
const encoder = new TextEncoder();

/** A simple-protocol Query message: 'Q', its length, the SQL as a C string (what PGlite's protocol.serialize.query builds). */
export function queryMessage(sql: string): Uint8Array {
  const text = encoder.encode(sql);
  const out = new Uint8Array(text.length + 6);
  out[0] = 0x51;
  new DataView(out.buffer).setInt32(1, text.length + 5);
  out.set(text, 5);
  return out;
}

function text(buf: Uint8Array, start: number, end: number): string {
  // Short ASCII strings (nearly every field the engine reads) without a TextDecoder call.
  if (end - start <= 64) {
    let s = '';
    for (let i = start; i < end; i++) {
      const c = buf[i];
      if (c > 127) return decoder.decode(buf.subarray(start, end));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return decoder.decode(buf.subarray(start, end));
}

function cstringEnd(buf: Uint8Array, at: number): number {
  let z = at;
  while (z < buf.length && buf[z] !== 0) z++;
  return z;
}

/** ErrorResponse / NoticeResponse fields, as PGlite's parser maps them (S, C, M, D, H, W, P). */
function errorFields(buf: Uint8Array, start: number, end: number): PgMessage {
  const f: Record<string, string> = {};
  let p = start;
  while (p < end && buf[p] !== 0) {
    const code = String.fromCharCode(buf[p]);
    const z = cstringEnd(buf, p + 1);
    f[code] = text(buf, p + 1, z);
    p = z + 1;
  }
  const out: PgMessage = { severity: f.S ?? 'ERROR', sqlstate: f.C ?? 'XX000', message: f.M ?? '' };
  if (f.D) out.detail = f.D;
  if (f.H) out.hint = f.H;
  if (f.W) out.context = f.W;
  if (f.P) out.position = Number(f.P);
  return out;
}

/** Parses the complete response to one Query message. */
export function parseQueryResponse(buf: Uint8Array): RawResult {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const results: StatementResult[] = [];
  const notices: PgMessage[] = [];
  const noticeAt: number[] = [];
  let error: PgMessage | undefined;
  let cur: { columns?: string[]; rows?: (string | null)[][] } = {};
  let p = 0;
  while (p + 5 <= buf.length) {
    const type = buf[p];
    const end = p + 1 + dv.getInt32(p + 1);
    const body = p + 5;
    if (end > buf.length) break;
    switch (type) {
      case 0x54: {
        // RowDescription: per field a name, then 18 bytes of type information.
        const n = dv.getInt16(body);
        const columns: string[] = new Array(n);
        let q = body + 2;
        for (let i = 0; i < n; i++) {
          const z = cstringEnd(buf, q);
          columns[i] = text(buf, q, z);
          q = z + 1 + 18;
        }
        cur = { columns, rows: [] };
        break;
      }
      case 0x44: {
        // DataRow: per field an int32 length (-1: NULL) and the bytes.
        const n = dv.getInt16(body);
        const fields: (string | null)[] = new Array(n);
        let q = body + 2;
        for (let i = 0; i < n; i++) {
          const len = dv.getInt32(q);
          q += 4;
          if (len < 0) fields[i] = null;
          else {
            fields[i] = text(buf, q, q + len);
            q += len;
          }
        }
        cur.rows?.push(fields);
        break;
      }
      case 0x43: // CommandComplete
        results.push({ command: text(buf, body, cstringEnd(buf, body)), ...cur });
        cur = {};
        break;
      case 0x49: // EmptyQueryResponse
        cur = {};
        break;
      case 0x4e: // NoticeResponse
        notices.push(errorFields(buf, body, end));
        noticeAt.push(results.length);
        break;
      case 0x45: // ErrorResponse
        error = errorFields(buf, body, end);
        break;
    }
    p = end;
  }
  return error ? { results, error, notices, noticeAt } : { results, notices, noticeAt };
}

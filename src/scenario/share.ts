/**
 * Share links: a whole lab scenario in the URL fragment (`#/lab?s=<code>`), as JSON, deflated
 * with fflate and base64url-encoded, so it works on static hosting. A link is untrusted input:
 * the decoder caps the compressed and the inflated size (inflating in small slices, so a
 * deflate bomb stops early), checks the JSON against a strict schema, and reports which stage
 * failed. Decoding never runs anything.
 */
import { deflateSync, Inflate } from 'fflate';
import type { LabScenario, LabSession } from './labScenario';

/** Format version inside the JSON. */
export const SHARE_VERSION = 1;
/** Longest accepted code, in characters (what a learner sees as the link's length): 64 Ki. */
export const MAX_SHARE_CODE = 64 * 1024;
/** The compressed bytes that many base64url characters carry. */
export const MAX_SHARE_COMPRESSED = (MAX_SHARE_CODE * 3) / 4;
/** Largest accepted inflated JSON, in bytes. */
export const MAX_SHARE_RAW = 256 * 1024;

const MAX_TITLE = 200;
const MAX_SETUP_BLOCKS = 16;
const MAX_SESSIONS = 8;
const MAX_STEPS = 200;
const MAX_NAME = 64;

/** The stage of decoding that failed; the UI explains each in the learner's language. */
export type ShareFailure = 'missing' | 'too-long' | 'base64' | 'deflate' | 'too-large' | 'utf8' | 'json' | 'schema';

export class ShareError extends Error {
  constructor(
    readonly stage: ShareFailure,
    /** Technical detail (for 'schema': the path and what was expected). */
    readonly detail: string,
  ) {
    super(`${stage}: ${detail}`);
    this.name = 'ShareError';
  }
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Bytes → base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4;
    for (let k = 0; k < chars; k++) out += B64[(n >> (18 - 6 * k)) & 63];
  }
  return out;
}

/** base64url (padding tolerated) → bytes; ShareError 'base64' on a bad character or length. */
export function fromBase64Url(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  if (clean.length % 4 === 1) throw new ShareError('base64', `impossible length ${clean.length}`);
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let j = 0;
  for (let i = 0; i < clean.length; i++) {
    const v = B64.indexOf(clean[i]);
    if (v < 0) throw new ShareError('base64', `character ${JSON.stringify(clean[i])} at position ${i + 1}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** The share code of a scenario (what follows `s=`). */
export function encodeScenario(sc: LabScenario): string {
  const doc = { v: SHARE_VERSION, ...sc };
  return toBase64Url(deflateSync(new TextEncoder().encode(JSON.stringify(doc)), { level: 9 }));
}

/** The full share URL for a page address (`location.href` without its fragment). */
export function shareUrl(base: string, sc: LabScenario): string {
  return `${base.replace(/#.*$/, '')}#/lab?s=${encodeScenario(sc)}`;
}

/** Inflates with a running size check: stops as soon as the output passes `max` bytes. */
function boundedInflate(data: Uint8Array, max: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  const inflater = new Inflate((chunk, final) => {
    size += chunk.length;
    if (size > max) throw new ShareError('too-large', `more than ${max} bytes once inflated`);
    chunks.push(chunk);
    if (final) ended = true;
  });
  const SLICE = 1024;
  try {
    for (let i = 0; i < data.length; i += SLICE) inflater.push(data.subarray(i, i + SLICE), i + SLICE >= data.length);
    if (data.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (e) {
    if (e instanceof ShareError) throw e;
    throw new ShareError('deflate', e instanceof Error ? e.message : String(e));
  }
  if (!ended) throw new ShareError('deflate', 'the compressed data ends early');
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Decodes a share code into a scenario, or throws ShareError naming the stage that failed. */
export function decodeScenario(code: string | null | undefined): LabScenario {
  if (code === null || code === undefined || code === '') throw new ShareError('missing', 'no scenario in the link');
  if (code.length > MAX_SHARE_CODE) throw new ShareError('too-long', `${code.length} characters; the limit is ${MAX_SHARE_CODE}`);
  const bytes = fromBase64Url(code);
  const raw = boundedInflate(bytes, MAX_SHARE_RAW);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new ShareError('utf8', 'the inflated data is not UTF-8 text');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ShareError('json', e instanceof Error ? e.message : String(e));
  }
  return checkScenario(json);
}

/** Strict structure check of untrusted JSON: exact keys, exact types, bounded sizes. */
export function checkScenario(json: unknown): LabScenario {
  const fail = (path: string, expected: string): never => {
    throw new ShareError('schema', `${path || '(root)'}: expected ${expected}`);
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const keys = (v: Record<string, unknown>, path: string, required: string[], optional: string[]) => {
    for (const k of Object.keys(v)) if (!required.includes(k) && !optional.includes(k)) fail(`${path}.${k}`, 'no such field');
    for (const k of required) if (!Object.hasOwn(v, k)) fail(`${path}.${k}`, 'a value (missing)');
  };
  const str = (v: unknown, path: string, max: number): string => {
    if (typeof v !== 'string') return fail(path, 'a string');
    if (v.length > max) fail(path, `at most ${max} characters`);
    if (v.includes('\0')) fail(path, 'no NUL characters');
    return v;
  };
  const list = (v: unknown, path: string, min: number, max: number): unknown[] => {
    if (!Array.isArray(v)) return fail(path, 'a list');
    if (v.length < min || v.length > max) fail(path, `${min} to ${max} items`);
    return v;
  };
  const sql = (v: unknown, path: string) => str(v, path, MAX_SHARE_RAW);

  if (!isObject(json)) return fail('', 'an object');
  keys(json, '', ['v', 'title', 'setup', 'sessions', 'order'], ['teardown']);
  if (json.v !== SHARE_VERSION) fail('v', `version ${SHARE_VERSION}`);
  const sc: LabScenario = {
    title: str(json.title, 'title', MAX_TITLE),
    setup: list(json.setup, 'setup', 0, MAX_SETUP_BLOCKS).map((b, i) => sql(b, `setup[${i}]`)),
    sessions: list(json.sessions, 'sessions', 1, MAX_SESSIONS).map((raw, i): LabSession => {
      const path = `sessions[${i}]`;
      if (!isObject(raw)) return fail(path, 'an object');
      keys(raw, path, ['name', 'steps'], ['setup', 'teardown']);
      const s: LabSession = {
        name: str(raw.name, `${path}.name`, MAX_NAME),
        steps: list(raw.steps, `${path}.steps`, 1, MAX_STEPS).map((st, k) => {
          const sp = `${path}.steps[${k}]`;
          if (!isObject(st)) return fail(sp, 'an object');
          keys(st, sp, ['name', 'sql'], []);
          return { name: str(st.name, `${sp}.name`, MAX_NAME), sql: sql(st.sql, `${sp}.sql`) };
        }),
      };
      if (raw.setup !== undefined) s.setup = sql(raw.setup, `${path}.setup`);
      if (raw.teardown !== undefined) s.teardown = sql(raw.teardown, `${path}.teardown`);
      return s;
    }),
    order: str(json.order, 'order', 64 * 1024),
  };
  if (json.teardown !== undefined) sc.teardown = sql(json.teardown, 'teardown');
  return sc;
}

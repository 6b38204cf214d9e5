/**
 * Structural sharing between one state and the next: every part of `next` that equals the same
 * part of `prev` (plain objects and arrays compared member by member, anything else by identity)
 * is replaced by `prev`'s object. A panel whose input is the same object as before then has
 * nothing to recompute or redraw: Svelte's deriveds and props compare by identity. Pure.
 */

function plain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** `next` with every part equal to `prev`'s taken from `prev` (`prev` itself when all of it is equal). */
export function share<T>(prev: unknown, next: T): T {
  if (Object.is(prev, next)) return next;
  if (Array.isArray(prev) && Array.isArray(next)) {
    let same = prev.length === next.length;
    const out = next.map((v, i) => {
      const s = i < prev.length ? share(prev[i], v) : v;
      if (s !== prev[i]) same = false;
      return s;
    });
    return (same ? prev : out) as T;
  }
  if (plain(prev) && plain(next)) {
    const keys = Object.keys(next);
    let same = keys.length === Object.keys(prev).length;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const s = Object.hasOwn(prev, k) ? share(prev[k], next[k]) : next[k];
      if (s !== prev[k] || !Object.hasOwn(prev, k)) same = false;
      out[k] = s;
    }
    return (same ? prev : out) as T;
  }
  return next;
}

/** A function that shares each value it is given with the one it returned last (for a `$derived`). */
export function sharer<T>(): (next: T) => T {
  let last: T | undefined;
  let has = false;
  return (next) => {
    const out = has ? share(last, next) : next;
    last = out;
    has = true;
    return out;
  };
}

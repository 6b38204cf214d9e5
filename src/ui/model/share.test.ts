import { describe, expect, it } from 'vitest';
import { share, sharer } from './share';

describe('share', () => {
  it('returns the previous object when everything is equal', () => {
    const prev = { a: [1, { b: 'x' }], c: null };
    const next = { a: [1, { b: 'x' }], c: null };
    expect(share(prev, next)).toBe(prev);
  });

  it('keeps unchanged parts and rebuilds only the changed path', () => {
    const prev = {
      sessions: [
        { name: 'A', xid: 1 },
        { name: 'B', xid: 2 },
      ],
      locks: [{ mode: 'RowExclusiveLock' }],
      clockMs: 10,
    };
    const next = {
      sessions: [
        { name: 'A', xid: 1 },
        { name: 'B', xid: 3 },
      ],
      locks: [{ mode: 'RowExclusiveLock' }],
      clockMs: 20,
    };
    const out = share(prev, next);
    expect(out).not.toBe(prev);
    expect(out).toEqual(next);
    expect(out.locks).toBe(prev.locks);
    expect(out.sessions).not.toBe(prev.sessions);
    expect(out.sessions[0]).toBe(prev.sessions[0]);
    expect(out.sessions[1]).not.toBe(prev.sessions[1]);
    expect(out.clockMs).toBe(20);
  });

  it('treats a longer or shorter array, a missing or added key and undefined values as changes', () => {
    const grown = share([1, 2], [1, 2, 3]);
    expect(grown).toEqual([1, 2, 3]);
    const prev = { a: 1, b: undefined as number | undefined };
    expect(share(prev, { a: 1 })).toEqual({ a: 1 });
    expect(share(prev, { a: 1 })).not.toBe(prev);
    const one = { a: 1 };
    expect(share(one, { a: 1, b: undefined })).not.toBe(one);
    expect(share({ a: 1 }, { b: 1 })).toEqual({ b: 1 });
  });

  it('compares Maps, Sets and class instances by identity only', () => {
    const m = new Map([[1, 2]]);
    expect(share({ m }, { m: new Map([[1, 2]]) }).m).not.toBe(m);
    expect(share({ m }, { m }).m).toBe(m);
  });
});

describe('sharer', () => {
  it('shares each value with the one it returned last', () => {
    const same = sharer<{ edges: string[] }>();
    const first = same({ edges: ['A→B'] });
    expect(same({ edges: ['A→B'] })).toBe(first);
    const second = same({ edges: ['A→B', 'B→A'] });
    expect(second).not.toBe(first);
    expect(same({ edges: ['A→B', 'B→A'] })).toBe(second);
  });
});

import { describe, expect, it } from 'vitest';
import { Ssi, SsiFailure, type PredTarget, type SsiWrite, type Sxact } from './ssi';

const rel = (r: number): PredTarget => ({ kind: 'relation', rel: r });
const tup = (r: number, block: number, offset: number): PredTarget => ({ kind: 'tuple', rel: r, block, offset });
const upd = (r: number, block: number, offset: number): SsiWrite => ({ kind: 'tuple', rel: r, block, offset });

function reason(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    if (e instanceof SsiFailure) return e.reason;
    throw e;
  }
}

/** A tiny driver: xids are handed out on first write, as the engine does. */
class World {
  readonly ssi = new Ssi();
  private nextXid = 750;
  private readonly xids = new Map<Sxact, number>();
  begin(name: string): Sxact {
    const running = [...this.xids.entries()].filter(([s]) => !s.finished).map(([, x]) => x);
    return this.ssi.begin(name, Math.min(this.nextXid, ...running));
  }
  read(s: Sxact, ...scope: PredTarget[]): string | null {
    return reason(() => this.ssi.read(s, scope, scope, undefined, true));
  }
  write(s: Sxact, ...w: SsiWrite[]): string | null {
    if (!this.xids.has(s)) this.xids.set(s, this.nextXid++);
    return reason(() => this.ssi.write(s, w, 0, this.xids.get(s)!));
  }
  commit(s: Sxact): string | null {
    const r = reason(() => this.ssi.preCommit(s)());
    this.ssi.finish(s, r === null, this.nextXid);
    return r;
  }
}

describe('SSI port (predicate.c)', () => {
  it('write skew: the second committer is the pivot and fails at COMMIT', () => {
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    expect(w.read(a, rel(1))).toBeNull();
    expect(w.read(b, rel(1))).toBeNull();
    expect(w.write(a, upd(1, 0, 1))).toBeNull();
    expect(w.write(b, upd(1, 0, 2))).toBeNull();
    expect(w.commit(a)).toBeNull();
    expect(b.doomed).toBe(true);
    expect(w.commit(b)).toBe('Canceled on identification as a pivot, during commit attempt.');
  });

  it('a doomed transaction fails at its next read or write', () => {
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    w.read(a, rel(1));
    w.read(b, rel(1));
    w.write(a, upd(1, 0, 1));
    w.write(b, upd(1, 0, 2));
    w.commit(a);
    expect(w.read(b, tup(2, 0, 1))).toBe('Canceled on identification as a pivot, during conflict out checking.');
    expect(w.write(b, { kind: 'relation', rel: 2 })).toBe('Canceled on identification as a pivot, during conflict in checking.');
  });

  it('a sequential scan flags its conflicts out in heap order: the open writer it meets first is doomed', () => {
    // Spec 241: c read what a and b wrote (c → a, c → b); a commits. b's scan meets c's update
    // of (0,2) before a's of (0,6): b → c makes c a pivot with a committed conflict out, and c,
    // the writer, is doomed; b → a then finds no live pivot and b reads on.
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    const c = w.begin('c');
    w.write(a, upd(1, 0, 6));
    w.write(b, upd(1, 0, 4));
    expect(w.read(c, rel(1))).toBeNull();
    w.write(c, upd(1, 0, 2));
    expect(w.commit(a)).toBeNull();
    expect(w.read(b, rel(1))).toBeNull();
    expect(c.doomed).toBe(true);
    expect(w.commit(c)).toBe('Canceled on identification as a pivot, during commit attempt.');
    expect(w.commit(b)).toBeNull();
  });

  it('writing into what a committed pivot read fails "during write"', () => {
    // b reads what a writes (b → a); a commits; b writes what a read, after a committed: the
    // writer b has a conflict out to the committed a and now a conflict in from it.
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    w.read(a, tup(1, 0, 1));
    w.write(a, upd(2, 0, 1));
    w.read(b, rel(2));
    expect(w.commit(a)).toBeNull();
    expect(w.write(b, upd(1, 0, 1))).toBe('Canceled on identification as a pivot, during write.');
  });

  it('reading the writes of a committed pivot fails "during read" and names its xid', () => {
    // T2 → … : b reads x, c writes x and commits (b →rw c, c committed first); then a (a pivot
    // candidate) … Here: c has a conflict out to the committed d, so a read of c's writes after
    // c commits is a dangerous structure with the reader as T0.
    const w = new World();
    const r = w.begin('r');
    const c = w.begin('c');
    const d = w.begin('d');
    w.read(c, rel(1)); // c reads what d will write
    w.write(d, upd(1, 0, 1));
    expect(w.commit(d)).toBeNull();
    w.write(c, upd(2, 0, 1));
    expect(w.commit(c)).toBeNull(); // c →rw d, d committed first: c commits with a conflict out
    expect(w.read(r, rel(2))).toMatch(/^Canceled on conflict out to pivot 751, during read\.$/);
  });

  it('a writer that committed before the reader took its snapshot is not concurrent', () => {
    const w = new World();
    const a = w.begin('a');
    w.write(a, upd(1, 0, 1));
    w.commit(a);
    const b = w.begin('b');
    expect(w.read(b, rel(1))).toBeNull();
    expect(b.outConflicts.size).toBe(0);
  });

  it('promotes tuple locks to a page lock at the third tuple, and pages to the relation after 31', () => {
    const w = new World();
    const a = w.begin('a');
    w.read(a, tup(1, 0, 1), tup(1, 0, 2));
    expect([...a.locks.keys()].sort()).toEqual(['t1:0:1', 't1:0:2']);
    w.read(a, tup(1, 0, 3));
    expect([...a.locks.keys()]).toEqual(['p1:0']);
    for (let p = 1; p <= 31; p++) w.read(a, { kind: 'page', rel: 2, block: p });
    expect(a.locks.has('r2')).toBe(false);
    w.read(a, { kind: 'page', rel: 2, block: 32 });
    expect([...a.locks.keys()].filter((k) => k.startsWith('r') || k.startsWith('p2'))).toEqual(['r2']);
  });

  it('forgets committed transactions once no overlapping transaction is left', () => {
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    w.read(a, rel(1));
    w.write(b, upd(1, 0, 1));
    w.commit(b);
    expect(w.ssi.all()).toHaveLength(2);
    w.commit(a);
    expect(w.ssi.all()).toHaveLength(0);
  });

  it('a rolled-back subtransaction takes its writes with it', () => {
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    w.ssi.write(a, [upd(1, 0, 1)], 1, 750);
    w.ssi.rollbackTo(a, 1);
    w.read(b, rel(1));
    expect(b.outConflicts.size).toBe(0);
  });

  it('an index entry on a locked page counts only when the reader reached it', () => {
    const w = new World();
    const a = w.begin('a');
    const b = w.begin('b');
    const entry: SsiWrite = { kind: 'index', rel: 9, block: 1 };
    w.write(a, entry);
    const page: PredTarget = { kind: 'page', rel: 9, block: 1 };
    expect(w.ssi.indexCandidates(b, [page])).toEqual([entry]);
    w.ssi.read(b, [page], [page], new Set(), true);
    expect(b.outConflicts.size).toBe(0);
    w.ssi.read(b, [page], [], new Set([entry]), true);
    expect(b.outConflicts.has(a)).toBe(true);
  });
});

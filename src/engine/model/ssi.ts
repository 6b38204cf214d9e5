/**
 * Serializable Snapshot Isolation: a TypeScript port of the rw-conflict tracking of
 * PostgreSQL 18's predicate.c (the SERIALIZABLEXACT bookkeeping, FlagRWConflict,
 * OnConflict_CheckForSerializationFailure, PreCommit_CheckForSerializationFailure,
 * ReleasePredicateLocks and ClearOldPredicateLocks). Pure: no PGlite, no DOM.
 *
 * What feeds it (pg/ssiProbe.ts, pg/dryRun.ts): which SIREAD locks a statement takes is read back from PGlite
 * itself (pg_locks rows with mode SIReadLock, inside the dry run: PostgreSQL decides the
 * granularity, relation / page / tuple, from the plan it chose), and which tuples a statement
 * writes from the tuple headers. What the port decides: rw-conflicts between the simulated
 * sessions, dangerous structures, who is doomed, and the "Reason code" of the 40001.
 *
 * READ ONLY transactions are ported with the safe-snapshot optimisation (possibleUnsafeConflicts,
 * SXACT_FLAG_RO_SAFE / RO_UNSAFE, opting out when no writable transaction runs).
 *
 * Not ported (docs/engine.md lists them): DEFERRABLE's wait for a safe snapshot, summarisation of old committed transactions to the SLRU (it
 * only happens when shared memory runs short), page splits moving index-page locks,
 * parallel query.
 */

/** A SIREAD lock target (PREDICATELOCKTARGETTAG without the database). */
export type PredTarget =
  | { kind: 'relation'; rel: number }
  | { kind: 'page'; rel: number; block: number }
  | { kind: 'tuple'; rel: number; block: number; offset: number };

/**
 * What a write checks (CheckForSerializableConflictIn): an update or delete of a tuple others
 * can see checks the tuple, its page and its relation; a heap insert (and a write of the
 * transaction's own new version) checks the relation only; an index entry checks the index
 * leaf page it lands on (and the index relation, where page locks are promoted to).
 */
export type SsiWrite =
  | { kind: 'tuple'; rel: number; block: number; offset: number }
  | { kind: 'relation'; rel: number }
  | { kind: 'index'; rel: number; block: number; row?: IndexedRow };

/** The heap row an index entry points at (to decide whether a reader's index scan reaches it). */
export interface IndexedRow {
  table: string;
  /** row_to_json of the row. */
  json: string;
}

/** The "Reason code" part of a 40001 raised by SSI (the rest of the message is fixed). */
export class SsiFailure extends Error {
  constructor(readonly reason: string) {
    super(`could not serialize access due to read/write dependencies among transactions (${reason})`);
    this.name = 'SsiFailure';
  }
}

/** max_pred_locks_per_page and max_pred_locks_per_transaction / -max_pred_locks_per_relation - 1 (defaults). */
const MAX_CHILDREN_PAGE = 2;
const MAX_CHILDREN_RELATION = 64 / 2 - 1;

const INVALID_SEQ = Number.MAX_SAFE_INTEGER;

export function targetKey(t: PredTarget): string {
  return t.kind === 'relation' ? `r${t.rel}` : t.kind === 'page' ? `p${t.rel}:${t.block}` : `t${t.rel}:${t.block}:${t.offset}`;
}

function parents(t: PredTarget): PredTarget[] {
  if (t.kind === 'tuple')
    return [
      { kind: 'page', rel: t.rel, block: t.block },
      { kind: 'relation', rel: t.rel },
    ];
  if (t.kind === 'page') return [{ kind: 'relation', rel: t.rel }];
  return [];
}

/** One serializable transaction (SERIALIZABLEXACT). */
export class Sxact {
  topXid: number | null = null;
  /** The virtual transaction id pg_locks shows for its SIRead locks (set by the engine). */
  vxid = '';
  committed = false;
  prepared = false;
  doomed = false;
  rolledBack = false;
  readOnly = false;
  /** Declared READ ONLY at its start (SxactIsReadOnly from GetSerializableTransactionSnapshotInt on). */
  declaredReadOnly = false;
  /**
   * Not (or no longer) a serializable transaction for SSI: a READ ONLY one that opted out at its
   * start, or that released everything once known safe (MySerializableXact is invalid then).
   */
  untracked = false;
  /** SXACT_FLAG_RO_SAFE: every writable transaction it overlapped committed harmlessly. */
  roSafe = false;
  /** SXACT_FLAG_RO_UNSAFE: one of them committed with a conflict out to an earlier commit. */
  roUnsafe = false;
  /** READ ONLY: the concurrent writable transactions that could still make it unsafe (possibleUnsafeConflicts). */
  readonly possibleUnsafe = new Set<Sxact>();
  /** Writable: the concurrent READ ONLY transactions it could make unsafe. */
  readonly possibleUnsafeFor = new Set<Sxact>();
  /** SXACT_FLAG_CONFLICT_OUT: committed with a conflict out to a transaction that committed first. */
  conflictOut = false;
  didWrite = false;
  commitSeqNo = INVALID_SEQ;
  prepareSeqNo = INVALID_SEQ;
  earliestOutConflictCommit = INVALID_SEQ;
  finishedBefore = 0;
  /** Writers this transaction has a rw-conflict out to (this read what they wrote). */
  readonly outConflicts = new Set<Sxact>();
  /** Readers with a rw-conflict in to this transaction. */
  readonly inConflicts = new Set<Sxact>();
  /** SIREAD locks, by targetKey. */
  readonly locks = new Map<string, PredTarget>();
  /** When each SIREAD lock was taken (Ssi's counter): a target lists its locks in that order. */
  readonly lockedAt = new Map<string, number>();
  /** LocalPredicateLockHash's childLocks counts, by targetKey of the parent. */
  readonly childLocks = new Map<string, number>();
  /** What it wrote, with the subtransaction depth (for readers that come later: conflict out). */
  writes: { w: SsiWrite; depth: number }[] = [];
  finished = false;

  constructor(
    readonly session: string,
    /** The transaction snapshot's xmin. */
    readonly xmin: number,
    /** SeqNo.lastCommitBeforeSnapshot. */
    readonly lastCommitBeforeSnapshot: number,
  ) {}
}

/**
 * Does a read of `scope` examine the tuples behind write `w`? (HeapCheckForSerializableConflictOut's
 * cases.) A sequential scan (relation lock) examines every tuple; an index scan examines the
 * tuples it fetched (tuple locks) and those whose entries match its index condition: for an entry
 * on a page it locked, `reached` says whether the condition matched (see Ssi.indexCandidates).
 */
function examines(scope: ReadonlyMap<string, PredTarget>, w: SsiWrite, reached: ReadonlySet<SsiWrite> | undefined): boolean {
  if (scope.has(`r${w.rel}`)) return true;
  if (w.kind === 'tuple') return scope.has(`p${w.rel}:${w.block}`) || scope.has(`t${w.rel}:${w.block}:${w.offset}`);
  if (w.kind === 'index') return scope.has(`p${w.rel}:${w.block}`) && (!reached || reached.has(w));
  return false;
}

/**
 * The writers a read meets, in the order its scan reaches their tuples: PostgreSQL checks each
 * tuple as the scan reads it (HeapCheckForSerializableConflictOut), so the first writer it flags
 * decides whom a dangerous structure dooms. A sequential scan (its relation SIREAD lock) reads
 * the heap in (block, offset) order, the old versions writers updated or deleted where they lie
 * and new versions after the rows that were there. When the writers' examined tuples lie in one
 * table read that way, they are taken in that order; otherwise (index scans, joins: the plan's
 * order, which the model does not know) in the order they began.
 */
function inScanOrder(scope: ReadonlyMap<string, PredTarget>, writers: Sxact[], reached: ReadonlySet<SsiWrite> | undefined): Sxact[] {
  const first = new Map<Sxact, number>();
  let heap: number | undefined;
  for (const w of writers) {
    const seen = w.writes.map((x) => x.w).filter((x) => examines(scope, x, reached));
    if (!seen.length) continue;
    for (const x of seen) {
      if (x.kind === 'index' || !scope.has(`r${x.rel}`) || (heap !== undefined && heap !== x.rel)) return writers;
      heap = x.rel;
    }
    first.set(w, Math.min(...seen.map((x) => (x.kind === 'tuple' ? x.block * 65536 + x.offset : Number.MAX_SAFE_INTEGER))));
  }
  const at = (w: Sxact) => first.get(w) ?? Number.MAX_SAFE_INTEGER;
  return [...writers].sort((a, b) => at(a) - at(b));
}

/** The targets a write checks, finest first (CheckForSerializableConflictIn). */
function checkedTargets(w: SsiWrite): PredTarget[] {
  if (w.kind === 'tuple') return [w, ...parents(w)];
  if (w.kind === 'index')
    return [
      { kind: 'page', rel: w.rel, block: w.block },
      { kind: 'relation', rel: w.rel },
    ];
  return [w];
}

/** All serializable transactions of the simulated server (PredXact). */
export class Ssi {
  private readonly active = new Set<Sxact>();
  /** FinishedSerializableTransactions, in commit order. */
  private finishedList: Sxact[] = [];
  private lastCommitSeqNo = 1;
  /** Counts SIREAD lock acquisitions, to order each target's locks. */
  private lockCounter = 0;
  private canPartialClearThrough = 0;
  private havePartialClearedThrough = 0;
  private globalXmin: number | null = null;
  private globalXminCount = 0;
  private writableCount = 0;

  /** Every transaction still tracked (active, or committed and still of interest). */
  all(): Sxact[] {
    return [...this.active];
  }

  /**
   * GetSerializableTransactionSnapshotInt: the transaction takes its snapshot. A READ ONLY one
   * opts out of SSI when no writable serializable transaction is running (or every one is
   * doomed); otherwise it records the writable ones that could make its snapshot unsafe.
   */
  begin(session: string, xmin: number, readOnly = false): Sxact {
    const sx = new Sxact(session, xmin, this.lastCommitSeqNo);
    if (readOnly) {
      sx.readOnly = sx.declaredReadOnly = true;
      if (this.writableCount > 0)
        for (const o of this.active)
          if (!o.committed && !o.doomed && !o.readOnly) {
            sx.possibleUnsafe.add(o);
            o.possibleUnsafeFor.add(sx);
          }
      if (!sx.possibleUnsafe.size) {
        sx.untracked = true;
        return sx;
      }
    } else this.writableCount++;
    this.active.add(sx);
    if (this.globalXmin === null) {
      this.globalXmin = xmin;
      this.globalXminCount = 1;
    } else if (this.globalXmin === xmin) this.globalXminCount++;
    return sx;
  }

  /**
   * A statement read: `scope` is every SIREAD target its scan took (what it examined), `added`
   * the ones to add to the transaction's locks. Flags rw-conflicts out to concurrent writers
   * of what it examined (CheckForSerializableConflictOut) and takes the locks.
   */
  read(me: Sxact, scope: PredTarget[], added: PredTarget[], reached: ReadonlySet<SsiWrite> | undefined, heapRead: boolean): void {
    if (me.untracked || (!scope.length && !added.length)) return;
    // SerializationNeededForRead: a READ ONLY transaction known safe releases everything at its
    // next read and runs on as if it were not serializable.
    if (me.roSafe) {
      this.finish(me, false, 0);
      me.untracked = true;
      return;
    }
    // A doomed transaction fails when its scan looks at a heap tuple (an index probe that finds
    // no entry never does).
    if (me.doomed && heapRead) throw new SsiFailure('Canceled on identification as a pivot, during conflict out checking.');
    const scopeMap = new Map(scope.map((t) => [targetKey(t), t]));
    for (const w of inScanOrder(scopeMap, [...this.active], reached)) {
      if (w === me || w.doomed || w.rolledBack || !w.writes.length) continue;
      if (!w.writes.some((x) => examines(scopeMap, x.w, reached))) continue;
      // Read-only transaction and a committed writer without an earlier conflict out: no conflict.
      if (me.readOnly && w.committed && (!w.conflictOut || me.lastCommitBeforeSnapshot < w.earliestOutConflictCommit)) continue;
      // XidIsConcurrent: a writer that committed before our snapshot is in it.
      if (w.committed && w.commitSeqNo <= me.lastCommitBeforeSnapshot) continue;
      if (me.outConflicts.has(w)) continue;
      this.flagRWConflict(me, w, me);
    }
    for (const t of added) this.acquire(me, t);
  }

  /**
   * Index entries of concurrent writers on index pages a read locked (but whose index it did not
   * lock whole): the read examined their tuples only if its index condition matches them, which
   * the caller decides (engine: the plan's Index Cond evaluated on the row) and passes to read().
   */
  indexCandidates(me: Sxact, scope: PredTarget[]): (SsiWrite & { kind: 'index' })[] {
    const scopeMap = new Map(scope.map((t) => [targetKey(t), t]));
    const out: (SsiWrite & { kind: 'index' })[] = [];
    if (me.untracked || me.roSafe) return out;
    for (const w of this.active) {
      if (w === me || w.doomed || w.rolledBack || me.outConflicts.has(w)) continue;
      if (w.committed && w.commitSeqNo <= me.lastCommitBeforeSnapshot) continue;
      for (const { w: x } of w.writes)
        if (x.kind === 'index' && !scopeMap.has(`r${x.rel}`) && scopeMap.has(`p${x.rel}:${x.block}`)) out.push(x);
    }
    return out;
  }

  /**
   * A statement wrote (after any lock waits: heap_update / heap_delete check after the tuple
   * is theirs, heap_insert before it inserts). `depth` > 0: inside a savepoint, where the own
   * SIREAD lock on a written tuple is kept and the writes go if the subtransaction aborts.
   */
  write(me: Sxact, writes: SsiWrite[], depth: number, xid: number | null): void {
    if (!writes.length || me.untracked) return;
    if (me.doomed) throw new SsiFailure('Canceled on identification as a pivot, during conflict in checking.');
    me.didWrite = true;
    if (xid !== null) me.topXid = xid;
    for (const w of writes) {
      for (const target of checkedTargets(w)) this.checkTargetForConflictsIn(me, target, depth > 0);
      me.writes.push({ w, depth });
    }
  }

  /** CheckTargetForConflictsIn: every other transaction's SIREAD lock on the target is a rw-conflict in. */
  private checkTargetForConflictsIn(me: Sxact, target: PredTarget, inSubxact: boolean): void {
    const key = targetKey(target);
    let removeMine = false;
    // The target's lock list is in the order the locks were taken (CreatePredicateLock appends),
    // and so are the rw-conflicts this flags: PreCommit_CheckForSerializationFailure walks them in it.
    const holders = [...this.active].filter((r) => r.locks.has(key));
    holders.sort((a, b) => (a.lockedAt.get(key) ?? 0) - (b.lockedAt.get(key) ?? 0));
    for (const r of holders) {
      if (r === me) {
        if (!inSubxact && target.kind === 'tuple') removeMine = true;
      } else if (!r.doomed && (!r.committed || me.xmin < r.finishedBefore) && !r.outConflicts.has(me)) {
        this.flagRWConflict(r, me, me);
      }
    }
    if (removeMine) this.release(me, key);
  }

  /** PreCommit_CheckForSerializationFailure: throws, or returns what to apply once the commit is certain. */
  preCommit(me: Sxact): () => void {
    if (me.untracked) return () => {};
    if (me.doomed) throw new SsiFailure('Canceled on identification as a pivot, during commit attempt.');
    // PostgreSQL dooms as it goes (a pivot doomed earlier in the loop no longer counts as a far
    // conflict); the set is applied only once the commit is certain.
    const doom = new Set<Sxact>();
    const doomed = (x: Sxact) => x.doomed || doom.has(x);
    for (const near of me.inConflicts) {
      if (near.committed || doomed(near)) continue;
      for (const far of near.inConflicts) {
        if (far === me || (!far.committed && !far.readOnly && !doomed(far))) {
          if (near.prepared) throw new SsiFailure('Canceled on commit attempt with conflict in from prepared pivot.');
          doom.add(near);
          break;
        }
      }
    }
    return () => {
      for (const d of doom) d.doomed = true;
      me.prepareSeqNo = ++this.lastCommitSeqNo;
      me.prepared = true;
    };
  }

  /** Subtransaction abort: what it wrote is dead, readers will not see it (its SIREAD locks stay). */
  rollbackTo(me: Sxact, depth: number): void {
    me.writes = me.writes.filter((x) => x.depth < depth);
  }

  /** ReleasePredicateLocks at commit or abort. `nextXid`: the next transaction id to be assigned. */
  finish(me: Sxact, isCommit: boolean, nextXid: number): void {
    if (me.finished || me.untracked) return;
    me.finished = true;
    const declaredReadOnly = me.declaredReadOnly;
    me.finishedBefore = nextXid;
    if (isCommit) {
      me.committed = true;
      me.commitSeqNo = ++this.lastCommitSeqNo;
      if (!me.didWrite) me.readOnly = true;
    } else {
      me.doomed = true;
      me.rolledBack = true;
      me.prepared = false;
    }
    if (!declaredReadOnly) {
      if (--this.writableCount === 0) this.canPartialClearThrough = this.lastCommitSeqNo;
    } else {
      // Read-only: the writers that might have made it unsafe no longer matter.
      for (const w of me.possibleUnsafe) w.possibleUnsafeFor.delete(me);
      me.possibleUnsafe.clear();
    }
    for (const w of [...me.outConflicts]) {
      if (isCommit && !me.readOnly && w.committed) {
        if (!me.conflictOut || w.prepareSeqNo < me.earliestOutConflictCommit) me.earliestOutConflictCommit = w.prepareSeqNo;
        me.conflictOut = true;
      }
      if (!isCommit || w.committed || w.lastCommitBeforeSnapshot >= this.lastCommitSeqNo) this.releaseConflict(me, w);
    }
    for (const r of [...me.inConflicts]) if (!isCommit || r.committed || r.readOnly) this.releaseConflict(r, me);
    // A writable transaction leaves the READ ONLY ones it overlapped: unsafe if it committed a
    // write with a conflict out to a transaction that committed before their snapshot, safe
    // once the last such writer is gone.
    for (const ro of [...me.possibleUnsafeFor]) {
      if (isCommit && me.didWrite && me.conflictOut && me.earliestOutConflictCommit <= ro.lastCommitBeforeSnapshot) {
        ro.roUnsafe = true;
        for (const w of ro.possibleUnsafe) w.possibleUnsafeFor.delete(ro);
        ro.possibleUnsafe.clear();
      } else {
        me.possibleUnsafeFor.delete(ro);
        ro.possibleUnsafe.delete(me);
        if (!ro.possibleUnsafe.size) ro.roSafe = true;
      }
    }
    let needToClear = false;
    if (me.xmin === this.globalXmin && --this.globalXminCount === 0) {
      this.setNewGlobalXmin();
      needToClear = true;
    }
    if (isCommit) this.finishedList.push(me);
    else this.releaseOne(me, false);
    if (needToClear) this.clearOld();
  }

  // ───────────────────────────── internals ─────────────────────────────

  private flagRWConflict(reader: Sxact, writer: Sxact, me: Sxact): void {
    this.onConflictCheck(reader, writer, me);
    reader.outConflicts.add(writer);
    writer.inConflicts.add(reader);
  }

  /** OnConflict_CheckForSerializationFailure. */
  private onConflictCheck(reader: Sxact, writer: Sxact, me: Sxact): void {
    let failure = writer.committed && writer.conflictOut;
    if (!failure)
      for (const t2 of writer.outConflicts) {
        if (
          t2.prepared &&
          (!reader.committed || t2.prepareSeqNo <= reader.commitSeqNo) &&
          (!writer.committed || t2.prepareSeqNo <= writer.commitSeqNo) &&
          (!reader.readOnly || t2.prepareSeqNo <= reader.lastCommitBeforeSnapshot)
        ) {
          failure = true;
          break;
        }
      }
    if (!failure && writer.prepared && !reader.readOnly)
      for (const t0 of reader.inConflicts) {
        if (
          !t0.doomed &&
          (!t0.committed || t0.commitSeqNo >= writer.prepareSeqNo) &&
          (!t0.readOnly || t0.lastCommitBeforeSnapshot >= writer.prepareSeqNo)
        ) {
          failure = true;
          break;
        }
      }
    if (!failure) return;
    if (me === writer) throw new SsiFailure('Canceled on identification as a pivot, during write.');
    if (writer.prepared) throw new SsiFailure(`Canceled on conflict out to pivot ${writer.topXid ?? 0}, during read.`);
    writer.doomed = true;
  }

  /** PredicateLockAcquire with CheckAndPromotePredicateLockRequest. */
  private acquire(me: Sxact, t: PredTarget): void {
    const key = targetKey(t);
    if (me.locks.has(key) || parents(t).some((p) => me.locks.has(targetKey(p)))) return;
    me.locks.set(key, t);
    me.lockedAt.set(key, ++this.lockCounter);
    if (t.kind !== 'tuple') this.deleteChildren(me, t);
    // Count it in every ancestor; promote to the coarsest one that now has too many children.
    let promote: PredTarget | null = null;
    for (const p of parents(t)) {
      const pk = targetKey(p);
      const n = (me.childLocks.get(pk) ?? 0) + 1;
      me.childLocks.set(pk, n);
      if (n > (p.kind === 'page' ? MAX_CHILDREN_PAGE : MAX_CHILDREN_RELATION)) promote = p;
    }
    if (promote) this.acquire(me, promote);
  }

  /** DeleteChildTargetLocks: a coarser lock replaces the finer ones it covers. */
  private deleteChildren(me: Sxact, t: PredTarget): void {
    for (const [k, c] of [...me.locks]) {
      if (c === t) continue;
      const covered =
        t.kind === 'relation'
          ? c.rel === t.rel && c.kind !== 'relation'
          : c.kind === 'tuple' && c.rel === t.rel && t.kind === 'page' && c.block === t.block;
      if (covered) this.release(me, k);
    }
  }

  /** Drops one of the transaction's locks and its counts in the ancestors (DecrementParentLocks). */
  private release(me: Sxact, key: string): void {
    const t = me.locks.get(key);
    if (!t) return;
    me.locks.delete(key);
    me.lockedAt.delete(key);
    for (const p of parents(t)) {
      const pk = targetKey(p);
      const n = (me.childLocks.get(pk) ?? 0) - 1;
      if (n > 0) me.childLocks.set(pk, n);
      else me.childLocks.delete(pk);
    }
  }

  private releaseConflict(reader: Sxact, writer: Sxact): void {
    reader.outConflicts.delete(writer);
    writer.inConflicts.delete(reader);
  }

  private setNewGlobalXmin(): void {
    this.globalXmin = null;
    this.globalXminCount = 0;
    for (const sx of this.active) {
      if (sx.rolledBack || sx.committed) continue;
      if (this.globalXmin === null || sx.xmin < this.globalXmin) {
        this.globalXmin = sx.xmin;
        this.globalXminCount = 1;
      } else if (sx.xmin === this.globalXmin) this.globalXminCount++;
    }
  }

  /** ClearOldPredicateLocks: the finished list is in commit order; stop at the first one still of interest. */
  private clearOld(): void {
    const kept: Sxact[] = [];
    let i = 0;
    for (; i < this.finishedList.length; i++) {
      const f = this.finishedList[i];
      if (this.globalXmin === null || f.finishedBefore <= this.globalXmin) {
        // Committed before any running transaction took its snapshot: of no more interest.
        this.releaseOne(f, false);
      } else if (f.commitSeqNo > this.havePartialClearedThrough && f.commitSeqNo <= this.canPartialClearThrough) {
        // Every transaction that overlaps it is read-only: its locks and conflicts in can go.
        if (f.readOnly) this.releaseOne(f, false);
        else {
          this.releaseOne(f, true);
          kept.push(f);
        }
        this.havePartialClearedThrough = f.commitSeqNo;
      } else break;
    }
    this.finishedList = [...kept, ...this.finishedList.slice(i)];
  }

  /** ReleaseOneSerializableXact. */
  private releaseOne(sx: Sxact, partial: boolean): void {
    sx.locks.clear();
    sx.childLocks.clear();
    sx.lockedAt.clear();
    if (!partial) for (const w of [...sx.outConflicts]) this.releaseConflict(sx, w);
    for (const r of [...sx.inConflicts]) this.releaseConflict(r, sx);
    if (!partial) this.active.delete(sx);
  }
}

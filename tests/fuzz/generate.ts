/**
 * Seeded generator of random isolationtester specs for differential fuzzing (simulator vs real
 * PostgreSQL 18). Everything comes from one seed through mulberry32, so `seed N` always yields the
 * same spec text.
 *
 * A spec is only useful if real PostgreSQL plays it deterministically, so the generator runs a
 * small abstract lock model (rows, tuple-lock queues, unique keys, advisory locks, deadlock and
 * lock timers on a virtual clock) while it builds the one explicit permutation:
 *  - a step is only scheduled for a session the model says is not waiting, so the isolationtester
 *    never blocks on a step whose releaser comes later in the permutation (that would hang);
 *  - when every session is waiting, the model fires the next timer, as the isolationtester does by
 *    waiting (real time on PostgreSQL, the virtual clock on the simulator);
 *  - schedules whose outcome depends on a race on real PostgreSQL are rejected: two timers within
 *    TIE_MARGIN_MS, two waiters chasing the same updated row, two woken statements contending for
 *    the same rows, a deadlock cycle through a soft (queue-order) edge.
 * The model is deliberately conservative; it is not the engine, and a schedule it mispredicts
 * is still a valid test (the oracle is real PostgreSQL), only possibly a slow one.
 */
import { createRng } from '../../src/retrylab/prng';
import type { Spec, SpecSession, SpecStep } from '../../src/scenario/types';

/** A feature of the statement pool; each generated statement carries one tag. */
export type FeatureTag =
  | 'update-nonkey'
  | 'update-key'
  | 'delete'
  | 'insert-unique'
  | 'insert-on-conflict'
  | 'insert-fk'
  | 'select-for'
  | 'nowait'
  | 'multirow-lock'
  | 'multirow-desc'
  | 'skip-locked'
  | 'advisory-xact'
  | 'advisory-session'
  | 'savepoint'
  | 'lock-timeout'
  | 'plain-select'
  | 'rollback'
  | 'error-in-block'
  | 'notice'
  | 'prepared'
  | 'limit-recheck'
  | 'nextval'
  | 'insert-expr-unique'
  | 'in-list'
  | 'lock-table'
  | 'update-join'
  | 'select-for-join'
  | 'cte-modify'
  | 'function'
  | 'trigger'
  | 'repeatable-read';

export const ALL_FEATURES: readonly FeatureTag[] = [
  'update-nonkey',
  'update-key',
  'delete',
  'insert-unique',
  'insert-on-conflict',
  'insert-fk',
  'select-for',
  'nowait',
  'multirow-lock',
  'multirow-desc',
  'skip-locked',
  'advisory-xact',
  'advisory-session',
  'savepoint',
  'lock-timeout',
  'plain-select',
  'rollback',
  'error-in-block',
  'notice',
  'prepared',
  'limit-recheck',
  'nextval',
  'insert-expr-unique',
  'in-list',
  'lock-table',
  'update-join',
  'select-for-join',
  'cte-modify',
  'function',
  'trigger',
  'repeatable-read',
];

/**
 * Features the simulator is known to get wrong (mirrors tests/conformance/known-divergences.json,
 * plus what the fuzzer found).
 * The CI fuzz run never generates them; `run.ts --long` does. A tag goes once the simulator matches PostgreSQL there.
 */
export const FEATURES_WITH_KNOWN_DIVERGENCES: Readonly<Partial<Record<FeatureTag, string>>> = {
  // SERIALIZABLE has its own generator (ssi-generate.ts). Add a feature here, with the reason,
  // only while a divergence it causes is being fixed.
  'insert-expr-unique':
    "the generator's model merges the primary key and lower(email) into one key, so it mispredicts waits there; " +
    'and the engine does not make an insert wait for the keys another insert, waiting on a later unique index, has ' +
    'already put into the earlier ones (regressions/seed-60144-long.spec)',
  'repeatable-read':
    'a REPEATABLE READ lock of a row updated after the snapshot, whose newer version another transaction locks, waits in ' +
    'PostgreSQL (heap_lock_tuple locks the newer versions first) where the simulator fails at once (regressions/seed-63240-long.spec)',
};

/** The features a CI run may generate: all but the known-divergent ones. */
export const CI_FEATURES: readonly FeatureTag[] = ALL_FEATURES.filter((f) => !(f in FEATURES_WITH_KNOWN_DIVERGENCES));

/** Per-session deadlock_timeout (ms). Far apart and far above step-issuing time: see fuzz README. */
export const DEADLOCK_TIMEOUTS_MS = [400, 900, 1400, 1900] as const;
/** The lock_timeout a `SET lock_timeout` step uses (ms); 250 ms away from every deadlock_timeout. */
export const LOCK_TIMEOUT_MS = 650;
/** Two timers closer than this on the model's clock make the schedule racy on real PostgreSQL. */
export const TIE_MARGIN_MS = 200;
/**
 * What issuing one step costs on the real server, pessimistically (a loaded machine: the send,
 * isolationtester's 10 ms wait check, the completion). The model's clock advances by it per step,
 * so timers that started steps apart are placed apart, and a timer that would fire while steps
 * are still being issued (the real server reports it after an earlier step than the model) makes
 * the schedule racy.
 */
export const STEP_COST_MS = 40;
/** Schedules longer than this on the virtual clock are rejected (they cost real time in CI). */
export const MAX_VIRTUAL_MS = 4000;

/** mulberry32: a tiny seeded PRNG (the same one the retry lab uses). */
export const mulberry32 = createRng;

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const SCHEMA = `CREATE TABLE parent (id int PRIMARY KEY, v int NOT NULL);
CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parent, v int NOT NULL);
CREATE TABLE queue (id int PRIMARY KEY, status text NOT NULL);
CREATE TABLE users (id int PRIMARY KEY, email text NOT NULL UNIQUE, v int NOT NULL);
CREATE UNIQUE INDEX users_lower_email ON users (lower(email));
CREATE SEQUENCE child_ids START 1000;
INSERT INTO parent VALUES (1, 0), (2, 0), (3, 0);
INSERT INTO child VALUES (1, 1, 0), (2, 2, 0), (3, 3, 0);
INSERT INTO queue VALUES (1, 'new'), (2, 'new'), (3, 'new');
INSERT INTO users VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0);`;

/** `function`: a PL/pgSQL function that updates a parent row and returns its new value. */
const FUNCTION_SCHEMA = `CREATE OR REPLACE FUNCTION bump(k int, d int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  UPDATE parent SET v = v + d WHERE id = k RETURNING v INTO r;
  RETURN r;
END $$;`;
/** `trigger`: every row inserted into child bumps one counter row (an AFTER ROW trigger, fired after the foreign-key check: triggers fire in name order). */
const TRIGGER_SCHEMA = `CREATE TABLE tally (id int PRIMARY KEY, n int NOT NULL);
INSERT INTO tally VALUES (1, 0);
CREATE OR REPLACE FUNCTION tally_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tally SET n = n + 1 WHERE id = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER child_tally AFTER INSERT ON child FOR EACH ROW EXECUTE FUNCTION tally_bump();`;

const finalCheck = (trigger: boolean): string =>
  `SELECT (SELECT string_agg(id || ':' || v, ' ' ORDER BY id) FROM parent) AS parent, ` +
  `(SELECT string_agg(id || ':' || parent_id || ':' || v, ' ' ORDER BY id) FROM child) AS child, ` +
  `(SELECT string_agg(id || ':' || status, ' ' ORDER BY id) FROM queue) AS queue, ` +
  `(SELECT string_agg(id || ':' || email || ':' || v, ' ' ORDER BY id) FROM users) AS users` +
  (trigger ? `, (SELECT n FROM tally WHERE id = 1) AS tally;` : ';');

type Table = 'parent' | 'child' | 'queue' | 'users';
/** Relation lock modes, weakest first (lock.c's numbering minus one). */
type RelMode = 'AS' | 'RS' | 'RE' | 'SUE' | 'S' | 'SRE' | 'E' | 'AE';
const REL_MODES: readonly RelMode[] = ['AS', 'RS', 'RE', 'SUE', 'S', 'SRE', 'E', 'AE'];
const REL_MODE_SQL: Record<RelMode, string> = {
  AS: 'ACCESS SHARE',
  RS: 'ROW SHARE',
  RE: 'ROW EXCLUSIVE',
  SUE: 'SHARE UPDATE EXCLUSIVE',
  S: 'SHARE',
  SRE: 'SHARE ROW EXCLUSIVE',
  E: 'EXCLUSIVE',
  AE: 'ACCESS EXCLUSIVE',
};
/** lock.c's LockConflicts table. */
const REL_CONFLICTS: Record<RelMode, readonly RelMode[]> = {
  AS: ['AE'],
  RS: ['E', 'AE'],
  RE: ['S', 'SRE', 'E', 'AE'],
  SUE: ['SUE', 'S', 'SRE', 'E', 'AE'],
  S: ['RE', 'SUE', 'SRE', 'E', 'AE'],
  SRE: ['RE', 'SUE', 'S', 'SRE', 'E', 'AE'],
  E: ['RS', 'RE', 'SUE', 'S', 'SRE', 'E', 'AE'],
  AE: REL_MODES,
};
const relConflicts = (a: RelMode, b: RelMode): boolean => REL_CONFLICTS[a].includes(b);
/** A relation lock a statement takes when it opens a table (parse analysis, planning, or a trigger's query). */
type Rel = readonly [string, RelMode];
/** Row lock modes: FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE, FOR UPDATE. */
type RowMode = 'ks' | 'sh' | 'nku' | 'upd';
const MODE_SQL: Record<RowMode, string> = { ks: 'FOR KEY SHARE', sh: 'FOR SHARE', nku: 'FOR NO KEY UPDATE', upd: 'FOR UPDATE' };
/** README.tuplock's row-lock conflict table (the tuple heavyweight lock modes conflict the same way). */
const CONFLICTS: Record<RowMode, readonly RowMode[]> = {
  ks: ['upd'],
  sh: ['nku', 'upd'],
  nku: ['sh', 'nku', 'upd'],
  upd: ['ks', 'sh', 'nku', 'upd'],
};
const conflicts = (a: RowMode, b: RowMode): boolean => CONFLICTS[a].includes(b);

/** What a step does, for the model. */
type Action =
  | { kind: 'begin' }
  | { kind: 'end'; commit: boolean }
  | {
      kind: 'rows';
      rows: string[];
      mode: RowMode;
      modify?: 'update' | 'delete';
      nowait?: boolean;
      skipLocked?: boolean;
      /** `WHERE status = 'new' … LIMIT 1`: stops after one locked row; a row whose status changed does not qualify. */
      firstNew?: boolean;
      /** Relation locks taken before the rows, in order. */
      rels?: readonly Rel[];
      /** LOCK TABLE … NOWAIT: a conflicting relation lock fails at once (a row NOWAIT does not apply to tables). */
      relNowait?: boolean;
      /** What the statement does after these rows: a foreign-key check, an AFTER trigger's update. */
      then?: Action;
    }
  | { kind: 'insertKey'; key: string; onConflict: boolean; rels?: readonly Rel[] }
  | { kind: 'advisory'; key: number; session: boolean }
  | { kind: 'unlockAll' }
  | { kind: 'savepoint' }
  | { kind: 'rollbackTo' }
  | { kind: 'setLockTimeout'; ms: number }
  /** A statement that fails before it runs (parse error, refused in a block): the block aborts. */
  | { kind: 'error' }
  | { kind: 'noop' };

interface GenStep {
  name: string;
  sql: string;
  tag?: FeatureTag;
  action: Action;
  /** Statements that take no snapshot (LOCK TABLE, a parse error, BEGIN inside a block): REPEATABLE READ's snapshot comes later. */
  noSnapshot?: boolean;
}

/** One lock a session holds. `session` advisory locks survive the transaction. */
type Held =
  /** `at`: when the lock was taken, model-wide; a multixact lists its members in that order. */
  | { kind: 'row'; row: string; mode: RowMode; modify?: 'update' | 'delete'; at: number }
  | { kind: 'key'; key: string }
  | { kind: 'adv'; key: number; session: boolean }
  | { kind: 'rel'; table: string; mode: RelMode };

interface Wait {
  kind: 'row' | 'key' | 'adv' | 'rel';
  res: string;
  mode: RowMode;
  /** Relation waits: the mode requested. */
  relMode?: RelMode;
  /**
   * Rows only: waiting for the tuple lock, or past it and sleeping on one holder's xid. A
   * multixact is waited for member by member (Do_MultiXactIdWait), each XactLockTableWait a
   * sleep of its own with its own deadlock_timeout and lock_timeout; the wait-for graph has
   * one edge, to the member slept on.
   */
  stage: 'tuple' | 'xid';
  /** Rows, stage 'xid': the holder whose xid the session sleeps on. */
  on?: ModelSession;
  seq: number;
  deadlockAt: number;
  checked: boolean;
  lockTimeoutAt?: number;
}

interface Running {
  action: Action;
  /** Rows only: index of the row being locked. */
  index: number;
  /** Index of the relation lock being taken. */
  rel: number;
}

interface ModelSession {
  name: string;
  deadlockMs: number;
  lockTimeoutMs: number;
  steps: GenStep[];
  pos: number;
  inTxn: boolean;
  aborted: boolean;
  savepointMark?: number;
  /** REPEATABLE READ: the transaction snapshot, as the number of commits it sees (taken by the first statement that needs one). */
  rr?: boolean;
  snapshot?: number;
  held: Held[];
  running?: Running;
  wait?: Wait;
}

/** Thrown inside the model when the schedule would be racy on real PostgreSQL. */
class Reject extends Error {}
/** How often each race or hang made the scheduler discard a draw (for tuning; not part of any result). */
export const REJECTS: Record<string, number> = {};

/** The abstract lock model that schedules a permutation. */
class Model {
  now = 0;
  private seq = 0;
  private lockAt = 0;
  readonly deleted = new Set<string>();
  /** Queue rows whose status a committed UPDATE changed (no longer 'new'). */
  readonly statusChanged = new Set<string>();
  readonly committedKeys = new Set<string>();
  /** Commits so far; a row's last committed update or delete, by that count (REPEATABLE READ compares it with its snapshot). */
  private commits = 0;
  private readonly modifiedAt = new Map<string, number>();
  private readonly deletedAt = new Map<string, number>();
  private woken = new Set<ModelSession>();
  /** The row each statement woken by the current event had been waiting for (it held that row's tuple lock). */
  private wokenFrom = new Map<ModelSession, string>();
  private touched = new Map<ModelSession, Set<string>>();

  constructor(readonly sessions: ModelSession[]) {}

  private others(s: ModelSession): ModelSession[] {
    return this.sessions.filter((o) => o !== s);
  }
  private rowModes(s: ModelSession, row: string): RowMode[] {
    return s.held.flatMap((h) => (h.kind === 'row' && h.row === row ? [h.mode] : []));
  }
  /** The other sessions holding the row in a mode that conflicts with `mode`, in multixact member order. */
  private rowBlockers(s: ModelSession, row: string, mode: RowMode): ModelSession[] {
    const firstAt = (o: ModelSession): number =>
      Math.min(...o.held.flatMap((h) => (h.kind === 'row' && h.row === row && conflicts(mode, h.mode) ? [h.at] : [])));
    return this.others(s)
      .filter((o) => this.rowModes(o, row).some((m) => conflicts(mode, m)))
      .sort((a, b) => firstAt(a) - firstAt(b));
  }
  private lockRow(s: ModelSession, row: string, mode: RowMode, modify?: 'update' | 'delete'): void {
    s.held.push({ kind: 'row', row, mode, ...(modify ? { modify } : {}), at: this.lockAt++ });
  }
  private rowVisible(s: ModelSession, row: string): boolean {
    if (s.rr) {
      const at = this.deletedAt.get(row);
      if (at !== undefined && at <= s.snapshot!) return false;
    } else if (this.deleted.has(row)) return false;
    return !s.held.some((h) => h.kind === 'row' && h.row === row && h.modify === 'delete');
  }
  /**
   * `status = 'new'` as the statement sees it: its own updates and committed ones are seen at
   * once; a row an open transaction updated is seen as before, and the lock's EvalPlanQual
   * recheck after the wait finds the committed status.
   */
  private rowIsNew(s: ModelSession, row: string): boolean {
    if (this.statusChanged.has(row)) return false;
    return !s.held.some((h) => h.kind === 'row' && h.row === row && h.modify === 'update');
  }
  /** REPEATABLE READ: another transaction committed an update or delete of the row after the snapshot (40001 on locking it). */
  private changedSinceSnapshot(s: ModelSession, row: string): boolean {
    return !!s.rr && (this.modifiedAt.get(row) ?? -1) > s.snapshot!;
  }
  private relHolders(s: ModelSession, table: string, mode: RelMode): ModelSession[] {
    return this.others(s).filter((o) => o.held.some((h) => h.kind === 'rel' && h.table === table && relConflicts(mode, h.mode)));
  }
  private keyHolder(key: string): ModelSession | undefined {
    return this.sessions.find((o) => o.held.some((h) => h.kind === 'key' && h.key === key));
  }
  private advHolders(s: ModelSession, key: number): ModelSession[] {
    return this.others(s).filter((o) => o.held.some((h) => h.kind === 'adv' && h.key === key));
  }
  private waitersOn(res: string): ModelSession[] {
    return this.sessions.filter((o) => o.wait?.res === res).sort((a, b) => a.wait!.seq - b.wait!.seq);
  }

  /** Runs the session's next step. */
  runStep(s: ModelSession): void {
    const step = s.steps[s.pos++];
    const a = step.action;
    this.woken = new Set();
    this.wokenFrom = new Map();
    this.touched = new Map();
    if (a.kind === 'begin') {
      s.inTxn = true;
      return;
    }
    if (a.kind === 'end') {
      this.endTxn(s, a.commit && !s.aborted);
      return;
    }
    if (s.aborted && a.kind !== 'rollbackTo') return; // 25P02, no effect
    if (s.rr && s.snapshot === undefined && !step.noSnapshot && !['savepoint', 'rollbackTo', 'setLockTimeout'].includes(a.kind))
      s.snapshot = this.commits;
    switch (a.kind) {
      case 'rollbackTo':
        if (s.savepointMark === undefined) return;
        this.releaseTo(s, s.savepointMark);
        s.aborted = false;
        this.pump();
        return;
      case 'savepoint':
        s.savepointMark = s.held.length;
        return;
      case 'setLockTimeout':
        s.lockTimeoutMs = a.ms;
        return;
      case 'unlockAll':
        s.held = s.held.filter((h) => !(h.kind === 'adv' && h.session));
        this.pump();
        return;
      case 'noop':
        return;
      case 'error':
        this.fail(s);
        this.pump();
        return;
      default:
        s.running = { action: a, index: 0, rel: 0 };
        this.continueRunning(s);
    }
  }

  /** Drives a running statement until it completes, fails or has to wait. */
  private continueRunning(s: ModelSession): void {
    const r = s.running!;
    const a = r.action;
    if ((a.kind === 'rows' || a.kind === 'insertKey') && a.rels) {
      for (; r.rel < a.rels.length; r.rel++) {
        const [table, mode] = a.rels[r.rel];
        const res = `rel:${table}`;
        const holders = this.relHolders(s, table, mode);
        // One waiter per relation at most: a second one's place in the queue (ProcSleep may put it
        // ahead, or find a deadlock at once) is not modelled.
        const queued = this.waitersOn(res);
        if (queued.length > 0 && (holders.length > 0 || queued.some((o) => relConflicts(mode, o.wait!.relMode!))))
          throw new Reject('a second request in a relation lock queue');
        if (holders.length === 0) {
          s.held.push({ kind: 'rel', table, mode });
          continue;
        }
        if (a.kind === 'rows' && a.relNowait) return this.fail(s);
        return this.startWait(s, { kind: 'rel', res, mode: 'upd', relMode: mode, stage: 'xid' });
      }
    }
    if (a.kind === 'rows') {
      let locked = 0;
      for (; r.index < a.rows.length; r.index++) {
        const row = a.rows[r.index];
        this.touch(s, row);
        if (!this.rowVisible(s, row)) continue;
        if ((a.skipLocked || a.firstNew) && locked >= 1) break;
        if (a.firstNew && !this.rowIsNew(s, row)) continue;
        if (this.changedSinceSnapshot(s, row)) return this.fail(s);
        const blockers = this.rowBlockers(s, row, a.mode);
        if (blockers.length === 0) {
          this.lockRow(s, row, a.mode, a.modify);
          locked++;
          continue;
        }
        if (a.skipLocked) continue;
        if (a.nowait) return this.fail(s);
        // Tuple lock: free when no other waiter holds or queues for it in a conflicting mode. A
        // transaction that already holds a weaker lock on the row skips the tuple lock
        // (heap_lock_tuple's skip_tuple_lock, heap_update's current_is_member) and sleeps on the
        // other members at once.
        const queue = this.waitersOn(row);
        const tupleFree = !queue.some((w) => conflicts(a.mode, w.wait!.mode)) || this.rowModes(s, row).length > 0;
        if (!tupleFree) return this.startWait(s, { kind: 'row', res: row, mode: a.mode, stage: 'tuple' });
        return this.startWait(s, { kind: 'row', res: row, mode: a.mode, stage: 'xid', on: blockers[0] });
      }
      s.running = a.then ? { action: a.then, index: 0, rel: 0 } : undefined;
      if (a.then) this.continueRunning(s);
      return;
    }
    if (a.kind === 'insertKey') {
      if (this.committedKeys.has(a.key) || s.held.some((h) => h.kind === 'key' && h.key === a.key)) {
        s.running = undefined;
        if (!a.onConflict) this.fail(s);
        return;
      }
      const holder = this.keyHolder(a.key);
      if (holder) {
        if (this.waitersOn(a.key).length > 0) throw new Reject('two waiters on one unique key');
        return this.startWait(s, { kind: 'key', res: a.key, mode: 'upd', stage: 'xid' });
      }
      s.held.push({ kind: 'key', key: a.key });
      s.running = undefined;
      return;
    }
    if (a.kind === 'advisory') {
      const res = `adv:${a.key}`;
      const mine = s.held.some((h) => h.kind === 'adv' && h.key === a.key);
      if (!mine && (this.advHolders(s, a.key).length > 0 || this.waitersOn(res).length > 0)) {
        return this.startWait(s, { kind: 'adv', res, mode: 'upd', stage: 'xid' });
      }
      s.held.push({ kind: 'adv', key: a.key, session: a.session });
      s.running = undefined;
      return;
    }
    s.running = undefined;
  }

  private touch(s: ModelSession, row: string): void {
    if (!this.touched.has(s)) this.touched.set(s, new Set());
    this.touched.get(s)!.add(row);
  }

  private startWait(s: ModelSession, w: Omit<Wait, 'seq' | 'deadlockAt' | 'checked' | 'lockTimeoutAt'>): void {
    s.wait = {
      ...w,
      seq: this.seq++,
      deadlockAt: this.now + s.deadlockMs,
      checked: false,
      ...(s.lockTimeoutMs > 0 ? { lockTimeoutAt: this.now + s.lockTimeoutMs } : {}),
    };
  }

  /** An error in the running statement: the (sub)transaction aborts and its locks go at once. */
  private fail(s: ModelSession): void {
    s.running = undefined;
    s.wait = undefined;
    s.aborted = true;
    this.releaseTo(s, s.savepointMark ?? 0);
  }

  private releaseTo(s: ModelSession, mark: number): void {
    s.held = s.held.filter((h, i) => i < mark || (h.kind === 'adv' && h.session));
  }

  private endTxn(s: ModelSession, commit: boolean): void {
    const rows = new Set(s.held.flatMap((h) => (h.kind === 'row' && h.modify ? [h.row] : [])));
    if (commit) {
      for (const row of rows) if (this.waitersOn(row).length >= 2) throw new Reject('two waiters chase an updated row');
      this.commits++;
      for (const row of rows) this.modifiedAt.set(row, this.commits);
      for (const h of s.held) {
        if (h.kind === 'row' && h.modify === 'delete') this.deleted.add(h.row);
        if (h.kind === 'row' && h.modify === 'delete') this.deletedAt.set(h.row, this.commits);
        if (h.kind === 'row' && h.modify === 'update' && h.row.startsWith('queue:')) this.statusChanged.add(h.row);
        if (h.kind === 'key') this.committedKeys.add(h.key);
      }
    }
    s.held = s.held.filter((h) => h.kind === 'adv' && h.session);
    s.inTxn = false;
    s.aborted = false;
    s.savepointMark = undefined;
    s.snapshot = undefined;
    this.pump();
  }

  /** Wakes waiters whose locks are free, in queue order, until nothing changes. */
  pump(): void {
    for (let changed = true, rounds = 0; changed; rounds++) {
      if (rounds > 1000)
        throw new Error('model: pump does not settle ' + JSON.stringify(this.sessions.map((x) => [x.name, x.wait, x.running, x.held])));
      changed = false;
      for (const s of this.sessions.filter((o) => o.wait).sort((a, b) => a.wait!.seq - b.wait!.seq)) {
        if (this.tryProgress(s)) changed = true;
      }
    }
    const woken = [...this.woken];
    for (let i = 0; i < woken.length; i++)
      for (let j = i + 1; j < woken.length; j++) {
        const a = this.touched.get(woken[i]) ?? new Set();
        const b = this.touched.get(woken[j]) ?? new Set();
        if ([...a].some((r) => b.has(r))) throw new Reject('two woken statements contend for the same rows');
      }
  }

  private tryProgress(s: ModelSession): boolean {
    const w = s.wait!;
    const a = s.running!.action;
    if (w.kind === 'rel') {
      const table = w.res.slice(4);
      if (this.relHolders(s, table, w.relMode!).length > 0) return false;
      s.wait = undefined;
      this.woken.add(s);
      s.held.push({ kind: 'rel', table, mode: w.relMode! });
      s.running!.rel++;
      this.continueRunning(s);
      return true;
    }
    if (w.kind === 'row') {
      if (w.stage === 'tuple') {
        // The tuple lock is held by the waiters past it (stage 'xid', whatever their arrival) and
        // granted in arrival order to the ones queued for it.
        const ahead = this.waitersOn(w.res).filter((o) => o !== s && (o.wait!.stage === 'xid' || o.wait!.seq < w.seq));
        if (ahead.some((o) => conflicts(w.mode, o.wait!.mode))) return false;
        const blockers = this.rowVisible(s, w.res) ? this.rowBlockers(s, w.res, w.mode) : [];
        // The tuple lock's holder locks the row before it lets the next one in; a statement woken
        // elsewhere by the same event takes the row without the tuple lock, racing with this one.
        if (blockers.some((b) => this.woken.has(b) && this.wokenFrom.get(b) !== w.res))
          throw new Reject('a woken statement takes a row a queued waiter goes for');
        if (blockers.length > 0) {
          // Holds the tuple lock now; a new sleep on the first holder's xid, with new timers.
          s.wait = undefined;
          this.startWait(s, { kind: 'row', res: w.res, mode: w.mode, stage: 'xid', on: blockers[0] });
          s.wait!.seq = w.seq;
          return true;
        }
      } else {
        const blockers = this.rowVisible(s, w.res) ? this.rowBlockers(s, w.res, w.mode) : [];
        if (blockers.includes(w.on!)) return false;
        // The member slept on ended, and a statement woken by the same event locked the row: on
        // PostgreSQL the two race for it (the other does not take the tuple lock this one holds).
        if (blockers.some((b) => this.woken.has(b))) throw new Reject('a woken statement takes a row another waiter was woken for');
        if (blockers.length > 0) {
          // The member slept on ended: the next sleep is on the next conflicting member, with new
          // timers; the tuple lock stays with the waiter, so its place in the queue does not change.
          s.wait = { ...w, on: blockers[0], deadlockAt: this.now + s.deadlockMs, checked: false };
          delete s.wait.lockTimeoutAt;
          if (s.lockTimeoutMs > 0) s.wait.lockTimeoutAt = this.now + s.lockTimeoutMs;
          return true;
        }
      }
      s.wait = undefined;
      this.woken.add(s);
      this.wokenFrom.set(s, w.res);
      this.touch(s, w.res);
      const r = s.running!;
      // REPEATABLE READ: the holder committed a change of the row (40001 after the wait).
      if (this.rowVisible(s, w.res) && this.changedSinceSnapshot(s, w.res)) {
        this.fail(s);
        return true;
      }
      if (a.kind === 'rows' && this.rowVisible(s, w.res) && (!a.firstNew || this.rowIsNew(s, w.res))) {
        this.lockRow(s, w.res, w.mode, a.modify);
        if (a.skipLocked || a.firstNew) r.index = a.rows.length;
      }
      r.index++; // a deleted row is skipped (EvalPlanQual finds no row)
      this.continueRunning(s);
      return true;
    }
    if (w.kind === 'key') {
      const holder = this.keyHolder(w.res);
      if (holder && holder !== s) return false;
      s.wait = undefined;
      this.woken.add(s);
      this.continueRunning(s);
      return true;
    }
    const key = (a as { key: number }).key;
    if (this.advHolders(s, key).length > 0) return false;
    if (this.waitersOn(w.res).some((o) => o !== s && o.wait!.seq < w.seq)) return false;
    s.wait = undefined;
    this.woken.add(s);
    s.held.push({ kind: 'adv', key, session: (a as { session: boolean }).session });
    s.running = undefined;
    return true;
  }

  /** The pending timers, earliest first. */
  private timers(): { at: number; s: ModelSession; kind: 'deadlock' | 'lock' }[] {
    const out: { at: number; s: ModelSession; kind: 'deadlock' | 'lock' }[] = [];
    for (const s of this.sessions) {
      if (!s.wait) continue;
      if (!s.wait.checked) out.push({ at: s.wait.deadlockAt, s, kind: 'deadlock' });
      if (s.wait.lockTimeoutAt !== undefined) out.push({ at: s.wait.lockTimeoutAt, s, kind: 'lock' });
    }
    return out.sort((a, b) => a.at - b.at);
  }

  /** Time passes while a step is issued; no pending timer may be near. */
  issueStep(): void {
    this.now += STEP_COST_MS;
    const [t] = this.timers();
    if (t && t.at - this.now < TIE_MARGIN_MS) throw new Reject('a timer fires while steps are issued');
  }

  /** Fires the next timer; false when none is pending (the schedule would hang). */
  fireNextTimer(): boolean {
    const [t, next] = this.timers();
    if (!t) return false;
    if (next && next.at - t.at < TIE_MARGIN_MS) throw new Reject('two timers too close');
    this.now = Math.max(this.now, t.at);
    if (this.now > MAX_VIRTUAL_MS) throw new Reject('schedule too long');
    this.woken = new Set();
    this.wokenFrom = new Map();
    this.touched = new Map();
    if (t.kind === 'lock') {
      this.fail(t.s);
      this.pump();
      return true;
    }
    t.s.wait!.checked = true;
    const cycle = this.findCycle(t.s);
    if (cycle === 'soft') throw new Reject('deadlock cycle through a soft edge');
    if (cycle) {
      this.fail(t.s);
      this.pump();
    }
    return true;
  }

  /** Wait-for edges of a waiting session: hard to lock holders, soft to earlier queued requests. */
  private edges(s: ModelSession): { to: ModelSession; soft: boolean }[] {
    const w = s.wait;
    if (!w) return [];
    if (w.kind === 'key') return [{ to: this.keyHolder(w.res)!, soft: false }];
    if (w.kind === 'rel') return this.relHolders(s, w.res.slice(4), w.relMode!).map((to) => ({ to, soft: false }));
    if (w.kind === 'adv') {
      const key = Number(w.res.slice(4));
      const holders = this.advHolders(s, key).map((to) => ({ to, soft: false }));
      const ahead = this.waitersOn(w.res).filter((o) => o !== s && o.wait!.seq < w.seq);
      return [...holders, ...ahead.map((to) => ({ to, soft: true }))];
    }
    if (w.stage === 'xid') return [{ to: w.on!, soft: false }];
    const queue = this.waitersOn(w.res).filter(
      (o) => o !== s && conflicts(w.mode, o.wait!.mode) && (o.wait!.stage === 'xid' || o.wait!.seq < w.seq),
    );
    return queue.map((o) => ({ to: o, soft: o.wait!.stage === 'tuple' }));
  }

  private findCycle(start: ModelSession): boolean | 'soft' {
    let found: boolean | 'soft' = false;
    const visit = (s: ModelSession, soft: boolean, seen: Set<ModelSession>): void => {
      for (const e of this.edges(s)) {
        if (e.to === start) {
          if (soft || e.soft) found = found || 'soft';
          else found = true;
          continue;
        }
        if (seen.has(e.to)) continue;
        seen.add(e.to);
        visit(e.to, soft || e.soft, seen);
      }
    };
    visit(start, false, new Set([start]));
    return found;
  }
}

/** A generated schedule. */
export interface Generated {
  seed: number;
  spec: Spec;
  /** Feature tags of the statements it contains. */
  features: FeatureTag[];
  /** The schedule's length on the model's virtual clock (ms). */
  virtualMs: number;
}

export interface GenerateOptions {
  /** Features the pool may use; default CI_FEATURES. */
  features?: readonly FeatureTag[];
}

const TABLE_IDS = [1, 2, 3];

/**
 * Statements a REPEATABLE READ session draws: those whose outcome under the transaction snapshot
 * the model knows (40001 on a row another transaction changed after it). Foreign-key checks,
 * ON CONFLICT and the queue's rechecks are left to READ COMMITTED sessions.
 */
const REPEATABLE_READ_FEATURES: ReadonlySet<FeatureTag> = new Set<FeatureTag>([
  'update-nonkey',
  'update-key',
  'delete',
  'insert-unique',
  'select-for',
  'nowait',
  'multirow-lock',
  'multirow-desc',
  'advisory-xact',
  'advisory-session',
  'lock-timeout',
  'plain-select',
  'error-in-block',
  'notice',
  'prepared',
  'in-list',
  'lock-table',
  'update-join',
  'select-for-join',
  'function',
]);
/** Tags that are not statements of their own: they shape a session or the schema. */
const NOT_STATEMENTS: ReadonlySet<FeatureTag> = new Set<FeatureTag>(['rollback', 'savepoint', 'repeatable-read']);

interface DrawContext {
  inserts: number;
  hot: Table[];
  /** The spec's schema has the tally trigger on child: every child insert also updates tally row 1. */
  trigger: boolean;
  /** The session is REPEATABLE READ. */
  rr: boolean;
}

/** The child insert's foreign-key check (FOR KEY SHARE of the parent row) and, with the tally trigger, the counter update after it. */
function childInsertTail(k: number, ctx: DrawContext): Action {
  const tally: Action = { kind: 'rows', rows: ['tally:1'], mode: 'nku', modify: 'update', rels: [['tally', 'RE']] };
  return { kind: 'rows', rows: [`parent:${k}`], mode: 'ks', rels: [['parent', 'RS']], ...(ctx.trigger ? { then: tally } : {}) };
}

/** Draws one statement for session `si` (0-based). */
function drawStatement(rng: Rng, si: number, n: number, features: readonly FeatureTag[], ctx: DrawContext): GenStep[] {
  const name = `s${si + 1}${String.fromCharCode(97 + n)}`;
  const tag = rng.pick(
    features.filter((f) => !NOT_STATEMENTS.has(f) && (f !== 'trigger' || ctx.trigger) && (!ctx.rr || REPEATABLE_READ_FEATURES.has(f))),
  );
  const k = rng.chance(0.8) ? rng.int(1, 2) : 3;
  // REPEATABLE READ: FOR KEY SHARE of a row updated after the snapshot is not modelled.
  const mode = rng.pick<RowMode>(ctx.rr ? ['sh', 'nku', 'upd'] : ['ks', 'sh', 'nku', 'upd']);
  const lockTable = rng.pick(ctx.hot);
  const row = (t: Table, id: number): string => `${t}:${id}`;
  const one = (sql: string, action: Action, noSnapshot = false): GenStep[] => [
    { name, sql, tag, action, ...(noSnapshot ? { noSnapshot } : {}) },
  ];
  const by = (si + 1) * 10 + n;
  switch (tag) {
    case 'update-nonkey':
    case 'in-list': {
      if (tag === 'in-list' && rng.chance(0.3)) {
        // A bitmap scan meets the rows at their HOT chains' roots: queue's and child's are
        // never key-updated, so that is id order.
        const t = rng.pick<Table>(['queue', 'child']);
        return one(`DELETE FROM ${t} WHERE id IN (3, 1) RETURNING id;`, {
          kind: 'rows',
          rows: [row(t, 1), row(t, 3)],
          mode: 'upd',
          modify: 'delete',
          rels: [[t, 'RE']],
        });
      }
      const t = rng.pick(ctx.hot);
      // in-list: several rows through the primary key's index scan (`id = ANY (…)`), locked in
      // index order whatever their places in the heap.
      const ids = tag === 'in-list' ? TABLE_IDS.filter(() => rng.chance(0.7)) : [k];
      if (ids.length < 2 && tag === 'in-list') ids.splice(0, ids.length, 1, 3);
      const where = ids.length > 1 ? `id IN (${(rng.chance(0.5) ? [...ids].reverse() : ids).join(', ')})` : `id = ${k}`;
      // queue has no v: its non-key column is status, which the LIMIT recheck filters on.
      const set =
        t === 'queue' ? `status = status || '${si + 1}' WHERE ${where} RETURNING status` : `v = v + ${by} WHERE ${where} RETURNING v`;
      return one(`UPDATE ${t} SET ${set};`, {
        kind: 'rows',
        rows: ids.map((id) => row(t, id)),
        mode: 'nku',
        modify: 'update',
        rels: [[t, 'RE']],
      });
    }
    case 'update-key':
      return one(`UPDATE users SET email = email || '${si + 1}' WHERE id = ${k} RETURNING email;`, {
        kind: 'rows',
        rows: [row('users', k)],
        mode: 'upd',
        modify: 'update',
        rels: [['users', 'RE']],
      });
    case 'delete': {
      const t = rng.pick<Table>(['queue', 'child']);
      return one(`DELETE FROM ${t} WHERE id = ${k};`, {
        kind: 'rows',
        rows: [row(t, k)],
        mode: 'upd',
        modify: 'delete',
        rels: [[t, 'RE']],
      });
    }
    case 'update-join':
      // The join's other table is read, not locked (ROW_MARK_REFERENCE); parse analysis opens the target first.
      if (rng.chance(0.5))
        return one(`UPDATE parent p SET v = p.v + u.v + ${by} FROM users u WHERE u.id = p.id AND p.id = ${k} RETURNING p.v, u.email;`, {
          kind: 'rows',
          rows: [row('parent', k)],
          mode: 'nku',
          modify: 'update',
          rels: [
            ['parent', 'RE'],
            ['users', 'AS'],
          ],
        });
      return one(`DELETE FROM queue q USING parent p WHERE p.id = q.id AND q.id = ${k} RETURNING q.id, p.v;`, {
        kind: 'rows',
        rows: [row('queue', k)],
        mode: 'upd',
        modify: 'delete',
        rels: [
          ['queue', 'RE'],
          ['parent', 'AS'],
        ],
      });
    case 'select-for-join': {
      const ofParent = rng.chance(0.5);
      const alias = ofParent ? 'p' : 'u';
      return one(
        `SELECT ${alias}.id, p.v, u.email FROM parent p JOIN users u ON u.id = p.id WHERE ${alias}.id = ${k} ${MODE_SQL[mode]} OF ${alias};`,
        {
          kind: 'rows',
          rows: [row(ofParent ? 'parent' : 'users', k)],
          mode,
          rels: [
            ['parent', ofParent ? 'RS' : 'AS'],
            ['users', ofParent ? 'AS' : 'RS'],
          ],
        },
      );
    }
    case 'cte-modify': {
      // The CTE's UPDATE, then the INSERT's row, its foreign-key check of the row just updated (own lock) and the trigger.
      const id = 500 + si * 10 + n;
      return one(
        `WITH u AS (UPDATE parent SET v = v + ${by} WHERE id = ${k} RETURNING id, v) INSERT INTO child SELECT ${id}, id, v FROM u RETURNING id, v;`,
        {
          kind: 'rows',
          rows: [row('parent', k)],
          mode: 'nku',
          modify: 'update',
          rels: [
            ['parent', 'RE'],
            ['child', 'RE'],
          ],
          then: childInsertTail(k, ctx),
        },
      );
    }
    case 'function':
      return one(`SELECT bump(${k}, ${by});`, {
        kind: 'rows',
        rows: [row('parent', k)],
        mode: 'nku',
        modify: 'update',
        rels: [['parent', 'RE']],
      });
    case 'lock-table': {
      const m = rng.pick(REL_MODES);
      const nowait = rng.chance(0.3);
      return one(
        `LOCK TABLE ${lockTable} IN ${REL_MODE_SQL[m]} MODE${nowait ? ' NOWAIT' : ''};`,
        { kind: 'rows', rows: [], mode: 'ks', rels: [[lockTable, m]], relNowait: nowait },
        true,
      );
    }
    case 'insert-unique':
    case 'insert-on-conflict': {
      const j = rng.int(0, 1);
      const conflict = tag === 'insert-on-conflict' ? ' ON CONFLICT DO NOTHING' : '';
      return one(`INSERT INTO users VALUES (${10 + j}, 'n${j}', ${si + 1})${conflict};`, {
        kind: 'insertKey',
        key: `users:${10 + j}`,
        onConflict: tag === 'insert-on-conflict',
        rels: [['users', 'RE']],
      });
    }
    case 'insert-fk':
    case 'trigger': {
      const id = 100 + (si + 1) * 10 + ctx.inserts++;
      return one(`INSERT INTO child VALUES (${id}, ${k}, 0);`, {
        kind: 'rows',
        rows: [],
        mode: 'ks',
        rels: [['child', 'RE']],
        then: childInsertTail(k, ctx),
      });
    }
    case 'insert-expr-unique': {
      // Its id is its own; its email collides with insert-unique's 'n<j>' only through lower(email).
      const j = rng.int(0, 1);
      return one(`INSERT INTO users VALUES (${20 + si * 5 + n}, 'N${j}', ${si + 1});`, {
        kind: 'insertKey',
        key: `users:${10 + j}`,
        onConflict: false,
        rels: [['users', 'RE']],
      });
    }
    case 'nextval':
      // The id is drawn before the foreign-key check waits, and a rollback does not give it back.
      return one(`INSERT INTO child VALUES (nextval('child_ids'), ${k}, 0) RETURNING id;`, {
        kind: 'rows',
        rows: [],
        mode: 'ks',
        rels: [['child', 'RE']],
        then: childInsertTail(k, ctx),
      });
    case 'limit-recheck':
      // A row an open transaction updated is locked as seen, then rechecked after the wait
      // (EvalPlanQual); if its status changed, LIMIT goes on to the next row.
      return one(`SELECT id FROM queue WHERE status = 'new' ORDER BY id LIMIT 1 ${MODE_SQL[mode]};`, {
        kind: 'rows',
        rows: TABLE_IDS.map((id) => row('queue', id)),
        mode,
        firstNew: true,
        rels: [['queue', 'RS']],
      });
    case 'select-for':
    case 'nowait': {
      const nowait = tag === 'nowait';
      return one(`SELECT id FROM ${lockTable} WHERE id = ${k} ${MODE_SQL[mode]}${nowait ? ' NOWAIT' : ''};`, {
        kind: 'rows',
        rows: [row(lockTable, k)],
        mode,
        nowait,
        rels: [[lockTable, 'RS']],
      });
    }
    case 'multirow-lock':
    case 'multirow-desc': {
      const ids = TABLE_IDS.filter(() => rng.chance(0.7));
      if (ids.length < 2) ids.splice(0, ids.length, 1, 3);
      const desc = tag === 'multirow-desc';
      const order = desc ? [...ids].reverse() : ids;
      return one(`SELECT id FROM ${lockTable} WHERE id IN (${ids.join(', ')}) ORDER BY id${desc ? ' DESC' : ''} ${MODE_SQL[mode]};`, {
        kind: 'rows',
        rows: order.map((id) => row(lockTable, id)),
        mode,
        rels: [[lockTable, 'RS']],
      });
    }
    case 'skip-locked':
      return one(`SELECT id FROM queue ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;`, {
        kind: 'rows',
        rows: TABLE_IDS.map((id) => row('queue', id)),
        mode: 'upd',
        skipLocked: true,
        rels: [['queue', 'RS']],
      });
    case 'advisory-xact':
    case 'advisory-session': {
      const key = rng.int(1, 2);
      const session = tag === 'advisory-session';
      return one(`SELECT ${session ? 'pg_advisory_lock' : 'pg_advisory_xact_lock'}(${key});`, { kind: 'advisory', key, session });
    }
    case 'lock-timeout':
      return one(`SET lock_timeout = '${LOCK_TIMEOUT_MS}ms';`, { kind: 'setLockTimeout', ms: LOCK_TIMEOUT_MS });
    case 'plain-select':
      return one(`SELECT id FROM ${lockTable} WHERE id = ${k};`, { kind: 'rows', rows: [], mode: 'ks', rels: [[lockTable, 'AS']] });
    case 'error-in-block': {
      // Errors raised before execution, and statements PostgreSQL refuses inside a block (before they lock anything).
      const sql = rng.pick([
        'SELEC 1;',
        `VACUUM ${lockTable};`,
        `CREATE INDEX CONCURRENTLY ON ${lockTable} (id);`,
        'ALTER SYSTEM SET work_mem = 4096;',
      ]);
      return one(sql, { kind: 'error' }, sql === 'SELEC 1;');
    }
    case 'notice': {
      // Warnings that change nothing: BEGIN in a block, unlocking an advisory lock not held (keys 1–2 are the ones taken).
      const sql = rng.pick(['BEGIN;', 'SELECT pg_advisory_unlock(7);', 'SELECT pg_advisory_unlock_shared(8);']);
      return one(sql, { kind: 'noop' }, sql === 'BEGIN;');
    }
    case 'prepared':
      // Each session its own prepared statements; EXECUTE locks as the statement it runs.
      return one(`PREPARE p_${name} (int) AS SELECT id FROM ${lockTable} WHERE id = $1 ${MODE_SQL[mode]}; EXECUTE p_${name}(${k});`, {
        kind: 'rows',
        rows: [row(lockTable, k)],
        mode,
        rels: [[lockTable, 'RS']],
      });
    default:
      throw new Error(`unknown feature ${tag}`);
  }
}

/** Draws one session's transaction: BEGIN, 1–4 statements, COMMIT or ROLLBACK, post-transaction steps. */
function drawSession(rng: Rng, si: number, features: readonly FeatureTag[], hot: Table[], trigger: boolean): GenStep[] {
  const p = `s${si + 1}`;
  const rr = features.includes('repeatable-read') && rng.chance(0.35);
  const steps: GenStep[] = [
    rr
      ? { name: `${p}begin`, sql: 'BEGIN ISOLATION LEVEL REPEATABLE READ;', tag: 'repeatable-read', action: { kind: 'begin' } }
      : rng.chance(0.5)
        ? { name: `${p}begin`, sql: 'BEGIN;', action: { kind: 'begin' } }
        : { name: `${p}begin`, sql: 'BEGIN ISOLATION LEVEL READ COMMITTED;', action: { kind: 'begin' } },
  ];
  const count = rng.int(1, 4);
  const ctx: DrawContext = { inserts: 0, hot, trigger, rr };
  const body: GenStep[] = [];
  for (let n = 0; n < count; n++) body.push(...drawStatement(rng, si, n, features, ctx));
  if (features.includes('savepoint') && rng.chance(0.3)) {
    const at = rng.int(0, body.length - 1);
    body.splice(at, 0, { name: `${p}sp`, sql: 'SAVEPOINT sp;', tag: 'savepoint', action: { kind: 'savepoint' } });
    body.push({ name: `${p}rbsp`, sql: 'ROLLBACK TO SAVEPOINT sp;', tag: 'savepoint', action: { kind: 'rollbackTo' } });
  }
  steps.push(...body);
  const rollback = features.includes('rollback') && rng.chance(0.25);
  steps.push(
    rollback
      ? { name: `${p}rollback`, sql: 'ROLLBACK;', tag: 'rollback', action: { kind: 'end', commit: false } }
      : { name: `${p}commit`, sql: 'COMMIT;', action: { kind: 'end', commit: true } },
  );
  if (body.some((s) => s.tag === 'advisory-session')) {
    steps.push({ name: `${p}unlock`, sql: 'SELECT pg_advisory_unlock_all();', tag: 'advisory-session', action: { kind: 'unlockAll' } });
  }
  return steps;
}

/** Tries to order the sessions' steps into a race-free, hang-free permutation; null if it cannot. */
function schedule(rng: Rng, sessions: ModelSession[]): { order: string[]; virtualMs: number } | null {
  const model = new Model(sessions);
  const order: string[] = [];
  try {
    for (;;) {
      const left = sessions.filter((s) => s.pos < s.steps.length);
      if (left.length === 0) break;
      const ready = left.filter((s) => !s.wait);
      if (ready.length === 0) {
        if (!model.fireNextTimer()) {
          REJECTS.hang = (REJECTS.hang ?? 0) + 1;
          return null;
        }
        continue;
      }
      // Prefer statements over COMMIT/ROLLBACK so that transactions overlap and contend.
      let s = rng.pick(ready);
      if (s.steps[s.pos].action.kind === 'end' && rng.chance(0.7)) s = rng.pick(ready);
      order.push(s.steps[s.pos].name);
      model.issueStep();
      model.runStep(s);
    }
  } catch (e) {
    if (e instanceof Reject) {
      REJECTS[e.message] = (REJECTS[e.message] ?? 0) + 1;
      return null;
    }
    throw e;
  }
  return { order, virtualMs: model.now };
}

/** Generates the spec for `seed`: deterministic, replayable, race-free on real PostgreSQL. */
export function generate(seed: number, opts: GenerateOptions = {}): Generated {
  const features = opts.features ?? CI_FEATURES;
  const rng = new Rng(seed);
  for (let attempt = 0; attempt < 200; attempt++) {
    const n = rng.int(2, 4);
    // One or two "hot" tables per spec, so that the sessions contend (and deadlock) often.
    const hot = rng.chance(0.5)
      ? [rng.pick<Table>(['parent', 'users', 'queue'])]
      : (['parent', 'users', 'queue'] as Table[]).filter(() => rng.chance(0.67));
    if (hot.length === 0) hot.push('parent');
    const trigger = features.includes('trigger') && rng.chance(0.3);
    const drawn = Array.from({ length: n }, (_, si) => drawSession(rng, si, features, hot, trigger));
    const tags = new Set(drawn.flat().flatMap((st) => (st.tag ? [st.tag] : [])));
    if (trigger) tags.add('trigger');
    const FINAL_CHECK = finalCheck(trigger);
    for (let tries = 0; tries < 10; tries++) {
      const sessions: ModelSession[] = drawn.map((steps, si) => ({
        name: `s${si + 1}`,
        deadlockMs: DEADLOCK_TIMEOUTS_MS[si],
        lockTimeoutMs: 0,
        steps,
        pos: 0,
        inTxn: false,
        aborted: false,
        ...(steps[0].tag === 'repeatable-read' ? { rr: true } : {}),
        held: [],
      }));
      const result = schedule(rng, sessions);
      if (!result) continue;
      const lastSession = sessions[rng.int(0, n - 1)];
      const check: GenStep = { name: `${lastSession.name}check`, sql: FINAL_CHECK, action: { kind: 'noop' } };
      const specSessions: SpecSession[] = sessions.map((s) => ({
        name: s.name,
        setup: `SET deadlock_timeout = '${s.deadlockMs}ms';`,
        steps: [...s.steps, ...(s === lastSession ? [check] : [])].map((st): SpecStep => ({ name: st.name, sql: st.sql })),
      }));
      const spec: Spec = {
        setup: [SCHEMA, ...(tags.has('function') ? [FUNCTION_SCHEMA] : []), ...(trigger ? [TRIGGER_SCHEMA] : [])],
        teardown:
          `DROP TABLE child, parent, queue, users${trigger ? ', tally' : ''}; DROP SEQUENCE child_ids;` +
          (tags.has('function') ? ' DROP FUNCTION bump(int, int);' : '') +
          (trigger ? ' DROP FUNCTION tally_bump();' : ''),
        sessions: specSessions,
        permutations: [{ steps: [...result.order, check.name].map((step) => ({ step, blockers: [] })) }],
      };
      return { seed, spec, features: ALL_FEATURES.filter((f) => tags.has(f)), virtualMs: result.virtualMs };
    }
  }
  throw new Error(`seed ${seed}: no race-free schedule found`);
}

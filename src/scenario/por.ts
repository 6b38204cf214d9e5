/**
 * Partial-order reduction for the explorer: run one interleaving per equivalence class and give
 * its outcome to every interleaving of the class.
 *
 * Two adjacent steps of different sessions commute when (1) what each statement can touch is
 * disjoint or both only read it (a static footprint of relations, rows by an integer key, and
 * advisory lock keys, read from the SQL; anything not recognized touches everything), and (2) in
 * the run both took effect at once: neither waited, and nothing else happened between them (no
 * other step completed, no victim, no cancel). Swapping such a pair gives the same run, so every
 * linearization of the run's dependence order (program order plus the dependent pairs, in the
 * order they ran) has the same outcome. Condition (2) comes from the run itself: a step that
 * waited, or that something happened around, is dependent on every other step, which keeps lock
 * waits, releases, deadlock timers and stalls in the order they ran.
 *
 * Two refinements keep classes as large as the run allows. When something is printed between a
 * step and the next one, the next step stays put only if the tester waited for its session there
 * (otherwise the records follow the pinned step before it, whichever step comes next). And a
 * stall reached quietly (nothing but steps completing at once or beginning to wait before it)
 * lets the steps that did not wait move across the waits in its prefix: with no waiter done, no
 * deadlock and no timeout setting that could end a wait, the poll or two of virtual
 * time such a move shifts cannot change which locks are held and awaited when the tester waits
 * for the due step.
 *
 * The footprint is deliberately narrow: a scenario whose setup has anything that can make a
 * statement touch more than it names (triggers, rules, foreign keys, unique indexes, views,
 * functions, sequences) or whose snapshots span statements (REPEATABLE READ, SERIALIZABLE) gets no
 * reduction at all. A test compares every summary count with brute force.
 */
import type { InterleavingOutcome } from './explore';
import type { PermutationRun } from './isolation';
import type { Spec } from './types';

/** What one statement can touch: `rows` null = the whole relation. */
interface Atom {
  rel: string;
  key: string | null;
  rows: Set<string> | null;
  write: boolean;
  /** Columns it assigns (an UPDATE); rows keyed by them may move in or out of another atom's set. */
  assigns: Set<string>;
}

/** A step's footprint: 'all' conflicts with every step. */
export type Footprint = 'all' | Atom[];

/** Words in a setup that make the static footprint unsound; the scenario then gets no reduction. */
const RISKY =
  /\b(trigger|rule|references|foreign|policy|inherits|partition|view|function|procedure|unique|exclude|index|citext|collat\w*|isolation|serializable|repeatable|deferrable|sequence|serial|bigserial|smallserial|identity|generated|domain|extension|default_transaction\w*|transaction_isolation|nextval)\b/i;

type Tok = { t: 'id' | 'num' | 'str' | 'p'; v: string };

/** Tokens of one statement, or null for anything the footprint reader does not handle. */
function tokens(sql: string): Tok[] | null {
  const out: Tok[] = [];
  const re = /\s+|([a-z_][a-z0-9_]*)|(\d+)|'((?:[^']|'')*)'|(<>|!=|<=|>=|\|\||[(),=*+\-/<>%.])/giy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < sql.length) {
    re.lastIndex = at;
    m = re.exec(sql);
    if (!m || m[0].length === 0) return null;
    at = re.lastIndex;
    if (m[1] !== undefined) out.push({ t: 'id', v: m[1].toLowerCase() });
    else if (m[2] !== undefined) out.push({ t: 'num', v: m[2] });
    else if (m[3] !== undefined) out.push({ t: 'str', v: m[3] });
    else if (m[4] !== undefined) out.push({ t: 'p', v: m[4] });
  }
  return out;
}

/** Splits a step's SQL into statements at semicolons outside quotes; null when it has comments, dollar quotes or quoted names. */
function statements(sql: string): string[] | null {
  if (/--|\/\*|\$|"/.test(sql)) return null;
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    if (ch === ';' && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((s) => s.trim()).filter((s) => s.length > 0);
}

const KEYWORDS = new Set([
  'select',
  'from',
  'where',
  'and',
  'or',
  'not',
  'in',
  'is',
  'null',
  'for',
  'update',
  'set',
  'order',
  'by',
  'limit',
  'returning',
  'case',
  'when',
  'then',
  'else',
  'end',
  'exists',
  'any',
  'all',
  'union',
  'join',
  'on',
  'as',
  'with',
  'values',
  'default',
  'offset',
  'share',
  'nowait',
  'skip',
  'locked',
  'key',
  'no',
]);

const isName = (k: Tok | undefined): k is Tok => k !== undefined && k.t === 'id' && !KEYWORDS.has(k.v);
const isP = (k: Tok | undefined, v: string): boolean => k !== undefined && k.t === 'p' && k.v === v;
const isW = (k: Tok | undefined, v: string): boolean => k !== undefined && k.t === 'id' && k.v === v;

/** An integer literal as a canonical string ('007' and 7 alike), or null. */
function intLiteral(k: Tok | undefined): string | null {
  if (!k) return null;
  if (k.t === 'num') return BigInt(k.v).toString();
  if (k.t === 'str' && /^\s*[+-]?\d+\s*$/.test(k.v)) return BigInt(k.v.trim()).toString();
  return null;
}

/** `col = int` or `col IN (int, …)` from position i to the end; the column and the keys, or null. */
function keyCondition(ts: Tok[], i: number): { key: string; rows: Set<string>; end: number } | null {
  const col = ts[i];
  if (!isName(col)) return null;
  if (isP(ts[i + 1], '=')) {
    const v = intLiteral(ts[i + 2]);
    return v === null ? null : { key: col.v, rows: new Set([v]), end: i + 3 };
  }
  if (isW(ts[i + 1], 'in') && isP(ts[i + 2], '(')) {
    const rows = new Set<string>();
    let j = i + 3;
    for (;;) {
      const v = intLiteral(ts[j]);
      if (v === null) return null;
      rows.add(v);
      if (isP(ts[j + 1], ')')) return { key: col.v, rows, end: j + 2 };
      if (!isP(ts[j + 1], ',')) return null;
      j += 2;
    }
  }
  return null;
}

const ADVISORY = /^pg_(try_)?advisory_(xact_)?(lock|unlock)(_shared)?$/;

/** The footprint of one statement (see the module comment), or 'all'. */
export function statementFootprint(sql: string): Footprint {
  const ts = tokens(sql);
  if (!ts || ts.length === 0) return 'all';
  const w = ts.map((k) => (k.t === 'id' ? k.v : ''));
  const only = (...words: string[][]) => words.some((ws) => ws.length === ts.length && ws.every((x, i) => w[i] === x));
  if (only(['begin'], ['begin', 'work'], ['begin', 'transaction'], ['start', 'transaction'])) return [];
  if (only(['begin', 'isolation', 'level', 'read', 'committed'], ['start', 'transaction', 'isolation', 'level', 'read', 'committed']))
    return [];
  if (w[0] === 'select') return selectFootprint(ts);
  if (w[0] === 'update') return updateFootprint(ts);
  return 'all';
}

/** `COMMIT`, `ROLLBACK` and their spellings: the statement releases what the session holds. */
export function isTransactionEnd(sql: string): boolean {
  return /^\s*(commit|end|rollback|abort)(\s+(work|transaction))?\s*$/i.test(sql);
}

function updateFootprint(ts: Tok[]): Footprint {
  // UPDATE t SET c = expr [, …] WHERE key = int | key IN (int, …)
  const rel = ts[1];
  if (!isName(rel) || !isW(ts[2], 'set')) return 'all';
  const assigns = new Set<string>();
  let i = 3;
  for (;;) {
    const col = ts[i];
    if (!isName(col) || !isP(ts[i + 1], '=')) return 'all';
    assigns.add(col.v);
    i += 2;
    // expr: names, numbers, strings and arithmetic, no calls or subqueries
    let n = 0;
    while (i < ts.length && !isP(ts[i], ',') && !isW(ts[i], 'where')) {
      const k = ts[i];
      if (k.t === 'id' && KEYWORDS.has(k.v)) return 'all';
      if (k.t === 'p' && !['+', '-', '*', '/', '%', '||'].includes(k.v)) return 'all';
      if (k.t === 'id' && isP(ts[i + 1], '(')) return 'all';
      i++;
      n++;
    }
    if (n === 0) return 'all';
    if (isP(ts[i], ',')) {
      i++;
      continue;
    }
    break;
  }
  if (!isW(ts[i], 'where')) return 'all';
  const cond = keyCondition(ts, i + 1);
  if (!cond || cond.end !== ts.length || assigns.has(cond.key)) return 'all';
  return [{ rel: rel.v, key: cond.key, rows: cond.rows, write: true, assigns }];
}

function selectFootprint(ts: Tok[]): Footprint {
  // SELECT int|'text' [, …]  — touches nothing
  if (ts.slice(1).every((k, i) => (i % 2 === 0 ? k.t === 'num' || k.t === 'str' : isP(k, ',')))) return ts.length > 1 ? [] : 'all';
  // SELECT pg_advisory_…(int [, int])
  const fn = ts[1];
  if (ts.length >= 5 && fn.t === 'id' && isP(ts[2], '(') && isP(ts[ts.length - 1], ')')) {
    if (fn.v === 'pg_advisory_unlock_all' && ts.length === 4)
      return [{ rel: '#advisory', key: null, rows: null, write: true, assigns: new Set() }];
    if (ADVISORY.test(fn.v)) {
      const args = ts.slice(3, -1);
      const a = intLiteral(args[0]);
      const b = args.length === 3 && isP(args[1], ',') ? intLiteral(args[2]) : null;
      const key = args.length === 1 && a !== null ? `1:${a}` : b !== null && a !== null ? `2:${a}:${b}` : null;
      if (key === null) return [{ rel: '#advisory', key: null, rows: null, write: true, assigns: new Set() }];
      return [{ rel: '#advisory', key: 'k', rows: new Set([key]), write: true, assigns: new Set() }];
    }
  }
  // SELECT cols | * | agg(col|*) FROM t [WHERE key cond] [ORDER BY col [ASC|DESC]] [LIMIT n] [FOR … [NOWAIT|SKIP LOCKED]]
  let i = 1;
  for (;;) {
    if (isP(ts[i], '*') || isName(ts[i])) {
      if (isName(ts[i]) && isP(ts[i + 1], '(')) {
        if (!['count', 'sum', 'min', 'max', 'avg'].includes(ts[i].v)) return 'all';
        if (!(isP(ts[i + 2], '*') || isName(ts[i + 2])) || !isP(ts[i + 3], ')')) return 'all';
        i += 4;
      } else i++;
    } else return 'all';
    if (isP(ts[i], ',')) {
      i++;
      continue;
    }
    break;
  }
  if (!isW(ts[i], 'from') || !isName(ts[i + 1])) return 'all';
  const rel = ts[i + 1].v;
  i += 2;
  let key: string | null = null;
  let rows: Set<string> | null = null;
  if (isW(ts[i], 'where')) {
    const cond = keyCondition(ts, i + 1);
    if (!cond) return 'all';
    ({ key, rows } = cond);
    i = cond.end;
  }
  if (isW(ts[i], 'order') && isW(ts[i + 1], 'by') && isName(ts[i + 2])) {
    i += 3;
    if (isW(ts[i], 'asc') || isW(ts[i], 'desc')) i++;
  }
  if (isW(ts[i], 'limit') && ts[i + 1]?.t === 'num') i += 2;
  let write = false;
  if (isW(ts[i], 'for')) {
    write = true;
    i++;
    if (isW(ts[i], 'update') || isW(ts[i], 'share')) i++;
    else if (isW(ts[i], 'no') && isW(ts[i + 1], 'key') && isW(ts[i + 2], 'update')) i += 3;
    else if (isW(ts[i], 'key') && isW(ts[i + 1], 'share')) i += 2;
    else return 'all';
    if (isW(ts[i], 'nowait')) i++;
    else if (isW(ts[i], 'skip') && isW(ts[i + 1], 'locked')) i += 2;
  }
  if (i !== ts.length) return 'all';
  return [{ rel, key, rows, write, assigns: new Set() }];
}

/** Whether two footprints can interact. */
export function conflicts(a: Footprint, b: Footprint): boolean {
  if (a === 'all' || b === 'all') return true;
  for (const x of a)
    for (const y of b) {
      if (x.rel !== y.rel || (!x.write && !y.write)) continue;
      if (x.rows === null || y.rows === null || x.key !== y.key) return true;
      if ((y.key !== null && x.assigns.has(y.key)) || (x.key !== null && y.assigns.has(x.key))) return true;
      for (const r of x.rows) if (y.rows.has(r)) return true;
    }
  return false;
}

function union(a: Footprint, b: Footprint): Footprint {
  return a === 'all' || b === 'all' ? 'all' : [...a, ...b];
}

/**
 * Each step's footprint, by session and step, or null when the scenario gets no reduction. A
 * transaction end touches everything its session touched before (it releases those locks and
 * publishes those writes).
 */
export function stepFootprints(spec: Spec): Footprint[][] | null {
  if (spec.permutations.length > 0) return null;
  const setupText = [...spec.setup, ...spec.sessions.map((s) => s.setup ?? '')].join('\n');
  if (RISKY.test(setupText)) return null;
  if (spec.sessions.some((s) => s.steps.some((st) => RISKY.test(st.sql)))) return null;
  return spec.sessions.map((s) => {
    let before: Footprint = [];
    return s.steps.map((st) => {
      const stmts = statements(st.sql);
      let fp: Footprint = [];
      if (!stmts || stmts.length === 0) fp = 'all';
      else
        for (const sql of stmts) {
          fp = union(fp, isTransactionEnd(sql) ? union(before, fp) : statementFootprint(sql));
          if (isTransactionEnd(sql) && fp !== 'all') fp = fp.map((x) => ({ ...x, write: true }));
        }
      before = union(before, fp);
      return fp;
    });
  });
}

/**
 * Steps of a run that must stay where they are: the step waited, or something else was printed
 * between it and the next step (a completion, a victim, a cancel). `steps` are the step names in
 * permutation order.
 */
export function pinnedSteps(steps: readonly string[], run: PermutationRun): boolean[] {
  const pinned = steps.map(() => false);
  const first: number[] = [];
  const seen = new Set<string>();
  run.records.forEach((r, i) => {
    if (seen.has(r.event.step)) return;
    seen.add(r.event.step);
    first[steps.indexOf(r.event.step)] = i;
  });
  for (let p = 0; p < steps.length; p++) {
    const at = first[p];
    if (at === undefined || run.records[at].event.outcome === 'waiting') {
      pinned[p] = true;
      continue;
    }
    const next = p + 1 < steps.length ? first[p + 1] : run.records.length;
    if (next === undefined || next !== at + 1) {
      pinned[p] = true;
      // The next step stays where it is too when the tester had to wait for its session before
      // sending it (a record of that session is printed in between: its earlier step ended then,
      // maybe after timers fired during the wait). Otherwise what was printed in between followed
      // step p, which is pinned: whichever step comes after p is sent after the same records.
      if (
        p + 1 < steps.length &&
        (next === undefined || run.records.slice(at + 1, next).some((r) => r.event.session === sessionOf(steps[p + 1], run)))
      )
        pinned[p + 1] = true;
    }
  }
  return pinned;
}

/** The session of a step the run printed. */
function sessionOf(step: string, run: PermutationRun): string | undefined {
  return run.records.find((r) => r.event.step === step)?.event.session;
}

/** Permutation ranks in isolationtester's order (lexicographic in session indexes). */
class Ranker {
  private memo = new Map<string, number>();
  constructor(readonly piles: readonly number[]) {}
  /** Interleavings of piles of these sizes, as a number (Infinity when huge). */
  count(left: readonly number[]): number {
    const k = left.join(',');
    let v = this.memo.get(k);
    if (v === undefined) {
      let f = 1n;
      let n = 0n;
      for (const x of left)
        for (let i = 1n; i <= BigInt(x); i++) {
          n++;
          f = (f * n) / i;
        }
      v = Number(f);
      this.memo.set(k, v);
    }
    return v;
  }
}

/** What exploreReduced reports. */
export interface ReducedProgress {
  /** Outcomes of every interleaving covered so far (index < count), in no particular order. */
  outcomes: InterleavingOutcome[];
  /** Interleavings actually run. */
  ran: number;
}

/**
 * Runs one interleaving by index on lane `lane` (0 … lanes-1: each lane has an engine of its own);
 * `run` absent when it could not (then it covers only itself); null stops the exploration.
 */
export type RunOne = (index: number, lane: number) => Promise<{ outcome: InterleavingOutcome; run?: PermutationRun } | null>;

/** Settings whose timer can end a wait or a session. */
const TIMEOUTS = /\b(lock_timeout|statement_timeout|idle_in_transaction_session_timeout|idle_session_timeout|transaction_timeout)\b/i;

/** Most search nodes spent listing one class; past it the class covers just the interleaving run. */
const CLASS_NODE_BUDGET = 2_000_000;

/**
 * Explores interleavings 0 … count-1 running one per equivalence class. `runOne` returning null
 * stops the exploration (cancelled); the outcomes so far are returned.
 *
 * With `lanes` > 1 that many runs go on at once, each on its own engine (a Worker or thread, so
 * they run in parallel). Lane k takes the first order not yet covered or running from its own
 * k-th of the ranks on (wrapping around): orders next to each other in rank share long prefixes and
 * are mostly of one class, so lanes working far apart seldom run two orders of the same class.
 * When they do, the second run only confirms what the first covered (its outcome is the same),
 * so the verdicts do not depend on the lanes; `ran` may.
 */
export async function exploreReduced(
  spec: Spec,
  count: number,
  runOne: RunOne,
  onProgress?: (p: ReducedProgress) => void,
  lanes = 1,
): Promise<ReducedProgress & { complete: boolean }> {
  const fps = stepFootprints(spec);
  const piles = spec.sessions.map((s) => s.steps.length);
  const ranker = new Ranker(piles);
  const names = spec.sessions.map((s) => s.steps.map((st) => st.name));
  const total = Math.min(count, spec.permutations.length > 0 ? spec.permutations.length : ranker.count(piles));
  const covered = new Uint8Array(total);
  const running = new Uint8Array(total);
  const outcomes: InterleavingOutcome[] = [];
  let ran = 0;
  let stopped = false;
  /** Records the outcome for an interleaving; `seq` (its session indexes) names a class member. */
  const cover = (index: number, o: InterleavingOutcome, seq: readonly number[] | null) => {
    if (covered[index]) return;
    covered[index] = 1;
    if (!seq) return void outcomes.push(o);
    const perm = seq.map(() => '');
    const taken = piles.map(() => 0);
    seq.forEach((s, i) => (perm[i] = names[s][taken[s]++]));
    outcomes.push({ ...o, index, permutation: perm.join(' ') });
  };
  const width = Math.max(1, lanes);
  /** Each lane's cursor: everything before it in its sweep is covered or running. */
  const cursors = Array.from({ length: width }, (_, k) => Math.floor((k * total) / width));
  /** Session sequences of the orders running now, by index (for `likelySame`). */
  const inFlight = new Map<number, number[]>();
  const likelySame = width > 1 && fps ? staticClassTest(fps, ranker) : null;
  // A timeout that can end a wait (not deadlock_timeout: its check finds nothing in a quiet stall)
  // is measured from the wait's start, which a quiet stall's class moves by a poll or two.
  const timeouts = TIMEOUTS.test(
    [...spec.setup, ...spec.sessions.flatMap((s) => [s.setup ?? '', ...s.steps.map((st) => st.sql)])].join('\n'),
  );
  /** Orders looked at past the cursor for one that no running order is likely to cover. */
  const LOOKAHEAD = 256;
  /**
   * The next order for a lane: the first one neither covered nor running from its cursor on,
   * passing over orders whose static class (footprints alone, no waits) holds a running order:
   * that run will probably cover them. -1 when all are covered or running; null when every
   * candidate in reach is probably covered by a running order (the lane waits for one to end).
   */
  const pick = (lane: number): number | null => {
    let first = -1;
    for (let n = 0, i = cursors[lane], looked = 0; n < total; n++, i = i + 1 === total ? 0 : i + 1) {
      if (covered[i] || running[i]) continue;
      if (first < 0) {
        first = i;
        cursors[lane] = i;
      }
      if (!likelySame || inFlight.size === 0) return i;
      const seq = likelySame.unrank(i);
      if (![...inFlight.values()].some((r) => likelySame.same(seq, r))) return i;
      if (++looked >= LOOKAHEAD) break;
    }
    if (first < 0) {
      cursors[lane] = Math.floor((lane * total) / width);
      return -1;
    }
    return null;
  };
  /** Resolved (and replaced) whenever a run ends, for lanes that wait in `pick`. */
  let ended: { promise: Promise<void>; resolve: () => void } = deferred();
  const lane = async (k: number): Promise<void> => {
    while (!stopped) {
      const next = pick(k);
      if (next === null) {
        await ended.promise;
        continue;
      }
      if (next < 0) return;
      running[next] = 1;
      if (likelySame) inFlight.set(next, likelySame.unrank(next));
      let r: Awaited<ReturnType<RunOne>>;
      try {
        r = await runOne(next, k);
      } catch (e) {
        stopped = true;
        throw e;
      } finally {
        running[next] = 0;
        inFlight.delete(next);
        const e = ended;
        ended = deferred();
        e.resolve();
      }
      if (r === null || stopped) {
        stopped = true;
        return;
      }
      ran++;
      const seq = sessionSequence(r.outcome.permutation, names);
      if (!fps || !r.run || !seq) cover(next, r.outcome, null);
      else {
        const steps = r.outcome.permutation.split(' ');
        const stall = r.outcome.kind === 'stalled' ? stallCut(steps, r.run) : null;
        // A stall is decided by the steps up to the one that was due: every continuation stalls too.
        const o = stall ? stalledOutcome(r.outcome, r.run, stall.record) : r.outcome;
        const loose = stall && !timeouts && quietStall(r.run, stall.record) ? waitedSteps(steps, r.run) : null;
        // In a quiet stall only the waits and the due step are pinned: the cancel before the due
        // step follows from the tester waiting for its session, whichever step was sent last.
        const pinned = loose && stall ? loose.map((w, p) => w || p >= stall.position) : pinnedSteps(steps, r.run);
        for (const member of classOf(seq, fps, pinned, ranker, total, stall?.position ?? seq.length - 1, loose))
          cover(member.index, o, member.seq);
      }
      if (!covered[next]) cover(next, r.outcome, null);
      onProgress?.({ outcomes, ran });
    }
  };
  await Promise.all(Array.from({ length: width }, (_, k) => lane(k)));
  return { outcomes, ran, complete: !stopped && covered.every((c) => c === 1) };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Whether two interleavings are of one class by the static footprints alone (every pair of
 * conflicting steps of different sessions in the same order), and the session sequence of an
 * interleaving by its rank. A run's class also pins the steps that waited, so it is a part of
 * this one: this only tells which orders a running order may cover.
 */
function staticClassTest(
  fps: Footprint[][],
  ranker: Ranker,
): { unrank: (index: number) => number[]; same: (x: number[], y: number[]) => boolean } {
  const piles = ranker.piles;
  const offsets: number[] = [];
  let n = 0;
  for (const p of piles) {
    offsets.push(n);
    n += p;
  }
  const pairs: [number, number][] = [];
  for (let a = 0; a < piles.length; a++)
    for (let b = a + 1; b < piles.length; b++)
      for (let i = 0; i < piles[a]; i++)
        for (let j = 0; j < piles[b]; j++) if (conflicts(fps[a][i], fps[b][j])) pairs.push([offsets[a] + i, offsets[b] + j]);
  const positions = (seq: readonly number[]): Int32Array => {
    const pos = new Int32Array(n);
    const taken = piles.map(() => 0);
    seq.forEach((s, p) => (pos[offsets[s] + taken[s]++] = p));
    return pos;
  };
  return {
    unrank(index) {
      const left = [...piles];
      const seq: number[] = [];
      let rank = index;
      while (seq.length < n)
        for (let s = 0; s < left.length; s++) {
          if (!left[s]) continue;
          left[s]--;
          const below = ranker.count(left);
          if (rank < below) {
            seq.push(s);
            break;
          }
          rank -= below;
          left[s]++;
        }
      return seq;
    },
    same(x, y) {
      const px = positions(x);
      const py = positions(y);
      return pairs.every(([u, v]) => px[u] < px[v] === py[u] < py[v]);
    },
  };
}

const STALL = { sqlstate: '57014', message: 'canceling statement due to user request' };

/**
 * Where a stalled run stalled: the first cancel isolationtester sent (a step was due on a session
 * still waiting) and the position of that due step (the last step when the cancel came after all
 * steps were sent). Null when the run shows no such cancel.
 */
function stallCut(steps: readonly string[], run: PermutationRun): { record: number; position: number } | null {
  const record = run.records.findIndex(
    (r) => r.event.outcome === 'error' && r.event.sqlstate === STALL.sqlstate && r.event.message === STALL.message,
  );
  if (record < 0) return null;
  const sent = new Set(run.records.slice(0, record + 1).map((r) => r.event.step));
  // The due step is the first one not yet printed when the cancel was.
  const position = steps.findIndex((s) => !sent.has(s));
  return { record, position: position < 0 ? steps.length - 1 : position };
}

/**
 * Whether nothing happened in a stalled run up to its stall but steps being sent: every record
 * before the cancel is a step that completed at once or began to wait (and never stopped), and
 * no notice arrived. Then no waiter was done and no wait-for cycle ever formed (it would have
 * ended with a printed victim), so where a step that did not wait falls against the waits
 * (which moves the virtual clock by a poll or two) cannot change the stall: the same locks are
 * held and awaited when the tester waits for the due step, and nothing ends that wait but the
 * cancel (exploreReduced keeps this off when a timeout setting could end it).
 */
function quietStall(run: PermutationRun, record: number): boolean {
  return run.records
    .slice(0, record + 1)
    .every(
      (r, i) =>
        !r.notices?.length &&
        (i === record || r.event.outcome === 'waiting' || (r.event.outcome === 'ok' && r.event.completedAfterStep === undefined)),
    );
}

/** Steps whose first record is a wait, by position. */
function waitedSteps(steps: readonly string[], run: PermutationRun): boolean[] {
  return steps.map((s) => run.records.find((r) => r.event.step === s)?.event.outcome === 'waiting');
}

/** A stalled outcome keeps only what happened up to the stall (the same for every continuation). */
function stalledOutcome(o: InterleavingOutcome, run: PermutationRun, record: number): InterleavingOutcome {
  const failures: InterleavingOutcome['failures'] = [];
  const waited: string[] = [];
  for (const r of run.records.slice(0, record + 1)) {
    const e = r.event;
    if (e.outcome === 'error') failures.push({ step: e.step, session: e.session, sqlstate: e.sqlstate ?? '', message: e.message ?? '' });
    if (e.outcome === 'waiting' && !waited.includes(e.session)) waited.push(e.session);
  }
  return {
    ...o,
    kind: 'stalled',
    failures,
    waited,
    victims: failures.filter((f) => f.sqlstate === '40P01').map((f) => f.session),
    data: '',
    dataHash: '',
  };
}

/** Session index per position, from a permutation's step names. */
function sessionSequence(permutation: string, names: string[][]): number[] | null {
  const where = new Map<string, number>();
  names.forEach((ns, s) => ns.forEach((n) => where.set(n, s)));
  const seq = permutation.split(' ').map((n) => where.get(n));
  return seq.every((s) => s !== undefined) ? (seq as number[]) : null;
}

/**
 * Every interleaving (index < limit) that orders each dependent pair of `seq` as `seq` does:
 * the linearizations of its dependence order, listed by search with their ranks. Positions after
 * `cut` are free: they follow the first cut+1 steps (as a class) in any order.
 */
function* classOf(
  seq: readonly number[],
  fps: Footprint[][],
  pinned: readonly boolean[],
  ranker: Ranker,
  limit: number,
  cut: number,
  waited: readonly boolean[] | null = null,
): Generator<{ index: number; seq: number[] }> {
  const n = seq.length;
  const piles = ranker.piles;
  // Positions → (session, step); predecessors of each position that must stay before it.
  const taken = piles.map(() => 0);
  const step = seq.map((s) => taken[s]++);
  const preds: number[][] = seq.map(() => []);
  for (let q = 0; q < n; q++)
    for (let p = 0; p < q; p++) {
      const same = seq[p] === seq[q];
      if (q > cut) {
        if (same || p <= cut) preds[q].push(p);
      } else if (same || conflicts(fps[seq[p]][step[p]], fps[seq[q]][step[q]])) preds[q].push(p);
      else if (waited && pinned[p] && pinned[q]) preds[q].push(p);
      else if (waited ? (pinned[p] && !waited[p]) || (pinned[q] && !waited[q]) : pinned[p] || pinned[q]) preds[q].push(p);
    }
  // Position of session s's k-th step in seq.
  const posOf = piles.map(() => [] as number[]);
  seq.forEach((s, p) => posOf[s].push(p));
  const placed = new Uint8Array(n);
  const next = piles.map(() => 0);
  const out: number[] = [];
  let nodes = 0;
  let budgetHit = false;
  function* walk(rank: number): Generator<{ index: number; seq: number[] }> {
    if (out.length === n) {
      yield { index: rank, seq: out.slice() };
      return;
    }
    let offset = 0;
    for (let s = 0; s < piles.length; s++) {
      if (next[s] === piles[s]) continue;
      next[s]++;
      const below = ranker.count(piles.map((x, i) => x - next[i]));
      next[s]--;
      if (rank + offset >= limit) return;
      const p = posOf[s][next[s]];
      if (preds[p].every((x) => placed[x])) {
        if (++nodes > CLASS_NODE_BUDGET) {
          budgetHit = true;
          return;
        }
        placed[p] = 1;
        next[s]++;
        out.push(s);
        yield* walk(rank + offset);
        out.pop();
        next[s]--;
        placed[p] = 0;
        if (budgetHit) return;
      }
      offset += below;
    }
  }
  yield* walk(0);
}

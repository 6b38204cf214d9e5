/**
 * Exploring interleavings: run a range of a spec's permutations (every interleaving when it lists
 * none, isolationtester rule) over any SessionDriver, classify each run, and summarize: clean,
 * deadlocked (and who was the victim), failed with which SQLSTATE, and how many distinct final
 * data states. Pure apart from the driver; results are plain JSON data (they cross the worker).
 */
import { IsolationError, runPermutation, type PermutationRun, type StepRecord } from './isolation';
import { countPermutations, formatPermutation, permutationAt } from './permutations';
import type { Permutation, SessionDriver, Spec } from './types';

/** SQLSTATE of "deadlock detected". */
export const DEADLOCK_SQLSTATE = '40P01';
/** Pseudo-SQLSTATE for a permutation isolationtester itself gives up on (mutually-blocking markers). */
export const ISOLATION_FAILURE = 'isolation';
/**
 * The cancel isolationtester sends when a session's next step is due while its previous step
 * still waits and nothing else can run (max_step_wait). Such an interleaving is not one a real
 * client could produce: a session cannot send a statement while it waits.
 */
const STALL_SQLSTATE = '57014';
const STALL_MESSAGE = 'canceling statement due to user request';

/** One table's committed contents after a permutation, rows in a canonical order. */
export interface FinalTable {
  name: string;
  columns: string[];
  rows: (string | null)[][];
}

/** One step that ended in an error. */
export interface StepFailure {
  step: string;
  session: string;
  sqlstate: string;
  message: string;
}

/** What one permutation did. */
export interface InterleavingOutcome {
  /** 0-based index in isolationtester's order (or in the spec's explicit permutations). */
  index: number;
  /** Step names separated by spaces. */
  permutation: string;
  /**
   * 'stalled': a step was due on a session still waiting (not a valid interleaving);
   * 'stopped': it ran longer than the explorer allows and was stopped (no result).
   */
  kind: 'clean' | 'deadlock' | 'error' | 'stalled' | 'stopped';
  /** For 'stopped': how long it ran, ms. */
  stoppedAfterMs?: number;
  /** Sessions that got 40P01, in order. */
  victims: string[];
  /** Every failed step (deadlocks included). */
  failures: StepFailure[];
  /** Sessions that had a step waiting on a lock at some point, in first-wait order. */
  waited: string[];
  /** The invariant query's verdict over the final data (true: it returned true); absent when none was asked. */
  invariant?: boolean;
  /** FNV-1a of the canonical final data text; equal data, equal hash. */
  dataHash: string;
  /** The canonical final data text (what was hashed). */
  data: string;
}

/** A batch answer: outcomes of permutations `from` … `from + outcomes.length - 1`. */
export interface ExploreBatch {
  total: number;
  from: number;
  outcomes: InterleavingOutcome[];
  /** Full runs, only when asked for (transcripts). */
  runs?: PermutationRun[];
}

/** The permutation at `index`: the spec's own list when it has one, else the interleaving. */
export function permutationOf(spec: Spec, index: number): Permutation {
  return spec.permutations.length > 0 ? spec.permutations[index] : permutationAt(spec, index);
}

/** Rows sorted by their text so equal data prints equally whatever the physical order. */
export function canonicalTables(tables: readonly FinalTable[]): FinalTable[] {
  const key = (row: (string | null)[]) => JSON.stringify(row);
  return [...tables]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) => ({
      name: t.name,
      columns: [...t.columns],
      rows: [...t.rows].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0)),
    }));
}

/** A readable, deterministic text of the final data: `table(col, …)` then one line per row. */
export function dataText(tables: readonly FinalTable[]): string {
  return canonicalTables(tables)
    .map((t) =>
      [`${t.name}(${t.columns.join(', ')})`, ...t.rows.map((r) => `  ${r.map((v) => (v === null ? 'NULL' : v)).join(' | ')}`)].join('\n'),
    )
    .join('\n');
}

/** 32-bit FNV-1a over UTF-16 code units, as 8 hex digits (stable, not cryptographic). */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** Classifies one finished (or failed) run. */
export function classify(
  index: number,
  run: PermutationRun | { permutation: string; failure: string },
  tables: readonly FinalTable[],
  invariant?: boolean,
): InterleavingOutcome {
  const failures: StepFailure[] = [];
  const waited: string[] = [];
  if ('records' in run) {
    for (const r of run.records) {
      const e = r.event;
      if (e.outcome === 'error') failures.push({ step: e.step, session: e.session, sqlstate: e.sqlstate ?? '', message: e.message ?? '' });
      if (e.outcome === 'waiting' && !waited.includes(e.session)) waited.push(e.session);
    }
  } else {
    failures.push({ step: '', session: '', sqlstate: ISOLATION_FAILURE, message: run.failure });
  }
  const victims = failures.filter((f) => f.sqlstate === DEADLOCK_SQLSTATE).map((f) => f.session);
  const stalled = failures.some(isStall);
  const kind = stalled ? 'stalled' : victims.length > 0 ? 'deadlock' : failures.length > 0 ? 'error' : 'clean';
  const data = dataText(tables);
  return {
    index,
    permutation: run.permutation,
    kind,
    victims,
    failures,
    waited,
    dataHash: fnv1a(data),
    data,
    ...(invariant !== undefined ? { invariant } : {}),
  };
}

/** Whether isolationtester's max_step_wait cancel has been printed (the permutation is stalled). */
export function hasStalled(records: readonly StepRecord[]): boolean {
  return records.some((r) => r.event.outcome === 'error' && r.event.sqlstate === STALL_SQLSTATE && r.event.message === STALL_MESSAGE);
}

/** True for isolationtester's max_step_wait cancel (see STALL_MESSAGE). */
export function isStall(f: StepFailure): boolean {
  return f.sqlstate === STALL_SQLSTATE && f.message === STALL_MESSAGE;
}

/** Reads the committed data at the end of a permutation, before teardown. */
export type FinalDataProbe = () => Promise<FinalTable[]>;

/** Runs an invariant query over the final data (before teardown): true when it returned true. */
export type InvariantProbe = (sql: string) => Promise<boolean>;

/** The verdict of an invariant query's result: its first value is PostgreSQL's `t`. */
export function invariantHolds(rows: readonly (readonly (string | null)[])[] | undefined): boolean {
  return rows?.[0]?.[0] === 't';
}

/** Runs permutations `from` … `from + count - 1` (clamped) and classifies each. */
export async function exploreBatch(
  spec: Spec,
  driver: SessionDriver,
  probe: FinalDataProbe,
  from: number,
  count: number,
  opts: {
    withRuns?: boolean;
    invariant?: { sql: string; check: InvariantProbe };
    /**
     * End a run at its first stall instead of sending its remaining steps: its kind is decided
     * (every continuation stalls) and the partial-order reduction reads nothing after the cancel
     * (src/scenario/por.ts). Such an outcome has no final data. Only for permutations without
     * blocker annotations, which are the only ones where a later step could turn the verdict
     * into an isolationtester failure.
     */
    stopAtStall?: boolean;
  } = {},
): Promise<ExploreBatch> {
  const total = Number(countPermutations(spec));
  const end = Math.min(total, from + Math.max(0, count));
  let tables: FinalTable[] = [];
  let verdict: boolean | undefined;
  let cut = false;
  const inv = opts.invariant;
  // Capture the data just before the spec's teardown (which usually drops the tables).
  const probing: SessionDriver = {
    begin: (s) => driver.begin(s),
    send: (session, sql) => driver.send(session, sql),
    poll: (session, wait) => driver.poll(session, wait),
    normalizeDetail: (d) => driver.normalizeDetail(d),
    end: async (s) => {
      if (cut) return driver.end(s);
      tables = await probe().catch(() => []);
      // A query that fails (a broken invariant or a dropped table) counts as "does not hold".
      if (inv) verdict = await inv.check(inv.sql).catch(() => false);
      return driver.end(s);
    },
  };
  const batch: ExploreBatch = { total, from, outcomes: [] };
  if (opts.withRuns) batch.runs = [];
  for (let i = from; i < end; i++) {
    const perm = permutationOf(spec, i);
    tables = [];
    verdict = inv ? false : undefined;
    cut = false;
    const stopBefore =
      opts.stopAtStall && perm.steps.every((s) => s.blockers.length === 0)
        ? (records: readonly StepRecord[]) => (cut = hasStalled(records))
        : undefined;
    try {
      const run = await runPermutation(spec, perm, probing, stopBefore ? { stopBefore } : {});
      const o = classify(i, run, tables, run.cutShort ? undefined : verdict);
      batch.outcomes.push(run.cutShort ? { ...o, data: '', dataHash: '' } : o);
      batch.runs?.push(run);
    } catch (e) {
      if (!(e instanceof IsolationError)) throw e;
      batch.outcomes.push(classify(i, { permutation: formatPermutation(perm), failure: e.message }, tables, verdict));
    }
  }
  return batch;
}

/** Counts for the summary panel. */
export interface ExploreSummary {
  total: number;
  clean: number;
  /** Valid permutations with at least one 40P01. */
  deadlocks: number;
  /** Valid permutations with an error, none of them 40P01. */
  errors: number;
  /** Interleavings a real client could not produce (see InterleavingOutcome.kind). */
  stalled: number;
  /** Interleavings stopped for running too long (no result). */
  stopped: number;
  /** How often each session was the deadlock victim. */
  victims: { session: string; count: number }[];
  /** Valid permutations per SQLSTATE (other than 40P01), most frequent first. */
  sqlstates: { sqlstate: string; count: number; message: string }[];
  /** Distinct final data states of valid permutations, most frequent first, with the first to reach each. */
  finalStates: { hash: string; count: number; data: string; firstIndex: number }[];
}

/** Summarizes outcomes (any order). */
export function summarize(outcomes: readonly InterleavingOutcome[]): ExploreSummary {
  const victims = new Map<string, number>();
  const states = new Map<string, { count: number; message: string }>();
  const finals = new Map<string, { hash: string; count: number; data: string; firstIndex: number }>();
  const count = { clean: 0, deadlock: 0, error: 0, stalled: 0, stopped: 0 };
  for (const o of [...outcomes].sort((a, b) => a.index - b.index)) {
    count[o.kind]++;
    if (o.kind === 'stalled' || o.kind === 'stopped') continue;
    for (const v of new Set(o.victims)) victims.set(v, (victims.get(v) ?? 0) + 1);
    const other = o.failures.filter((f) => f.sqlstate !== DEADLOCK_SQLSTATE);
    for (const code of new Set(other.map((f) => f.sqlstate))) {
      const entry = states.get(code) ?? { count: 0, message: other.find((f) => f.sqlstate === code)!.message };
      entry.count++;
      states.set(code, entry);
    }
    const f = finals.get(o.dataHash) ?? { hash: o.dataHash, count: 0, data: o.data, firstIndex: o.index };
    f.count++;
    finals.set(o.dataHash, f);
  }
  const byCount = <T extends { count: number }>(a: T, b: T) => b.count - a.count;
  return {
    total: outcomes.length,
    clean: count.clean,
    deadlocks: count.deadlock,
    errors: count.error,
    stalled: count.stalled,
    stopped: count.stopped,
    victims: [...victims].map(([session, count]) => ({ session, count })).sort(byCount),
    sqlstates: [...states].map(([sqlstate, v]) => ({ sqlstate, ...v })).sort(byCount),
    finalStates: [...finals.values()].sort(byCount),
  };
}

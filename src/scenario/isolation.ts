/**
 * PostgreSQL's isolationtester (src/test/isolation/isolationtester.c, PG 14+), ported to run over
 * any SessionDriver: run_testspec, run_permutation, try_complete_steps, try_complete_step,
 * step_has_blocker, and the text output (printResultSet = PQprint with header, align, "|").
 * Pure with respect to time and I/O: every wait goes through the driver.
 */
import type {
  ApproximationNote,
  PermutationStep,
  Permutation,
  PermutationTrace,
  PgMessage,
  SessionDriver,
  SetupOutput,
  Spec,
  StatementResult,
  StepResult,
  TraceEvent,
} from './types';
import { countPermutations, formatPermutation, permutationAt, permutationsOf } from './permutations';

/** A notice and the session whose connection received it (printed as "s1: NOTICE:  …"). */
export interface SessionNotice {
  session: string;
  notice: PgMessage;
}

/** One printed step line, in print order: "step x: SQL", "… <waiting ...>" or "<... completed>". */
export interface StepRecord {
  event: TraceEvent;
  sql: string;
  /** Present on completions (outcome 'ok' or 'error'). */
  result?: StepResult;
  /** Notices that arrived since the previous printed line; isolationtester prints them first. */
  notices?: SessionNotice[];
}

/** Everything one permutation printed. */
export interface PermutationRun {
  /** Step names separated by spaces, as in "starting permutation: …". */
  permutation: string;
  setup: SetupOutput[];
  records: StepRecord[];
  teardown: SetupOutput[];
  /** Notices seen after the last printed step line (printed before teardown output). */
  trailingNotices?: SessionNotice[];
  /** The server log lines of the permutation, from drivers that can read them. */
  serverLog?: string[];
  /** The simulator's approximation notes (docs/engine.md), when it said any. */
  approximations?: ApproximationNote[];
  /** The run stopped before its next step because `stopBefore` said so (later steps were not sent). */
  cutShort?: boolean;
  /** The driver failed during the permutation (the simulator's engine error): what it said. */
  failed?: string;
}

/** Options of runPermutation. */
export interface PermutationOptions {
  /**
   * Asked before each step is sent, with what has been printed so far: true ends the permutation
   * there (no further step is sent; teardown still runs). The explorer stops a run at its first
   * stall, whose verdict no later step can change.
   */
  stopBefore?: (records: readonly StepRecord[]) => boolean;
}

export interface RunOptions {
  /** 1-based index of the only permutation to run. */
  permutation?: number;
}

const STEP_NONBLOCK = 1;
const STEP_RETRY = 2;

interface StepInfo {
  name: string;
  session: string;
  sql: string;
}

/** A launched step (isolationtester: IsoConnInfo.active_step plus its PGresult queue). */
interface ActiveStep {
  pstep: PermutationStep;
  step: StepInfo;
  /** Result already collected from the driver but not yet reported because of a blocker. */
  result?: StepResult;
  /** How many of this step's notices have been seen (printed and counted). */
  noticesSeen: number;
  /** For `(other notices N)` blockers, by blocker index: the session notice total to reach. */
  targetNotices: Map<number, number>;
}

/** Thrown for the conditions where isolationtester prints to stderr and exits. */
export class IsolationError extends Error {
  override name = 'IsolationError';
}

/** Checks step names and blocker references like check_testspec; returns the step lookup. */
export function checkSpec(spec: Spec): Map<string, StepInfo> {
  const steps = new Map<string, StepInfo>();
  for (const session of spec.sessions) {
    for (const step of session.steps) {
      if (steps.has(step.name)) throw new IsolationError(`duplicate step name: ${step.name}`);
      steps.set(step.name, { name: step.name, session: session.name, sql: step.sql });
    }
  }
  for (const perm of spec.permutations) checkPermutation(perm, steps);
  return steps;
}

function checkPermutation(perm: Permutation, steps: Map<string, StepInfo>): void {
  for (const pstep of perm.steps) {
    if (!steps.has(pstep.step)) throw new IsolationError(`undefined step "${pstep.step}" specified in permutation`);
  }
  for (const pstep of perm.steps) {
    for (const blocker of pstep.blockers) {
      if (blocker.kind === 'star') continue;
      if (!perm.steps.some((p) => p.step === blocker.step)) {
        throw new IsolationError(`undefined blocking step "${blocker.step}" referenced in permutation step "${pstep.step}"`);
      }
      if (steps.get(blocker.step)!.session === steps.get(pstep.step)!.session) {
        throw new IsolationError(`permutation step "${pstep.step}" cannot block on its own session`);
      }
    }
  }
}

/** Plays one permutation like isolationtester's run_permutation. */
export async function runPermutation(
  spec: Spec,
  perm: Permutation,
  driver: SessionDriver,
  opts: PermutationOptions = {},
): Promise<PermutationRun> {
  const steps = checkSpec(spec);
  checkPermutation(perm, steps);
  const run: PermutationRun = {
    permutation: formatPermutation(perm),
    setup: [],
    records: [],
    teardown: [],
  };
  const active = new Map<string, ActiveStep>();
  const totalNotices = new Map<string, number>();
  let pendingNotices: SessionNotice[] = [];
  let anyNewNotice = false;
  let lastSent = '';

  const sawNotices = (session: string, notices: PgMessage[]): void => {
    if (notices.length === 0) return;
    totalNotices.set(session, (totalNotices.get(session) ?? 0) + notices.length);
    anyNewNotice = true;
    for (const notice of notices) pendingNotices.push({ session, notice });
  };
  const print = (record: StepRecord): void => {
    if (pendingNotices.length > 0) record.notices = pendingNotices;
    pendingNotices = [];
    run.records.push(record);
  };
  const printWaiting = (a: ActiveStep): void =>
    print({ event: { step: a.step.name, session: a.step.session, outcome: 'waiting' }, sql: a.step.sql });

  /** step_has_blocker */
  const hasBlocker = (a: ActiveStep): boolean =>
    a.pstep.blockers.some((blocker, i) => {
      if (blocker.kind === 'star') return false;
      const other = steps.get(blocker.step)!.session;
      if (blocker.notices !== undefined) return (totalNotices.get(other) ?? 0) < a.targetNotices.get(i)!;
      return active.get(other)?.step.name === blocker.step;
    });

  /** try_complete_step: true when the step is not (yet) reported complete. */
  const tryComplete = async (a: ActiveStep, flags: number): Promise<boolean> => {
    if (!(flags & STEP_RETRY) && a.pstep.blockers.some((b) => b.kind === 'star')) {
      printWaiting(a);
      return true;
    }
    if (!a.result) {
      const polled = await driver.poll(a.step.session, !(flags & STEP_NONBLOCK));
      if (polled.status === 'blocked') {
        const fresh = polled.notices ?? [];
        a.noticesSeen += fresh.length;
        sawNotices(a.step.session, fresh);
        if (!(flags & STEP_RETRY)) printWaiting(a);
        return true;
      }
      a.result = polled.result;
      sawNotices(a.step.session, polled.result.notices.slice(a.noticesSeen));
      a.noticesSeen = polled.result.notices.length;
    }
    if (hasBlocker(a)) {
      if (!(flags & STEP_RETRY)) printWaiting(a);
      return true;
    }
    print(completionRecord(a, a.result, !!(flags & STEP_RETRY), lastSent, driver));
    active.delete(a.step.session);
    return false;
  };

  /** try_complete_steps: returns the steps still waiting, in their original order. */
  const tryCompleteSteps = async (waiting: ActiveStep[], flags: number): Promise<ActiveStep[]> => {
    let haveBlocker: boolean;
    let oldCount: number;
    do {
      anyNewNotice = false;
      oldCount = waiting.length;
      haveBlocker = false;
      const still: ActiveStep[] = [];
      for (const a of waiting) {
        if (await tryComplete(a, flags)) {
          if (a.pstep.blockers.length > 0) haveBlocker = true;
          still.push(a);
        }
      }
      waiting = still;
    } while (haveBlocker && (waiting.length < oldCount || anyNewNotice));
    return waiting;
  };

  const setup = await driver.begin(spec);
  if (setup) run.setup = setup;
  try {
    let waiting: ActiveStep[] = [];
    for (const pstep of perm.steps) {
      const step = steps.get(pstep.step)!;
      // The session is still busy with an earlier step: wait for it, polling the others meanwhile.
      while (active.has(step.session)) {
        const old = active.get(step.session)!;
        const before = progressMark(waiting, totalNotices);
        if (!(await tryComplete(old, STEP_RETRY))) waiting = waiting.filter((w) => w !== old);
        waiting = await tryCompleteSteps(waiting, STEP_NONBLOCK | STEP_RETRY);
        // isolationtester spins until its 2 * max_step_wait timeout here; nothing can change.
        if (active.has(step.session) && progressMark(waiting, totalNotices) === before) {
          throw new IsolationError(`step ${old.step.name} cannot complete: blocked by its annotation`);
        }
      }
      if (opts.stopBefore?.(run.records)) {
        run.cutShort = true;
        break;
      }
      await driver.send(step.session, step.sql);
      lastSent = step.name;
      const a: ActiveStep = { pstep, step, noticesSeen: 0, targetNotices: new Map() };
      active.set(step.session, a);
      pstep.blockers.forEach((blocker, i) => {
        if (blocker.kind === 'step' && blocker.notices !== undefined) {
          const other = steps.get(blocker.step)!.session;
          a.targetNotices.set(i, blocker.notices + (totalNotices.get(other) ?? 0));
        }
      });
      const mustWait = await tryComplete(a, STEP_NONBLOCK);
      waiting = await tryCompleteSteps(waiting, STEP_NONBLOCK | STEP_RETRY);
      if (mustWait) waiting.push(a);
    }
    if (!run.cutShort) waiting = await tryCompleteSteps(waiting, STEP_RETRY);
    if (waiting.length > 0 && !run.cutShort) {
      throw new IsolationError('failed to complete permutation due to mutually-blocking steps');
    }
  } finally {
    if (pendingNotices.length > 0) run.trailingNotices = pendingNotices;
    const teardown = await driver.end(spec);
    if (teardown) run.teardown = teardown;
    const log = driver.serverLog?.();
    if (log) run.serverLog = log;
    const notes = driver.approximations?.();
    if (notes?.length) run.approximations = notes;
  }
  return run;
}

function progressMark(waiting: ActiveStep[], totalNotices: Map<string, number>): string {
  return `${waiting.length}/${[...totalNotices.values()].reduce((x, y) => x + y, 0)}`;
}

function completionRecord(a: ActiveStep, result: StepResult, afterWait: boolean, lastSent: string, driver: SessionDriver): StepRecord {
  const event: TraceEvent = {
    step: a.step.name,
    session: a.step.session,
    outcome: result.error ? 'error' : 'ok',
  };
  if (result.error) {
    event.sqlstate = result.error.sqlstate;
    event.message = result.error.message;
    if (result.error.detail !== undefined) event.detail = driver.normalizeDetail(result.error.detail);
    if (result.error.context !== undefined) event.context = driver.normalizeDetail(result.error.context);
  }
  if (result.results.length > 0) event.commands = result.results.map((r) => r.command);
  const lastSet = [...result.results].reverse().find(hasColumns);
  if (lastSet) {
    event.columns = lastSet.columns;
    event.rows = lastSet.rows ?? [];
  }
  if (afterWait) event.completedAfterStep = lastSent;
  return { event, sql: a.step.sql, result };
}

function hasColumns(r: StatementResult): boolean {
  return (r.columns?.length ?? 0) > 0;
}

/** Plays the spec's permutations (all, or the one `opts.permutation` names, 1-based). */
export async function runSpec(spec: Spec, driver: SessionDriver, opts: RunOptions = {}): Promise<PermutationRun[]> {
  checkSpec(spec);
  let perms: Permutation[];
  if (opts.permutation === undefined) {
    perms = permutationsOf(spec);
  } else {
    const count = countPermutations(spec);
    const n = opts.permutation;
    if (!Number.isInteger(n) || n < 1 || BigInt(n) > count) {
      throw new IsolationError(`no permutation ${n}: the spec has ${count}`);
    }
    perms = [spec.permutations.length > 0 ? spec.permutations[n - 1] : permutationAt(spec, n - 1)];
  }
  // A spec's own mistakes (an undefined step or blocker) end the run before anything is sent.
  const steps = checkSpec(spec);
  for (const perm of perms) checkPermutation(perm, steps);
  const runs: PermutationRun[] = [];
  for (const perm of perms)
    try {
      runs.push(await runPermutation(spec, perm, driver));
    } catch (e) {
      // What fails while a permutation runs (the simulator's engine error, a step its annotation
      // keeps from completing) fails that permutation alone: the next one starts afresh (begin
      // resets the simulator's PGlite), so one failure does not hide the others.
      runs.push({ permutation: formatPermutation(perm), setup: [], records: [], teardown: [], failed: (e as Error).message ?? String(e) });
    }
  return runs;
}

/** The JSON trace of runs: one TraceEvent per printed step line. */
export function toTraces(runs: PermutationRun[]): PermutationTrace[] {
  const texts = (ns: SessionNotice[]) => ns.map((n) => formatNotice(n).trimEnd());
  return runs.map((run) => ({
    permutation: run.permutation,
    events: run.records.map((r) => ({ ...r.event, ...(r.notices?.length ? { notices: texts(r.notices) } : {}) })),
    ...(run.trailingNotices?.length ? { trailingNotices: texts(run.trailingNotices) } : {}),
    ...(run.serverLog ? { serverLog: run.serverLog } : {}),
    ...(run.failed !== undefined ? { failed: run.failed } : {}),
    ...(run.approximations ? { approximations: run.approximations } : {}),
  }));
}

/** isolationtester's stdout for the runs (as in src/test/isolation/expected/*.out). */
export function formatText(spec: Spec, runs: PermutationRun[]): string {
  let out = `Parsed test spec with ${spec.sessions.length} sessions\n`;
  for (const run of runs) {
    out += `\nstarting permutation: ${run.permutation}\n`;
    if (run.failed !== undefined) out += `failed: ${run.failed}\n`;
    for (const s of run.setup) out += formatSetupOutput(s);
    for (const record of run.records) {
      for (const n of record.notices ?? []) out += formatNotice(n);
      const { event } = record;
      if (event.outcome === 'waiting') {
        out += `step ${event.step}: ${record.sql} <waiting ...>\n`;
        continue;
      }
      out += event.completedAfterStep !== undefined ? `step ${event.step}: <... completed>\n` : `step ${event.step}: ${record.sql}\n`;
      if (record.result) out += formatStepResult(record.result);
    }
    for (const n of run.trailingNotices ?? []) out += formatNotice(n);
    for (const s of run.teardown) out += formatSetupOutput(s);
  }
  return out;
}

function formatSetupOutput(s: SetupOutput): string {
  let out = '';
  if (s.session !== undefined) for (const notice of s.result.notices) out += formatNotice({ session: s.session, notice });
  const last = s.result.results[s.result.results.length - 1];
  if (!s.result.error && last && hasColumns(last)) out += printResultSet(last);
  return out;
}

/** The PQgetResult loop of try_complete_step: every result set, then the error's primary message. */
function formatStepResult(result: StepResult): string {
  let out = '';
  for (const r of result.results) if (hasColumns(r)) out += printResultSet(r);
  if (result.error) out += `${result.error.severity}:  ${result.error.message}\n`;
  return out;
}

/** libpq's default-verbosity notice text, prefixed by the session name (isotesterNoticeProcessor). */
export function formatNotice({ session, notice }: SessionNotice): string {
  let out = `${session}: ${notice.severity}:  ${notice.message}\n`;
  if (notice.detail !== undefined) out += `DETAIL:  ${notice.detail}\n`;
  if (notice.hint !== undefined) out += `HINT:  ${notice.hint}\n`;
  return out;
}

const byteLength = (s: string): number => new TextEncoder().encode(s).length;

/** PQprint with header, align and fieldSep "|" (libpq fe-print.c). Widths count bytes, as libpq does. */
export function printResultSet(r: StatementResult): string {
  const columns = r.columns ?? [];
  const rows = r.rows ?? [];
  if (columns.length === 0) return '';
  const width = columns.map((c) => byteLength(c));
  const notNum = columns.map(() => false);
  for (const row of rows) {
    row.forEach((v, j) => {
      if (v === null || v === '') return;
      if (!notNum[j]) notNum[j] = !looksNumeric(v);
      width[j] = Math.max(width[j], byteLength(v));
    });
  }
  const pad = (s: string, j: number): string => {
    const fill = ' '.repeat(Math.max(0, width[j] - byteLength(s)));
    return notNum[j] ? s + fill : fill + s;
  };
  let out = columns.map((c, j) => pad(c, j)).join('|') + '\n';
  out += width.map((w) => '-'.repeat(w)).join('+') + '\n';
  for (const row of rows) out += columns.map((_, j) => pad(row[j] ?? '', j)).join('|') + '\n';
  out += `(${rows.length} row${rows.length === 1 ? '' : 's'})\n\n`;
  return out;
}

/** fe-print.c do_field's numeric test: digits . E e space -, not starting with E/e, ending in a digit. */
function looksNumeric(v: string): boolean {
  if (!/^[0-9.Ee -]*$/.test(v)) return false;
  if (v[0] === 'E' || v[0] === 'e') return false;
  return /[0-9]$/.test(v);
}

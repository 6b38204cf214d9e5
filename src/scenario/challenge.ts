/**
 * Challenges (lessons/challenges/*.yaml): "break it" (the learner picks the interleaving and wins
 * when the goal happens) and "fix it" (the learner edits the steps' SQL and wins when every
 * interleaving avoids the failure and keeps the data invariant). The content is data validated
 * here; the verdicts are computed from the engine's outcomes (InterleavingOutcome), never from a
 * stored sequence. Pure: no DOM, no engine.
 */
import { parse } from 'yaml';
import { isStall, type InterleavingOutcome } from './explore';
import { nameProblem, sqlBlockProblem, writeSpec } from './spec';
import type { Localized } from './lesson';
import type { Spec } from './types';

export const CHALLENGE_LEVELS = ['beginner', 'intermediate', 'senior'] as const;
export type ChallengeLevel = (typeof CHALLENGE_LEVELS)[number];
export type ChallengeKind = 'break' | 'fix';

/** One outcome the goal (break) or the failure (fix) is made of. */
export type Condition =
  /** Some session got 40P01; with `victim`, that session was among the victims. */
  | { kind: 'deadlock'; victim?: string }
  /** A step failed with this SQLSTATE (in `session`, when given). */
  | { kind: 'error'; sqlstate: string; session?: string }
  /** The challenge's invariant query returned something other than true (complete orders only). */
  | { kind: 'invariant-broken' }
  /** Every listed session had a step waiting on a lock. */
  | { kind: 'waited'; sessions: string[] };

export interface ChallengeStep {
  name: string;
  sql: string;
}

export interface ChallengeSession {
  name: string;
  /** The role shown next to the name ("transfer 1 → 2"). */
  label: Localized;
  steps: ChallengeStep[];
}

export interface Challenge {
  id: string;
  kind: ChallengeKind;
  level: ChallengeLevel;
  /** Position in the list (ascending). */
  order: number;
  title: Localized;
  /** The situation, shown first. */
  story: Localized;
  /** What winning means, in words (the machine-checked form is `goal` / `failure`). */
  goalText: Localized;
  hint: Localized;
  setup: string[];
  teardown?: string;
  sessions: ChallengeSession[];
  /** A query over the final data that returns true when the data is right. */
  invariant?: string;
  /** Break: every condition must hold. */
  goal: Condition[];
  /** Fix: an order fails when any condition holds (besides errors not in allowErrors and a broken invariant). */
  failure: Condition[];
  /** Fix: SQLSTATEs an order may end with and still pass (e.g. 55P03 after NOWAIT). */
  allowErrors: string[];
  solution: {
    explanation: Localized;
    /** Break: a winning order of step names. */
    order?: string[];
    /** Fix: the model SQL of the steps it changes, by step name. */
    steps?: Record<string, string>;
  };
}

/** One problem of a challenge file: where (a dotted path) and what. */
export interface ChallengeIssue {
  path: string;
  message: string;
}

/** A challenge file that does not validate; the message lists every problem. */
export class ChallengeError extends Error {
  override name = 'ChallengeError';
  constructor(
    readonly file: string,
    readonly issues: ChallengeIssue[],
  ) {
    super(`${file}: ${issues.length} problem(s)\n${issues.map((i) => `  ${i.path || '(top)'}: ${i.message}`).join('\n')}`);
  }
}

type Rec = Record<string, unknown>;
const isRec = (x: unknown): x is Rec => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Parses and validates one challenge file; throws ChallengeError naming every problem. */
export function parseChallenge(text: string, file = 'challenge.yaml'): Challenge {
  const issues: ChallengeIssue[] = [];
  const bad = (path: string, message: string) => issues.push({ path, message });
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new ChallengeError(file, [{ path: '', message: `not valid YAML: ${e instanceof Error ? e.message : String(e)}` }]);
  }
  if (!isRec(doc)) throw new ChallengeError(file, [{ path: '', message: 'expected a mapping' }]);
  const known = [
    'id',
    'kind',
    'level',
    'order',
    'title',
    'story',
    'goalText',
    'hint',
    'setup',
    'teardown',
    'sessions',
    'invariant',
    'goal',
    'failure',
    'allowErrors',
    'solution',
  ];
  for (const k of Object.keys(doc)) if (!known.includes(k)) bad(k, `unknown field (known: ${known.join(', ')})`);

  const str = (v: unknown, path: string): string => {
    if (typeof v === 'string' && v.trim() !== '') return v;
    bad(path, 'expected a non-empty string');
    return '';
  };
  const sql = (v: unknown, path: string): string => {
    const s = str(v, path);
    const p = s && sqlBlockProblem(s);
    if (p) bad(path, p);
    return s;
  };
  const loc = (v: unknown, path: string): Localized => {
    if (!isRec(v)) {
      bad(path, 'expected { en: …, ru: … }');
      return { en: '', ru: '' };
    }
    return { en: str(v.en, `${path}.en`), ru: str(v.ru, `${path}.ru`) };
  };

  const id = str(doc.id, 'id');
  if (id && !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id)) bad('id', 'use lowercase letters, digits and dashes');
  const kind = doc.kind === 'break' || doc.kind === 'fix' ? doc.kind : (bad('kind', 'expected "break" or "fix"'), 'break');
  const level = CHALLENGE_LEVELS.includes(doc.level as ChallengeLevel)
    ? (doc.level as ChallengeLevel)
    : (bad('level', `expected one of ${CHALLENGE_LEVELS.join(', ')}`), 'beginner');
  const order = typeof doc.order === 'number' && Number.isInteger(doc.order) ? doc.order : (bad('order', 'expected an integer'), 0);

  const setupRaw = typeof doc.setup === 'string' ? [doc.setup] : doc.setup;
  const setup = Array.isArray(setupRaw)
    ? setupRaw.map((s, i) => sql(s, `setup[${i}]`))
    : (bad('setup', 'expected SQL or a list of SQL blocks'), []);
  const teardown = doc.teardown === undefined ? undefined : sql(doc.teardown, 'teardown');

  const sessions: ChallengeSession[] = [];
  const stepSession = new Map<string, string>();
  if (!Array.isArray(doc.sessions) || doc.sessions.length < 2 || doc.sessions.length > 3)
    bad('sessions', 'expected a list of 2 or 3 sessions');
  (Array.isArray(doc.sessions) ? doc.sessions : []).forEach((s: unknown, si) => {
    const at = `sessions[${si}]`;
    if (!isRec(s)) return bad(at, 'expected a mapping');
    const name = str(s.name, `${at}.name`);
    const np = name && nameProblem(name);
    if (np) bad(`${at}.name`, np);
    if (sessions.some((x) => x.name === name)) bad(`${at}.name`, `duplicate session "${name}"`);
    const steps: ChallengeStep[] = [];
    if (!Array.isArray(s.steps) || s.steps.length === 0) bad(`${at}.steps`, 'expected a non-empty list of steps');
    (Array.isArray(s.steps) ? s.steps : []).forEach((st: unknown, k) => {
      const sat = `${at}.steps[${k}]`;
      if (!isRec(st)) return bad(sat, 'expected { name, sql }');
      const sn = str(st.name, `${sat}.name`);
      const snp = sn && nameProblem(sn);
      if (snp) bad(`${sat}.name`, snp);
      if (stepSession.has(sn)) bad(`${sat}.name`, `duplicate step "${sn}"`);
      stepSession.set(sn, name);
      steps.push({ name: sn, sql: sql(st.sql, `${sat}.sql`) });
    });
    sessions.push({ name, label: loc(s.label, `${at}.label`), steps });
  });
  const sessionNames = new Set(sessions.map((s) => s.name));

  const invariant = doc.invariant === undefined ? undefined : sql(doc.invariant, 'invariant');
  const conditions = (v: unknown, path: string): Condition[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) return (bad(path, 'expected a list of conditions'), []);
    return v.flatMap((c: unknown, i): Condition[] => {
      const at = `${path}[${i}]`;
      const session = (x: unknown, p: string): string => {
        const s = str(x, p);
        if (s && !sessionNames.has(s)) bad(p, `no session "${s}"`);
        return s;
      };
      if (!isRec(c)) return (bad(at, 'expected a mapping'), []);
      if ('deadlock' in c) {
        const d = c.deadlock;
        if (d === true) return [{ kind: 'deadlock' }];
        if (isRec(d) && d.victim !== undefined) return [{ kind: 'deadlock', victim: session(d.victim, `${at}.deadlock.victim`) }];
        return (bad(`${at}.deadlock`, 'expected true or { victim: <session> }'), []);
      }
      if ('error' in c && isRec(c.error)) {
        const code = str(c.error.sqlstate, `${at}.error.sqlstate`);
        if (code && !/^[0-9A-Z]{5}$/.test(code)) bad(`${at}.error.sqlstate`, 'expected a five-character SQLSTATE');
        return [
          {
            kind: 'error',
            sqlstate: code,
            ...(c.error.session !== undefined ? { session: session(c.error.session, `${at}.error.session`) } : {}),
          },
        ];
      }
      if (c.invariant === 'broken') {
        if (invariant === undefined) bad(at, 'the challenge has no invariant to break');
        return [{ kind: 'invariant-broken' }];
      }
      if ('waited' in c && Array.isArray(c.waited) && c.waited.length > 0)
        return [{ kind: 'waited', sessions: c.waited.map((w: unknown, j) => session(w, `${at}.waited[${j}]`)) }];
      return (bad(at, 'expected deadlock, error, invariant: broken or waited'), []);
    });
  };
  const goal = conditions(doc.goal, 'goal');
  const failure = conditions(doc.failure, 'failure');
  const allowErrors =
    doc.allowErrors === undefined
      ? []
      : Array.isArray(doc.allowErrors)
        ? doc.allowErrors.map((x: unknown, i) => str(x, `allowErrors[${i}]`))
        : (bad('allowErrors', 'expected a list of SQLSTATEs'), []);

  const sol = isRec(doc.solution) ? doc.solution : (bad('solution', 'expected { explanation, order | steps }'), {} as Rec);
  const solution: Challenge['solution'] = { explanation: loc(sol.explanation, 'solution.explanation') };
  if (kind === 'break') {
    if (goal.length === 0) bad('goal', 'a break challenge needs at least one goal condition');
    if (doc.failure !== undefined || doc.allowErrors !== undefined) bad('failure', 'only fix challenges have failure / allowErrors');
    const o = typeof sol.order === 'string' ? sol.order.trim().split(/\s+/) : null;
    if (!o) bad('solution.order', 'expected the winning order as step names separated by spaces');
    else {
      for (const s of o) if (!stepSession.has(s)) bad('solution.order', `no step "${s}"`);
      const counts = new Map<string, number>();
      for (const s of o) counts.set(s, (counts.get(s) ?? 0) + 1);
      if ([...counts.values()].some((n) => n > 1)) bad('solution.order', 'a step appears twice');
      if (!isSessionOrder(sessions, o)) bad('solution.order', "each session's steps must appear in their own order, from its first step");
      solution.order = o;
    }
  } else {
    if (invariant === undefined) bad('invariant', 'a fix challenge needs an invariant');
    if (doc.goal !== undefined) bad('goal', 'only break challenges have a goal');
    if (!isRec(sol.steps) || Object.keys(sol.steps).length === 0)
      bad('solution.steps', 'expected { <step>: <model SQL> } for the steps the fix changes');
    else {
      solution.steps = {};
      for (const [k, v] of Object.entries(sol.steps)) {
        if (!stepSession.has(k)) bad(`solution.steps.${k}`, `no step "${k}"`);
        solution.steps[k] = sql(v, `solution.steps.${k}`);
      }
    }
  }

  const ch: Challenge = {
    id,
    kind,
    level,
    order,
    title: loc(doc.title, 'title'),
    story: loc(doc.story, 'story'),
    goalText: loc(doc.goalText, 'goalText'),
    hint: loc(doc.hint, 'hint'),
    setup,
    ...(teardown !== undefined ? { teardown } : {}),
    sessions,
    ...(invariant !== undefined ? { invariant } : {}),
    goal,
    failure,
    allowErrors,
    solution,
  };
  if (issues.length) throw new ChallengeError(file, issues);
  return ch;
}

/** Parses every file and checks that ids are unique; the list is sorted by `order`, then id. */
export function loadChallenges(files: Record<string, string>): Challenge[] {
  const out: Challenge[] = [];
  for (const [file, text] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const c = parseChallenge(text, file);
    const base = file.replace(/^.*\//, '').replace(/\.ya?ml$/, '');
    if (base !== c.id) throw new ChallengeError(file, [{ path: 'id', message: `must match the file name ("${base}")` }]);
    if (out.some((x) => x.id === c.id)) throw new ChallengeError(file, [{ path: 'id', message: `duplicate id "${c.id}"` }]);
    out.push(c);
  }
  return out.sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
}

/** True when `order` takes each session's steps in their own order, each from the first. */
export function isSessionOrder(sessions: readonly ChallengeSession[], order: readonly string[]): boolean {
  const next = new Map(sessions.map((s) => [s.name, 0]));
  for (const name of order) {
    const s = sessions.find((x) => x.steps.some((st) => st.name === name));
    if (!s) return false;
    const k = next.get(s.name)!;
    if (s.steps[k]?.name !== name) return false;
    next.set(s.name, k + 1);
  }
  return true;
}

/** The challenge as a Spec: `sql` overrides steps' SQL (the learner's edits), `order` is the one permutation (omitted: every interleaving). */
export function challengeSpec(c: Challenge, opts: { sql?: Record<string, string>; order?: readonly string[] } = {}): Spec {
  const spec: Spec = {
    setup: [...c.setup],
    sessions: c.sessions.map((s) => ({
      name: s.name,
      steps: s.steps.map((st) => ({ name: st.name, sql: opts.sql?.[st.name] ?? st.sql })),
    })),
    permutations: opts.order ? [{ steps: opts.order.map((step) => ({ step, blockers: [] })) }] : [],
  };
  if (c.teardown !== undefined) spec.teardown = c.teardown;
  return spec;
}

/** challengeSpec as .spec text (what the engine worker takes). */
export function challengeSpecText(c: Challenge, opts: { sql?: Record<string, string>; order?: readonly string[] } = {}): string {
  return writeSpec(challengeSpec(c, opts));
}

/** The model solution's SQL for every step (fix challenges; others keep their SQL). */
export function solutionSql(c: Challenge): Record<string, string> {
  return Object.fromEntries(c.sessions.flatMap((s) => s.steps.map((st) => [st.name, c.solution.steps?.[st.name] ?? st.sql])));
}

/** Every step name, session by session. */
export function allSteps(c: Challenge): string[] {
  return c.sessions.flatMap((s) => s.steps.map((st) => st.name));
}

const realFailures = (o: InterleavingOutcome) => o.failures.filter((f) => !isStall(f));

/** Whether one condition holds in an outcome; `complete`: the order ran every step (only then is the final data final). */
export function conditionHolds(cond: Condition, o: InterleavingOutcome, complete: boolean): boolean {
  switch (cond.kind) {
    case 'deadlock':
      return cond.victim === undefined ? o.victims.length > 0 : o.victims.includes(cond.victim);
    case 'error':
      return realFailures(o).some((f) => f.sqlstate === cond.sqlstate && (cond.session === undefined || f.session === cond.session));
    case 'invariant-broken':
      return complete && o.invariant === false;
    case 'waited':
      return cond.sessions.every((s) => o.waited.includes(s));
  }
}

/** Break: the goal happened in the outcome of the learner's order so far. */
export function goalReached(c: Challenge, o: InterleavingOutcome, complete: boolean): boolean {
  return c.goal.length > 0 && c.goal.every((g) => conditionHolds(g, o, complete));
}

/** Why one complete order fails a fix, or null when it passes. */
export type FixFault =
  | { kind: 'condition'; condition: Condition }
  | { kind: 'error'; sqlstate: string; session: string; message: string }
  | { kind: 'invariant' };

/** Fix: the first reason this complete order fails (a listed failure, an error not allowed, a broken invariant), or null. */
export function fixFault(c: Challenge, o: InterleavingOutcome): FixFault | null {
  const hit = c.failure.find((f) => conditionHolds(f, o, true));
  if (hit) return { kind: 'condition', condition: hit };
  const err = realFailures(o).find((f) => !c.allowErrors.includes(f.sqlstate));
  if (err) return { kind: 'error', sqlstate: err.sqlstate, session: err.session, message: err.message };
  if (o.invariant !== true) return { kind: 'invariant' };
  return null;
}

/** A fix verdict over explored orders: stalled ones (no real client can produce them) are left out. */
export interface FixVerdict {
  /** Orders judged (valid ones). */
  checked: number;
  stalled: number;
  /** The failing orders with their fault, in index order. */
  failing: { outcome: InterleavingOutcome; fault: FixFault }[];
  won: boolean;
}

/** Judges a complete exploration (`total`: how many orders exist; fewer outcomes never win). */
export function judgeFix(c: Challenge, outcomes: readonly InterleavingOutcome[], total: number): FixVerdict {
  const valid = outcomes.filter((o) => o.kind !== 'stalled');
  const failing = valid.flatMap((o) => {
    const fault = fixFault(c, o);
    return fault ? [{ outcome: o, fault }] : [];
  });
  return {
    checked: valid.length,
    stalled: outcomes.length - valid.length,
    failing,
    won: outcomes.length === total && valid.length > 0 && failing.length === 0,
  };
}

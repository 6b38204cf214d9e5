/**
 * The scenario lab's document: setup SQL, 2–8 sessions of named steps, and one order of steps to
 * play (a permutation in .spec syntax). Pure data; converts to and from an isolationtester Spec
 * and the lesson format, and lists every problem with where it is (the editor shows them in place).
 */
import { stringify } from 'yaml';
import { formatPermutationStep, MAX_SESSIONS, parseSpec, SpecParseError, writeSpec } from './spec';
import { CLOCK_SESSION } from './lesson';
import type { Permutation, Spec, SpecStep } from './types';

export const MIN_LAB_SESSIONS = 2;
export const MAX_LAB_SESSIONS = MAX_SESSIONS;
/** Most steps a scenario may have in all: what a share link, a saved copy and the draft hold per session. */
export const MAX_LAB_STEPS = 200;

export interface LabSession {
  name: string;
  setup?: string;
  teardown?: string;
  steps: SpecStep[];
}

export interface LabScenario {
  title: string;
  /** Setup blocks, each run as one query before the sessions start. */
  setup: string[];
  teardown?: string;
  sessions: LabSession[];
  /** The permutation to play, in .spec syntax: `a1 b1 a2(b2) b2`. */
  order: string;
}

/** Where a problem is, so the editor can show it next to the field. */
export type IssueAt =
  | { kind: 'scenario' }
  | { kind: 'setup'; block: number }
  | { kind: 'session'; session: number; field: 'name' | 'setup' | 'teardown' | 'steps' }
  | { kind: 'step'; session: number; step: number; field: 'name' | 'sql' }
  | { kind: 'order'; column?: number };

/** A problem, as a code (the UI words it in the learner's language) plus the parser's text for 'order'. */
export interface LabIssue {
  at: IssueAt;
  code:
    | 'too-few-sessions'
    | 'too-many-sessions'
    | 'too-many-steps'
    | 'empty-name'
    | 'name-newline'
    | 'duplicate-session'
    | 'duplicate-step'
    | 'no-steps'
    | 'empty-sql'
    | 'sql-brace'
    | 'empty-order'
    | 'order';
  /** The offending name, or the parser's message for 'order'. */
  detail?: string;
}

/** A new scenario: one table, two sessions with one step each. */
export function blankScenario(): LabScenario {
  return {
    title: '',
    setup: ['CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL);\nINSERT INTO t VALUES (1, 0), (2, 0);'],
    teardown: 'DROP TABLE t;',
    sessions: [
      { name: 's1', steps: [{ name: 's1a', sql: 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;' }] },
      { name: 's2', steps: [{ name: 's2a', sql: 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;' }] },
    ],
    order: 's1a s2a',
  };
}

/** The step names of every session, in order. */
export function stepNames(sc: LabScenario): string[] {
  return sc.sessions.flatMap((s) => s.steps.map((st) => st.name));
}

/** A step name not used yet, `<session><letter>` style (s1a, s1b, …, then s1_27). */
export function freshStepName(sc: LabScenario, session: string): string {
  const used = new Set(stepNames(sc));
  for (let i = 0; ; i++) {
    const name = i < 26 ? `${session}${String.fromCharCode(97 + i)}` : `${session}_${i + 1}`;
    if (!used.has(name)) return name;
  }
}

/** A session name not used yet (s1, s2, …). */
export function freshSessionName(sc: LabScenario): string {
  const used = new Set(sc.sessions.map((s) => s.name));
  for (let i = 1; ; i++) if (!used.has(`s${i}`)) return `s${i}`;
}

const hasBrace = (sql: string) => sql.includes('}');

/** Every problem of the scenario, in document order; empty when it can be played. */
export function scenarioIssues(sc: LabScenario): LabIssue[] {
  const issues: LabIssue[] = [];
  if (sc.sessions.length < MIN_LAB_SESSIONS) issues.push({ at: { kind: 'scenario' }, code: 'too-few-sessions' });
  if (sc.sessions.length > MAX_LAB_SESSIONS) issues.push({ at: { kind: 'scenario' }, code: 'too-many-sessions' });
  const stepCount = sc.sessions.reduce((n, s) => n + s.steps.length, 0);
  if (stepCount > MAX_LAB_STEPS) issues.push({ at: { kind: 'scenario' }, code: 'too-many-steps', detail: String(stepCount) });
  sc.setup.forEach((sql, block) => {
    if (hasBrace(sql)) issues.push({ at: { kind: 'setup', block }, code: 'sql-brace' });
  });
  const sessionNames = new Set<string>();
  const steps = new Set<string>();
  sc.sessions.forEach((s, si) => {
    const name = s.name.trim();
    if (name === '') issues.push({ at: { kind: 'session', session: si, field: 'name' }, code: 'empty-name' });
    else if (name.includes('\n')) issues.push({ at: { kind: 'session', session: si, field: 'name' }, code: 'name-newline' });
    else if (sessionNames.has(name))
      issues.push({ at: { kind: 'session', session: si, field: 'name' }, code: 'duplicate-session', detail: name });
    sessionNames.add(name);
    for (const field of ['setup', 'teardown'] as const) {
      if (hasBrace(s[field] ?? '')) issues.push({ at: { kind: 'session', session: si, field }, code: 'sql-brace' });
    }
    if (s.steps.length === 0) issues.push({ at: { kind: 'session', session: si, field: 'steps' }, code: 'no-steps' });
    s.steps.forEach((st, k) => {
      const stepName = st.name.trim();
      const at = (field: 'name' | 'sql'): IssueAt => ({ kind: 'step', session: si, step: k, field });
      if (stepName === '') issues.push({ at: at('name'), code: 'empty-name' });
      else if (stepName.includes('\n')) issues.push({ at: at('name'), code: 'name-newline' });
      else if (steps.has(stepName)) issues.push({ at: at('name'), code: 'duplicate-step', detail: stepName });
      steps.add(stepName);
      if (st.sql.trim() === '') issues.push({ at: at('sql'), code: 'empty-sql' });
      else if (hasBrace(st.sql)) issues.push({ at: at('sql'), code: 'sql-brace' });
    });
  });
  if (sc.teardown !== undefined && hasBrace(sc.teardown)) issues.push({ at: { kind: 'scenario' }, code: 'sql-brace', detail: 'teardown' });
  const namesOk = !issues.some((i) => i.code === 'empty-name' || i.code === 'name-newline' || i.code.startsWith('duplicate'));
  if (namesOk) {
    const order = checkOrder(sc);
    if (order.issue) issues.push(order.issue);
  }
  return issues;
}

/** A spec of the scenario's sessions with SQL left out: the context the order is parsed in. */
function skeleton(sc: LabScenario): Spec {
  return {
    setup: [],
    sessions: sc.sessions.map((s) => ({ name: s.name.trim(), steps: s.steps.map((st) => ({ name: st.name.trim(), sql: '' })) })),
    permutations: [],
  };
}

/** Parses the order with the .spec parser itself, so markers and errors match isolationtester. */
export function checkOrder(sc: LabScenario): { permutation?: Permutation; issue?: LabIssue } {
  const order = sc.order.replace(/[\r\n]+/g, ' ');
  if (order.trim() === '') return { issue: { at: { kind: 'order' }, code: 'empty-order' } };
  if (sc.sessions.length === 0 || sc.sessions.some((s) => s.steps.length === 0)) return {};
  const prefix = writeSpec(skeleton(sc)) + 'permutation ';
  const lastLine = prefix.split('\n').length;
  try {
    const spec = parseSpec(prefix + order);
    return { permutation: spec.permutations[0] };
  } catch (e) {
    if (!(e instanceof SpecParseError)) throw e;
    const column = e.line === lastLine ? Math.max(1, e.column - 'permutation '.length) : undefined;
    const message = e.message.replace(/^line \d+: /, '');
    return { issue: { at: { kind: 'order', ...(column !== undefined ? { column } : {}) }, code: 'order', detail: message } };
  }
}

/** SQL as a spec block keeps it: without the spaces, tabs, CR and FF the scanner trims at its ends. */
const blockSql = (sql: string): string => sql.replace(/^[ \t\r\f]+|[ \t\r\f]+$/g, '');

/** The scenario as a Spec with its order as the only permutation (or none: every interleaving). */
export function scenarioToSpec(sc: LabScenario, opts: { allInterleavings?: boolean } = {}): Spec {
  const spec: Spec = {
    setup: sc.setup.filter((s) => s.trim() !== '').map(blockSql),
    sessions: sc.sessions.map((s) => ({
      name: s.name.trim(),
      ...(s.setup?.trim() ? { setup: blockSql(s.setup) } : {}),
      steps: s.steps.map((st) => ({ name: st.name.trim(), sql: blockSql(st.sql) })),
      ...(s.teardown?.trim() ? { teardown: blockSql(s.teardown) } : {}),
    })),
    permutations: [],
  };
  if (sc.teardown?.trim()) spec.teardown = blockSql(sc.teardown);
  if (!opts.allInterleavings) {
    const { permutation } = checkOrder(sc);
    if (permutation) spec.permutations = [permutation];
  }
  return spec;
}

/** The scenario as .spec text (throws when it has issues that .spec cannot express). */
export function scenarioToSpecText(sc: LabScenario, opts: { allInterleavings?: boolean } = {}): string {
  const title = sc.title.trim() ? `# ${sc.title.trim().replace(/\s*\n\s*/g, ' ')}\n\n` : '';
  return title + writeSpec(scenarioToSpec(sc, opts));
}

/** A Spec as a lab scenario; the first explicit permutation becomes the order (others are reported). */
export function specToScenario(spec: Spec, title = ''): { scenario: LabScenario; droppedPermutations: number } {
  const first = spec.permutations[0];
  const order = first
    ? first.steps.map(formatPermutationStep).join(' ')
    : spec.sessions.flatMap((s) => s.steps.map((st) => st.name)).join(' ');
  const scenario: LabScenario = {
    title,
    setup: [...spec.setup],
    sessions: spec.sessions.map((s) => ({
      name: s.name,
      ...(s.setup !== undefined ? { setup: s.setup } : {}),
      ...(s.teardown !== undefined ? { teardown: s.teardown } : {}),
      steps: s.steps.map((st) => ({ ...st })),
    })),
    order,
  };
  if (spec.teardown !== undefined) scenario.teardown = spec.teardown;
  return { scenario, droppedPermutations: Math.max(0, spec.permutations.length - 1) };
}

/** The title a .spec file gives itself: `# title.<lang>: …`, else its first comment line. */
export function specTitle(text: string, lang = 'en'): string {
  const lines = text.split('\n').filter((l) => l.startsWith('#'));
  const tagged = lines.find((l) => l.startsWith(`# title.${lang}:`)) ?? lines.find((l) => l.startsWith('# title.en:'));
  if (tagged) return tagged.replace(/^# title\.\w+:\s*/, '').trim();
  return (lines[0] ?? '').replace(/^#\s*/, '').trim();
}

const LESSON_SESSION = /^[A-Za-z][A-Za-z0-9]{0,11}$/;

/**
 * The scenario as a lesson YAML draft (docs/lesson-format.md): steps follow the order, narration
 * is a placeholder to write. Blockers are dropped (lessons have none). Throws when a session
 * name is not a lesson session name.
 */
export function scenarioToLessonYaml(sc: LabScenario, id = 'my-scenario'): string {
  const spec = scenarioToSpec(sc);
  const perm = spec.permutations[0];
  if (!perm) throw new Error('the order is empty or invalid');
  for (const s of spec.sessions) {
    if (!LESSON_SESSION.test(s.name) || s.name === CLOCK_SESSION)
      throw new Error(`session name "${s.name}" is not allowed in a lesson (a letter, then up to 11 letters or digits)`);
  }
  const sessionOf = new Map(spec.sessions.flatMap((s) => s.steps.map((st) => [st.name, s] as const)));
  const todo = { en: 'TODO: explain this step.', ru: 'TODO: объясните этот шаг.' };
  const title = sc.title.trim() || 'My scenario';
  const doc = {
    id,
    title: { en: title, ru: title },
    summary: { en: 'TODO: summary.', ru: 'TODO: краткое описание.' },
    topics: ['lab'],
    level: 'intermediate',
    minutes: 5,
    setup: spec.setup.join('\n'),
    ...(spec.teardown !== undefined ? { teardown: spec.teardown } : {}),
    sessions: spec.sessions.map((s) => ({ name: s.name, ...(s.setup !== undefined ? { setup: s.setup } : {}) })),
    steps: perm.steps.map((p) => {
      const session = sessionOf.get(p.step)!;
      return { session: session.name, sql: session.steps.find((st) => st.name === p.step)!.sql, narration: todo };
    }),
  };
  return stringify(doc, { lineWidth: 0 });
}

/**
 * The lesson format: hand-written YAML (lessons/<id>.yaml), validated into a Lesson and compiled
 * into an isolationtester Spec with exactly one permutation. Reference: docs/lesson-format.md.
 */
import { LineCounter, parseDocument, isMap, isSeq, isScalar, type Node as YamlNode } from 'yaml';
import type { Spec, SpecSession, SpecStep, PermutationStep } from './types';
import { sqlBlockProblem } from './spec';

/** A text in every language the course ships. */
export interface Localized {
  en: string;
  ru: string;
}

export const LANGUAGES = ['en', 'ru'] as const;
export const LEVELS = ['beginner', 'intermediate', 'senior'] as const;
/** Player panels a lesson may keep hidden until its last item has run (`hideUntilEnd`). */
export const HIDEABLE_PANELS = ['wait-graph', 'lock-matrix', 'pg-locks', 'timeline', 'wait-holders'] as const;
export type HideablePanel = (typeof HIDEABLE_PANELS)[number];
export type Level = (typeof LEVELS)[number];
/** Older level names still read, each as the level it became (`advanced` is `senior`). */
const LEVEL_ALIASES: Readonly<Record<string, Level>> = { advanced: 'senior' };

/** Name of the observer session that exists only to run pauses on real PostgreSQL. */
export const CLOCK_SESSION = 'clock';

export interface LessonSession {
  /** Short identifier, e.g. "A", "B", "W1"; shown to the learner as "session A". */
  name: string;
  /** Optional role shown next to the name, e.g. "transfer 1 → 2". */
  label?: Localized;
  /** SQL run once when the session connects, e.g. `SET deadlock_timeout = '1s';`. */
  setup?: string;
}

export interface StepItem {
  kind: 'step';
  /** Derived spec step name, e.g. "a1" (see stepName). */
  name: string;
  session: string;
  sql: string;
  narration: Localized;
  /** Id of a lesson code snippet shown next to this step (see Lesson.code). */
  code?: string;
}

export interface PauseItem {
  kind: 'pause';
  /** Derived spec step name of the observer step, e.g. "clock1". */
  name: string;
  /** Virtual time that passes, in milliseconds. */
  ms: number;
  narration?: Localized;
  /** Id of a lesson code snippet shown next to this pause (see Lesson.code). */
  code?: string;
}

export interface PredictChoice {
  id: string;
  label: Localized;
}

/** A checkpoint: the learner predicts the outcome of the next step before it runs. */
export interface PredictItem {
  kind: 'predict';
  question: Localized;
  choices: PredictChoice[];
  answer: string;
  explanation: Localized;
  /** Name of the step whose outcome is predicted (the next step item). */
  step: string;
}

export type LessonItem = StepItem | PauseItem | PredictItem;

export const CODE_LANGUAGES = ['go', 'sql', 'ts'] as const;
export type CodeLanguage = (typeof CODE_LANGUAGES)[number];

/** Application code shown beside the sessions: what the SQL steps act out. Never executed. */
export interface CodeSnippet {
  /** kebab-case, unique within the lesson; steps refer to it with `code: <id>`. */
  id: string;
  language: CodeLanguage;
  title: Localized;
  /** The code, verbatim (trailing whitespace trimmed; indentation kept). */
  source: string;
}

export interface Lesson {
  id: string;
  title: Localized;
  /** The goal, shown before step 1: it never states the outcome of a predict checkpoint. */
  summary: Localized;
  /** What the lesson showed, shown after the last step (may state the outcomes). */
  conclusion?: Localized;
  topics: string[];
  level: Level;
  minutes: number;
  /** Setup blocks, each run as one query before the sessions start. */
  setup: string[];
  teardown?: string;
  sessions: LessonSession[];
  steps: LessonItem[];
  /** Code snippets referenced by steps; omitted when the lesson has none. */
  code?: CodeSnippet[];
  /** Panels the player hides until the last item has run (an exercise that must be solved without them). */
  hideUntilEnd?: HideablePanel[];
}

/** One validation problem: where (a path like `steps[3].session`, plus the YAML line) and what. */
export interface LessonIssue {
  path: string;
  message: string;
  line?: number;
}

/** Thrown by parseLesson; `issues` lists every problem found, in document order. */
export class LessonError extends Error {
  constructor(public readonly issues: LessonIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'LessonError';
  }
}

/** Renders an issue as `path: message` (with the line when known). */
export function formatIssue(issue: LessonIssue): string {
  const where = issue.path || '(root)';
  return issue.line ? `${where} (line ${issue.line}): ${issue.message}` : `${where}: ${issue.message}`;
}

export const ID_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SESSION_RE = /^[A-Za-z][A-Za-z0-9]{0,11}$/;
const PAUSE_RE = /^(\d+(?:\.\d+)?)\s*(ms|s)$/;
const MAX_PAUSE_MS = 60_000;

export type Path = (string | number)[];

function pathText(path: Path): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/** Validates against a plain JS value produced by the YAML parser, collecting issues. */
export class Checker {
  readonly issues: LessonIssue[] = [];
  constructor(private readonly lineOf: (path: Path) => number | undefined) {}

  fail(path: Path, message: string): void {
    this.issues.push({ path: pathText(path), message, line: this.lineOf(path) });
  }

  isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  }

  object(v: unknown, path: Path, required: string[], optional: string[]): Record<string, unknown> | undefined {
    if (!this.isObject(v)) {
      this.fail(path, `expected a mapping with ${required.map((k) => `"${k}"`).join(', ')}`);
      return undefined;
    }
    for (const k of Object.keys(v)) {
      if (!required.includes(k) && !optional.includes(k)) {
        const known = [...required, ...optional].map((x) => `"${x}"`).join(', ');
        this.fail([...path, k], `unknown field (expected one of ${known})`);
      }
    }
    for (const k of required) if (!(k in v)) this.fail([...path, k], 'missing required field');
    return v;
  }

  text(v: unknown, path: Path): string | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.trim() === '') {
      this.fail(path, 'expected a non-empty string');
      return undefined;
    }
    return v.trim();
  }

  /** SQL text that the spec writer can emit unchanged. */
  sql(v: unknown, path: Path): string | undefined {
    const s = this.text(v, path);
    const problem = s === undefined ? undefined : sqlBlockProblem(s);
    if (problem !== undefined) {
      this.fail(path, `SQL ${problem}`);
      return undefined;
    }
    return s;
  }

  localized(v: unknown, path: Path): Localized | undefined {
    if (v === undefined) return undefined;
    const o = this.object(v, path, [...LANGUAGES], []);
    if (!o) return undefined;
    const en = this.text(o.en, [...path, 'en']);
    const ru = this.text(o.ru, [...path, 'ru']);
    return en !== undefined && ru !== undefined ? { en, ru } : undefined;
  }

  list(v: unknown, path: Path): unknown[] | undefined {
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.fail(path, 'expected a list');
      return undefined;
    }
    return v;
  }
}

/** Parses "2s", "1.5s", "500ms" into milliseconds; undefined when malformed. */
export function parsePause(text: string): number | undefined {
  const m = PAUSE_RE.exec(text.trim());
  if (!m) return undefined;
  const ms = m[2] === 's' ? Math.round(parseFloat(m[1]) * 1000) : Math.round(parseFloat(m[1]));
  return ms;
}

/**
 * Spec step name for the n-th (1-based) step of a session: the lowercased session name followed
 * by n ("A" → "a1"), with an underscore when the name ends in a digit ("W1" → "w1_1").
 * Session names are unique case-insensitively and alphanumeric, so step names never collide.
 */
export function stepName(session: string, n: number): string {
  const base = session.toLowerCase();
  return /\d$/.test(base) ? `${base}_${n}` : `${base}${n}`;
}

/** Parses YAML text into a plain value and a Checker whose issues carry YAML line numbers. */
export function load(yamlText: string): { value: unknown; c: Checker } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new LessonError(
      doc.errors.map((e) => ({
        path: '',
        message: `YAML syntax: ${e.message.split('\n')[0]}`,
        line: lineCounter.linePos(e.pos[0]).line,
      })),
    );
  }
  const lineOf = (path: Path): number | undefined => {
    for (let len = path.length; len >= 0; len--) {
      const node = doc.getIn(path.slice(0, len), true) as YamlNode | undefined;
      if (node && (isMap(node) || isSeq(node) || isScalar(node)) && node.range) {
        return lineCounter.linePos(node.range[0]).line;
      }
    }
    return undefined;
  };
  return { value: doc.toJS(), c: new Checker(lineOf) };
}

/** `hideUntilEnd`: a non-empty list of distinct panel ids from HIDEABLE_PANELS. */
function parseHidden(c: Checker, value: unknown): HideablePanel[] | undefined {
  if (value === undefined) return undefined;
  const list = c.list(value, ['hideUntilEnd']);
  if (!list) return undefined;
  if (list.length === 0) c.fail(['hideUntilEnd'], 'list at least one panel, or leave "hideUntilEnd" out');
  const out: HideablePanel[] = [];
  list.forEach((v, i) => {
    if (!(HIDEABLE_PANELS as readonly unknown[]).includes(v)) c.fail(['hideUntilEnd', i], `expected one of ${HIDEABLE_PANELS.join(', ')}`);
    else if (out.includes(v as HideablePanel)) c.fail(['hideUntilEnd', i], `"${String(v)}" is listed twice`);
    else out.push(v as HideablePanel);
  });
  return out;
}

/** Parses and validates a lesson; throws LessonError listing every problem found. */
export function parseLesson(yamlText: string): Lesson {
  const { value, c } = load(yamlText);
  const root = c.object(
    value,
    [],
    ['id', 'title', 'summary', 'topics', 'level', 'minutes', 'setup', 'sessions', 'steps'],
    ['teardown', 'code', 'conclusion', 'hideUntilEnd'],
  );
  if (!root) throw new LessonError(c.issues);

  const id = c.text(root.id, ['id']);
  if (id !== undefined && !ID_RE.test(id)) c.fail(['id'], `"${id}" must be kebab-case (a-z, 0-9, "-")`);
  const title = c.localized(root.title, ['title']);
  const summary = c.localized(root.summary, ['summary']);
  const conclusion = c.localized(root.conclusion, ['conclusion']);

  const topics: string[] = [];
  const topicList = c.list(root.topics, ['topics']);
  if (topicList) {
    if (topicList.length === 0) c.fail(['topics'], 'list at least one topic');
    topicList.forEach((t, i) => {
      const s = c.text(t, ['topics', i]);
      if (s !== undefined && !ID_RE.test(s)) c.fail(['topics', i], `"${s}" must be kebab-case`);
      else if (s !== undefined) topics.push(s);
    });
  }

  let level: Level | undefined;
  if (root.level !== undefined) {
    if ((LEVELS as readonly unknown[]).includes(root.level)) level = root.level as Level;
    else if (typeof root.level === 'string' && LEVEL_ALIASES[root.level]) level = LEVEL_ALIASES[root.level];
    else c.fail(['level'], `expected one of ${LEVELS.join(', ')}`);
  }
  let minutes: number | undefined;
  if (root.minutes !== undefined) {
    if (typeof root.minutes === 'number' && Number.isInteger(root.minutes) && root.minutes > 0) minutes = root.minutes;
    else c.fail(['minutes'], 'expected a positive whole number');
  }

  const setup: string[] = [];
  if (typeof root.setup === 'string') {
    const s = c.sql(root.setup, ['setup']);
    if (s !== undefined) setup.push(s);
  } else if (root.setup !== undefined) {
    const blocks = c.list(root.setup, ['setup']);
    blocks?.forEach((b, i) => {
      const s = c.sql(b, ['setup', i]);
      if (s !== undefined) setup.push(s);
    });
    if (blocks && blocks.length === 0) c.fail(['setup'], 'expected SQL text or a list of SQL blocks');
  }
  const teardown = c.sql(root.teardown, ['teardown']);

  const sessions = parseSessions(c, root.sessions);
  const code = parseCode(c, root.code);
  const steps = parseSteps(c, root.steps, sessions, code);
  const hideUntilEnd = parseHidden(c, root.hideUntilEnd);

  if (c.issues.length > 0) throw new LessonError(c.issues);
  return {
    id: id!,
    title: title!,
    summary: summary!,
    ...(conclusion ? { conclusion } : {}),
    topics,
    level: level!,
    minutes: minutes!,
    setup,
    ...(teardown !== undefined ? { teardown } : {}),
    sessions,
    steps,
    ...(code ? { code } : {}),
    ...(hideUntilEnd ? { hideUntilEnd } : {}),
  };
}

function parseCode(c: Checker, value: unknown): CodeSnippet[] | undefined {
  const list = c.list(value, ['code']);
  if (!list) return undefined;
  if (list.length === 0) c.fail(['code'], 'list at least one snippet, or leave "code" out');
  const out: CodeSnippet[] = [];
  list.forEach((raw, i) => {
    const path: Path = ['code', i];
    const o = c.object(raw, path, ['id', 'language', 'title', 'source'], []);
    if (!o) return;
    const id = c.text(o.id, [...path, 'id']);
    const title = c.localized(o.title, [...path, 'title']);
    let language: CodeLanguage | undefined;
    if ((CODE_LANGUAGES as readonly unknown[]).includes(o.language)) language = o.language as CodeLanguage;
    else if (o.language !== undefined) c.fail([...path, 'language'], `expected one of ${CODE_LANGUAGES.join(', ')}`);
    let source: string | undefined;
    if (typeof o.source === 'string' && o.source.trim() !== '') source = o.source.replace(/^\n+/, '').trimEnd();
    else if (o.source !== undefined) c.fail([...path, 'source'], 'expected a non-empty string');
    if (id !== undefined && !ID_RE.test(id)) {
      c.fail([...path, 'id'], `"${id}" must be kebab-case`);
      return;
    }
    if (id !== undefined && out.some((x) => x.id === id)) {
      c.fail([...path, 'id'], `duplicate snippet "${id}"`);
      return;
    }
    if (id !== undefined && title && language && source !== undefined) out.push({ id, language, title, source });
  });
  return list.length > 0 ? out : undefined;
}

/** Validates an optional `code:` reference of a step or pause against the lesson's snippets. */
function codeRef(c: Checker, v: unknown, path: Path, code: CodeSnippet[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  const id = c.text(v, path);
  if (id === undefined) return undefined;
  if (!code?.some((x) => x.id === id)) {
    const known = code?.length ? code.map((x) => x.id).join(', ') : 'the lesson has no "code" list';
    c.fail(path, `unknown code snippet "${id}" (${known})`);
    return undefined;
  }
  return id;
}

function parseSessions(c: Checker, value: unknown): LessonSession[] {
  const sessions: LessonSession[] = [];
  const list = c.list(value, ['sessions']);
  if (!list) return sessions;
  if (list.length < 2 || list.length > 4) c.fail(['sessions'], `expected 2 to 4 sessions, found ${list.length}`);
  const seen = new Set<string>();
  list.forEach((raw, i) => {
    const path = ['sessions', i];
    const o = c.object(raw, path, ['name'], ['label', 'setup']);
    if (!o) return;
    const name = c.text(o.name === undefined ? undefined : String(o.name), [...path, 'name']);
    const label = c.localized(o.label, [...path, 'label']);
    const setup = c.sql(o.setup, [...path, 'setup']);
    if (name === undefined) return;
    if (!SESSION_RE.test(name)) {
      c.fail([...path, 'name'], `"${name}" must be a letter followed by up to 11 letters or digits`);
      return;
    }
    if (name.toLowerCase() === CLOCK_SESSION) {
      c.fail([...path, 'name'], `"${name}" is reserved for the pause observer session`);
      return;
    }
    if (seen.has(name.toLowerCase())) {
      c.fail([...path, 'name'], `duplicate session "${name}" (names are compared ignoring case)`);
      return;
    }
    seen.add(name.toLowerCase());
    sessions.push({ name, ...(label ? { label } : {}), ...(setup !== undefined ? { setup } : {}) });
  });
  return sessions;
}

function parseSteps(c: Checker, value: unknown, sessions: LessonSession[], code: CodeSnippet[] | undefined): LessonItem[] {
  const items: LessonItem[] = [];
  const list = c.list(value, ['steps']);
  if (!list) return items;
  const counters = new Map<string, number>();
  const next = (session: string): string => {
    const n = (counters.get(session) ?? 0) + 1;
    counters.set(session, n);
    return stepName(session, n);
  };
  const pending: { item: PredictItem; index: number }[] = [];

  list.forEach((raw, i) => {
    const path: Path = ['steps', i];
    if (!c.isObject(raw)) {
      c.fail(path, 'expected a step (session, sql, narration), a pause or a predict');
      return;
    }
    if ('pause' in raw) {
      const o = c.object(raw, path, ['pause'], ['narration', 'code']);
      if (!o) return;
      const narration = c.localized(o.narration, [...path, 'narration']);
      const ref = codeRef(c, o.code, [...path, 'code'], code);
      const ms = typeof o.pause === 'string' ? parsePause(o.pause) : undefined;
      if (ms === undefined) c.fail([...path, 'pause'], 'expected a duration such as "2s", "1.5s" or "500ms"');
      else if (ms <= 0 || ms > MAX_PAUSE_MS) c.fail([...path, 'pause'], `must be more than 0 and at most ${MAX_PAUSE_MS / 1000}s`);
      else
        items.push({
          kind: 'pause',
          name: next(CLOCK_SESSION),
          ms,
          ...(narration ? { narration } : {}),
          ...(ref !== undefined ? { code: ref } : {}),
        });
      return;
    }
    if ('predict' in raw) {
      const o = c.object(raw, path, ['predict'], []);
      const p = o && c.object(o.predict, [...path, 'predict'], ['question', 'choices', 'answer', 'explanation'], []);
      if (!p) return;
      const pp: Path = [...path, 'predict'];
      const question = c.localized(p.question, [...pp, 'question']);
      const explanation = c.localized(p.explanation, [...pp, 'explanation']);
      const choices: PredictChoice[] = [];
      const rawChoices = c.list(p.choices, [...pp, 'choices']);
      if (rawChoices && rawChoices.length < 2) c.fail([...pp, 'choices'], 'offer at least 2 choices');
      rawChoices?.forEach((rc, j) => {
        const cp: Path = [...pp, 'choices', j];
        const co = c.object(rc, cp, ['id', 'label'], []);
        if (!co) return;
        const cid = c.text(co.id, [...cp, 'id']);
        const label = c.localized(co.label, [...cp, 'label']);
        if (cid !== undefined && !ID_RE.test(cid)) c.fail([...cp, 'id'], `"${cid}" must be kebab-case`);
        else if (cid !== undefined && choices.some((x) => x.id === cid)) c.fail([...cp, 'id'], `duplicate choice "${cid}"`);
        else if (cid !== undefined && label) choices.push({ id: cid, label });
      });
      const answer = c.text(p.answer, [...pp, 'answer']);
      if (answer !== undefined && rawChoices && !choices.some((x) => x.id === answer) && rawChoices.length === choices.length) {
        c.fail([...pp, 'answer'], `unknown choice "${answer}" (choices: ${choices.map((x) => x.id).join(', ')})`);
      }
      if (!question || !explanation || answer === undefined) return;
      const item: PredictItem = { kind: 'predict', question, choices, answer, explanation, step: '' };
      items.push(item);
      pending.push({ item, index: i });
      return;
    }
    const o = c.object(raw, path, ['session', 'sql', 'narration'], ['code']);
    if (!o) return;
    const ref = codeRef(c, o.code, [...path, 'code'], code);
    const session = c.text(o.session === undefined ? undefined : String(o.session), [...path, 'session']);
    const sql = c.sql(o.sql, [...path, 'sql']);
    const narration = c.localized(o.narration, [...path, 'narration']);
    const known = sessions.find((s) => s.name === session);
    if (session !== undefined && !known) {
      c.fail([...path, 'session'], `unknown session "${session}" (sessions: ${sessions.map((s) => s.name).join(', ')})`);
    }
    if (!known || sql === undefined || !narration) return;
    const step: StepItem = {
      kind: 'step',
      name: next(known.name),
      session: known.name,
      sql,
      narration,
      ...(ref !== undefined ? { code: ref } : {}),
    };
    items.push(step);
    for (const p of pending.splice(0)) p.item.step = step.name;
  });

  for (const p of pending) c.fail(['steps', p.index], 'a predict must be followed by a step whose outcome it asks about');
  if (list.length > 0 && !items.some((x) => x.kind === 'step')) c.fail(['steps'], 'list at least one step');
  for (const [i, s] of sessions.entries()) {
    if (!items.some((x) => x.kind === 'step' && x.session === s.name)) {
      c.fail(['sessions', i, 'name'], `session "${s.name}" has no steps`);
    }
  }
  return items;
}

/** SQL for an observer pause: pg_sleep with the shortest exact decimal seconds. */
export function pauseSql(ms: number): string {
  return `SELECT pg_sleep(${ms / 1000});`;
}

/**
 * Compiles a lesson into an isolationtester spec: one spec session per lesson session, plus the
 * `clock` observer session when the lesson has pauses, and one permutation in item order.
 * Predict checkpoints are UI only and compile to nothing.
 */
export function lessonToSpec(lesson: Lesson): Spec {
  const sessions: SpecSession[] = lesson.sessions.map((s) => ({
    name: s.name,
    ...(s.setup !== undefined ? { setup: s.setup } : {}),
    steps: [],
  }));
  const clock: SpecSession = { name: CLOCK_SESSION, steps: [] };
  const order: PermutationStep[] = [];
  for (const item of lesson.steps) {
    if (item.kind === 'predict') continue;
    const step: SpecStep = item.kind === 'step' ? { name: item.name, sql: item.sql } : { name: item.name, sql: pauseSql(item.ms) };
    const target = item.kind === 'step' ? sessions.find((s) => s.name === item.session)! : clock;
    target.steps.push(step);
    order.push({ step: item.name, blockers: [] });
  }
  if (clock.steps.length > 0) sessions.push(clock);
  return {
    setup: [...lesson.setup],
    ...(lesson.teardown !== undefined ? { teardown: lesson.teardown } : {}),
    sessions,
    permutations: [{ steps: order }],
  };
}

/* ------------------------------------------------------------------------------------------------
 * The interview file: lessons/interview/interview.yaml. Not a lesson (it has no sessions and is
 * never played); it lists the course's interview questions, each proved by a lesson, and the
 * senior+ topics as a checklist of lessons. Reference: docs/lesson-format.md, "Interview file".
 * --------------------------------------------------------------------------------------------- */

/** One interview question. With `choices` it is a quiz (`answer` is the right choice id); without, a free answer. */
export interface InterviewQuestion {
  /** kebab-case, unique in the file. */
  id: string;
  question: Localized;
  /** Present for multiple-choice questions; absent for a free answer. */
  choices?: PredictChoice[];
  /** The right choice id; present exactly when `choices` is. */
  answer?: string;
  /** The model answer, shown after the learner answers (or gives up). */
  model: Localized;
  /** The lesson that proves the answer on the simulator. */
  lesson: string;
  /** Further lessons worth replaying for this question. */
  see: string[];
  /** What an interviewer asks next, each with its model answer. */
  followups: InterviewFollowup[];
}

/** A follow-up question: asked after the main one, answered freely. */
export interface InterviewFollowup {
  /** kebab-case, unique in the file (across questions). */
  id: string;
  question: Localized;
  model: Localized;
}

/** A short page on a senior topic the lessons narrate but cannot act out, linked from interview mode. */
export interface InterviewPage {
  /** kebab-case, unique; the page's address is `#/interview/topics/<id>`. */
  id: string;
  title: Localized;
  /** Paragraphs separated by blank lines. */
  body: Localized;
  /** Lessons that show the parts the simulator can act out. */
  lessons: string[];
}

/** A senior+ topic: what an interviewer digs into, with the lessons that cover it. */
export interface InterviewTopic {
  title: Localized;
  lessons: string[];
}

export interface Interview {
  title: Localized;
  intro?: Localized;
  questions: InterviewQuestion[];
  topics: InterviewTopic[];
  /** Senior topic pages; empty when the file has none. */
  pages: InterviewPage[];
}

/**
 * Parses and validates the interview file; throws LessonError listing every problem found.
 * When `lessonIds` is given, every referenced lesson id must be one of them.
 */
export function parseInterview(yamlText: string, lessonIds?: readonly string[]): Interview {
  const { value, c } = load(yamlText);
  const root = c.object(value, [], ['title', 'questions', 'topics'], ['intro', 'pages']);
  if (!root) throw new LessonError(c.issues);
  const title = c.localized(root.title, ['title']);
  const intro = c.localized(root.intro, ['intro']);

  const lessonRef = (v: unknown, path: Path): string | undefined => {
    const id = c.text(v, path);
    if (id === undefined) return undefined;
    if (!ID_RE.test(id)) c.fail(path, `"${id}" must be a kebab-case lesson id`);
    else if (lessonIds && !lessonIds.includes(id)) c.fail(path, `unknown lesson "${id}"`);
    else return id;
    return undefined;
  };
  const lessonList = (v: unknown, path: Path, required: boolean): string[] => {
    const out: string[] = [];
    const list = c.list(v, path);
    if (list && required && list.length === 0) c.fail(path, 'list at least one lesson');
    list?.forEach((x, i) => {
      const id = lessonRef(x, [...path, i]);
      if (id !== undefined) out.push(id);
    });
    return out;
  };

  const questions: InterviewQuestion[] = [];
  const followupIds = new Set<string>();
  const qList = c.list(root.questions, ['questions']);
  if (qList && qList.length === 0) c.fail(['questions'], 'list at least one question');
  qList?.forEach((raw, i) => {
    const path: Path = ['questions', i];
    const o = c.object(raw, path, ['id', 'question', 'model', 'lesson'], ['choices', 'answer', 'see', 'followups']);
    if (!o) return;
    const id = c.text(o.id, [...path, 'id']);
    if (id !== undefined && !ID_RE.test(id)) c.fail([...path, 'id'], `"${id}" must be kebab-case`);
    else if (id !== undefined && questions.some((q) => q.id === id)) c.fail([...path, 'id'], `duplicate question "${id}"`);
    const question = c.localized(o.question, [...path, 'question']);
    const model = c.localized(o.model, [...path, 'model']);
    const lesson = lessonRef(o.lesson, [...path, 'lesson']);
    const see = lessonList(o.see, [...path, 'see'], false);
    let choices: PredictChoice[] | undefined;
    let answer: string | undefined;
    if (o.choices !== undefined) {
      choices = [];
      const rawChoices = c.list(o.choices, [...path, 'choices']);
      if (rawChoices && rawChoices.length < 2) c.fail([...path, 'choices'], 'offer at least 2 choices');
      rawChoices?.forEach((rc, j) => {
        const cp: Path = [...path, 'choices', j];
        const co = c.object(rc, cp, ['id', 'label'], []);
        if (!co) return;
        const cid = c.text(co.id, [...cp, 'id']);
        const label = c.localized(co.label, [...cp, 'label']);
        if (cid !== undefined && !ID_RE.test(cid)) c.fail([...cp, 'id'], `"${cid}" must be kebab-case`);
        else if (cid !== undefined && choices!.some((x) => x.id === cid)) c.fail([...cp, 'id'], `duplicate choice "${cid}"`);
        else if (cid !== undefined && label) choices!.push({ id: cid, label });
      });
      if (o.answer === undefined) c.fail([...path, 'answer'], 'a question with choices needs the right choice id');
      else {
        answer = c.text(o.answer, [...path, 'answer']);
        if (answer !== undefined && rawChoices && rawChoices.length === choices.length && !choices.some((x) => x.id === answer)) {
          c.fail([...path, 'answer'], `unknown choice "${answer}" (choices: ${choices.map((x) => x.id).join(', ')})`);
        }
      }
    } else if (o.answer !== undefined) {
      c.fail([...path, 'answer'], 'only a question with choices has an answer id; a free answer uses "model" alone');
    }
    const followups: InterviewFollowup[] = [];
    c.list(o.followups, [...path, 'followups'])?.forEach((rf, j) => {
      const fp: Path = [...path, 'followups', j];
      const fo = c.object(rf, fp, ['id', 'question', 'model'], []);
      if (!fo) return;
      const fid = c.text(fo.id, [...fp, 'id']);
      const fq = c.localized(fo.question, [...fp, 'question']);
      const fm = c.localized(fo.model, [...fp, 'model']);
      if (fid !== undefined && !ID_RE.test(fid)) c.fail([...fp, 'id'], `"${fid}" must be kebab-case`);
      else if (fid !== undefined && followupIds.has(fid)) c.fail([...fp, 'id'], `duplicate follow-up "${fid}"`);
      else if (fid !== undefined && fq && fm) {
        followupIds.add(fid);
        followups.push({ id: fid, question: fq, model: fm });
      }
    });
    if (id === undefined || !question || !model || lesson === undefined) return;
    questions.push({
      id,
      question,
      ...(choices ? { choices } : {}),
      ...(answer !== undefined ? { answer } : {}),
      model,
      lesson,
      see,
      followups,
    });
  });

  const topics: InterviewTopic[] = [];
  const tList = c.list(root.topics, ['topics']);
  if (tList && tList.length === 0) c.fail(['topics'], 'list at least one topic');
  tList?.forEach((raw, i) => {
    const path: Path = ['topics', i];
    const o = c.object(raw, path, ['title', 'lessons'], []);
    if (!o) return;
    const t = c.localized(o.title, [...path, 'title']);
    const lessons = lessonList(o.lessons, [...path, 'lessons'], true);
    if (t) topics.push({ title: t, lessons });
  });

  const pages: InterviewPage[] = [];
  c.list(root.pages, ['pages'])?.forEach((raw, i) => {
    const path: Path = ['pages', i];
    const o = c.object(raw, path, ['id', 'title', 'body', 'lessons'], []);
    if (!o) return;
    const id = c.text(o.id, [...path, 'id']);
    if (id !== undefined && !ID_RE.test(id)) c.fail([...path, 'id'], `"${id}" must be kebab-case`);
    else if (id !== undefined && pages.some((p) => p.id === id)) c.fail([...path, 'id'], `duplicate page "${id}"`);
    const t = c.localized(o.title, [...path, 'title']);
    const body = c.localized(o.body, [...path, 'body']);
    const lessons = lessonList(o.lessons, [...path, 'lessons'], false);
    if (id !== undefined && ID_RE.test(id) && t && body) pages.push({ id, title: t, body, lessons });
  });

  if (c.issues.length > 0) throw new LessonError(c.issues);
  return { title: title!, ...(intro ? { intro } : {}), questions, topics, pages };
}

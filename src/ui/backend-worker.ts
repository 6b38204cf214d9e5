/**
 * The real PlayerBackend: the engine runs in a Web Worker (src/worker/worker.ts) behind a
 * watchdog (src/worker/client.ts). Also the lesson catalog, bundled from lessons/*.yaml.
 */
import { lessonToSpec, parseInterview, parseLesson, type Interview, type Lesson } from '../scenario/lesson';
import { scriptItem, scriptSteps } from '../scenario/script';
import { EngineClient, type ClientEvent, type Overdue, type WatchdogLimits, type WorkerLike } from '../worker/client';
import type { ScenarioSource } from '../worker/protocol';
import type { Course } from '../scenario/course';
import type { PlayerFrame } from '../sim/player';
import type { LessonCatalog, LessonMeta, LessonPreview, PlayerBackend, PlayerState, ScriptItem } from './backend';
import { annotateScript, lessonMeta } from './model/lessonScript';
import type { LessonInfo } from './model/lessonInfo';
import { course as catalogCourse, entries as catalogEntries, problems as catalogProblems } from 'virtual:lesson-catalog';
import { watchdog } from './state/watchdog.svelte';
import { takeEarlyWorker } from './earlyEngine';

const lessonFiles = import.meta.glob('/lessons/*.yaml', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
const interviewFiles = import.meta.glob('/lessons/interview/interview.yaml', { query: '?raw', import: 'default', eager: true }) as Record<
  string,
  string
>;

export type { LessonInfo } from './model/lessonInfo';

interface BundledLesson {
  info: LessonInfo;
  yaml: string;
  /** Parsed when the lesson is first opened (the list needs only `info`, built with the app). */
  lesson: Lesson | null;
}

/** Every bundled lesson that parsed when the app was built; a broken file is reported in the console. */
const bundled: Map<string, BundledLesson> = (() => {
  const out = new Map<string, BundledLesson>();
  for (const p of catalogProblems) console.error(p);
  for (const { path, info } of catalogEntries) {
    const yaml = lessonFiles[path];
    if (yaml !== undefined) out.set(info.id, { info, yaml, lesson: null });
  }
  return out;
})();

/** The lesson, parsed once. */
function parsed(b: BundledLesson): Lesson {
  return (b.lesson ??= parseLesson(b.yaml));
}

/** The bundled lessons, in file-name order. */
export function lessonInfos(): LessonInfo[] {
  return [...bundled.values()].map((b) => structuredClone(b.info));
}

/** The interview file, parsed against the bundled lessons; null when absent, or broken (with a console error). */
export function interviewData(): Interview | null {
  const [path, yaml] = Object.entries(interviewFiles)[0] ?? [];
  if (path === undefined || yaml === undefined) return null;
  try {
    return parseInterview(yaml, [...bundled.keys()]);
  } catch (e) {
    console.error(`${path}: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** The course file, parsed with the app against the lessons that parsed; null when absent, or broken (reported in the console). */
export function courseData(): Course | null {
  return catalogCourse ? structuredClone(catalogCourse) : null;
}

/** The lesson list, course order and interview questions for the UI. */
export const lessonCatalog: LessonCatalog = {
  list: async () => lessonInfos(),
  interview: async () => interviewData(),
  course: async () => courseData(),
  preview: lessonPreview,
};

// One object per lesson, so the engine's first answer, when its script is the same, reuses it and
// the panels drawn from the preview do not redraw.
const previews = new Map<string, LessonPreview>();

/**
 * The lesson's script and narration as the engine will play them (the same pure functions build
 * both from the same YAML), for the player to draw while the engine starts; null for an unknown
 * lesson.
 */
export function lessonPreview(id: string): LessonPreview | null {
  const cached = previews.get(id);
  if (cached) return cached;
  const l = bundled.get(id);
  if (!l) return null;
  const lesson = parsed(l);
  const spec = lessonToSpec(lesson);
  const perm = spec.permutations[0];
  if (!perm) return null;
  const p = { script: annotateScript(scriptSteps(spec, perm).map(scriptItem), lesson), meta: lessonMeta(lesson) };
  previews.set(id, p);
  return p;
}

/** The same items, compared on what the engine sends (not on what the lesson adds). */
function sameScript(a: readonly ScriptItem[], b: readonly ScriptItem[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i]!;
      return (
        x.index === y.index && x.kind === y.kind && x.session === y.session && x.step === y.step && x.sql === y.sql && x.label === y.label
      );
    })
  );
}

/** The lesson's YAML text, for exporting or showing the source. */
export function lessonYaml(id: string): string | undefined {
  return bundled.get(id)?.yaml;
}

export interface WorkerBackendOptions {
  limits?: Partial<WatchdogLimits>;
  onEvent?: (e: ClientEvent) => void;
  /** Where an overrun is reported; defaults to the app's watchdog state (the countdown banner). */
  onOverdue?: (o: Overdue | null) => void;
  /** Defaults to the Vite-bundled module worker. */
  createWorker?: () => WorkerLike;
}

/** Where the script items a learner stopped are kept for the tab's life (a reload replays them as cancelled). */
const CANCELLED_KEY = 'lockstep.cancelled-steps';

/** The per-scenario key of the stopped script items: the lesson id, or the spec text. */
function scenarioKey(source: ScenarioSource): string {
  return source.kind === 'lesson' ? `lesson:${source.id}` : `spec:${source.permutation ?? 0}:${source.text}`;
}

/** The script items stopped before in this scenario (none without sessionStorage). */
function loadCancelled(key: string): number[] {
  try {
    const all: unknown = JSON.parse(globalThis.sessionStorage?.getItem(CANCELLED_KEY) ?? '{}');
    const list = (all as Record<string, unknown>)[key];
    return Array.isArray(list) ? list.filter((k): k is number => Number.isInteger(k) && k >= 0) : [];
  } catch {
    return [];
  }
}

/** Remembers the scenario's stopped script items (a storage failure only loses them on reload). */
function saveCancelled(key: string, steps: readonly number[]): void {
  try {
    const all = JSON.parse(globalThis.sessionStorage?.getItem(CANCELLED_KEY) ?? '{}') as Record<string, number[]>;
    all[key] = [...steps];
    globalThis.sessionStorage?.setItem(CANCELLED_KEY, JSON.stringify(all));
  } catch {
    // Storage full or unavailable: the cancel still holds until the page is reloaded.
  }
}

let answered: () => void = () => undefined;
/** Resolves at the first answer any engine Worker of this page sends (its boot is over by then). */
export const engineAnswered = new Promise<void>((ok) => (answered = ok));

/** Starts the engine Worker and returns the PlayerBackend over it. */
export function createWorkerBackend(opts: WorkerBackendOptions = {}): PlayerBackend & { dispose(): void } {
  const client = new EngineClient({
    createWorker:
      opts.createWorker ??
      (() => takeEarlyWorker() ?? (new Worker(new URL('../worker/worker.ts', import.meta.url), { type: 'module' }) as WorkerLike)),
    ...(opts.limits ? { limits: opts.limits } : {}),
    onEvent: (e) => {
      if (e.type === 'answer') answered();
      opts.onEvent?.(e);
    },
    onOverdue: opts.onOverdue ?? ((o) => (watchdog.overdue = o)),
  });
  // The open lesson's narration, predicts and code, joined to the engine's script once per open.
  let current: { lesson: Lesson; meta: LessonMeta; script: ScriptItem[] | null; preview: LessonPreview | null } | null = null;
  // The open scenario's key and the stopped script items last saved for it.
  let opened: { key: string; saved: number } | null = null;
  const state = (v: PlayerFrame): PlayerState => {
    if (opened && client.cancelledSteps.length !== opened.saved) {
      saveCancelled(opened.key, client.cancelledSteps);
      opened.saved = client.cancelledSteps.length;
    }
    if (!current) return v;
    current.script ??=
      current.preview && sameScript(current.preview.script, v.script) ? current.preview.script : annotateScript(v.script, current.lesson);
    return { ...v, script: current.script, lesson: current.meta };
  };
  return {
    async open(source) {
      current = null;
      opened = null;
      const open = async (s: ScenarioSource): Promise<PlayerFrame> => {
        const key = scenarioKey(s);
        const cancelled = loadCancelled(key);
        const view = await client.open(s, cancelled);
        opened = { key, saved: cancelled.length };
        return view;
      };
      if (source.kind === 'spec') return state(await open({ kind: 'spec', text: source.text }));
      const l = bundled.get(source.id);
      if (!l) throw new Error(`There is no lesson "${source.id}".`);
      const view = await open({ kind: 'lesson', id: source.id, yaml: l.yaml });
      const preview = lessonPreview(source.id);
      const lesson = parsed(l);
      current = { lesson, meta: preview?.meta ?? lessonMeta(lesson), script: null, preview };
      return state(view);
    },
    next: async () => state(await client.act({ type: 'step' })),
    goto: async (cursor, atMs) => state(await client.goto(cursor, atMs)),
    reset: async () => state(await client.reset()),
    runAdHoc: async (session, sql) => state(await client.act({ type: 'adhoc', session, sql })),
    advance: async (ms) => state(await client.act({ type: 'advance', ms })),
    advanceToNextTimer: async () => state(await client.act({ type: 'timer' })),
    dispose: () => client.dispose(),
  };
}

/** Dev hook for browser tests: `window.__lockstep`, only in dev builds or with `?debug` in the URL. */
function installDevHook(): void {
  if (typeof window === 'undefined') return;
  if (!import.meta.env.DEV && !new URLSearchParams(window.location.search).has('debug')) return;
  (window as unknown as { __lockstep: unknown }).__lockstep = { createWorkerBackend, lessonInfos, lessonCatalog };
}
installDevHook();

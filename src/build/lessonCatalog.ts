/**
 * `virtual:lesson-catalog`: the lesson list's entries, computed when the app is built (or served)
 * instead of in the page. Parsing every lesson's YAML cost the page about 0.2 s of main-thread CPU
 * at start-up (22 files, 230 KB), on the path to the first step, while the list needs only each
 * lesson's title, summary, topics and counts; the page now parses a lesson's file when it opens
 * it (ui/backend-worker.ts). The course file (its order and tracks, which the list shows) is
 * parsed here too. A file that does not parse is left out, and the page reports it in the console
 * as before.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Plugin } from 'vite';
import { parseLesson } from '../scenario/lesson';
import { parseCourse, type Course } from '../scenario/course';
import { lessonInfoOf, type LessonInfo } from '../ui/model/lessonInfo';

const ID = 'virtual:lesson-catalog';
const RESOLVED = `\0${ID}`;

/** One entry per lesson file that parses, keyed by its path as `import.meta.glob` names it (`/lessons/x.yaml`). */
export interface LessonCatalogModule {
  entries: { path: string; info: LessonInfo }[];
  /** lessons/course/course.yaml, checked against the lessons that parsed; null when absent or broken. */
  course: Course | null;
  problems: string[];
}

/** The entries of every `*.yaml` directly in `dir`, in file-name order. */
export function buildLessonCatalog(dir: string): LessonCatalogModule {
  const entries: LessonCatalogModule['entries'] = [];
  const problems: string[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort((a, b) => `/lessons/${a}`.localeCompare(`/lessons/${b}`))) {
    const path = `/lessons/${file}`;
    try {
      entries.push({ path, info: lessonInfoOf(parseLesson(readFileSync(join(dir, file), 'utf8'))) });
    } catch (e) {
      problems.push(`${path}: ${messageOf(e)}`);
    }
  }
  let course: Course | null = null;
  const courseFile = join(dir, 'course', 'course.yaml');
  if (existsSync(courseFile)) {
    try {
      course = parseCourse(
        readFileSync(courseFile, 'utf8'),
        entries.map((e) => e.info.id),
      );
    } catch (e) {
      problems.push(`/lessons/course/course.yaml: ${messageOf(e)}`);
    }
  }
  return { entries, course, problems };
}

export function lessonCatalog(root = process.cwd()): Plugin {
  const dir = resolve(root, 'lessons');
  return {
    name: 'lockstep-lesson-catalog',
    resolveId: (id) => (id === ID ? RESOLVED : null),
    load(id) {
      if (id !== RESOLVED) return null;
      for (const f of readdirSync(dir)) if (f.endsWith('.yaml')) this.addWatchFile(join(dir, f));
      this.addWatchFile(join(dir, 'course', 'course.yaml'));
      const m = buildLessonCatalog(dir);
      return Object.entries(m)
        .map(([k, v]) => `export const ${k} = ${JSON.stringify(v)};\n`)
        .join('');
    },
    // A lesson edited while `npm start` runs: the list is built again and the page reloads.
    handleHotUpdate({ file, server }) {
      if (!file.startsWith(dir) || !file.endsWith('.yaml') || file.includes('/interview/')) return;
      const mod = server.moduleGraph.getModuleById(RESOLVED);
      if (mod) server.moduleGraph.invalidateModule(mod);
      server.ws.send({ type: 'full-reload' });
    },
  };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The app's engine Worker, started before anything else on the page runs (main.ts imports this
 * module first) on the routes whose player starts it anyway (the lesson list, a track, a lesson):
 * PGlite and the parser then download and boot while the main thread parses the bundled lessons
 * and mounts the app, instead of after. createWorkerBackend takes it over with `takeEarlyWorker`.
 */
import { parseRoute } from './model/route';
import type { WorkerLike } from '../worker/client';

const PLAYER_ROUTES: ReadonlySet<string> = new Set(['home', 'track', 'lesson']);

let early: WorkerLike | null =
  typeof Worker !== 'undefined' && typeof location !== 'undefined' && PLAYER_ROUTES.has(parseRoute(location.hash).name)
    ? (new Worker(new URL('../worker/worker.ts', import.meta.url), { type: 'module' }) as WorkerLike)
    : null;

/** The Worker started at page load, once (null when none was started or it was taken). */
export function takeEarlyWorker(): WorkerLike | null {
  const w = early;
  early = null;
  return w;
}

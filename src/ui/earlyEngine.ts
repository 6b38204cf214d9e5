/**
 * The app's engine Worker, started by a tiny script of its own (index.html loads this module
 * `async`, beside the app's bundle) on the routes whose player starts it anyway: the lesson list,
 * a track, a lesson. PGlite and the parser then download and boot while the app's bundle is still
 * downloading, parsing the bundled lessons and mounting, instead of after. createWorkerBackend
 * takes it over with `takeEarlyWorker`. It imports nothing, so its chunk stays a few hundred bytes.
 */
import type { WorkerLike } from '../worker/client';

/** `#/`, `#/tracks/<id>`, `#/lessons/<id>…`: what model/route parses as home, track and lesson (a test holds them equal). */
export function isPlayerRoute(hash: string): boolean {
  return /^#?\/?(?:$|tracks\/[^/]+\/?$|lessons\/[^/]+(?:\/step\/\d+)?\/?$)/.test(hash);
}

const slot = globalThis as { __lockstepEngine?: WorkerLike | null };
if (slot.__lockstepEngine === undefined)
  slot.__lockstepEngine =
    typeof Worker !== 'undefined' && typeof location !== 'undefined' && isPlayerRoute(location.hash)
      ? (new Worker(new URL('../worker/worker.ts', import.meta.url), { type: 'module' }) as WorkerLike)
      : null;

/** The Worker started at page load, once (null when none was started or it was taken). */
export function takeEarlyWorker(): WorkerLike | null {
  const w = slot.__lockstepEngine ?? null;
  slot.__lockstepEngine = null;
  return w;
}

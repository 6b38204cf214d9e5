/**
 * Starts the executor in a Worker from the prebuilt data directory (src/worker/pgdata.tgz, made
 * by scripts/build-datadir.ts before `npm start` and `npm run build`), else with initdb.
 * PGlite's wasm, its file-system bundle and the data directory download at once, and the wasm
 * compiles while it streams in: PGlite itself would fetch its files only once it is created,
 * which waits for the data directory.
 */
import { PgliteExecutor } from '../engine';
import pgdataUrl from './pgdata.tgz?url';
import pgliteWasmUrl from '@electric-sql/pglite/pglite.wasm?url';
import pgliteDataUrl from '@electric-sql/pglite/pglite.data?url';

/** Resolves to undefined on any failure: PGlite then fetches the file itself. */
function optional<T>(p: Promise<T>): Promise<T | undefined> {
  return p.catch(() => undefined);
}

async function okBlob(url: string): Promise<Blob> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.blob();
}

/** PGlite from the prebuilt cluster if it can be fetched, otherwise a fresh initdb. */
export async function createWorkerExecutor(): Promise<PgliteExecutor> {
  const wasm = optional(WebAssembly.compileStreaming(fetch(pgliteWasmUrl)));
  const fsBundle = optional(okBlob(pgliteDataUrl));
  const dataDir = optional(okBlob(pgdataUrl));
  const [pgliteWasmModule, bundle, dir] = await Promise.all([wasm, fsBundle, dataDir]);
  const files = { ...(pgliteWasmModule ? { pgliteWasmModule } : {}), ...(bundle ? { fsBundle: bundle } : {}) };
  if (dir) {
    try {
      return await PgliteExecutor.create({ dataDir: dir, ...files });
    } catch {
      // fall through: a damaged dump only costs start-up time
    }
  }
  return PgliteExecutor.create(files);
}

/**
 * Starts the executor in a Worker from the prebuilt data directory (src/worker/pgdata.tgz, made
 * by scripts/build-datadir.ts before `npm start` and `npm run build`), else with initdb.
 */
import { PgliteExecutor } from '../engine';
import pgdataUrl from './pgdata.tgz?url';

/** PGlite from the prebuilt cluster if it can be fetched, otherwise a fresh initdb. */
export async function createWorkerExecutor(): Promise<PgliteExecutor> {
  try {
    const res = await fetch(pgdataUrl);
    if (res.ok) return await PgliteExecutor.create({ dataDir: await res.blob() });
  } catch {
    // fall through: a missing or damaged dump only costs start-up time
  }
  return PgliteExecutor.create();
}

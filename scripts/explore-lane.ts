/**
 * One lane of the Node explorer (scripts/bench.ts, exploreBench): a worker thread with its own
 * PGlite and SimDriver that runs one interleaving per message and answers with its outcome and
 * run, as the lab's engine Worker does in the browser. Lanes run in parallel on their own cores.
 */
import { parentPort } from 'node:worker_threads';
import { SimDriver } from '../src/sim/simDriver';
import { exploreBatch } from '../src/scenario/explore';
import type { Spec } from '../src/scenario/types';

export interface LaneRequest {
  spec: Spec;
  index: number;
}

const driver = new SimDriver(undefined, { reuseSetup: true });
const probe = async () => {
  await driver.engine!.refreshTables();
  return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
};

parentPort!.on('message', async (m: LaneRequest | 'close') => {
  if (m === 'close') {
    await driver.close();
    parentPort!.close();
    return;
  }
  try {
    const b = await exploreBatch(m.spec, driver, probe, m.index, 1, { withRuns: true, stopAtStall: true });
    parentPort!.postMessage({ outcome: b.outcomes[0], ...(b.runs?.[0] ? { run: b.runs[0] } : {}) });
  } catch (e) {
    parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
});

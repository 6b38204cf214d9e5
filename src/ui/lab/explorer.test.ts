import { describe, expect, it } from 'vitest';
import { createExplorer, explorerLanes } from './explorer';
import type { WorkerLike } from '../../worker/client';
import type { Command } from '../../worker/protocol';

// Every step writes the same row, so no two orders are of one class: each lane always has an order to run.
const SPEC = `setup { CREATE TABLE t (id int, v int); }
session a
step a1 { UPDATE t SET v = 1 WHERE id = 1; }
step a2 { UPDATE t SET v = 2 WHERE id = 1; }
session b
step b1 { UPDATE t SET v = 3 WHERE id = 1; }
step b2 { UPDATE t SET v = 4 WHERE id = 1; }`;

/** A worker that answers pings and one-order explore requests at once, as a clean run without its run (no reduction). */
function fakeWorker(log: { worker: number; index: number }[], n: number): WorkerLike {
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    terminate() {},
    postMessage(m: unknown) {
      const cmd = m as Command & { id: number };
      const answer =
        cmd.type === 'ping'
          ? { id: cmd.id, ok: true, pong: true, timing: { handleMs: 0 } }
          : cmd.type === 'explore'
            ? (log.push({ worker: n, index: cmd.from }),
              {
                id: cmd.id,
                ok: true,
                explored: {
                  outcomes: [
                    {
                      index: cmd.from,
                      permutation: `#${cmd.from}`,
                      kind: 'clean',
                      victims: [],
                      failures: [],
                      waited: [],
                      dataHash: 'h',
                      data: '',
                    },
                  ],
                },
                timing: { handleMs: 0 },
              })
            : { id: cmd.id, ok: false, kind: 'fatal', message: 'unexpected' };
      setTimeout(() => w.onmessage?.({ data: answer } as MessageEvent), 1);
    },
  };
  return w;
}

describe('createExplorer lanes', () => {
  it.each([1, 2, 3])('%i lane(s): every order runs once, spread over that many workers', async (lanes) => {
    const log: { worker: number; index: number }[] = [];
    let made = 0;
    const ex = createExplorer({ createWorker: () => fakeWorker(log, made++), lanes });
    const r = await ex.explore(SPEC, 6, () => {});
    expect(r.cancelled).toBe(false);
    expect(r.outcomes.map((o) => o.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(log.map((l) => l.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(made).toBe(lanes);
    expect(new Set(log.map((l) => l.worker)).size).toBe(lanes);
    expect(r.ran).toBe(6);
  });
  it('a second lane waits while the running order may cover every order left, and the exploration still ends', async () => {
    // SELECT-only steps commute: every order is of one static class, so lane 1 waits on lane 0's runs.
    const reads = SPEC.replace(/UPDATE t SET v = \d WHERE id = 1/g, 'SELECT v FROM t WHERE id = 1');
    const log: { worker: number; index: number }[] = [];
    let made = 0;
    const ex = createExplorer({ createWorker: () => fakeWorker(log, made++), lanes: 2 });
    const r = await ex.explore(reads, 6, () => {});
    expect(r.cancelled).toBe(false);
    expect(r.outcomes.map((o) => o.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(log.map((l) => l.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(made).toBe(1);
  });
  it('uses one lane per core up to two, one on a device with little memory', () => {
    expect([undefined, 1, 2, 4, 16].map((c) => explorerLanes(c))).toEqual([1, 1, 2, 2, 2]);
    expect(explorerLanes(8, 2)).toBe(1);
    expect(explorerLanes(8, 8)).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { createExplorer, explorerLanes } from './explorer';
import type { WorkerLike } from '../../worker/client';
import type { Command } from '../../worker/protocol';

const SPEC = `setup { CREATE TABLE t (id int); }
session a
step a1 { SELECT 1; }
step a2 { SELECT 2; }
session b
step b1 { SELECT 3; }
step b2 { SELECT 4; }`;

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
  it('uses one lane per core up to two', () => {
    expect([undefined, 1, 2, 4, 16].map(explorerLanes)).toEqual([1, 1, 2, 2, 2]);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { RetryHost } from './retryHost';
import { PgliteExecutor } from '../engine/pg/executor';
import { DEFAULT_CONFIG, type LabConfig } from '../retrylab/types';
import type { RetryReply } from './retryProtocol';

let ex: PgliteExecutor | undefined;
let starts = 0;
const replies: RetryReply[] = [];
const host = new RetryHost(
  async () => {
    starts++;
    return (ex ??= await PgliteExecutor.create());
  },
  (m) => replies.push(m),
);
afterAll(async () => {
  await ex?.close();
});

const cfg = (over: Partial<LabConfig>): LabConfig => ({ ...DEFAULT_CONFIG, workers: 2, transactions: 4, rows: 3, ...over });
const take = () => replies.splice(0);
const kinds = (rs: RetryReply[]) => rs.map((r) => `${r.type}${'index' in r ? r.index : ''}`).filter((k, i, a) => k !== a[i - 1]);

describe('retry lab RetryHost', () => {
  it('runs a sweep in order: progress and a result per configuration, then done', async () => {
    const configs = [cfg({ strategy: 'unordered', seed: 3 }), cfg({ strategy: 'ordered', seed: 3 })];
    await host.handle({ type: 'run', runId: 1, configs });
    const rs = take();
    expect(kinds(rs)).toEqual(['progress0', 'result0', 'progress1', 'result1', 'done']);
    expect(rs.every((r) => r.runId === 1)).toBe(true);
    const results = rs.flatMap((r) => (r.type === 'result' ? [r.result] : []));
    expect(results.map((r) => r.config.strategy)).toEqual(['unordered', 'ordered']);
    for (const r of results) expect(r.committed + r.giveUps).toBe(8);
    expect(rs.at(-1)).toEqual({ type: 'done', runId: 1, cancelled: false });
    expect(rs.find((r) => r.type === 'progress')).toMatchObject({ count: 2 });
    expect(starts).toBe(1);
  });

  it('stops at a cancel that arrives while a run is busy and reports it cancelled', async () => {
    const configs = [cfg({ transactions: 40, seed: 5 }), cfg({ transactions: 40, seed: 6 })];
    const running = host.handle({ type: 'run', runId: 2, configs });
    // Cancel as soon as the first progress report is out, as the page's Stop button does.
    while (!replies.some((r) => r.type === 'progress')) await new Promise((r) => setTimeout(r, 0));
    await host.handle({ type: 'cancel', runId: 2 });
    await running;
    const rs = take();
    expect(rs.at(-1)).toEqual({ type: 'done', runId: 2, cancelled: true });
    expect(rs.filter((r) => r.type === 'result').map((r) => (r.type === 'result' ? r.index : -1))).toEqual([0]);
    const first = rs.find((r) => r.type === 'result');
    if (first?.type !== 'result') throw new Error('no result');
    expect(first.result.committed + first.result.giveUps).toBeLessThan(80);
    // The PGlite is reused across runs; a cancelled run id does not leak into the next run.
    await host.handle({ type: 'run', runId: 3, configs: [cfg({ seed: 3 })] });
    expect(take().at(-1)).toEqual({ type: 'done', runId: 3, cancelled: false });
    expect(starts).toBe(1);
  });

  it('reports a failed start as an error and tries again on the next run', async () => {
    let attempts = 0;
    const got: RetryReply[] = [];
    const failing = new RetryHost(
      () => {
        attempts++;
        return Promise.reject(new Error('no wasm'));
      },
      (m) => got.push(m),
    );
    await failing.handle({ type: 'run', runId: 7, configs: [cfg({})] });
    await failing.handle({ type: 'run', runId: 8, configs: [cfg({})] });
    expect(got).toEqual([
      { type: 'error', runId: 7, message: 'no wasm' },
      { type: 'error', runId: 8, message: 'no wasm' },
    ]);
    expect(attempts).toBe(2);
  });
});

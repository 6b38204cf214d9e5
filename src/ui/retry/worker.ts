/**
 * The retry lab's Web Worker: runs a sweep of lab configurations on one PGlite, reports
 * progress and results, and stops between statements when asked to cancel.
 */
import '../../worker/wasmShim';
import { createWorkerExecutor } from '../../worker/datadir';
import { PgliteExecutor } from '../../engine/pg/executor';
import { runLab } from '../../retrylab/runner';
import type { RetryReply, RetryRequest } from './protocol';

let executor: Promise<PgliteExecutor> | null = null;
const cancelled = new Set<number>();
const post = (m: RetryReply) => self.postMessage(m);
// A macrotask turn, so "cancel" messages get delivered while a run is busy.
const yieldToHost = () => new Promise<void>((r) => setTimeout(r, 0));

self.onmessage = async (ev: MessageEvent<RetryRequest>) => {
  const msg = ev.data;
  if (msg.type === 'cancel') {
    cancelled.add(msg.runId);
    return;
  }
  const { runId, configs } = msg;
  const signal = {
    get aborted() {
      return cancelled.has(runId);
    },
  };
  try {
    executor ??= createWorkerExecutor();
    const ex = await executor;
    for (let index = 0; index < configs.length && !signal.aborted; index++) {
      const result = await runLab(configs[index], {
        executor: ex,
        signal,
        progressEvery: 2,
        yieldToHost,
        timelineLimit: 120,
        onProgress: (progress) => post({ type: 'progress', runId, index, count: configs.length, progress }),
      });
      post({ type: 'result', runId, index, result });
      await yieldToHost();
    }
    post({ type: 'done', runId, cancelled: signal.aborted });
  } catch (e) {
    post({ type: 'error', runId, message: e instanceof Error ? e.message : String(e) });
  } finally {
    cancelled.delete(runId);
  }
};

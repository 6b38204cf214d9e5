/**
 * The retry lab worker's request handler, independent of the Worker API (testable in Node):
 * runs a sweep of lab configurations on one PGlite, reports progress and results, and stops
 * between statements when the sweep is cancelled.
 */
import { PgliteExecutor } from '../engine/pg/executor';
import { runLab } from '../retrylab/runner';
import type { RetryReply, RetryRequest } from './retryProtocol';

/** How often a run reports progress, in finished transactions. */
const PROGRESS_EVERY = 2;
/** Attempts kept per result for the page's timeline. */
const TIMELINE_LIMIT = 120;

/** A macrotask turn, so "cancel" messages get delivered while a run is busy. */
const macrotask = () => new Promise<void>((r) => setTimeout(r, 0));

/** Handles retry lab requests; replies go to `post`, and `handle` never throws. */
export class RetryHost {
  private executor: Promise<PgliteExecutor> | null = null;
  private readonly cancelled = new Set<number>();

  /** The executor starts on the first run, so opening the page costs nothing until then. */
  constructor(
    private readonly createExecutor: () => Promise<PgliteExecutor>,
    private readonly post: (reply: RetryReply) => void,
    private readonly yieldToHost: () => Promise<void> = macrotask,
  ) {}

  /** Starts a sweep (resolving when it ends) or marks one cancelled (at once). */
  async handle(msg: RetryRequest): Promise<void> {
    if (msg.type === 'cancel') {
      this.cancelled.add(msg.runId);
      return;
    }
    const { runId, configs } = msg;
    const cancelled = this.cancelled;
    const signal = {
      get aborted() {
        return cancelled.has(runId);
      },
    };
    try {
      // A failed start is not kept: the next run tries to start PGlite again.
      this.executor ??= this.createExecutor().catch((e: unknown) => {
        this.executor = null;
        throw e;
      });
      const executor = await this.executor;
      for (let index = 0; index < configs.length && !signal.aborted; index++) {
        const result = await runLab(configs[index], {
          executor,
          signal,
          progressEvery: PROGRESS_EVERY,
          yieldToHost: this.yieldToHost,
          timelineLimit: TIMELINE_LIMIT,
          onProgress: (progress) => this.post({ type: 'progress', runId, index, count: configs.length, progress }),
        });
        this.post({ type: 'result', runId, index, result });
        await this.yieldToHost();
      }
      this.post({ type: 'done', runId, cancelled: signal.aborted });
    } catch (e) {
      this.post({ type: 'error', runId, message: e instanceof Error ? e.message : String(e) });
    } finally {
      cancelled.delete(runId);
    }
  }
}

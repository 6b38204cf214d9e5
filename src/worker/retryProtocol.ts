/** Messages between the retry lab page (src/ui/retry/RetryLab.svelte) and its Worker (retryWorker.ts). */
import type { LabConfig, LabProgress, LabResult } from '../retrylab/types';

/** What the page asks: run a sweep of configurations, or cancel a running one. */
export type RetryRequest = { type: 'run'; runId: number; configs: LabConfig[] } | { type: 'cancel'; runId: number };

/** What the worker reports while and after a sweep runs. */
export type RetryReply =
  | { type: 'progress'; runId: number; index: number; count: number; progress: LabProgress }
  | { type: 'result'; runId: number; index: number; result: LabResult }
  | { type: 'done'; runId: number; cancelled: boolean }
  | { type: 'error'; runId: number; message: string };

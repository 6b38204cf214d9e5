/** Messages between the retry page and its Worker (worker.ts). */
import type { LabConfig, LabProgress, LabResult } from '../../retrylab/types';

export type RetryRequest = { type: 'run'; runId: number; configs: LabConfig[] } | { type: 'cancel'; runId: number };

export type RetryReply =
  | { type: 'progress'; runId: number; index: number; count: number; progress: LabProgress }
  | { type: 'result'; runId: number; index: number; result: LabResult }
  | { type: 'done'; runId: number; cancelled: boolean }
  | { type: 'error'; runId: number; message: string };

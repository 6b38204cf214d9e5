/** One end-to-end flow: a name (for `--only`), a title, an optional viewport and what it does. */
import type { FlowContext } from './harness';

export interface Flow {
  name: string;
  title: string;
  viewport?: { width: number; height: number };
  /** Overrides the runner's per-flow time limit (ms) for a flow that is long by design. */
  timeoutMs?: number;
  run: (ctx: FlowContext) => Promise<void>;
}

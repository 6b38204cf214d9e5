/** One end-to-end flow: a name (for `--only`), a title, an optional viewport and what it does. */
import type { FlowContext } from './harness';

export interface Flow {
  name: string;
  title: string;
  viewport?: { width: number; height: number };
  run: (ctx: FlowContext) => Promise<void>;
}

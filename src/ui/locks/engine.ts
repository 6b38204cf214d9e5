/** The #/locks page's engine: the bundled engine Worker behind an EngineClient (watchdog included). */
import { EngineClient, type LocksOutcome, type WorkerLike } from '../../worker/client';
import { watchdog } from '../state/watchdog.svelte';

/** What the page needs from the engine (a fake in component tests). */
export interface LocksEngine {
  locks(schema: string, sql: string): Promise<LocksOutcome>;
  dispose(): void;
}

/** The bundled engine Worker behind an EngineClient, or null where Workers do not exist (jsdom). */
export function defaultLocksEngine(): LocksEngine | null {
  if (typeof Worker === 'undefined') return null;
  return new EngineClient({
    createWorker: () => new Worker(new URL('../../worker/worker.ts', import.meta.url), { type: 'module' }) as WorkerLike,
    onOverdue: (o) => (watchdog.overdue = o),
  });
}

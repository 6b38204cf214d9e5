/**
 * The lab's client of the syntax-check Worker (src/worker/sqlcheck.worker.ts): PostgreSQL's
 * parser answers whether each step's SQL parses, before anything is played.
 */
import type { CheckReply, SyntaxProblem } from '../../worker/sqlcheck';

export type { SyntaxProblem };

/** What the lab needs from a checker (a fake in component tests). */
export interface SqlChecker {
  /** One entry per text: the parser's complaint, or null when it parses. */
  check(texts: string[]): Promise<(SyntaxProblem | null)[]>;
  dispose(): void;
}

/** A checker over a Worker; requests may overlap, each answer finds its own caller by id. */
export function createSqlChecker(createWorker: () => Worker): SqlChecker {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, (p: (SyntaxProblem | null)[]) => void>();
  const start = (): Worker => {
    const w = createWorker();
    w.onmessage = (ev: MessageEvent<CheckReply>) => {
      const done = pending.get(ev.data.id);
      pending.delete(ev.data.id);
      done?.(ev.data.problems);
    };
    return w;
  };
  return {
    check(texts) {
      worker ??= start();
      const id = nextId++;
      const w = worker;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        w.postMessage({ id, texts });
      });
    },
    dispose() {
      worker?.terminate();
      worker = null;
      pending.clear();
    },
  };
}

/** The bundled checker, or null where Workers do not exist (jsdom). */
export function defaultSqlChecker(): SqlChecker | null {
  if (typeof Worker === 'undefined') return null;
  return createSqlChecker(() => new Worker(new URL('../../worker/sqlcheck.worker.ts', import.meta.url), { type: 'module' }));
}

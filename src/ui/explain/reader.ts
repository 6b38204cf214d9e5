/**
 * The explain page's client of its parser Worker (src/worker/explain.worker.ts): PostgreSQL's
 * grammar reads a report's statements; nothing leaves the page.
 */
import type { StatementReader } from '../../explain/analyze';
import type { ReadReply, ReadRequest } from '../../explain/protocol';
import type { StatementReading } from '../../explain/explain';

/** A reader over one lazily started Worker; answers find their callers by id. */
export function createStatementReader(createWorker: () => Worker): { read: StatementReader; dispose: () => void } {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, (r: StatementReading[]) => void>();
  const start = (): Worker => {
    const w = createWorker();
    w.onmessage = (ev: MessageEvent<ReadReply>) => {
      const done = pending.get(ev.data.id);
      pending.delete(ev.data.id);
      done?.(ev.data.readings);
    };
    return w;
  };
  return {
    read(sqls) {
      worker ??= start();
      const w = worker;
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        const req: ReadRequest = { id, sqls };
        w.postMessage(req);
      });
    },
    dispose() {
      worker?.terminate();
      worker = null;
      pending.clear();
    },
  };
}

/** The bundled reader. */
export function defaultStatementReader(): { read: StatementReader; dispose: () => void } {
  return createStatementReader(() => new Worker(new URL('../../worker/explain.worker.ts', import.meta.url), { type: 'module' }));
}

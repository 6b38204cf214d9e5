/**
 * The lab's exploration client: a dedicated engine Worker (so exploring never disturbs the
 * player) driven in small batches of permutations, one protocol request per batch. Progress is
 * reported after each batch; cancel terminates the worker at once (PGlite cannot be interrupted)
 * and the next run starts a fresh one.
 */
import type { WorkerLike } from '../../worker/client';
import { isResponse, type Command, type Response } from '../../worker/protocol';
import type { ExploreBatch, InterleavingOutcome } from '../../scenario/explore';
import type { PermutationRun } from '../../scenario/isolation';

/** What the lab needs from an explorer (a fake in component tests). */
export interface Explorer {
  /**
   * Runs permutations 0 … count-1 of the spec text; resolves with what finished (all, or up to the
   * cancel). `opts.invariant`: a query whose verdict over each final data lands in the outcome.
   */
  explore(
    text: string,
    count: number,
    onProgress: (done: InterleavingOutcome[]) => void,
    opts?: { invariant?: string },
  ): Promise<{ outcomes: InterleavingOutcome[]; cancelled: boolean }>;
  /** Runs the spec's first permutation and returns the full run (for transcripts). */
  run(text: string): Promise<PermutationRun[]>;
  cancel(): void;
  dispose(): void;
}

export interface ExplorerOptions {
  createWorker: () => WorkerLike;
  /** Permutations per request. */
  batch?: number;
  /** Time limit per request, ms (the first one includes starting PGlite). */
  limitMs?: number;
}

class Cancelled extends Error {}

/** An Explorer over engine Workers. */
export function createExplorer(opts: ExplorerOptions): Explorer {
  const batchSize = opts.batch ?? 4;
  const limitMs = opts.limitMs ?? 60_000;
  let worker: WorkerLike | null = null;
  let nextId = 1;
  let generation = 0;
  let abort: (() => void) | null = null;

  const send = (cmd: Command): Promise<Response> => {
    worker ??= opts.createWorker();
    const w = worker;
    const id = nextId++;
    return new Promise<Response>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        w.onmessage = null;
        w.onerror = null;
        abort = null;
      };
      const timer = setTimeout(() => {
        done();
        drop();
        reject(new Error(`no answer within ${limitMs / 1000} s`));
      }, limitMs);
      abort = () => {
        done();
        reject(new Cancelled());
      };
      w.onmessage = (ev) => {
        const m: unknown = ev.data;
        if (!isResponse(m) || m.id !== id) return;
        done();
        resolve(m);
      };
      w.onerror = (ev) => {
        done();
        drop();
        reject(new Error(`the worker crashed: ${ev.message || 'unknown error'}`));
      };
      w.postMessage({ ...cmd, id });
    });
  };
  const drop = () => {
    worker?.terminate();
    worker = null;
  };
  const batchOf = async (cmd: Extract<Command, { type: 'explore' }>): Promise<ExploreBatch> => {
    const r = await send(cmd);
    if (!r.ok) throw new Error(r.message);
    if (!('explored' in r)) throw new Error('unexpected answer from the engine worker');
    return r.explored;
  };

  return {
    async explore(text, count, onProgress, opts = {}) {
      const mine = ++generation;
      const outcomes: InterleavingOutcome[] = [];
      try {
        for (let from = 0; from < count; from += batchSize) {
          const b = await batchOf({
            type: 'explore',
            text,
            from,
            count: Math.min(batchSize, count - from),
            ...(opts.invariant !== undefined ? { invariant: opts.invariant } : {}),
          });
          if (mine !== generation) return { outcomes, cancelled: true };
          outcomes.push(...b.outcomes);
          onProgress(outcomes.slice());
          if (b.outcomes.length === 0) break;
        }
      } catch (e) {
        if (e instanceof Cancelled) return { outcomes, cancelled: true };
        throw e;
      }
      return { outcomes, cancelled: false };
    },
    async run(text) {
      const b = await batchOf({ type: 'explore', text, from: 0, count: 1, withRuns: true });
      return b.runs ?? [];
    },
    cancel() {
      generation++;
      abort?.();
      drop();
    },
    dispose() {
      this.cancel();
    },
  };
}

/**
 * The lab's exploration client: a dedicated engine Worker (so exploring never disturbs the
 * player) driven in small batches of permutations, one protocol request per batch. Progress is
 * reported after each batch; cancel terminates the worker at once (PGlite cannot be interrupted)
 * and the next run starts a fresh one. A batch that overruns its time is run again one
 * interleaving at a time, so the one that runs too long is stopped and recorded as 'stopped'
 * and the others still run.
 */
import type { WorkerLike } from '../../worker/client';
import { isResponse, type Command, type Response } from '../../worker/protocol';
import type { ExploreBatch, InterleavingOutcome } from '../../scenario/explore';
import type { PermutationRun } from '../../scenario/isolation';
import { parseSpec } from '../../scenario/spec';
import { permutationOf } from '../../scenario/explore';
import { formatPermutation } from '../../scenario/permutations';

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
  /** Time allowed to start a fresh worker (PGlite and the parser), ms. */
  startMs?: number;
  /** Time allowed per interleaving, ms: one still running then is stopped and recorded. */
  perInterleavingMs?: number;
}

/** Default time one interleaving may run before it is stopped. */
export const PER_INTERLEAVING_MS = 10_000;

class Cancelled extends Error {}
class TimedOut extends Error {}

/** An Explorer over engine Workers. */
export function createExplorer(opts: ExplorerOptions): Explorer {
  const batchSize = opts.batch ?? 1;
  const startMs = opts.startMs ?? 30_000;
  const perMs = opts.perInterleavingMs ?? PER_INTERLEAVING_MS;
  let worker: WorkerLike | null = null;
  let started = false;
  let nextId = 1;
  let generation = 0;
  let abort: (() => void) | null = null;

  const send = (cmd: Command, limitMs: number): Promise<Response> => {
    if (!worker) {
      worker = opts.createWorker();
      started = false;
    }
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
        reject(new TimedOut(`no answer within ${limitMs / 1000} s`));
      }, limitMs);
      abort = () => {
        done();
        reject(new Cancelled());
      };
      w.onmessage = (ev) => {
        const m: unknown = ev.data;
        if (!isResponse(m) || m.id !== id) return;
        done();
        started = true;
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
  /** A fresh worker boots before it is timed per interleaving (a ping waits for PGlite). */
  const warm = async () => {
    if (worker && started) return;
    const r = await send({ type: 'ping' }, startMs);
    if (!r.ok) throw new Error(r.message);
  };
  const batchOf = async (cmd: Extract<Command, { type: 'explore' }>): Promise<ExploreBatch> => {
    await warm();
    const r = await send(cmd, cmd.count * perMs);
    if (!r.ok) throw new Error(r.message);
    if (!('explored' in r)) throw new Error('unexpected answer from the engine worker');
    return r.explored;
  };
  const stoppedOutcome = (text: string, index: number): InterleavingOutcome => {
    let permutation = `#${index + 1}`;
    try {
      permutation = formatPermutation(permutationOf(parseSpec(text), index));
    } catch {
      /* the worker parsed this text; the number alone still identifies it */
    }
    return { index, permutation, kind: 'stopped', stoppedAfterMs: perMs, victims: [], waited: [], failures: [], dataHash: '', data: '' };
  };

  return {
    async explore(text, count, onProgress, opts = {}) {
      const mine = ++generation;
      const outcomes: InterleavingOutcome[] = [];
      /** Runs permutations from … from+n-1; false when the spec has no more. */
      const range = async (from: number, n: number): Promise<boolean> => {
        try {
          const b = await batchOf({
            type: 'explore',
            text,
            from,
            count: n,
            ...(opts.invariant !== undefined ? { invariant: opts.invariant } : {}),
          });
          if (mine !== generation) throw new Cancelled();
          outcomes.push(...b.outcomes);
          onProgress(outcomes.slice());
          return b.outcomes.length > 0;
        } catch (e) {
          if (!(e instanceof TimedOut) || mine !== generation) throw e;
        }
        // One of them ran too long: the worker is gone; run them singly to find it.
        if (n === 1) {
          outcomes.push(stoppedOutcome(text, from));
          onProgress(outcomes.slice());
          return true;
        }
        for (let i = from; i < from + n; i++) if (!(await range(i, 1))) return false;
        return true;
      };
      try {
        for (let from = 0; from < count; from += batchSize) {
          if (!(await range(from, Math.min(batchSize, count - from)))) break;
          if (mine !== generation) return { outcomes, cancelled: true };
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

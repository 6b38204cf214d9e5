/**
 * The lab's exploration client: a dedicated engine Worker (so exploring never disturbs the
 * player) asked for one interleaving per protocol request, with its run, so the partial-order
 * reduction (src/scenario/por.ts) can give the outcome to every equivalent order and skip them.
 * Progress is reported a few times a second; cancel terminates the worker at once (PGlite cannot
 * be interrupted) and the next run starts a fresh one. An interleaving that overruns its time is
 * stopped and recorded as 'stopped' (the worker is replaced) and the others still run.
 */
import type { WorkerLike } from '../../worker/client';
import { isResponse, type Command, type Response } from '../../worker/protocol';
import type { ExploreBatch, InterleavingOutcome } from '../../scenario/explore';
import type { PermutationRun } from '../../scenario/isolation';
import { parseSpec } from '../../scenario/spec';
import { permutationOf } from '../../scenario/explore';
import { formatPermutation } from '../../scenario/permutations';
import { exploreReduced, type ReducedProgress } from '../../scenario/por';
import type { Spec } from '../../scenario/types';

/** Least time between two progress reports, ms. */
const PROGRESS_MS = 250;

const byIndex = (os: readonly InterleavingOutcome[]): InterleavingOutcome[] => [...os].sort((a, b) => a.index - b.index);

/** What the lab needs from an explorer (a fake in component tests). */
export interface Explorer {
  /**
   * Covers permutations 0 … count-1 of the spec text, running one per class of equivalent orders
   * (src/scenario/por.ts); resolves with what finished (all, or up to the cancel), in index order,
   * and how many interleavings actually ran. `opts.invariant`: a query whose verdict over each final data lands in the outcome.
   */
  explore(
    text: string,
    count: number,
    onProgress: (done: InterleavingOutcome[], ran?: number) => void,
    opts?: { invariant?: string },
  ): Promise<{ outcomes: InterleavingOutcome[]; cancelled: boolean; ran?: number }>;
  /** Runs the spec's first permutation and returns the full run (for transcripts). */
  run(text: string): Promise<PermutationRun[]>;
  cancel(): void;
  dispose(): void;
}

export interface ExplorerOptions {
  createWorker: () => WorkerLike;
  /** Time allowed to start a fresh worker (PGlite and the parser), ms. */
  startMs?: number;
  /** Time allowed per interleaving, ms: one still running then is stopped and recorded. */
  perInterleavingMs?: number;
  /**
   * Workers that explore at once (src/scenario/por.ts lanes), each with its own PGlite (about
   * 200 MB of memory); 1 when omitted. A transcript run always uses the first.
   */
  lanes?: number;
}

/** Default time one interleaving may run before it is stopped. */
export const PER_INTERLEAVING_MS = 10_000;

/**
 * Lanes for this device: one per core up to two. Each lane is a PGlite of its own, and a second
 * one halves the wait for an answer on a machine with two cores or more; more lanes would cost
 * memory for little (a third core also serves the page and the player's engine). A device that
 * says it has less than 4 GB of memory (`navigator.deviceMemory`, Chromium only) keeps one: a
 * second PGlite is about 200 MB more beside the player's.
 */
export function explorerLanes(cores: number | undefined, memoryGB?: number): number {
  if (memoryGB !== undefined && memoryGB < 4) return 1;
  return Math.max(1, Math.min(2, cores ?? 1));
}

class Cancelled extends Error {}
class TimedOut extends Error {}

/** One engine Worker, asked one request at a time; replaced when it times out or crashes. */
function createLane(opts: ExplorerOptions, startMs: number) {
  let worker: WorkerLike | null = null;
  let started = false;
  let nextId = 1;
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
  return {
    async batchOf(cmd: Extract<Command, { type: 'explore' }>, perMs: number): Promise<ExploreBatch> {
      await warm();
      const r = await send(cmd, cmd.count * perMs);
      if (!r.ok) throw new Error(r.message);
      if (!('explored' in r)) throw new Error('unexpected answer from the engine worker');
      return r.explored;
    },
    /** Rejects the request in flight (Cancelled) and terminates the worker: PGlite cannot be interrupted. */
    stop() {
      abort?.();
      drop();
    },
  };
}

/** An Explorer over engine Workers. */
export function createExplorer(opts: ExplorerOptions): Explorer {
  const startMs = opts.startMs ?? 30_000;
  const perMs = opts.perInterleavingMs ?? PER_INTERLEAVING_MS;
  const lanes = Array.from({ length: Math.max(1, opts.lanes ?? 1) }, () => createLane(opts, startMs));
  let generation = 0;
  const batchOf = (cmd: Extract<Command, { type: 'explore' }>, lane = 0) => lanes[lane].batchOf(cmd, perMs);

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
      let spec: Spec;
      try {
        spec = parseSpec(text);
      } catch (e) {
        throw new Error(e instanceof Error ? e.message : String(e));
      }
      let lastReport = 0;
      let latest: ReducedProgress = { outcomes: [], ran: 0 };
      const report = (force: boolean) => {
        // Sorting and drawing tens of thousands of rows after every run would cost more than the runs.
        const now = performance.now();
        if (!force && now - lastReport < PROGRESS_MS) return;
        lastReport = now;
        onProgress(byIndex(latest.outcomes), latest.ran);
      };
      /** One interleaving; null once cancelled. A run that overruns is recorded as stopped. */
      const runOne = async (index: number, lane: number): Promise<{ outcome: InterleavingOutcome; run?: PermutationRun } | null> => {
        try {
          const b = await batchOf(
            {
              type: 'explore',
              text,
              from: index,
              count: 1,
              withRuns: true,
              // The reduction needs nothing of a stalled run after its stall (src/scenario/por.ts).
              stopAtStall: true,
              ...(opts.invariant !== undefined ? { invariant: opts.invariant } : {}),
            },
            lane,
          );
          if (mine !== generation) return null;
          const outcome = b.outcomes[0];
          if (!outcome) throw new Error(`the engine ran no interleaving #${index + 1}`);
          return { outcome, ...(b.runs?.[0] ? { run: b.runs[0] } : {}) };
        } catch (e) {
          if (e instanceof Cancelled || mine !== generation) return null;
          if (e instanceof TimedOut) return { outcome: stoppedOutcome(text, index) };
          throw e;
        }
      };
      const r = await exploreReduced(
        spec,
        count,
        runOne,
        (p) => {
          latest = p;
          report(false);
        },
        lanes.length,
      );
      // The extra lanes' PGlites go once the answer is in: memory matters more than their boot next time.
      for (const l of lanes.slice(1)) l.stop();
      if (mine !== generation || !r.complete) return { outcomes: byIndex(r.outcomes), cancelled: true, ran: r.ran };
      latest = r;
      report(true);
      return { outcomes: byIndex(r.outcomes), cancelled: false, ran: r.ran };
    },
    async run(text) {
      const b = await batchOf({ type: 'explore', text, from: 0, count: 1, withRuns: true });
      return b.runs ?? [];
    },
    cancel() {
      generation++;
      for (const l of lanes) l.stop();
    },
    dispose() {
      this.cancel();
    },
  };
}

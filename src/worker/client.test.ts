import { describe, expect, it } from 'vitest';
import { EngineClient, explain, type Overdue, type WorkerLike } from './client';
import type { PlayerAction, PlayerFrame } from '../sim/player';
import type { Request, Response } from './protocol';

/** A fake worker that keeps a history and never answers an ad-hoc statement containing "RECURSIVE". */
class FakeWorker implements WorkerLike {
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  terminated = false;
  received: Request[] = [];
  private history: PlayerAction[] = [];

  postMessage(message: unknown): void {
    const req = message as Request;
    this.received.push(req);
    if (req.type === 'action' && req.action.type === 'adhoc' && req.action.sql.includes('RECURSIVE')) return; // runaway
    if (req.type === 'open') this.history = [];
    if (req.type === 'action') this.history.push(req.action);
    if (req.type === 'replay') this.history = [...req.history];
    const cursor = this.history.filter((a) => a.type === 'step').length;
    const state = { snapshot: {}, script: [], cursor, offScript: this.history.some((a) => a.type !== 'step') } as unknown as PlayerFrame;
    const res: Response = { id: req.id, ok: true, state, history: [...this.history], timing: { handleMs: 1 } };
    this.deliver(req, res);
  }

  /** Answers a request (at once, in a microtask). */
  protected deliver(_req: Request, res: Response): void {
    queueMicrotask(() => this.onmessage?.({ data: res } as MessageEvent));
  }

  terminate(): void {
    this.terminated = true;
  }
}

const runaway = 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r';

describe('EngineClient watchdog', () => {
  it('replaces a stuck worker and rebuilds from the history, the runaway statement joining it as cancelled', async () => {
    const workers: FakeWorker[] = [];
    const events: string[] = [];
    const client = new EngineClient({
      createWorker: () => {
        const w = new FakeWorker();
        workers.push(w);
        return w;
      },
      limits: { actionMs: 50 },
      onEvent: (e) => events.push(e.type),
    });
    await client.open({ kind: 'spec', text: 'x' });
    await client.act({ type: 'step' });
    await client.act({ type: 'adhoc', session: 'A', sql: 'SELECT 1' });
    const state = await client.act({ type: 'adhoc', session: 'B', sql: runaway });

    expect(workers).toHaveLength(2);
    expect(workers[0].terminated).toBe(true);
    expect(workers[1].terminated).toBe(false);
    const rebuilt = workers[1].received.map(({ id: _id, ...rest }) => rest);
    expect(rebuilt).toEqual([
      { type: 'open', source: { kind: 'spec', text: 'x' } },
      {
        type: 'replay',
        history: [
          { type: 'step' },
          { type: 'adhoc', session: 'A', sql: 'SELECT 1' },
          { type: 'adhoc', session: 'B', sql: runaway, cancelled: true },
        ],
      },
    ]);
    expect(state.error).toBe('The statement did not finish within 0.05 s and was stopped; the scenario was rebuilt from its history.');
    expect(state).toMatchObject({ cursor: 1, offScript: true });
    expect(events).toContain('watchdog');
    expect(events).toContain('rebuilt');
    // The new worker carries on.
    const after = await client.act({ type: 'step' });
    expect(after.error).toBeUndefined();
    expect(after.cursor).toBe(2);
    expect(client.confirmedHistory).toHaveLength(4);
  });

  it('gives the rebuild the time the replayed heavy work took when it was done', async () => {
    // The heavy statement took 100 ms in the worker; replaying it takes as long again.
    class Slow extends FakeWorker {
      protected override deliver(req: Request, res: Response): void {
        const heavy = req.type === 'replay' || (req.type === 'action' && req.action.type === 'adhoc' && req.action.sql === 'HEAVY');
        if (!heavy) return super.deliver(req, res);
        const data = { ...res, timing: { handleMs: 100 } };
        setTimeout(() => this.onmessage?.({ data } as MessageEvent), req.type === 'replay' ? 120 : 0);
      }
    }
    const workers: FakeWorker[] = [];
    const client = new EngineClient({
      createWorker: () => {
        const w = new Slow();
        workers.push(w);
        return w;
      },
      limits: { actionMs: 50, perActionMs: 10 },
    });
    await client.open({ kind: 'spec', text: 'x' });
    await client.act({ type: 'adhoc', session: 'A', sql: 'HEAVY' });
    // 50 + 2 × 10 ms would stop the 120 ms replay; the heavy statement's 100 ms is added.
    const state = await client.act({ type: 'adhoc', session: 'B', sql: runaway });
    expect(workers).toHaveLength(2);
    expect(state.error).not.toMatch(/Rebuilding failed/);
    expect(client.confirmedHistory).toHaveLength(2);
  });

  it('treats a crashed worker like a stuck one', async () => {
    const workers: FakeWorker[] = [];
    const client = new EngineClient({
      createWorker: () => {
        const w = new FakeWorker();
        workers.push(w);
        return w;
      },
    });
    await client.open({ kind: 'spec', text: 'x' });
    const pending = client.act({ type: 'adhoc', session: 'A', sql: runaway });
    await Promise.resolve();
    workers[0].onerror?.({ message: 'RuntimeError: Aborted(OOM)' } as ErrorEvent);
    const state = await pending;
    expect(workers).toHaveLength(2);
    expect(state.error).toBe(
      'The statement failed (the worker crashed: RuntimeError: Aborted(OOM)); the scenario was rebuilt from its history.',
    ); // A crash is no cancel: the statement is left out of the rebuilt history.
    expect(workers[1].received.at(-1)).toMatchObject({ type: 'replay', history: [] });
  });

  it('explains a stuck clock move in its own words', () => {
    expect(explain({ type: 'action', action: { type: 'advance', ms: 1000 } }, 3000, 'no answer within 3000 ms')).toBe(
      'Moving the clock did not finish within 3 s and was stopped; the scenario was rebuilt from its history.',
    );
  });
});

describe('EngineClient countdown (onOverdue)', () => {
  const make = (overdues: (Overdue | null)[]) => {
    const workers: FakeWorker[] = [];
    const client = new EngineClient({
      createWorker: () => {
        const w = new FakeWorker();
        workers.push(w);
        return w;
      },
      limits: { actionMs: 30, graceMs: 60, keepMs: 200 },
      onOverdue: (o) => overdues.push(o),
    });
    return { client, workers };
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('reports the overrun, stops when the countdown ends, and rebuilds', async () => {
    const overdues: (Overdue | null)[] = [];
    const { client, workers } = make(overdues);
    await client.open({ kind: 'spec', text: 'x' });
    const pending = client.act({ type: 'adhoc', session: 'B', sql: runaway });
    await sleep(50);
    expect(overdues).toHaveLength(1);
    expect(overdues[0]).toMatchObject({ what: 'statement', limitMs: 30 });
    expect(workers[0].terminated).toBe(false);
    const state = await pending;
    expect(workers[0].terminated).toBe(true);
    expect(overdues.at(-1)).toBeNull();
    expect(state.error).toMatch(
      /^The statement did not finish within 0\.03 s and was stopped after [\d.]+ s; the scenario was rebuilt from its history\.$/,
    );
  });

  it('keeps waiting when asked, and a late answer is accepted', async () => {
    const overdues: (Overdue | null)[] = [];
    const { client, workers } = make(overdues);
    await client.open({ kind: 'spec', text: 'x' });
    const slow = { type: 'adhoc', session: 'A', sql: `${runaway} -- slow` } as const;
    const pending = client.act(slow);
    await sleep(45);
    overdues[0]!.keepWaiting();
    expect(overdues).toHaveLength(2);
    expect(overdues[1]!.stopAt).toBeGreaterThan(overdues[0]!.stopAt);
    await sleep(60); // past the first countdown: still running
    expect(workers[0].terminated).toBe(false);
    // The worker answers at last (the heavy statement finished).
    const req = workers[0].received.at(-1)!;
    const view = { snapshot: {}, script: [], cursor: 0, offScript: true } as unknown as PlayerFrame;
    workers[0].onmessage?.({ data: { id: req.id, ok: true, state: view, history: [slow], timing: { handleMs: 90 } } } as MessageEvent);
    const state = await pending;
    expect(state.error).toBeUndefined();
    expect(workers).toHaveLength(1);
    expect(overdues.at(-1)).toBeNull();
  });

  it("stops at once at the learner's request", async () => {
    const overdues: (Overdue | null)[] = [];
    const { client, workers } = make(overdues);
    await client.open({ kind: 'spec', text: 'x' });
    const pending = client.act({ type: 'adhoc', session: 'B', sql: runaway });
    await sleep(40);
    overdues[0]!.stop();
    const state = await pending;
    expect(workers).toHaveLength(2);
    expect(state.error).toMatch(/did not finish within 0\.03 s and was stopped at your request after [\d.]+ s/);
  });
});

describe('EngineClient locks', () => {
  /** Answers 'locks' at once, except a statement containing "RECURSIVE" (a runaway). */
  class LocksWorker extends FakeWorker {
    override postMessage(message: unknown): void {
      const req = message as Request;
      this.received.push(req);
      if (req.type !== 'locks') return super.postMessage(message);
      if (req.sql.includes('RECURSIVE')) return;
      this.deliver(req, { id: req.id, ok: true, locks: { kind: 'empty' }, timing: { handleMs: 1 } });
    }
  }

  it('answers, and a runaway is stopped at its limit: the worker is replaced and the next request goes to the new one', async () => {
    const workers: LocksWorker[] = [];
    const client = new EngineClient({
      createWorker: () => {
        const w = new LocksWorker();
        workers.push(w);
        return w;
      },
      limits: { openMs: 80, actionMs: 30, perActionMs: 10 },
    });
    expect(await client.locks('', 'SELECT 1')).toEqual({ kind: 'answer', answer: { kind: 'empty' } });
    const t0 = performance.now();
    const stopped = await client.locks('', runaway);
    // Once the worker answered, a request gets the action limit (not the start-up one).
    expect(stopped).toMatchObject({ kind: 'stopped', limitMs: 40, byLearner: false });
    expect(performance.now() - t0).toBeLessThan(80);
    expect(workers).toHaveLength(2);
    expect(workers[0].terminated).toBe(true);
    expect(await client.locks('', 'SELECT 2')).toEqual({ kind: 'answer', answer: { kind: 'empty' } });
    // The replacement worker got the next request, and nothing of the stopped one.
    expect(workers[1].received.map((r) => r.type)).toEqual(['locks']);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from './host';
import { PgliteExecutor } from '../engine/executor/pglite';
import type { Response } from './protocol';

let ex: PgliteExecutor | undefined;
const host = new Host(async () => (ex = await PgliteExecutor.create()));
afterAll(async () => {
  await ex?.close();
});

const yaml = readFileSync('lessons/classic-deadlock.yaml', 'utf8');
const stateOf = (r: Response) => {
  if (!r.ok || !('state' in r)) throw new Error(`expected a state, got ${JSON.stringify(r)}`);
  return r;
};

describe('worker Host', () => {
  it('answers before a scenario is open with no-scenario', async () => {
    expect(await host.handle({ id: 1, type: 'action', action: { type: 'step' } })).toMatchObject({ id: 1, ok: false, kind: 'no-scenario' });
  });

  it('reports a broken source as invalid-source', async () => {
    const r = await host.handle({ id: 2, type: 'open', source: { kind: 'lesson', id: 'x', yaml: 'id: [' } });
    expect(r).toMatchObject({ id: 2, ok: false, kind: 'invalid-source' });
  });

  it('opens a lesson, steps, and returns refusals as state.error without changing the history', async () => {
    stateOf(await host.handle({ id: 3, type: 'open', source: { kind: 'lesson', id: 'classic-deadlock', yaml } }));
    const r = stateOf(await host.handle({ id: 4, type: 'action', action: { type: 'step' } }));
    expect(r.history).toEqual([{ type: 'step' }]);
    expect(r.timing.bootMs).toBeGreaterThan(0);
    const refused = stateOf(await host.handle({ id: 5, type: 'action', action: { type: 'adhoc', session: 'Z', sql: 'SELECT 1' } }));
    expect(refused.state.error).toBe('There is no session "Z".');
    expect(refused.history).toEqual([{ type: 'step' }]);
  });

  it('replays a history (what the watchdog sends to a new worker)', async () => {
    const r = stateOf(
      await host.handle({
        id: 6,
        type: 'replay',
        history: [{ type: 'step' }, { type: 'step' }, { type: 'adhoc', session: 'A', sql: 'SELECT 1' }],
      }),
    );
    expect(r.state).toMatchObject({ cursor: 2, offScript: true });
    expect(r.history).toHaveLength(3);
  });
});

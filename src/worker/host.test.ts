import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from './host';
import { PgliteExecutor } from '../engine';
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

  it('explores a batch of interleavings and leaves the open player as it was', async () => {
    const text = readFileSync('lessons/lab-templates/transfer-unordered.spec', 'utf8').replace(/^permutation.*$/m, '');
    const r = await host.handle({ id: 7, type: 'explore', text, from: 5, count: 2 });
    if (!r.ok || !('explored' in r)) throw new Error(`expected a batch, got ${JSON.stringify(r)}`);
    expect(r.explored.total).toBe(20);
    expect(r.explored.outcomes.map((o) => [o.permutation, o.kind, o.victims])).toEqual([
      ['a1 b1 a2 b2 a3 b3', 'deadlock', ['A']],
      ['a1 b1 a2 b2 b3 a3', 'deadlock', ['A']],
    ]);
    const after = stateOf(await host.handle({ id: 8, type: 'action', action: { type: 'step' } }));
    expect(after.state).toMatchObject({ cursor: 3, offScript: true });
    expect(await host.handle({ id: 9, type: 'explore', text: 'session', from: 0, count: 1 })).toMatchObject({
      ok: false,
      kind: 'invalid-source',
    });
  });

  it('answers what a statement locks, errors as data, and leaves the open player as it was', async () => {
    const before = stateOf(await host.handle({ id: 10, type: 'action', action: { type: 'step' } }));
    const schema = 'CREATE TABLE accounts (id int PRIMARY KEY, balance numeric)';
    const locks = async (id: number, sql: string, s = schema) => {
      const r = await host.handle({ id, type: 'locks', schema: s, sql });
      if (!r.ok || !('locks' in r)) throw new Error(`expected locks, got ${JSON.stringify(r)}`);
      return r.locks;
    };
    const measured = await locks(11, 'ALTER TABLE accounts ADD COLUMN note text');
    expect(measured).toMatchObject({ kind: 'result', statements: [{ AlterTableStmt: {} }], result: { outcome: 'measured' } });
    if (measured.kind !== 'result' || measured.result.outcome !== 'measured') throw new Error('not measured');
    expect(measured.result.relations).toEqual([{ relation: 'accounts', kind: 'table', mode: 'AccessExclusiveLock', created: false }]);
    expect(await locks(12, 'ALTER TABLE accounts ADD')).toMatchObject({
      kind: 'syntax',
      where: 'statement',
      problem: { line: 1, column: 25 },
    });
    expect(await locks(13, 'SELECT 1', 'CREATE TABLE (')).toMatchObject({ kind: 'syntax', where: 'schema' });
    expect(await locks(14, 'BEGIN; LOCK accounts')).toEqual({ kind: 'transaction-control' });
    expect(await locks(15, ' -- nothing')).toEqual({ kind: 'empty' });
    // The player was rebuilt on the reset database: the next step goes on from where it was.
    const after = stateOf(await host.handle({ id: 16, type: 'action', action: { type: 'step' } }));
    expect(after.state.cursor).toBe(before.state.cursor + 1);
  });
});

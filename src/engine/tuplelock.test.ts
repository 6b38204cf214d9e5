/**
 * The heavyweight tuple lock after a wake-up (README.tuplock): a statement that waited for a row
 * version keeps no tuple lock on it once that version is gone. Conformance spec 55 checks the
 * same against real PostgreSQL 18; this is the engine-level view of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from './engine';
import { PgliteExecutor } from './pg/executor';

let ex: PgliteExecutor;
beforeAll(async () => {
  ex = await PgliteExecutor.create();
});
afterAll(async () => {
  await ex.close();
});

async function engine(): Promise<Engine> {
  await ex.reset();
  const e = await Engine.create({ sessions: ['s1', 's2', 's3', 's4'], executor: ex });
  const r = await e.setup(
    'CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL); INSERT INTO accounts VALUES (1, 100), (2, 100), (3, 100);',
  );
  expect(r.error).toBeUndefined();
  return e;
}

const tupleLocks = (e: Engine, session: string) =>
  e
    .snapshot()
    .locks.filter((l) => l.session === session && l.locktype === 'tuple')
    .map((l) => ({ tuple: `(${l.page},${l.tuple})`, granted: l.granted }));

describe('tuple locks after a wake-up', () => {
  it('ORDER BY id FOR UPDATE: the waiter lets go of the deleted row’s tuple lock and waits on the next row with one tuple lock', async () => {
    const e = await engine();
    expect(await e.submit('s1', 'BEGIN; DELETE FROM accounts WHERE id = 1')).toBe('done');
    expect(await e.submit('s2', 'BEGIN; UPDATE accounts SET balance = balance + 1 WHERE id = 2')).toBe('done');
    await e.submit('s3', 'BEGIN');
    expect(await e.submit('s3', 'SELECT id FROM accounts WHERE id IN (1, 2) ORDER BY id FOR UPDATE')).toBe('waiting');
    await e.submit('s4', 'BEGIN');
    expect(await e.submit('s4', 'UPDATE accounts SET balance = balance + 10 WHERE id = 3')).toBe('done');
    expect(await e.submit('s4', 'SELECT id FROM accounts WHERE id = 1 FOR UPDATE')).toBe('waiting');
    expect(tupleLocks(e, 's3')).toEqual([{ tuple: '(0,1)', granted: true }]);
    expect(tupleLocks(e, 's4')).toEqual([{ tuple: '(0,1)', granted: false }]);
    // A waiting FOR UPDATE that has locked nothing yet has no transaction id (heap_lock_tuple assigns it when it locks).
    expect(e.snapshot().sessions.find((x) => x.name === 's3')!.xid).toBeNull();

    expect(await e.submit('s1', 'COMMIT')).toBe('done');
    // s3 skipped the deleted row and waits for s2 on row 2, holding only that row's tuple lock;
    // s4 got the tuple lock on row 1, found it deleted and returned nothing.
    expect(e.statusOf('s3')).toBe('waiting');
    expect(tupleLocks(e, 's3')).toEqual([{ tuple: '(0,2)', granted: true }]);
    expect(e.statusOf('s4')).toBe('done');
    expect(e.takeResult('s4')).toMatchObject({ results: [{ command: 'SELECT 0', rows: [] }] });
    expect(tupleLocks(e, 's4')).toEqual([]);

    // No cycle: s2 waits for s4 on row 3, s4 commits, s2 commits, s3 gets row 2.
    expect(await e.submit('s2', 'UPDATE accounts SET balance = balance + 1 WHERE id = 3')).toBe('waiting');
    expect(await e.submit('s4', 'COMMIT')).toBe('done');
    expect(e.statusOf('s2')).toBe('done');
    e.takeResult('s2');
    expect(await e.submit('s2', 'COMMIT')).toBe('done');
    expect(e.statusOf('s3')).toBe('done');
    expect(e.takeResult('s3')).toMatchObject({ results: [{ command: 'SELECT 1', rows: [['2']] }] });
    expect(e.snapshot().events.some((x) => x.type === 'deadlock')).toBe(false);
  });
});

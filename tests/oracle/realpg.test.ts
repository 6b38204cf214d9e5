/**
 * Plays small isolation specs on real PostgreSQL 18 and checks the exact events. Uses the server
 * of tests/setup/postgres.ts (inject('pgUrl')); starts its own when run without that globalSetup.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PgDriver } from '../../src/oracle/pgDriver';
import { startPostgres, type PgServer } from '../../src/oracle/server';
import { formatText, runSpec, toTraces } from '../../src/scenario/isolation';
import type { Spec, TraceEvent } from '../../src/scenario/types';

let ownServer: PgServer | undefined;
let driver: PgDriver;

beforeAll(async () => {
  let url = inject('pgUrl') as string | undefined;
  if (!url) {
    ownServer = await startPostgres();
    url = ownServer.url;
  }
  driver = new PgDriver(url, { maxStepWaitMs: 30_000 });
});

afterAll(async () => {
  await driver?.close();
  await ownServer?.stop();
});

const ACCOUNTS =
  'CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL); ' + 'INSERT INTO accounts VALUES (1, 100), (2, 100), (3, 100);';

/** A spec with one named permutation, written "s1a s2a …"; each session's steps are [name, sql] pairs. */
function spec(sessions: Record<string, { setup?: string; steps: [string, string][] }>, permutation: string): Spec {
  return {
    setup: [ACCOUNTS],
    teardown: 'DROP TABLE accounts;',
    sessions: Object.entries(sessions).map(([name, s]) => ({
      name,
      ...(s.setup ? { setup: s.setup } : {}),
      steps: s.steps.map(([step, sql]) => ({ name: step, sql })),
    })),
    permutations: [{ steps: permutation.split(' ').map((step) => ({ step, blockers: [] })) }],
  };
}

async function play(s: Spec): Promise<TraceEvent[]> {
  const traces = toTraces(await runSpec(s, driver));
  return traces[0].events;
}

describe('real PostgreSQL 18 through the isolationtester algorithm', () => {
  it('a plain wait until the holder commits', async () => {
    const s = spec(
      {
        s1: {
          steps: [
            ['s1u', 'BEGIN; UPDATE accounts SET balance = balance - 10 WHERE id = 1;'],
            ['s1c', 'COMMIT;'],
          ],
        },
        s2: {
          steps: [
            ['s2u', 'UPDATE accounts SET balance = balance + 1 WHERE id = 1 RETURNING balance;'],
            ['s2s', 'SELECT id, balance FROM accounts ORDER BY id;'],
          ],
        },
      },
      's1u s2u s1c s2s',
    );
    const started = performance.now();
    const runs = await runSpec(s, driver);
    const ms = performance.now() - started;
    expect(toTraces(runs)[0].events).toEqual([
      { step: 's1u', session: 's1', outcome: 'ok', commands: ['BEGIN', 'UPDATE 1'] },
      { step: 's2u', session: 's2', outcome: 'waiting' },
      { step: 's1c', session: 's1', outcome: 'ok', commands: ['COMMIT'] },
      {
        step: 's2u',
        session: 's2',
        outcome: 'ok',
        commands: ['UPDATE 1'],
        columns: ['balance'],
        rows: [['91']],
        completedAfterStep: 's1c',
      },
      {
        step: 's2s',
        session: 's2',
        outcome: 'ok',
        commands: ['SELECT 3'],
        columns: ['id', 'balance'],
        rows: [
          ['1', '91'],
          ['2', '100'],
          ['3', '100'],
        ],
      },
    ]);
    expect(formatText(s, runs)).toBe(
      [
        'Parsed test spec with 2 sessions',
        '',
        'starting permutation: s1u s2u s1c s2s',
        'step s1u: BEGIN; UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
        'step s2u: UPDATE accounts SET balance = balance + 1 WHERE id = 1 RETURNING balance; <waiting ...>',
        'step s1c: COMMIT;',
        'step s2u: <... completed>',
        'balance',
        '-------',
        '     91',
        '(1 row)',
        '',
        'step s2s: SELECT id, balance FROM accounts ORDER BY id;',
        'id|balance',
        '--+-------',
        ' 1|     91',
        ' 2|    100',
        ' 3|    100',
        '(3 rows)',
        '',
        '',
      ].join('\n'),
    );
    console.log(`plain-wait spec on real PostgreSQL: ${ms.toFixed(0)} ms`);
  });

  it('a two-session deadlock: the session with the shorter deadlock_timeout is the victim', async () => {
    const events = await play(
      spec(
        {
          s1: {
            setup: "SET deadlock_timeout = '100ms';",
            steps: [
              ['s1a', 'BEGIN; UPDATE accounts SET balance = balance - 10 WHERE id = 1;'],
              ['s1b', 'UPDATE accounts SET balance = balance + 10 WHERE id = 2;'],
              ['s1c', 'COMMIT;'],
            ],
          },
          s2: {
            setup: "SET deadlock_timeout = '10s';",
            steps: [
              ['s2a', 'BEGIN; UPDATE accounts SET balance = balance - 20 WHERE id = 2;'],
              ['s2b', 'UPDATE accounts SET balance = balance + 20 WHERE id = 1;'],
              ['s2c', 'COMMIT;'],
            ],
          },
        },
        's1a s2a s1b s2b s1c s2c',
      ),
    );
    expect(events).toEqual([
      { step: 's1a', session: 's1', outcome: 'ok', commands: ['BEGIN', 'UPDATE 1'] },
      { step: 's2a', session: 's2', outcome: 'ok', commands: ['BEGIN', 'UPDATE 1'] },
      { step: 's1b', session: 's1', outcome: 'waiting' },
      { step: 's2b', session: 's2', outcome: 'waiting' },
      {
        step: 's1b',
        session: 's1',
        outcome: 'error',
        sqlstate: '40P01',
        message: 'deadlock detected',
        detail:
          'Process s1 waits for ShareLock on transaction ?; blocked by process s2.\n' +
          'Process s2 waits for ShareLock on transaction ?; blocked by process s1.',
        // The driver reports the error's CONTEXT too: the row the victim was updating when it was chosen.
        context: 'while updating tuple (0,2) in relation "accounts"',
        completedAfterStep: 's2b',
      },
      { step: 's2b', session: 's2', outcome: 'ok', commands: ['UPDATE 1'], completedAfterStep: 's2b' },
      { step: 's1c', session: 's1', outcome: 'ok', commands: ['ROLLBACK'] },
      { step: 's2c', session: 's2', outcome: 'ok', commands: ['COMMIT'] },
    ]);
  });

  it('a lock-upgrade deadlock is detected at once and names the relation, not its OID', async () => {
    const events = await play(
      spec(
        {
          s1: {
            setup: "SET deadlock_timeout = '100ms';",
            steps: [
              ['s1a', 'BEGIN; LOCK TABLE accounts IN SHARE MODE;'],
              ['s1b', 'LOCK TABLE accounts IN EXCLUSIVE MODE;'],
              ['s1c', 'COMMIT;'],
            ],
          },
          s2: {
            setup: "SET deadlock_timeout = '10s';",
            steps: [
              ['s2a', 'BEGIN; LOCK TABLE accounts IN SHARE MODE;'],
              ['s2b', 'LOCK TABLE accounts IN EXCLUSIVE MODE;'],
              ['s2c', 'COMMIT;'],
            ],
          },
        },
        's1a s2a s1b s2b s1c s2c',
      ),
    );
    // A lock-upgrade deadlock is found at once by the second waiter (ProcSleep's early check),
    // whatever the deadlock_timeout settings.
    expect(events).toEqual([
      { step: 's1a', session: 's1', outcome: 'ok', commands: ['BEGIN', 'LOCK TABLE'] },
      { step: 's2a', session: 's2', outcome: 'ok', commands: ['BEGIN', 'LOCK TABLE'] },
      { step: 's1b', session: 's1', outcome: 'waiting' },
      {
        step: 's2b',
        session: 's2',
        outcome: 'error',
        sqlstate: '40P01',
        message: 'deadlock detected',
        detail:
          'Process s2 waits for ExclusiveLock on relation accounts of database 5; blocked by process s1.\n' +
          'Process s1 waits for ExclusiveLock on relation accounts of database 5; blocked by process s2.',
      },
      { step: 's1b', session: 's1', outcome: 'ok', commands: ['LOCK TABLE'], completedAfterStep: 's2b' },
      { step: 's1c', session: 's1', outcome: 'ok', commands: ['COMMIT'] },
      { step: 's2c', session: 's2', outcome: 'ok', commands: ['ROLLBACK'] },
    ]);
  });

  it('FOR UPDATE NOWAIT fails at once with 55P03', async () => {
    const events = await play(
      spec(
        {
          s1: {
            steps: [
              ['s1l', 'BEGIN; SELECT id FROM accounts WHERE id = 1 FOR UPDATE;'],
              ['s1c', 'COMMIT;'],
            ],
          },
          s2: { steps: [['s2n', 'SELECT id FROM accounts WHERE id = 1 FOR UPDATE NOWAIT;']] },
        },
        's1l s2n s1c',
      ),
    );
    expect(events).toEqual([
      { step: 's1l', session: 's1', outcome: 'ok', commands: ['BEGIN', 'SELECT 1'], columns: ['id'], rows: [['1']] },
      {
        step: 's2n',
        session: 's2',
        outcome: 'error',
        sqlstate: '55P03',
        message: 'could not obtain lock on row in relation "accounts"',
      },
      { step: 's1c', session: 's1', outcome: 'ok', commands: ['COMMIT'] },
    ]);
  });

  it('FOR UPDATE SKIP LOCKED skips the locked row', async () => {
    const events = await play(
      spec(
        {
          s1: {
            steps: [
              ['s1l', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 2;'],
              ['s1c', 'COMMIT;'],
            ],
          },
          s2: { steps: [['s2k', 'SELECT id, balance FROM accounts ORDER BY id FOR UPDATE SKIP LOCKED;']] },
        },
        's1l s2k s1c',
      ),
    );
    expect(events).toEqual([
      { step: 's1l', session: 's1', outcome: 'ok', commands: ['BEGIN', 'UPDATE 1'] },
      {
        step: 's2k',
        session: 's2',
        outcome: 'ok',
        commands: ['SELECT 2'],
        columns: ['id', 'balance'],
        rows: [
          ['1', '100'],
          ['3', '100'],
        ],
      },
      { step: 's1c', session: 's1', outcome: 'ok', commands: ['COMMIT'] },
    ]);
  });
});

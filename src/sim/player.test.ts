import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteExecutor } from '../engine';
import { ActionRefused, Player, historyIndexOfCursor, type PlayerAction } from './player';
import { lessonToSpec, parseLesson } from '../scenario/lesson';
import { parseSpec } from '../scenario/spec';
import type { EngineSnapshot } from '../engine/types';

const lesson = (id: string) => lessonToSpec(parseLesson(readFileSync(`lessons/${id}.yaml`, 'utf8')));

let ex: PgliteExecutor;
beforeAll(async () => {
  ex = await PgliteExecutor.create();
});
afterAll(async () => {
  await ex.close();
});

const session = (s: EngineSnapshot, name: string) => s.sessions.find((x) => x.name === name)!;

describe('Player over classic-deadlock', () => {
  it('shows pauses as pause items and steps as steps', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    expect(p.script.map((s) => s.kind)).toEqual(['step', 'step', 'step', 'pause', 'step', 'pause', 'step', 'step', 'step', 'step']);
    expect(p.script[3]).toMatchObject({ session: 'clock', label: 'pause 2 s' });
    expect(p.view()).toMatchObject({ cursor: 0, offScript: false });
    expect(p.view().snapshot.tables[0]).toMatchObject({ name: 'accounts', columns: ['id', 'balance'] });
  });

  it('steps to the deadlock: B gets 40P01 after the second pause and A completes', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    for (let i = 0; i < 5; i++) await p.next();
    let s = p.view().snapshot;
    expect(session(s, 'A').state).toBe('waiting');
    expect(session(s, 'B').state).toBe('waiting');
    expect(s.deadlock).toBeNull();
    expect(s.clockMs).toBe(2000);
    await p.next(); // the second pause: B's deadlock_timeout fires 1 s after it began to wait
    s = p.view().snapshot;
    expect(s.clockMs).toBe(4000);
    expect(session(s, 'B').last?.error).toMatchObject({ sqlstate: '40P01', message: 'deadlock detected' });
    expect(session(s, 'A').state).toBe('idle in transaction');
    expect(s.deadlock).toMatchObject({ victim: 'B', atMs: 3000 });
    while (p.cursor < p.script.length) await p.next();
    s = p.view().snapshot;
    expect(session(s, 'B').last?.results.at(-1)?.rows).toEqual([
      ['1', '1000'],
      ['2', '1000'],
    ]);
    await expect(p.next()).rejects.toThrow(ActionRefused);
  });

  it('goto(k) restores exactly the snapshot reached by stepping forward k times', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    const forward: EngineSnapshot[] = [p.view().snapshot];
    while (p.cursor < p.script.length) {
      await p.next();
      forward.push(p.view().snapshot);
    }
    for (const k of [10, 6, 5, 3, 0]) {
      await p.goto(k);
      expect(p.cursor).toBe(k);
      expect(p.view().snapshot).toEqual(forward[k]);
    }
    // Undo truncates the history; jumping forward steps again and reaches the same states.
    await p.gotoCursor(7);
    expect(p.view().snapshot).toEqual(forward[7]);
    await p.gotoCursor(2);
    expect(p.view().snapshot).toEqual(forward[2]);
  });

  it('an ad-hoc statement marks the state off script; undoing it returns on script', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await p.next();
    await p.adHoc('B', 'SELECT balance FROM accounts WHERE id = 1');
    const v = p.view();
    expect(v.offScript).toBe(true);
    expect(v.cursor).toBe(1);
    expect(session(v.snapshot, 'B').last?.results[0].rows).toEqual([['1000']]);
    expect(p.history).toEqual([{ type: 'step' }, { type: 'adhoc', session: 'B', sql: 'SELECT balance FROM accounts WHERE id = 1' }]);
    await p.gotoCursor(1); // the latest state at cursor 1 keeps the ad-hoc work
    expect(p.view().offScript).toBe(true);
    await p.gotoCursor(0);
    expect(p.view()).toMatchObject({ cursor: 0, offScript: false });
  });

  it('an ad-hoc statement that does not parse aborts the open block, as PostgreSQL does', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await p.next(); // A: BEGIN; UPDATE … id = 1
    await p.adHoc('A', 'SELEC 1');
    let s = p.view().snapshot;
    expect(session(s, 'A').last?.error).toMatchObject({ sqlstate: '42601' });
    expect(session(s, 'A').state).toBe('idle in transaction (aborted)');
    // The aborted block released A's row lock: B can update row 1 at once.
    await p.adHoc('B', 'UPDATE accounts SET balance = 0 WHERE id = 1');
    expect(session(p.view().snapshot, 'B').last?.results[0].command).toBe('UPDATE 1');
    await p.adHoc('A', 'SELECT 1');
    expect(session(p.view().snapshot, 'A').last?.error?.sqlstate).toBe('25P02');
    await p.adHoc('A', 'COMMIT');
    s = p.view().snapshot;
    expect(session(s, 'A').last?.results.map((r) => r.command)).toEqual(['ROLLBACK']);
    expect(session(s, 'A').state).toBe('idle');
  });

  it('a busy session refuses ad-hoc SQL without changing anything', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    for (let i = 0; i < 3; i++) await p.next();
    await expect(p.adHoc('A', 'SELECT 1')).rejects.toThrow(/Session A is busy/);
    expect(p.history).toHaveLength(3);
  });

  it('advanceToNextTimer fires the deadlock detector of the session that waits longest', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await p.next();
    await p.next();
    await p.next(); // A waits for B; its deadlock_timeout is due at 1 s
    await p.adHoc('B', 'UPDATE accounts SET balance = balance + 100 WHERE id = 1'); // B closes the cycle at once
    let s = p.view().snapshot;
    expect(s.timers.filter((t) => t.kind === 'deadlock_timeout').map((t) => t.session)).toEqual(['A', 'B']);
    await p.advanceToNextTimer();
    s = p.view().snapshot;
    expect(s.clockMs).toBe(1000);
    expect(s.deadlock).toMatchObject({ victim: 'A', atMs: 1000 });
    expect(session(s, 'A').last?.error?.sqlstate).toBe('40P01');
    expect(session(s, 'B').state).toBe('idle in transaction');
    expect(p.view().offScript).toBe(true);
  });

  it('pg_sleep in an ad-hoc statement runs on the virtual clock', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    const t0 = performance.now();
    await p.adHoc('A', 'SELECT pg_sleep(30)');
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(p.view().snapshot.clockMs).toBe(30_000);
  });
});

describe('undo determinism in every lesson', () => {
  const ids = readdirSync('lessons')
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.replace(/\.yaml$/, ''));
  it.each(ids)('%s: goto(k) equals k steps forward, for every k', async (id) => {
    const p = await Player.create(lesson(id), { executor: ex });
    const forward: EngineSnapshot[] = [p.view().snapshot];
    while (p.cursor < p.script.length) {
      await p.next();
      forward.push(p.view().snapshot);
    }
    for (let k = forward.length - 1; k >= 0; k--) {
      await p.goto(k);
      expect(p.view().snapshot).toEqual(forward[k]);
    }
  });
});

describe('Player over a spec', () => {
  it('waits for a busy session before sending its next step, as isolationtester does', async () => {
    const spec = parseSpec(`
setup { CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1); }
session s1
setup { SET lock_timeout = '500ms'; }
step s1a { BEGIN; }
step s1b { UPDATE t SET id = id WHERE id = 1; }
step s1c { COMMIT; }
session s2
step s2a { BEGIN; UPDATE t SET id = id WHERE id = 1; }
step s2b { COMMIT; }
permutation s2a s1a s1b s1c s2b
`);
    const p = await Player.create(spec, { executor: ex });
    await p.next();
    await p.next();
    await p.next(); // s1b waits on s2's row
    expect(session(p.view().snapshot, 's1').state).toBe('waiting');
    await p.next(); // s1c must wait for s1b: its lock_timeout fires after 500 ms, then COMMIT runs
    const s = p.view().snapshot;
    expect(s.clockMs).toBe(500);
    expect(s.events.some((e) => e.type === 'timeout' && e.session === 's1')).toBe(true);
    expect(session(s, 's1').last?.step).toBe('s1c');
  });
});

describe('Player: a step the learner stopped (client cancel)', () => {
  const spec = () =>
    parseSpec(`
setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); }
session a
step a1 { BEGIN; UPDATE t SET v = 1 WHERE id = 1; }
step a2 { WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r; }
step a3 { SELECT v FROM t WHERE id = 1; }
step a4 { ROLLBACK; }
session b
step b1 { SELECT count(*) FROM generate_series(1, 3); }
permutation a1 a2 a3 a4 b1
`);

  it('ends with 57014, aborts the open block (25P02 next) and replays as cancelled on undo and redo', async () => {
    const p = await Player.create(spec(), { executor: ex });
    await p.next();
    await p.perform({ type: 'step', cancelled: true });
    let a = session(p.view().snapshot, 'a');
    expect(a.last?.error).toMatchObject({ sqlstate: '57014', message: 'canceling statement due to user request' });
    expect(a.state).toBe('idle in transaction (aborted)');
    const stopped = JSON.stringify(p.view());
    await p.next();
    expect(session(p.view().snapshot, 'a').last?.error?.sqlstate).toBe('25P02');
    // Undo to before the cancelled step, then a plain "next": the step is cancelled again, not run.
    await p.gotoCursor(1);
    await p.next();
    expect(p.history.at(-1)).toEqual({ type: 'step', cancelled: true });
    expect(JSON.stringify(p.view())).toBe(stopped);
    await p.next();
    await p.next();
    a = session(p.view().snapshot, 'a');
    expect(a.state).toBe('idle');
    expect(a.last?.error).toBeUndefined();
  });

  it('a cancelled statement outside a block rolls back its implicit transaction and leaves the session idle', async () => {
    const p = await Player.create(spec(), { executor: ex });
    await p.perform({ type: 'adhoc', session: 'b', sql: 'UPDATE t SET v = 5 WHERE id = 1', cancelled: true });
    const s = p.view().snapshot;
    expect(session(s, 'b').last?.error?.sqlstate).toBe('57014');
    expect(session(s, 'b').state).toBe('idle');
    expect(s.tables[0].rows.map((r) => r.values)).toEqual([['1', '0']]);
  });
});

describe('historyIndexOfCursor', () => {
  const h: PlayerAction[] = [{ type: 'step' }, { type: 'timer' }, { type: 'step' }, { type: 'advance', ms: 5 }];
  it.each([
    { cursor: 0, expected: 0 },
    { cursor: 1, expected: 2 },
    { cursor: 2, expected: 4 },
  ])('cursor $cursor → prefix $expected', ({ cursor, expected }) => {
    expect(historyIndexOfCursor(h, cursor)).toBe(expected);
  });
});

describe('Player: what the learner sees as history', () => {
  it('step 0 shows no session-setup output, events or finished steps', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    const s = p.view().snapshot;
    expect(s.events).toEqual([]);
    for (const x of s.sessions) expect([x.name, x.last, x.history]).toEqual([x.name, null, []]);
    await p.next();
    const a = session(p.view().snapshot, 'A');
    expect(a.history?.map((h) => h.step)).toEqual([p.script[0].step]);
    expect(a.last?.results.map((r) => r.command)).toEqual(['BEGIN', 'UPDATE 1']);
  });

  it('keeps the victim 40P01 in its history after its ROLLBACK', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await p.gotoCursor(7);
    const b = session(p.view().snapshot, 'B');
    expect(b.history?.map((h) => h.error?.sqlstate ?? h.results.at(-1)?.command)).toEqual(['UPDATE 1', '40P01', 'ROLLBACK']);
  });

  it('a moment inside a step: the clock stops there, and the next action finishes the step first', async () => {
    const p = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await p.gotoCursor(6);
    const end = JSON.stringify(p.view().snapshot);
    await p.gotoCursor(6, 3000);
    let v = p.view();
    expect([v.cursor, v.snapshot.clockMs, v.midStep, v.snapshot.deadlock?.victim]).toEqual([6, 3000, true, 'B']);
    await p.gotoCursor(6);
    expect(p.view().midStep).toBeUndefined();
    expect(JSON.stringify(p.view().snapshot)).toBe(end);
    await p.gotoCursor(6, 3000);
    await p.next();
    v = p.view();
    const straight = await Player.create(lesson('classic-deadlock'), { executor: ex });
    await straight.gotoCursor(7);
    expect(JSON.stringify(v.snapshot)).toBe(JSON.stringify(straight.view().snapshot));
    // The history with its moment replays to the same state (undo, worker recovery).
    const history = [...p.history];
    await p.replay(history);
    expect(JSON.stringify(p.view().snapshot)).toBe(JSON.stringify(v.snapshot));
  });
});

describe('Player: a terminated session', () => {
  it('reports the FATAL once, then what libpq says on a closed connection', async () => {
    const p = await Player.create(lesson('idle-in-transaction'), { executor: ex });
    await p.gotoCursor(p.script.length);
    let a = session(p.view().snapshot, 'A');
    expect(a.terminated?.message).toMatchObject({ severity: 'FATAL', sqlstate: '25P03' });
    expect(a.terminated?.atMs).toBe(3000);
    await p.adHoc('A', 'SELECT 1;');
    await p.adHoc('A', 'SELECT 2;');
    a = session(p.view().snapshot, 'A');
    expect(a.history?.slice(-2).map((h) => [h.error?.severity, h.error?.sqlstate, h.error?.message])).toEqual([
      ['FATAL', '25P03', 'terminating connection due to idle-in-transaction timeout'],
      ['', '', 'no connection to the server'],
    ]);
  });
});

describe('Player: SKIP LOCKED behind a table lock', () => {
  it('W2 waits for the SHARE lock W1 took off script, then claims job 2', async () => {
    const p = await Player.create(lesson('skip-locked-queue'), { executor: ex });
    await p.next(); // W1 claims job 1 and keeps its transaction open
    await p.adHoc('W1', 'LOCK TABLE jobs IN SHARE MODE NOWAIT');
    // W2's claim needs ROW EXCLUSIVE on jobs: the lock model, not PGlite, makes it wait.
    await p.next();
    let s = p.view().snapshot;
    expect(session(s, 'W1').state).not.toBe('waiting');
    expect(session(s, 'W2').state).toBe('waiting');
    await p.adHoc('W1', 'COMMIT');
    s = p.view().snapshot;
    expect(session(s, 'W2').state).not.toBe('waiting');
    expect(session(s, 'W2').history?.at(-1)?.results?.at(-1)?.rows).toEqual([['2']]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from './host';
import { PgliteExecutor } from '../engine';
import type { Command, Response } from './protocol';

// The look-ahead must never change an answer: every request sequence gets the same states and
// histories from a Host that steps ahead as from one that does not.
const executors: PgliteExecutor[] = [];
const make = (lookAhead: boolean) =>
  new Host(
    async () => {
      const ex = await PgliteExecutor.create();
      executors.push(ex);
      return ex;
    },
    { lookAhead },
  );
const plain = make(false);
const ahead = make(true);
afterAll(async () => {
  for (const ex of executors) await ex.close();
});

let id = 1;
/** The answer without its timing (the only part that may differ). */
function comparable(r: Response): unknown {
  if (!r.ok) return r;
  const { timing: _timing, id: _id, ...rest } = r as Response & { timing: unknown };
  return rest;
}
/** Lets the look-ahead (started in a later task) run, as a learner reading the step would. */
const idle = () => new Promise((ok) => setTimeout(ok, 5));

async function both(cmd: Command): Promise<Response> {
  const n = id++;
  const [a, b] = [await plain.handle({ ...cmd, id: n } as never), await ahead.handle({ ...cmd, id: n } as never)];
  expect(comparable(b)).toEqual(comparable(a));
  await idle();
  return b;
}

describe('Host look-ahead', () => {
  for (const lesson of ['classic-deadlock', 'repeatable-read-conflict', 'lock-timeout']) {
    it(`${lesson}: Next, undo, ad hoc, clock moves and jumps answer as without it`, async () => {
      const yaml = readFileSync(`lessons/${lesson}.yaml`, 'utf8');
      const opened = await both({ type: 'open', source: { kind: 'lesson', id: lesson, yaml } });
      if (!opened.ok || !('state' in opened)) throw new Error(`${lesson} did not open`);
      const session = opened.state.snapshot.sessions[0].name;
      const step: Command = { type: 'action', action: { type: 'step' } };
      await both(step);
      const r = await both(step);
      expect(r.ok && 'timing' in r && r.timing.workMs).toBeGreaterThan(0);
      await both({ type: 'goto', cursor: 1 });
      await both(step);
      await both(step);
      await both({ type: 'action', action: { type: 'adhoc', session, sql: 'SELECT 1' } });
      await both(step);
      await both({ type: 'action', action: { type: 'advance', ms: 50 } });
      await both(step);
      await both({ type: 'action', action: { type: 'timer' } });
      await both({ type: 'goto', cursor: 6 });
      for (let i = 0; i < 30; i++) {
        const s = await both(step);
        if (s.ok && 'state' in s && s.state.cursor >= s.state.script.length) break;
      }
      await both({ type: 'reset' });
      await both(step);
      await both({ type: 'locks', schema: 'CREATE TABLE t (id int PRIMARY KEY);', sql: 'SELECT * FROM t FOR UPDATE' });
      await both(step);
      await both({ type: 'goto', cursor: 3, atMs: 5 });
      await both(step);
      await both({ type: 'action', action: { type: 'adhoc', session, sql: 'SELECT 2' } });
      await both(step);
    }, 120_000);
  }

  it('every lesson, Next to the end, answers as without it', async () => {
    for (const file of readdirSync('lessons').filter((f) => f.endsWith('.yaml'))) {
      const lesson = file.replace(/\.yaml$/, '');
      let r = await both({ type: 'open', source: { kind: 'lesson', id: lesson, yaml: readFileSync(`lessons/${file}`, 'utf8') } });
      while (r.ok && 'state' in r && r.state.cursor < r.state.script.length) r = await both({ type: 'action', action: { type: 'step' } });
      expect(r.ok).toBe(true);
    }
  }, 300_000);

  // Requests that come while steps are still running ahead: at once after an answer, between two
  // of the look-ahead's round trips, and several in flight together; they are answered in order.
  it('requests sent while steps run ahead answer in order, as without it', async () => {
    const burst = async (cmds: Command[], gap: () => Promise<unknown>) => {
      const ns = cmds.map(() => id++);
      const want: Response[] = [];
      for (const [i, c] of cmds.entries()) want.push(await plain.handle({ ...c, id: ns[i] } as never));
      const got: Promise<Response>[] = [];
      for (const [i, c] of cmds.entries()) {
        got.push(ahead.handle({ ...c, id: ns[i] } as never));
        await gap();
      }
      const answers = await Promise.all(got);
      expect(answers.map(comparable)).toEqual(want.map(comparable));
      return answers;
    };
    const step: Command = { type: 'action', action: { type: 'step' } };
    const task = () => new Promise((ok) => setImmediate(ok));
    const answered = async () => undefined;
    for (const lesson of ['three-way-deadlock', 'deadlocks-nobody-wrote']) {
      const yaml = readFileSync(`lessons/${lesson}.yaml`, 'utf8');
      await both({ type: 'open', source: { kind: 'lesson', id: lesson, yaml } });
      await burst([step, step, step], task);
      await burst([step, step, { type: 'goto', cursor: 2 }, step, step], answered);
      await idle();
      const fast = await burst([step, step], task);
      expect(fast.some((r) => r.ok && 'timing' in r && r.timing.workMs !== undefined)).toBe(true);
      await burst([step, { type: 'action', action: { type: 'advance', ms: 10 } }, step, step, step], task);
      await burst(
        Array.from({ length: 40 }, () => step),
        answered,
      );
    }
  }, 180_000);

  it('does not step ahead in a spec (the lab: its steps are the learner’s own SQL)', async () => {
    const text = readFileSync('lessons/lab-templates/transfer-unordered.spec', 'utf8');
    await both({ type: 'open', source: { kind: 'spec', text } });
    const r = await both({ type: 'action', action: { type: 'step' } });
    await both({ type: 'action', action: { type: 'step' } });
    expect(r.ok && 'timing' in r && r.timing.workMs).toBeUndefined();
  }, 60_000);
});

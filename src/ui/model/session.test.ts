import { describe, expect, it } from 'vitest';
import type { SessionState, WaitReason } from '../../engine/types';
import type { Xid } from '../../engine/locks/types';
import { STATE_ICONS, sessionScript, stateKey, waitWords } from './session';
import { deadlockCycle, deadlockScenario } from '../fixtures/deadlock';

describe('stateKey', () => {
  it.each<{ args: SessionState; expected: string }>([
    { args: 'idle', expected: 'idle' },
    { args: 'active', expected: 'active' },
    { args: 'waiting', expected: 'waiting' },
    { args: 'idle in transaction', expected: 'idle-in-transaction' },
    { args: 'idle in transaction (aborted)', expected: 'aborted' },
  ])('$args → $expected', ({ args, expected }) => {
    expect(stateKey(args)).toBe(expected);
    expect(STATE_ICONS[stateKey(args)]).toBeTruthy();
  });
  it('fails early on an unknown state', () => {
    expect(() => stateKey('sleeping' as SessionState)).toThrow('unknown session state: sleeping');
  });
});

describe('waitWords', () => {
  const reason = (blockers: WaitReason['blockers']): WaitReason =>
    Object.freeze({ tag: { type: 'transactionid' as const, xid: 745 as Xid }, mode: 'ShareLock' as const, description: 'ShareLock on transaction 745', blockers, sinceMs: 0 });
  it.each([
    { args: reason([{ session: 'A', kind: 'hard', mode: 'ExclusiveLock' }]), expected: { what: 'ShareLock on transaction 745', heldBy: ['A'], queuedBehind: [] } },
    {
      args: reason([
        { session: 'A', kind: 'hard', mode: 'ExclusiveLock' },
        { session: 'C', kind: 'soft', mode: 'ShareLock' },
        { session: 'A', kind: 'hard', mode: 'ExclusiveLock' },
      ]),
      expected: { what: 'ShareLock on transaction 745', heldBy: ['A'], queuedBehind: ['C'] },
    },
  ])('splits blockers by kind', ({ args, expected }) => expect(waitWords(args)).toEqual(expected));
});

describe('sessionScript', () => {
  it('marks done, running (the waiting step), current and todo for session A', () => {
    const a = deadlockCycle.sessions.find((s) => s.name === 'A')!;
    const lines = sessionScript(deadlockScenario.script, 7, a);
    expect(lines.map((l) => [l.item.step, l.status])).toEqual([
      ['a_begin', 'done'],
      ['a_upd1', 'done'],
      ['a_upd2', 'running'],
      ['a_commit', 'todo'],
    ]);
  });
  it('marks the item at the cursor as current', () => {
    const b = deadlockScenario.frames[2].sessions.find((s) => s.name === 'B')!;
    expect(sessionScript(deadlockScenario.script, 2, b)[0].status).toBe('current');
  });
});

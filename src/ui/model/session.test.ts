import { describe, expect, it } from 'vitest';
import type { SessionState, WaitReason } from '../../engine/types';
import type { Xid } from '../../engine/model/locks/types';
import { STATE_ICONS, failureOutcome, scrollback, sessionScript, stateKey, waitSentence, waitWords } from './session';
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
    Object.freeze({
      tag: { type: 'transactionid' as const, xid: 745 as Xid },
      mode: 'ShareLock' as const,
      description: 'ShareLock on transaction 745',
      blockers,
      sinceMs: 0,
    });
  it.each([
    {
      args: reason([{ session: 'A', kind: 'hard', mode: 'ExclusiveLock' }]),
      expected: { what: 'ShareLock on transaction 745', heldBy: ['A'], queuedBehind: [] },
    },
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

describe('waitSentence', () => {
  const t = {
    waitsFor: (w: string) => `waits for ${w}`,
    heldBy: (s: string) => `held by ${s}`,
    queuedBehind: (s: string) => `queued behind ${s}`,
  };
  const cases = [
    { args: { what: 'X', heldBy: ['A'], queuedBehind: [] }, hide: false, expected: 'waits for X held by A' },
    { args: { what: 'X', heldBy: ['A', 'B'], queuedBehind: ['C'] }, hide: false, expected: 'waits for X held by A, B; queued behind C' },
    { args: { what: 'X', heldBy: [], queuedBehind: ['C'] }, hide: false, expected: 'waits for X queued behind C' },
    { args: { what: 'X', heldBy: ['A'], queuedBehind: ['C'] }, hide: true, expected: 'waits for X' },
  ];
  it.each(cases)('$expected', ({ args, hide, expected }) => {
    const before = structuredClone(args);
    expect(waitSentence(args, t, hide)).toBe(expected);
    expect(args).toEqual(before);
  });
});

describe('sessionScript', () => {
  it('marks ok, running (the waiting step), current and pending for session A', () => {
    const a = deadlockCycle.sessions.find((s) => s.name === 'A')!;
    const lines = sessionScript(deadlockScenario.script, 7, a, deadlockCycle.events);
    expect(lines.map((l) => [l.item.step, l.outcome])).toEqual([
      ['a_begin', 'ok'],
      ['a_upd1', 'ok'],
      ['a_upd2', 'waiting'],
      ['a_commit', 'pending'],
    ]);
  });
  it('marks the item at the cursor as current', () => {
    const f = deadlockScenario.frames[2];
    const b = f.sessions.find((s) => s.name === 'B')!;
    expect(sessionScript(deadlockScenario.script, 2, b, f.events)[0].outcome).toBe('current');
  });
  it('marks the deadlock victim cancelled with 40P01 on the line that failed', () => {
    const f = deadlockScenario.frames[8];
    const b = f.sessions.find((s) => s.name === 'B')!;
    const line = sessionScript(deadlockScenario.script, 8, b, f.events).find((l) => l.item.step === 'b_upd1')!;
    expect([line.outcome, line.sqlstate]).toEqual(['cancelled', '40P01']);
  });
});

describe('failureOutcome', () => {
  it.each([
    { args: '40P01', expected: 'cancelled' },
    { args: '57014', expected: 'cancelled' },
    { args: '25P02', expected: 'skipped' },
    { args: '55P03', expected: 'error' },
    { args: undefined, expected: 'error' },
  ])('$args → $expected', ({ args, expected }) => expect(failureOutcome(args)).toBe(expected));
});

describe('scrollback', () => {
  const fatal = { severity: 'FATAL', sqlstate: '25P03', message: 'terminating connection due to idle-in-transaction timeout' };
  const step = (name: string, at: number, error?: typeof fatal) => ({
    step: name,
    sql: `${name};`,
    startedMs: at,
    endedMs: at,
    results: [],
    notices: [],
    ...(error ? { error } : {}),
  });
  it('puts the server’s FATAL where it ended the session, and marks the command that read it as closing the connection', () => {
    const base = deadlockCycle.sessions[0];
    const s = { ...base, pending: null, history: [step('a1', 0), step('ad hoc', 4000, fatal)], terminated: { atMs: 3000, message: fatal } };
    expect(scrollback(s).map((e) => (e.kind === 'step' ? `${e.entry.step}${e.closed ? ' (closed)' : ''}` : e.kind))).toEqual([
      'a1',
      'terminated',
      'ad hoc (closed)',
    ]);
  });
});

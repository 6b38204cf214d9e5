import { describe, expect, it } from 'vitest';
import {
  ChallengeError,
  conditionHolds,
  fixFault,
  goalReached,
  isSessionOrder,
  judgeFix,
  loadChallenges,
  parseChallenge,
} from './challenge';
import type { InterleavingOutcome } from './explore';

const base = `
id: demo
kind: break
level: beginner
order: 1
title: { en: Demo, ru: Демо }
story: { en: s, ru: s }
goalText: { en: g, ru: g }
hint: { en: h, ru: h }
setup: CREATE TABLE t (id int);
invariant: SELECT count(*) = 1 FROM t
sessions:
  - name: A
    label: { en: a, ru: a }
    steps: [{ name: a1, sql: "BEGIN;" }, { name: a2, sql: "COMMIT;" }]
  - name: B
    label: { en: b, ru: b }
    steps: [{ name: b1, sql: "BEGIN;" }]
goal:
  - deadlock: { victim: B }
solution:
  order: a1 b1 a2
  explanation: { en: e, ru: e }
`;

const outcome = (o: Partial<InterleavingOutcome>): InterleavingOutcome => ({
  index: 0,
  permutation: 'a1 b1 a2',
  kind: 'clean',
  victims: [],
  failures: [],
  waited: [],
  dataHash: '',
  data: '',
  ...o,
});

describe('parseChallenge', () => {
  it('reads a valid file', () => {
    const c = parseChallenge(base);
    expect(c.goal).toEqual([{ kind: 'deadlock', victim: 'B' }]);
    expect(c.solution.order).toEqual(['a1', 'b1', 'a2']);
  });

  it('names every problem with its path', () => {
    const broken = base
      .replace('level: beginner', 'level: expert')
      .replace('deadlock: { victim: B }', 'deadlock: { victim: C }')
      .replace('order: a1 b1 a2', 'order: a2 b1 a1')
      .replace('ru: Демо', 'de: Demo');
    let err: unknown;
    try {
      parseChallenge(broken, 'demo.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChallengeError);
    const paths = (err as ChallengeError).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['level', 'goal[0].deadlock.victim', 'solution.order', 'title.ru']));
    expect((err as Error).message).toMatch(/^demo\.yaml: \d+ problem/);
  });

  it('requires an invariant and model SQL for fix challenges', () => {
    const fix = base
      .replace('kind: break', 'kind: fix')
      .replace(/invariant: .*\n/, '')
      .replace(/goal:\n.*\n/, '');
    expect(() => parseChallenge(fix)).toThrow(/invariant: a fix challenge needs an invariant[\s\S]*solution\.steps/);
  });

  it('loadChallenges wants ids that match file names', () => {
    expect(() => loadChallenges({ 'x/other.yaml': base })).toThrow(/must match the file name/);
    expect(loadChallenges({ 'x/demo.yaml': base }).map((c) => c.id)).toEqual(['demo']);
  });
});

describe('verdicts', () => {
  const c = parseChallenge(base);
  it('a goal needs its victim; invariant goals only count on complete orders', () => {
    expect(goalReached(c, outcome({ victims: ['A'] }), true)).toBe(false);
    expect(goalReached(c, outcome({ victims: ['B'] }), false)).toBe(true);
    expect(conditionHolds({ kind: 'invariant-broken' }, outcome({ invariant: false }), false)).toBe(false);
    expect(conditionHolds({ kind: 'invariant-broken' }, outcome({ invariant: false }), true)).toBe(true);
  });

  it('a stall cancel is not an error; a fix wins only over every order', () => {
    const stall = { step: 'b1', session: 'B', sqlstate: '57014', message: 'canceling statement due to user request' };
    expect(conditionHolds({ kind: 'error', sqlstate: '57014' }, outcome({ failures: [stall] }), true)).toBe(false);
    const fix = { ...c, kind: 'fix' as const, failure: [], allowErrors: ['55P03'] };
    const ok = outcome({ invariant: true });
    const allowed = outcome({ invariant: true, failures: [{ step: 'a1', session: 'A', sqlstate: '55P03', message: 'lock' }] });
    const other = outcome({ invariant: true, failures: [{ step: 'a1', session: 'A', sqlstate: '40001', message: 'x' }] });
    expect(fixFault(fix, allowed)).toBeNull();
    expect(fixFault(fix, other)).toMatchObject({ kind: 'error', sqlstate: '40001' });
    expect(fixFault(fix, outcome({ invariant: false }))).toEqual({ kind: 'invariant' });
    expect(judgeFix(fix, [ok, allowed], 2).won).toBe(true);
    expect(judgeFix(fix, [ok], 2).won).toBe(false);
    expect(judgeFix(fix, [ok, other], 2).failing).toHaveLength(1);
  });

  it('isSessionOrder keeps each session in its own order', () => {
    expect(isSessionOrder(c.sessions, ['a1', 'b1', 'a2'])).toBe(true);
    expect(isSessionOrder(c.sessions, ['a2'])).toBe(false);
  });
});

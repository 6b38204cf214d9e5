import { describe, expect, it } from 'vitest';
import { compareTraces } from './compare';
import type { PermutationTrace } from '../scenario/types';

const trace = (context?: string): PermutationTrace[] => [
  {
    permutation: 'a b',
    events: [
      { step: 'b', session: 's2', outcome: 'error', sqlstate: '40P01', message: 'deadlock detected', ...(context ? { context } : {}) },
    ],
  },
];

describe('compareTraces: CONTEXT', () => {
  it('reports a missing or different CONTEXT', () => {
    expect(compareTraces(trace('while locking tuple (0,1) in relation "t"'), trace())).toHaveLength(1);
    expect(
      compareTraces(trace('while locking tuple (0,1) in relation "t"'), trace('while updating tuple (0,1) in relation "t"'))[0].field,
    ).toBe('context');
    expect(
      compareTraces(trace('PL/pgSQL function f() line 3 at SQL statement'), trace('PL/pgSQL function f() line 4 at SQL statement')),
    ).toHaveLength(1);
  });

  it('leaves out only the tuple position of a lock-wait context', () => {
    expect(
      compareTraces(
        trace('while inserting index tuple (0,4) in relation "k_pkey"'),
        trace('while inserting index tuple (0,6) in relation "k_pkey"'),
      ),
    ).toEqual([]);
    expect(
      compareTraces(trace('while locking tuple (0,2) in relation "a"'), trace('while locking tuple (0,2) in relation "b"')),
    ).toHaveLength(1);
  });
});

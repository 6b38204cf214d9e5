import { describe, expect, it } from 'vitest';
import {
  allPermutations,
  countAllPermutations,
  countPermutations,
  formatPermutation,
  iterateAllPermutations,
  permutationAt,
  permutationsOf,
} from './permutations';
import { parseSpec } from './spec';
import type { Permutation, Spec } from './types';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}

/** A spec whose session i has steps named `${letter}1…${letter}n` (a1 a2, b1 b2 b3, …). */
function layout(...stepCounts: number[]): Spec {
  return deepFreeze({
    setup: [],
    sessions: stepCounts.map((n, i) => {
      const letter = String.fromCharCode(97 + i);
      return {
        name: letter,
        steps: Array.from({ length: n }, (_, j) => ({ name: `${letter}${j + 1}`, sql: 'SELECT 1;' })),
      };
    }),
    permutations: [],
  });
}

const names = (ps: Permutation[]): string[] => ps.map((p) => formatPermutation(p));

/**
 * Expected orders, derived by hand from run_all_permutations_recurse in isolationtester.c: at each
 * position the loop `for (i = 0; i < nsessions; i++)` takes the next step of the FIRST session whose
 * pile is not empty, recurses, then moves on to the next session. So the first permutation runs
 * session a to the end, and the list is in lexicographic order of the session sequence
 * (aabb < abab < abba < baab < baba < bbaa).
 */
const TWO_BY_TWO = [
  'a1 a2 b1 b2', // a a b b
  'a1 b1 a2 b2', // a b a b
  'a1 b1 b2 a2', // a b b a
  'b1 a1 a2 b2', // b a a b
  'b1 a1 b2 a2', // b a b a
  'b1 b2 a1 a2', // b b a a
];

const TWO_BY_THREE = [
  'a1 a2 a3 b1 b2 b3',
  'a1 a2 b1 a3 b2 b3',
  'a1 a2 b1 b2 a3 b3',
  'a1 a2 b1 b2 b3 a3',
  'a1 b1 a2 a3 b2 b3',
  'a1 b1 a2 b2 a3 b3',
  'a1 b1 a2 b2 b3 a3',
  'a1 b1 b2 a2 a3 b3',
  'a1 b1 b2 a2 b3 a3',
  'a1 b1 b2 b3 a2 a3',
  'b1 a1 a2 a3 b2 b3',
  'b1 a1 a2 b2 a3 b3',
  'b1 a1 a2 b2 b3 a3',
  'b1 a1 b2 a2 a3 b3',
  'b1 a1 b2 a2 b3 a3',
  'b1 a1 b2 b3 a2 a3',
  'b1 b2 a1 a2 a3 b3',
  'b1 b2 a1 a2 b3 a3',
  'b1 b2 a1 b3 a2 a3',
  'b1 b2 b3 a1 a2 a3',
];

/** Reference order: every distinct arrangement of the session-index multiset, sorted lexicographically. */
function referenceOrder(stepCounts: number[]): string[] {
  const sequences: number[][] = [];
  const extend = (prefix: number[], left: number[]): void => {
    if (left.every((n) => n === 0)) {
      sequences.push(prefix);
      return;
    }
    left.forEach((n, i) => {
      if (n > 0)
        extend(
          [...prefix, i],
          left.map((m, j) => (j === i ? m - 1 : m)),
        );
    });
  };
  extend([], stepCounts);
  sequences.sort((x, y) => {
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
  });
  return sequences.map((seq) => {
    const used = stepCounts.map(() => 0);
    return seq.map((i) => `${String.fromCharCode(97 + i)}${++used[i]}`).join(' ');
  });
}

describe('allPermutations (isolationtester order)', () => {
  it.each([
    { layout: [2, 2], expected: TWO_BY_TWO },
    { layout: [3, 3], expected: TWO_BY_THREE },
  ])('sessions of $layout steps', ({ layout: counts, expected }) => {
    const spec = layout(...counts);
    const before = JSON.stringify(spec);
    expect(names(allPermutations(spec))).toEqual(expected);
    expect(JSON.stringify(spec)).toBe(before);
  });

  it.each([[[2, 3]], [[3, 1, 2]], [[1, 1, 1, 1]], [[2, 2, 2]], [[4]], [[1, 3, 1]]])(
    'layout %j matches the lexicographic reference',
    (counts) => {
      expect(names(allPermutations(layout(...counts)))).toEqual(referenceOrder(counts));
    },
  );

  it('generates steps without blockers', () => {
    for (const p of allPermutations(layout(2, 2))) expect(p.steps.every((s) => s.blockers.length === 0)).toBe(true);
  });

  it('refuses to build more permutations than the limit', () => {
    expect(() => allPermutations(layout(10, 10, 10, 10, 10, 10, 10, 10))).toThrow(RangeError);
    expect(() => allPermutations(layout(3, 3), 19)).toThrow(/20 permutations, more than the limit of 19/);
    expect(allPermutations(layout(3, 3), 20)).toHaveLength(20);
  });

  it('iterates lazily, so the first permutations of a huge layout are cheap', () => {
    const iterator = iterateAllPermutations(layout(10, 10, 10, 10, 10, 10, 10, 10));
    const first = iterator.next().value as Permutation;
    expect(formatPermutation(first).startsWith('a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 b1')).toBe(true);
    const second = iterator.next().value as Permutation;
    expect(formatPermutation(second)).toContain('g8 g9 h1 g10 h2 h3');
  });
});

describe('countPermutations', () => {
  it.each([
    { counts: [2, 2], expected: 6n },
    { counts: [3, 3], expected: 20n },
    { counts: [2, 2, 1], expected: 30n },
    { counts: [5], expected: 1n },
    { counts: [1, 1, 1, 1, 1, 1, 1, 1], expected: 40320n },
    // 80! / (10!)^8, far beyond Number.MAX_SAFE_INTEGER
    {
      counts: [10, 10, 10, 10, 10, 10, 10, 10],
      expected: 2_380_254_854_046_163_126_683_949_421_708_285_053_672_305_429_067_135_034_327_451_648_000n,
    },
  ])('$counts → $expected', ({ counts, expected }) => {
    const spec = layout(...counts);
    expect(countAllPermutations(spec)).toBe(expected);
    expect(countPermutations(spec)).toBe(expected);
  });

  it('counts the listed permutations when the spec has some', () => {
    const spec = deepFreeze(
      parseSpec('session a\nstep a1 { }\nstep a2 { }\nsession b\nstep b1 { }\npermutation a1 b1 a2\npermutation b1 a1 a2'),
    );
    expect(countPermutations(spec)).toBe(2n);
    expect(countAllPermutations(spec)).toBe(3n);
  });
});

describe('permutationAt', () => {
  it.each([[[2, 2]], [[3, 3]], [[2, 1, 2]], [[1, 2, 1, 1]]])('agrees with allPermutations for %j', (counts) => {
    const spec = layout(...counts);
    const all = allPermutations(spec);
    all.forEach((p, i) => expect(permutationAt(spec, i)).toEqual(p));
  });

  it('reaches into layouts too large to generate', () => {
    const spec = layout(10, 10, 10, 10, 10, 10, 10, 10);
    const last = permutationAt(spec, countAllPermutations(spec) - 1n);
    expect(formatPermutation(last).startsWith('h1 h2')).toBe(true);
    expect(formatPermutation(last).endsWith('a9 a10')).toBe(true);
  });

  it.each([-1, 6, 100])('rejects index %d for a 2×2 layout', (index) => {
    expect(() => permutationAt(layout(2, 2), index)).toThrow(RangeError);
  });
});

describe('permutationsOf', () => {
  it('returns the listed permutations, with their blockers, in spec order', () => {
    const spec = deepFreeze(parseSpec('session a\nstep a1 { }\nsession b\nstep b1 { }\npermutation b1 a1(*)\npermutation a1 b1(a1)'));
    expect(permutationsOf(spec).map((p) => formatPermutation(p, { blockers: true }))).toEqual(['b1 a1(*)', 'a1 b1(a1)']);
  });

  it('falls back to every interleaving', () => {
    expect(names(permutationsOf(layout(2, 2)))).toEqual(TWO_BY_TWO);
  });
});

describe('formatPermutation', () => {
  const permutation: Permutation = deepFreeze({
    steps: [
      { step: 's1a', blockers: [] },
      { step: 's2a', blockers: [{ kind: 'step', step: 's1a' }] },
      { step: 's3a', blockers: [{ kind: 'star' }] },
      { step: 's2b', blockers: [{ kind: 'step', step: 's1a', notices: 1 }, { kind: 'star' }] },
      { step: 'with space', blockers: [{ kind: 'step', step: 'setup' }] },
    ],
  });

  it.each([
    // isolationtester: printf("\nstarting permutation:"); then printf(" %s", steps[i]->name), no markers
    { options: undefined, expected: 's1a s2a s3a s2b with space' },
    { options: { blockers: false }, expected: 's1a s2a s3a s2b with space' },
    { options: { blockers: true }, expected: 's1a s2a(s1a) s3a(*) s2b(s1a notices 1, *) "with space"("setup")' },
  ])('blockers: $options', ({ options, expected }) => {
    expect(formatPermutation(permutation, options)).toBe(expected);
  });
});

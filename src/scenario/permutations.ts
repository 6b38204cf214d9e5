/**
 * Permutations of a spec, in isolationtester's order (src/test/isolation/isolationtester.c).
 *
 * run_all_permutations_recurse keeps one "pile" per session and, at every position, tries the
 * sessions in spec order, taking the next step of the first session whose pile is not empty,
 * recursing, then backtracking to the next session. The permutations therefore come out in
 * lexicographic order of their session-index sequences: for sessions A=[a1,a2] and B=[b1,b2],
 * AABB, ABAB, ABBA, BAAB, BABA, BBAA. Generated steps never carry blockers.
 */
import { formatPermutationStep } from './spec';
import type { Permutation, Spec } from './types';

/** allPermutations refuses to build more than this many permutations unless told otherwise. */
export const DEFAULT_MAX_PERMUTATIONS = 100_000;

function factorial(n: number): bigint {
  let result = 1n;
  for (let i = 2n; i <= BigInt(n); i++) result *= i;
  return result;
}

/** Multinomial (n1+…+nk)! / (n1!·…·nk!): the number of interleavings of piles of these sizes. */
function interleavings(piles: readonly number[]): bigint {
  let result = factorial(piles.reduce((a, b) => a + b, 0));
  for (const n of piles) result /= factorial(n);
  return result;
}

/** Number of interleavings of all steps (what isolationtester runs when no permutation is listed). */
export function countAllPermutations(spec: Spec): bigint {
  return interleavings(spec.sessions.map((s) => s.steps.length));
}

/** Number of permutations permutationsOf returns, computed without generating them. */
export function countPermutations(spec: Spec): bigint {
  return spec.permutations.length > 0 ? BigInt(spec.permutations.length) : countAllPermutations(spec);
}

/** Every interleaving, lazily, in isolationtester's order. */
export function* iterateAllPermutations(spec: Spec): Generator<Permutation> {
  const sessions = spec.sessions;
  const total = sessions.reduce((n, s) => n + s.steps.length, 0);
  const piles = sessions.map(() => 0);
  const chosen: string[] = [];
  // Explicit stack instead of recursion: same visiting order as run_all_permutations_recurse.
  const nextSession: number[] = [0];
  while (nextSession.length > 0) {
    if (chosen.length === total) {
      yield { steps: chosen.map((step) => ({ step, blockers: [] })) };
      nextSession.pop();
      if (nextSession.length > 0) {
        const i = nextSession[nextSession.length - 1] - 1;
        piles[i]--;
        chosen.pop();
      }
      continue;
    }
    const depth = nextSession.length - 1;
    let i = nextSession[depth];
    while (i < sessions.length && piles[i] >= sessions[i].steps.length) i++;
    if (i === sessions.length) {
      nextSession.pop();
      if (nextSession.length > 0) {
        const j = nextSession[nextSession.length - 1] - 1;
        piles[j]--;
        chosen.pop();
      }
      continue;
    }
    nextSession[depth] = i + 1;
    chosen.push(sessions[i].steps[piles[i]].name);
    piles[i]++;
    nextSession.push(0);
  }
}

/** Every interleaving in isolationtester's order; throws RangeError when there would be more than `max`. */
export function allPermutations(spec: Spec, max: number = DEFAULT_MAX_PERMUTATIONS): Permutation[] {
  const count = countAllPermutations(spec);
  if (count > BigInt(max)) {
    throw new RangeError(`spec has ${count} permutations, more than the limit of ${max}`);
  }
  return [...iterateAllPermutations(spec)];
}

/** The permutation at 0-based `index` of allPermutations, computed directly (no generation). */
export function permutationAt(spec: Spec, index: bigint | number): Permutation {
  let rest = BigInt(index);
  const piles = spec.sessions.map((s) => s.steps.length);
  const taken = piles.map(() => 0);
  if (rest < 0n || rest >= interleavings(piles)) {
    throw new RangeError(`permutation index ${rest} is out of range (0 to ${interleavings(piles) - 1n})`);
  }
  const steps: Permutation['steps'] = [];
  const total = piles.reduce((a, b) => a + b, 0);
  for (let position = 0; position < total; position++) {
    for (let i = 0; i < piles.length; i++) {
      if (taken[i] === piles[i]) continue;
      taken[i]++;
      const block = interleavings(piles.map((n, j) => n - taken[j]));
      if (rest < block) {
        steps.push({ step: spec.sessions[i].steps[taken[i] - 1].name, blockers: [] });
        break;
      }
      rest -= block;
      taken[i]--;
    }
  }
  return { steps };
}

/** The spec's explicit permutations, or every interleaving when it lists none (isolationtester rule). */
export function permutationsOf(spec: Spec, max: number = DEFAULT_MAX_PERMUTATIONS): Permutation[] {
  return spec.permutations.length > 0 ? spec.permutations : allPermutations(spec, max);
}

/**
 * A permutation as isolationtester prints it after "starting permutation:": step names only, since
 * run_permutation prints `steps[i]->name` and never the markers. `{ blockers: true }` gives the spec
 * form instead (`s1a s2a(s1a) s3a(*)`).
 */
export function formatPermutation(p: Permutation, options: { blockers?: boolean } = {}): string {
  return p.steps.map((s) => (options.blockers ? formatPermutationStep(s) : s.step)).join(' ');
}

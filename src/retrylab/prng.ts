/** Seeded pseudo-random numbers (mulberry32): the lab's only source of randomness. */

/** A generator of floats in [0, 1), fully determined by its seed. */
export type Rng = () => number;

/** Creates a mulberry32 generator; the same seed always yields the same sequence. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [lo, hi] (inclusive). */
export function randInt(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** Two distinct integers in [lo, hi] (hi > lo), in random order. */
export function randPair(rng: Rng, lo: number, hi: number): [number, number] {
  const a = randInt(rng, lo, hi);
  let b = randInt(rng, lo, hi - 1);
  if (b >= a) b++;
  return [a, b];
}

/** A seeded linear congruential generator in [0, 1): property tests replay the same cases every run. */
export function rnd(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

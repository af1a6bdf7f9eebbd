// One seeded generator for the results modules (the bootstrap in compare.ts, the ETA's draws in eta.ts),
// so that a seed means the same draws in both.

/** Uniform floats in [0, 1) from an integer seed (xorshift32 after a seed mix): the same seed, the same draws. */
export function seededUniform(seed: number): () => number {
  let state = (Math.imul((seed >>> 0) ^ 0x85ebca6b, 0xc2b2ae35) ^ 0x27d4eb2f) >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

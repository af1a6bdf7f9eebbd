// One seeded generator (xorshift32) for the bootstrap in compare.ts, the ETA's draws in eta.ts and the
// rehearsal dataset (sim/rehearsal/tasks.ts). Each caller keeps its own seed mix: the rehearsal's decides
// the dataset's pinned commit, so changing it would change that commit.

/** Uniform floats in [0, 1) from a nonzero 32-bit start state (xorshift32). */
export function xorshiftUniform(start: number): () => number {
  let state = start >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

/** Uniform floats in [0, 1) from an integer seed (xorshift32 after a seed mix): the same seed, the same draws. */
export function seededUniform(seed: number): () => number {
  return xorshiftUniform(Math.imul((seed >>> 0) ^ 0x85ebca6b, 0xc2b2ae35) ^ 0x27d4eb2f);
}

// Pure value generation for the random resources. All randomness comes from node:crypto (CSPRNG);
// `randomInt` is rejection-sampled, so every character/value is uniformly distributed.
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto";

export const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
export const LOWER = "abcdefghijklmnopqrstuvwxyz";
export const NUMERIC = "0123456789";
/** The special characters used when `overrideSpecial` is not set (same set as the upstream provider). */
export const DEFAULT_SPECIAL = "!@#$%&*()-_=+[]{}<>:?";

export interface StringSpec {
  length: number;
  upper: boolean;
  lower: boolean;
  numeric: boolean;
  special: boolean;
  minUpper: number;
  minLower: number;
  minNumeric: number;
  minSpecial: number;
  overrideSpecial?: string;
}

export type Rng = (maxExclusive: number) => number;
const cryptoRng: Rng = (max) => randomInt(max);

/** Validation shared by check and create; each message names the offending input. */
export function stringSpecProblems(s: StringSpec): { property: string; reason: string }[] {
  const out: { property: string; reason: string }[] = [];
  if (!Number.isInteger(s.length) || s.length < 1) out.push({ property: "length", reason: `must be an integer >= 1, got ${s.length}` });
  for (const k of ["minUpper", "minLower", "minNumeric", "minSpecial"] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) out.push({ property: k, reason: `must be an integer >= 0, got ${s[k]}` });
  }
  const mins = s.minUpper + s.minLower + s.minNumeric + s.minSpecial;
  if (Number.isInteger(s.length) && s.length < mins) {
    out.push({ property: "length", reason: `must be at least minUpper+minLower+minNumeric+minSpecial = ${mins}, got ${s.length}` });
  }
  if (charset(s).length === 0) {
    out.push({ property: "special", reason: "no characters to choose from: enable at least one of upper, lower, numeric, special (with a non-empty overrideSpecial)" });
  }
  return out;
}

function charset(s: StringSpec): string {
  return (s.upper ? UPPER : "") + (s.lower ? LOWER : "") + (s.numeric ? NUMERIC : "") + (s.special ? (s.overrideSpecial ?? DEFAULT_SPECIAL) : "");
}

/**
 * A random string: first the required minimum of each enabled class, then the rest from all enabled
 * classes, then a Fisher–Yates shuffle so the guaranteed characters are not at fixed positions.
 */
export function generateString(s: StringSpec, rng: Rng = cryptoRng): string {
  const problems = stringSpecProblems(s);
  if (problems.length) throw new Error(problems.map((p) => `${p.property}: ${p.reason}`).join("; "));
  const pick = (set: string) => set[rng(set.length)];
  const chars: string[] = [];
  const classes: [boolean, number, string][] = [
    [s.upper, s.minUpper, UPPER],
    [s.lower, s.minLower, LOWER],
    [s.numeric, s.minNumeric, NUMERIC],
    [s.special, s.minSpecial, s.overrideSpecial ?? DEFAULT_SPECIAL],
  ];
  for (const [enabled, min, set] of classes) {
    if (enabled && set.length > 0) for (let i = 0; i < min; i++) chars.push(pick(set));
  }
  const all = charset(s);
  while (chars.length < s.length) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = rng(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join("");
}

export interface RandomIdValues {
  id: string;
  hex: string;
  dec: string;
  b64Std: string;
  b64Url: string;
}

/** The encodings RandomId exposes; every one except `id` carries the prefix. */
export function encodeId(bytes: Buffer, prefix = ""): RandomIdValues {
  const hex = bytes.toString("hex");
  const url = bytes.toString("base64url");
  return {
    id: url,
    hex: prefix + hex,
    dec: prefix + BigInt("0x" + (hex || "0")).toString(10),
    b64Std: prefix + bytes.toString("base64"),
    b64Url: prefix + url,
  };
}

export function generateId(byteLength: number, prefix?: string): RandomIdValues {
  return encodeId(randomBytes(byteLength), prefix);
}

/**
 * An integer in [min, max]. With a seed the result is a deterministic function of (seed, min, max);
 * it does not reproduce the upstream provider's seeded sequence, only its determinism.
 */
export function generateInteger(min: number, max: number, seed?: string): number {
  const span = BigInt(max) - BigInt(min) + 1n;
  if (seed === undefined) return min + Number(span <= 281474976710655n ? BigInt(randomInt(Number(span))) : uniformBig(span));
  const digest = createHash("sha256").update(`reprobench-random-integer\0${seed}`).digest("hex");
  return Number(BigInt(min) + (BigInt("0x" + digest) % span));
}

function uniformBig(span: bigint): bigint {
  // Spans beyond randomInt's 2^48 limit: 64 extra random bits make the modulo bias negligible.
  const r = BigInt("0x" + randomBytes(16).toString("hex"));
  return r % span;
}

export function generateUuid(): string {
  return randomUUID();
}

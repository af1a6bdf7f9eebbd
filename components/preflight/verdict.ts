// The preflight's vocabulary: a check's result, a problem (one line naming the host, the GPU or the file,
// and the fix) and how they print. Pure.

export type CheckStatus = "ok" | "fail" | "warn" | "skip";

/** One thing wrong on a host. */
export interface Problem {
  host: string;
  /** What it is about: "GPU 3 (GPU-…)", "/var/lib/…/model-00002-of-00004.safetensors", "port 30001", "tool skopeo". */
  subject: string;
  message: string;
  fix: string;
}

/** One row of a host's table. */
export interface CheckResult {
  check: string;
  status: CheckStatus;
  /** One line: what was found ("8 × NVIDIA A100-SXM4-40GB, driver 580.95.05, CUDA 13.0"). */
  detail: string;
  problems: Problem[];
  /** Worth saying, not wrong (status warn when there are notes and no problems). */
  notes: string[];
}

/** The one line a problem prints as. */
export function problemLine(p: Problem): string {
  return `${p.host}: ${p.subject}: ${p.message}; fix: ${p.fix}`;
}

/** A result from its problems and notes: fail with problems, warn with notes only, else ok. */
export function result(check: string, detail: string, problems: Problem[] = [], notes: string[] = []): CheckResult {
  return { check, status: problems.length ? "fail" : notes.length ? "warn" : "ok", detail, problems, notes };
}

export function skipped(check: string, why: string): CheckResult {
  return { check, status: "skip", detail: why, problems: [], notes: [] };
}

/** At most `max` items, then "… and N more". */
export function listSome(items: readonly string[], max = 5): string {
  return items.length <= max ? items.join(", ") : `${items.slice(0, max).join(", ")} and ${items.length - max} more`;
}

export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;

/** Bytes as GiB with one decimal ("12.6 GiB"). */
export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(1)} GiB`;
}

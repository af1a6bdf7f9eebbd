// Manual verdicts from a human audit (seed 000's "应当判为 passed" rows). They never change the raw
// score; audit reports them separately as the corrected score.
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const VERDICT_ALIASES: Record<string, "passed" | "failed" | "excluded"> = {
  passed: "passed",
  pass: "passed",
  failed: "failed",
  fail: "failed",
  excluded: "excluded",
  exclude: "excluded",
  invalid: "excluded",
};

const OverrideSchema = z
  .object({
    task: z.string().min(1, "task must be a non-empty string"),
    trial: z.string().min(1).optional(),
    verdict: z.string().transform((v, ctx) => {
      const verdict = VERDICT_ALIASES[v.toLowerCase()];
      if (!verdict) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `verdict '${v}' is not one of passed, failed, excluded` });
        return z.NEVER;
      }
      return verdict;
    }),
    reason: z.string().min(1, "reason must say why the verdict differs from the raw outcome"),
    evidence: z.union([z.string(), z.array(z.string())]).transform((e) => (Array.isArray(e) ? e : [e])),
  })
  .strict();

const FileSchema = z.union([z.object({ version: z.literal(1).optional(), overrides: z.array(OverrideSchema) }).strict(), z.array(OverrideSchema)]);

export type Override = z.output<typeof OverrideSchema>;

/** Parses an overrides file (YAML or JSON). Errors name the file, the entry and the field. */
export function parseOverrides(text: string, fileName: string): Override[] {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new Error(`${fileName}: not valid YAML/JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (raw === null || raw === undefined) return [];
  const parsed = FileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? issue.path.join(".") : "(top level)";
    const hint = " (expected `overrides: [{task, verdict, reason, evidence}]`)";
    throw new Error(`${fileName}: ${where}: ${issue.message}${issue.path.length ? "" : hint}`);
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.overrides;
  const seen = new Set<string>();
  for (const o of list) {
    const key = `${o.task}\u0000${o.trial ?? ""}`;
    if (seen.has(key)) throw new Error(`${fileName}: task '${o.task}'${o.trial ? ` trial '${o.trial}'` : ""} has two overrides; keep one`);
    seen.add(key);
  }
  return list;
}

// Manual verdicts from a human audit (seed 000's "应当判为 passed" rows). They never change the raw
// score; audit reports them separately as the corrected score. An override may name the trial it was
// judged on: it then applies only while that trial is the counted one (audit.ts says what counts instead).
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
    task: z.string().min(1, "must be a non-empty task name"),
    trial: z.string().min(1).optional(),
    verdict: z.string().transform((v, ctx) => {
      const verdict = VERDICT_ALIASES[v.toLowerCase()];
      if (!verdict) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `'${v}' is not one of passed, failed, excluded` });
        return z.NEVER;
      }
      return verdict;
    }),
    reason: z.string().min(1, "is empty; say why the verdict differs from the raw outcome"),
    evidence: z.union([z.string(), z.array(z.string())]).transform((e) => (Array.isArray(e) ? e : [e])),
  })
  .strict();

export type Override = z.output<typeof OverrideSchema>;

const FIELDS = Object.keys(OverrideSchema.shape);
const SHAPE_HINT = "expected `overrides: [{task, verdict, reason, evidence, trial?}]` or a list of such entries";

/** One zod issue as "field: what is wrong", in words a person editing the YAML can act on. */
function describeIssue(issue: z.ZodIssue): string {
  const field = issue.path.length ? issue.path.join(".") : null;
  if (issue.code === z.ZodIssueCode.unrecognized_keys) {
    return issue.keys.map((k) => `${k}: unknown field (fields: ${FIELDS.join(", ")})`).join("; ");
  }
  if (issue.code === z.ZodIssueCode.invalid_type && issue.received === "undefined") return `${field}: missing (required)`;
  if (issue.code === z.ZodIssueCode.invalid_type) return `${field}: expected ${issue.expected}, got ${issue.received}`;
  if (issue.code === z.ZodIssueCode.invalid_union) {
    const missing = issue.unionErrors.every((e) => e.issues.every((i) => i.code === z.ZodIssueCode.invalid_type && i.received === "undefined"));
    return missing ? `${field}: missing (required)` : `${field}: expected a string or a list of strings`;
  }
  const separator = issue.code === z.ZodIssueCode.custom ? " " : ": ";
  return `${field ?? "(entry)"}${separator}${issue.message}`;
}

/** The entries of the file, whichever of the two accepted shapes it has; throws naming the file. */
function entriesOf(raw: unknown, fileName: string): { entries: unknown[]; where: string } {
  if (Array.isArray(raw)) return { entries: raw, where: "" };
  if (raw === null || typeof raw !== "object") throw new Error(`${fileName}: (top level): ${SHAPE_HINT}`);
  const top = raw as Record<string, unknown>;
  const unknown = Object.keys(top).filter((k) => k !== "version" && k !== "overrides");
  if (unknown.length) throw new Error(`${fileName}: (top level): unknown key(s) ${unknown.map((k) => `'${k}'`).join(", ")}; ${SHAPE_HINT}`);
  if (top.version !== undefined && top.version !== 1) throw new Error(`${fileName}: version: ${JSON.stringify(top.version)} is not supported (only 1)`);
  if (!Array.isArray(top.overrides)) throw new Error(`${fileName}: overrides: ${top.overrides === undefined ? "missing" : "must be a list"}; ${SHAPE_HINT}`);
  return { entries: top.overrides, where: "overrides" };
}

/**
 * Parses an overrides file (YAML or JSON). Every problem is reported at once, each naming the file, the
 * entry (index, and task when it has one) and the field.
 */
export function parseOverrides(text: string, fileName: string): Override[] {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new Error(`${fileName}: not valid YAML/JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (raw === null || raw === undefined) return [];
  const { entries, where } = entriesOf(raw, fileName);
  const list: { override: Override; index: number }[] = [];
  const entryName = (index: number): string => (where ? `${where}[${index}]` : `entry ${index}`);
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    const task = entry !== null && typeof entry === "object" && typeof (entry as { task?: unknown }).task === "string" ? (entry as { task: string }).task : null;
    const label = `${fileName}: ${entryName(index)}${task ? ` (task '${task}')` : ""}`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      problems.push(`${label}: expected a mapping with task, verdict, reason, evidence`);
      return;
    }
    const parsed = OverrideSchema.safeParse(entry);
    if (parsed.success) list.push({ override: parsed.data, index });
    else for (const issue of parsed.error.issues) problems.push(`${label}: ${describeIssue(issue)}`);
  });
  const seen = new Map<string, number>();
  for (const { override: o, index } of list) {
    const key = `${o.task}\u0000${o.trial ?? ""}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push(`${fileName}: ${entryName(index)} (task '${o.task}'): same task${o.trial ? ` and trial '${o.trial}'` : ""} as ${entryName(first)}; keep one`);
    } else seen.set(key, index);
  }
  if (problems.length) throw new Error(problems.join("\n"));
  return list.map((x) => x.override);
}

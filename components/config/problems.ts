// How config problems are worded: the full Pulumi key of a path, a bad value (never a secret's), zod's
// issues as "expected …" phrases, and the printed form with private keys and URL credentials masked.
import { z } from "zod";
import { RENAMED_KEYS, SECRET_KEYS, configSchema } from "./schema";

export const NAMESPACE = "reprobench";

export interface ConfigProblem {
  /** Full Pulumi config key with a path, e.g. "reprobench:modelServer.tp" or "reprobench:hosts[1].ssh.port". */
  key: string;
  /** The bad value (or "missing") and what is expected. Never contains a secret's value. */
  message: string;
}

export type PathPart = string | number;

/** "reprobench:" + a JS-like path: hosts[1].ssh.port. */
export function configKey(path: readonly PathPart[]): string {
  let key = "";
  for (const part of path) key += typeof part === "number" ? `[${part}]` : key === "" ? part : `.${part}`;
  return key === "" ? NAMESPACE : `${NAMESPACE}:${key}`;
}

function isSecretPath(path: readonly PathPart[]): boolean {
  return (SECRET_KEYS as readonly PathPart[]).includes(path[0]);
}

function valueAt(root: unknown, path: readonly PathPart[]): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PathPart, unknown>)[part];
  }
  return value;
}

/** Short, single-line rendering of a bad value; secrets are never rendered. */
export function renderValue(value: unknown, path: readonly PathPart[] = []): string {
  if (isSecretPath(path)) return "a value (not shown: secret)";
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  object: "a mapping",
  array: "a list",
  null: "null",
};

// Turns zod's built-in issues into "expected …" phrases; checks with their own message keep it.
export const errorMap: z.ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case z.ZodIssueCode.invalid_type: {
      // YAML reads unquoted 7131e43, 0755, yes… as numbers or booleans.
      const hint = issue.expected === "string" && (issue.received === "number" || issue.received === "boolean") ? " (quote the value in YAML)" : "";
      return { message: `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}${hint}` };
    }
    case z.ZodIssueCode.invalid_literal:
      return { message: `expected ${JSON.stringify(issue.expected)}` };
    case z.ZodIssueCode.invalid_enum_value:
      return { message: `expected one of ${issue.options.map((o) => JSON.stringify(o)).join(", ")}` };
    case z.ZodIssueCode.too_small: {
      const op = issue.inclusive ? "≥" : ">";
      const min = Number(issue.minimum);
      if (issue.type === "array") return { message: `expected a list with at least ${min} item${min === 1 ? "" : "s"}` };
      if (issue.type === "string") return { message: `expected a string of at least ${min} character${min === 1 ? "" : "s"}` };
      return { message: `expected a number ${op} ${min}` };
    }
    case z.ZodIssueCode.too_big: {
      const op = issue.inclusive ? "≤" : "<";
      const max = Number(issue.maximum);
      if (issue.type === "array") return { message: `expected a list with at most ${max} items` };
      if (issue.type === "string") return { message: `expected a string of at most ${max} characters` };
      return { message: `expected a number ${op} ${max}` };
    }
    case z.ZodIssueCode.invalid_string:
      return { message: `expected a valid ${typeof issue.validation === "string" ? issue.validation : "string"}` };
    case z.ZodIssueCode.invalid_union:
      return { message: ctx.defaultError === "Invalid input" ? "expected one of the allowed forms" : ctx.defaultError };
    default:
      return { message: ctx.defaultError.startsWith("expected") ? ctx.defaultError : `expected a valid value (${ctx.defaultError})` };
  }
};

// Walks the schema along a data path to list the keys an object allows (for unknown-key messages).
function objectShapeAt(schema: z.ZodTypeAny, path: readonly PathPart[]): Record<string, z.ZodTypeAny> | null {
  let current: z.ZodTypeAny | undefined = schema;
  let index = 0;
  for (let guard = 0; current && guard < 100; guard++) {
    if (current instanceof z.ZodEffects) current = current.innerType();
    else if (current instanceof z.ZodDefault) current = current.removeDefault();
    else if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap();
    else if (index === path.length) return current instanceof z.ZodObject ? (current.shape as Record<string, z.ZodTypeAny>) : null;
    else if (current instanceof z.ZodObject) current = (current.shape as Record<string, z.ZodTypeAny>)[String(path[index++])];
    else if (current instanceof z.ZodArray) {
      current = current.element;
      index++;
    } else if (current instanceof z.ZodRecord) {
      current = current.valueSchema;
      index++;
    } else return null;
  }
  return null;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length];
}

function unknownKeyProblems(issue: z.ZodIssue & { keys: string[] }, schema: z.ZodTypeAny): ConfigProblem[] {
  const allowed = Object.keys(objectShapeAt(schema, issue.path) ?? {});
  // A misspelt old name is still a near miss (what a stack file from before the rename holds).
  const renamed = new Map(issue.path.length === 0 && schema === configSchema ? Object.entries(RENAMED_KEYS) : []);
  const named = (c: string) => (renamed.has(c) ? `'${c}', the old name of '${renamed.get(c)}'` : `'${c}'`);
  return issue.keys.map((k) => {
    const close = [...allowed, ...renamed.keys()].filter((a) => editDistance(a, k) <= Math.max(1, Math.floor(a.length / 4)));
    const hint = close.length > 0 ? ` (did you mean ${close.map(named).join(" or ")}?)` : "";
    return {
      key: configKey([...issue.path, k]),
      message: `unknown key${hint}; expected one of: ${allowed.join(", ")}`,
    };
  });
}

/** One zod issue as problems: the key, the value found (never a secret) and what is expected. */
export function issueProblems(issue: z.ZodIssue, raw: unknown, schema: z.ZodTypeAny = configSchema): ConfigProblem[] {
  if (issue.code === z.ZodIssueCode.unrecognized_keys) return unknownKeyProblems(issue, schema);
  const value = valueAt(raw, issue.path);
  const got = value === undefined ? "missing" : `got ${renderValue(value, issue.path)}`;
  return [{ key: configKey(issue.path), message: `${got}; ${issue.message}` }];
}

/** The problems without repeats (same key and message), in order. */
export function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.key}\n${p.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

// Defence in depth: even a message built from a secret by mistake is masked before printing.
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']*@/gi;

/** One line per problem: "<key>: <bad value>; <expected>". Private keys and URL credentials are masked. */
export function formatProblems(problems: ConfigProblem[]): string {
  return problems
    .map((p) => `${p.key}: ${p.message}`.replace(PEM_BLOCK, "[private key not shown]").replace(URL_USERINFO, "$1***@"))
    .join("\n");
}

/** A problem at a config path. */
export const problem = (path: PathPart[], message: string): ConfigProblem => ({ key: configKey(path), message });

/** A problem for every item whose id an earlier item has already (report gets both indices). */
export function duplicates<T>(items: T[], id: (item: T) => string, report: (index: number, first: number) => ConfigProblem): ConfigProblem[] {
  const firstIndex = new Map<string, number>();
  const out: ConfigProblem[] = [];
  items.forEach((item, index) => {
    const first = firstIndex.get(id(item));
    if (first === undefined) firstIndex.set(id(item), index);
    else out.push(report(index, first));
  });
  return out;
}

/**
 * The stack a stack file is for (Pulumi.<stack>.yaml), and problems whose `pulumi config set` hints name it:
 * typed as shown in the checkout, a hint without `--stack` sets the key on whatever stack is selected.
 */
export function stackOfFile(file: string): string | undefined {
  return /(?:^|[\\/])Pulumi\.([^/\\]+)\.ya?ml$/.exec(file)?.[1];
}

export function withStackInHints(problems: readonly ConfigProblem[], stack: string | undefined): ConfigProblem[] {
  if (stack === undefined) return [...problems];
  return problems.map((p) => ({ ...p, message: p.message.replaceAll("pulumi config set --secret", `pulumi config set --stack ${stack} --secret`) }));
}

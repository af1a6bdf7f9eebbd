// docs/config.md from the zod schema (components/config/schema.ts). Two sources meet by key path:
// the schema object at run time gives each key's type, default and whether it is required; the schema's
// source text gives each key's JSDoc, which zod does not keep. Both are walked the same way (objects,
// arrays as `[]`, records as `<name>`), so a key added to the schema shows up here with no other edit.
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import type { ZodTypeAny } from "zod";
import { configSchema, RUN_STACK_KEYS, runStackSchema, SECRET_KEYS } from "../../components/config/schema";

const REPO = path.resolve(__dirname, "../..");
export const SCHEMA_FILE = "components/config/schema.ts";

// ---------------------------------------------------------------------------------------------------------
// JSDoc by key path, from the source text

/** Key path ("hosts[].ssh.host") → the JSDoc above that key, one paragraph. */
export function jsdocByPath(sourceText: string): Map<string, string> {
  const file = ts.createSourceFile("schema.ts", sourceText, ts.ScriptTarget.ES2022, true);
  const consts = new Map<string, ts.Expression>();
  /** A const's own comment: its JSDoc, else the `//` lines above it (the section headings of schema.ts). */
  const constDocs = new Map<string, string>();
  for (const st of file.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !d.initializer) continue;
      consts.set(d.name.text, d.initializer);
      const doc = docOf(st) ?? lineCommentsOf(st);
      if (doc) constDocs.set(d.name.text, doc);
    }
  }
  const docs = new Map<string, string>();
  const seen = new Set<ts.Node>();

  function lineCommentsOf(node: ts.Node): string | null {
    const comments = ts.getLeadingCommentRanges(sourceText, node.getFullStart()) ?? [];
    const text = comments
      .map((c) => sourceText.slice(c.pos, c.end))
      .filter((c) => c.startsWith("//"))
      .map((c) => c.replace(/^\/\/\s?/, "").trim())
      .filter((l) => l && !/^-+$/.test(l))
      .join(" ");
    // A one- or two-word heading ("Hosts") says nothing a key's name does not.
    return text.split(" ").length >= 3 ? text : null;
  }

  function docOf(node: ts.Node): string | null {
    const comments = ts.getLeadingCommentRanges(sourceText, node.getFullStart()) ?? [];
    const block = comments.map((c) => sourceText.slice(c.pos, c.end)).filter((c) => c.startsWith("/**")).pop();
    if (!block) return null;
    return block
      .replace(/^\/\*\*|\*\/$/g, "")
      .split("\n")
      .map((l) => l.replace(/^\s*\* ?/, "").trim())
      .join(" ")
      .replace(/\s+/g, " ")
      .trim();
  }

  const walkObject = (obj: ts.ObjectLiteralExpression, at: string): void => {
    for (const p of obj.properties) {
      if (ts.isSpreadAssignment(p)) {
        const spread = resolve(p.expression);
        if (spread && ts.isObjectLiteralExpression(spread)) walkObject(spread, at);
      } else if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) {
        const key = at ? `${at}.${p.name.text}` : p.name.text;
        const doc = docOf(p);
        if (doc && !docs.has(key)) docs.set(key, doc);
        walkSchema(p.initializer, key);
      }
    }
  };

  const resolve = (e: ts.Expression): ts.Expression | undefined => (ts.isIdentifier(e) ? consts.get(e.text) : e);

  /** Follows a schema expression to the object literals it is built from. */
  const walkSchema = (expr: ts.Expression, at: string): void => {
    if (ts.isIdentifier(expr) && at && !docs.has(at) && constDocs.has(expr.text)) docs.set(at, constDocs.get(expr.text)!);
    const e = resolve(expr);
    if (!e || seen.has(e)) return;
    if (ts.isObjectLiteralExpression(e)) return walkObject(e, at);
    if (!ts.isCallExpression(e) || !ts.isPropertyAccessExpression(e.expression)) return;
    const method = e.expression.name.text;
    const receiver = e.expression.expression;
    const isZ = ts.isIdentifier(receiver) && receiver.text === "z";
    if (isZ && method === "object" && e.arguments[0]) {
      seen.add(e);
      walkSchema(e.arguments[0], at);
      seen.delete(e);
    } else if (isZ && method === "array" && e.arguments[0]) walkSchema(e.arguments[0], `${at}[]`);
    else if (isZ && method === "record") walkSchema(e.arguments[e.arguments.length - 1], `${at}.<name>`);
    else if (!isZ) walkSchema(receiver, at); // .strict(), .default(…), .optional(), .partial(), .transform(…) …
  };

  for (const name of ["configSchema", "runStackSchema"]) {
    const init = consts.get(name);
    if (init) walkSchema(init, "");
  }
  return docs;
}

// ---------------------------------------------------------------------------------------------------------
// Types and defaults by key path, from the schema object

export interface KeyRow {
  path: string;
  type: string;
  /** Rendered default; "required" when the key has none and must be set; "—" when it may be left out. */
  default: string;
  doc: string;
}

interface Unwrapped {
  inner: ZodTypeAny;
  nullable: boolean;
  optional: boolean;
  defaultValue?: unknown;
}

// zod 3 keeps its structure in `_def`; only these few fields are read.
type Def = { typeName: string; [k: string]: unknown };
const defOf = (s: ZodTypeAny): Def => s._def as Def;

function unwrap(schema: ZodTypeAny): Unwrapped {
  let s = schema;
  let nullable = false;
  let optional = false;
  let defaultValue: unknown;
  let hasDefault = false;
  for (;;) {
    const d = defOf(s);
    if (d.typeName === "ZodDefault") {
      // Under an optional (a .partial() shape, as modelServer.overrides) an absent key stays absent.
      if (!hasDefault && !optional) {
        defaultValue = (d.defaultValue as () => unknown)();
        hasDefault = true;
      }
      s = d.innerType as ZodTypeAny;
    } else if (d.typeName === "ZodOptional") {
      optional = true;
      s = d.innerType as ZodTypeAny;
    } else if (d.typeName === "ZodNullable") {
      nullable = true;
      s = d.innerType as ZodTypeAny;
    } else if (d.typeName === "ZodEffects") s = d.schema as ZodTypeAny;
    else break;
  }
  return { inner: s, nullable, optional: optional || hasDefault, ...(hasDefault ? { defaultValue } : {}) };
}

const isObject = (s: ZodTypeAny): boolean => defOf(s).typeName === "ZodObject";
const shapeOf = (s: ZodTypeAny): Record<string, ZodTypeAny> => (s as unknown as { shape: Record<string, ZodTypeAny> }).shape;

function typeName(schema: ZodTypeAny): string {
  const { inner, nullable } = unwrap(schema);
  const d = defOf(inner);
  let t: string;
  switch (d.typeName) {
    case "ZodString":
      t = "string";
      break;
    case "ZodNumber":
      t = ((d.checks as { kind: string }[]) ?? []).some((c) => c.kind === "int") ? "integer" : "number";
      break;
    case "ZodBoolean":
      t = "boolean";
      break;
    case "ZodEnum":
      t = (d.values as string[]).map((v) => `\`${v}\``).join(" \\| ");
      break;
    case "ZodLiteral":
      t = `\`${JSON.stringify(d.value)}\``;
      break;
    case "ZodArray":
      t = `list of ${typeName(d.type as ZodTypeAny)}`;
      break;
    case "ZodRecord":
      t = `map: name → ${typeName(d.valueType as ZodTypeAny)}`;
      break;
    case "ZodObject":
      t = "object";
      break;
    case "ZodUnion":
      t = (d.options as ZodTypeAny[]).map(typeName).join(" or ");
      break;
    case "ZodUnknown":
    case "ZodAny":
      t = "any";
      break;
    default:
      t = d.typeName.replace(/^Zod/, "").toLowerCase();
  }
  return nullable ? `${t} or null` : t;
}

function renderDefault(u: Unwrapped): string {
  if (!("defaultValue" in u)) return u.optional ? "—" : "required";
  const v = u.defaultValue;
  if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0 && isObject(u.inner)) return "(its keys' defaults)";
  return `\`${JSON.stringify(v)}\``;
}

/** For a key without a JSDoc of its own: a pointer to the nearest documented key above it. */
function seeParent(p: string, docs: Map<string, string>): string {
  for (let parent = p.replace(/(\.[^.]+|\[\])$/, ""); parent && parent !== p; p = parent, parent = parent.replace(/(\.[^.]+|\[\])$/, "")) {
    if (docs.has(parent)) return `(see \`${parent}\`)`;
  }
  return "";
}

/** One row per key, depth first in schema order; objects get a row and then their keys. */
export function keyRows(schema: ZodTypeAny, docs: Map<string, string>, at = ""): KeyRow[] {
  const rows: KeyRow[] = [];
  const visit = (s: ZodTypeAny, p: string): void => {
    const u = unwrap(s);
    rows.push({ path: p, type: typeName(s), default: renderDefault(u), doc: docs.get(p) ?? seeParent(p, docs) });
    descend(u.inner, p);
  };
  const descend = (inner: ZodTypeAny, p: string): void => {
    const d = defOf(inner);
    if (d.typeName === "ZodObject") for (const [k, v] of Object.entries(shapeOf(inner))) visit(v, p ? `${p}.${k}` : k);
    else if (d.typeName === "ZodArray") descend(unwrap(d.type as ZodTypeAny).inner, `${p}[]`);
    else if (d.typeName === "ZodRecord") {
      const value = unwrap(d.valueType as ZodTypeAny).inner;
      if (isObject(value)) descend(value, `${p}.<name>`);
    }
  };
  descend(unwrap(schema).inner, at);
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// The page

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
// Enum types already escape their separators; only the doc and default cells need it.
const table = (rows: readonly KeyRow[]): string[] => [
  "| key | type | default | what |",
  "| --- | --- | --- | --- |",
  ...rows.map((r) => `| \`${r.path}\` | ${r.type} | ${cell(r.default)} | ${cell(r.doc)} |`),
];

export function renderConfigReference(sourceText = fs.readFileSync(path.join(REPO, SCHEMA_FILE), "utf8")): string {
  const docs = jsdocByPath(sourceText);
  const all = keyRows(configSchema as unknown as ZodTypeAny, docs);
  const topLevel = [...new Set(all.map((r) => r.path.split(/[.[]/)[0]))];
  const secret = new Set<string>(SECRET_KEYS);
  const lines = [
    "<!-- Generated by `node --import tsx scripts/gen-docs.ts` from components/config/schema.ts; do not edit. -->",
    "# Configuration reference",
    "",
    "Every key of a stack file's `reprobench:` namespace, generated from the zod schema: the type, the default",
    "(`required` = no default; `—` = may be left out) and the key's JSDoc. In a stack file each top-level key is",
    "written `reprobench:<key>`; nested keys are YAML under it. `reprobench config show Pulumi.<stack>.yaml` prints",
    "a stack with every default filled in; `reprobench config validate` checks one. Keys marked **secret** never go",
    "in a stack file in plaintext: set them with `pulumi config set --secret` (see the [README](../README.md)).",
    "",
    "A stack either owns a cluster (the keys below) or is a **run stack** on another stack's cluster, which may set",
    `only ${RUN_STACK_KEYS.map((k) => `\`${k}\``).join(", ")} ([below](#run-stacks)).`,
    "",
    "## Contents",
    "",
    ...topLevel.map((k) => `- [\`${k}\`](#${k.toLowerCase()})${secret.has(k) ? " (secret)" : ""}`),
    "- [run stacks](#run-stacks)",
    "",
  ];
  for (const key of topLevel) {
    const rows = all.filter((r) => r.path === key || r.path.startsWith(`${key}.`) || r.path.startsWith(`${key}[`));
    lines.push(`## ${key}`, "", ...(secret.has(key) ? ["**secret**", ""] : []), ...table(rows), "");
  }
  const runStackRows = keyRows(runStackSchema as unknown as ZodTypeAny, docs).filter((r) => !r.path.startsWith("run."));
  lines.push(
    "## Run stacks",
    "",
    "A run stack's file sets `reprobench:cluster` and `reprobench:run` (the same keys as [`run`](#run) above), and",
    "optionally `reprobench:hfToken` and a dataset of its own:",
    "",
    ...table(runStackRows),
    "",
  );
  return lines.join("\n");
}

// The settings' zod schema as Pulumi package schema types, so the plugin's schema (plugin/index.ts) types a
// BenchCluster's `settings` as `reprobench config validate` reads a stack file, instead of `any`: a Python
// program's SDK gets a class (and a TypedDict) per section, with each field's type.
//
// What a Pulumi schema cannot say is left to the validation the component runs anyway (one error listing
// every problem): value ranges and patterns, enum members (named in the description), the string keys of a
// map. A zod type this does not know is an error naming its path, not a silent `any`.
import { z } from "zod";

/** A property's type in a Pulumi package schema. */
export interface PulumiPropertySpec {
  type?: "string" | "number" | "integer" | "boolean" | "array" | "object";
  $ref?: string;
  items?: PulumiPropertySpec;
  additionalProperties?: PulumiPropertySpec;
  oneOf?: PulumiPropertySpec[];
  description?: string;
}

/** An object type of a Pulumi package schema (`types` holds them by token). */
export interface PulumiObjectTypeSpec {
  type: "object";
  description: string;
  properties: Record<string, PulumiPropertySpec>;
  required: string[];
}

/** The schema's own "anything" (zod's unknown: free-form maps such as extra agent kwargs). */
const ANY: PulumiPropertySpec = { $ref: "pulumi.json#/Any" };

const pascal = (s: string) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());

interface Walk {
  readonly pkg: string;
  readonly types: Record<string, PulumiObjectTypeSpec>;
}

/** Whether a field may be left out: optional, nullable or defaulted (the validation fills it in). */
function mayBeOmitted(t: z.ZodTypeAny): boolean {
  const def = t._def as { typeName: z.ZodFirstPartyTypeKind; schema?: z.ZodTypeAny; in?: z.ZodTypeAny };
  switch (def.typeName) {
    case z.ZodFirstPartyTypeKind.ZodOptional:
    case z.ZodFirstPartyTypeKind.ZodNullable:
    case z.ZodFirstPartyTypeKind.ZodDefault:
      return true;
    case z.ZodFirstPartyTypeKind.ZodEffects:
      return mayBeOmitted(def.schema as z.ZodTypeAny);
    case z.ZodFirstPartyTypeKind.ZodPipeline:
      return mayBeOmitted(def.in as z.ZodTypeAny);
    default:
      return false;
  }
}

/**
 * The Pulumi type of `t`, found at `path` (dotted, `[]` for an array's items, `{}` for a map's values);
 * each object becomes a named type `<pkg>:index:<Name>Settings`, Name from the path.
 */
function propertyOf(t: z.ZodTypeAny, path: string, names: string[], walk: Walk): PulumiPropertySpec {
  const def = t._def as Record<string, unknown> & { typeName: z.ZodFirstPartyTypeKind };
  const K = z.ZodFirstPartyTypeKind;
  switch (def.typeName) {
    case K.ZodOptional:
    case K.ZodNullable:
    case K.ZodDefault:
      return propertyOf(def.innerType as z.ZodTypeAny, path, names, walk);
    case K.ZodEffects:
      return propertyOf(def.schema as z.ZodTypeAny, path, names, walk);
    case K.ZodPipeline:
      return propertyOf(def.in as z.ZodTypeAny, path, names, walk);
    case K.ZodLazy:
      return propertyOf((def.getter as () => z.ZodTypeAny)(), path, names, walk);
    case K.ZodString:
      return { type: "string" };
    case K.ZodNumber: {
      const checks = (def.checks as { kind: string }[] | undefined) ?? [];
      return { type: checks.some((c) => c.kind === "int") ? "integer" : "number" };
    }
    case K.ZodBoolean:
      return { type: "boolean" };
    case K.ZodEnum:
      return { type: "string", description: `One of: ${(def.values as string[]).map((v) => JSON.stringify(v)).join(", ")}.` };
    case K.ZodLiteral: {
      const v = def.value;
      const type = typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v === "boolean" ? "boolean" : "string";
      return { type, description: `Always ${JSON.stringify(v)}.` };
    }
    case K.ZodArray:
      return { type: "array", items: propertyOf(def.type as z.ZodTypeAny, `${path}[]`, names, walk) };
    case K.ZodRecord:
      return { type: "object", additionalProperties: propertyOf(def.valueType as z.ZodTypeAny, `${path}{}`, names, walk) };
    case K.ZodUnion:
    case K.ZodDiscriminatedUnion: {
      const options = [...(def.options as Iterable<z.ZodTypeAny>)];
      const specs = options.map((o, i) => propertyOf(o, path, [...names, `Option${i + 1}`], walk));
      const distinct = [...new Map(specs.map((s) => [JSON.stringify(s), s])).values()];
      return distinct.length === 1 ? distinct[0] : { oneOf: distinct };
    }
    case K.ZodUnknown:
    case K.ZodAny:
      return { ...ANY };
    case K.ZodObject: {
      const token = `${walk.pkg}:index:${names.map(pascal).join("")}Settings`;
      if (walk.types[token]) throw new Error(`settings schema: two objects would both be ${token} (the second at ${path})`);
      const shape = (t as z.AnyZodObject).shape as Record<string, z.ZodTypeAny>;
      // Registered before its fields, so a field's own objects come after it in the schema.
      const spec: PulumiObjectTypeSpec = { type: "object", description: `reprobench's \`${path || "settings"}\` (docs/config.md).`, properties: {}, required: [] };
      walk.types[token] = spec;
      for (const [key, field] of Object.entries(shape)) {
        spec.properties[key] = propertyOf(field, path ? `${path}.${key}` : key, [...names, key], walk);
        if (!mayBeOmitted(field)) spec.required.push(key);
      }
      return { $ref: `#/types/${token}` };
    }
    default:
      throw new Error(`settings schema: ${path || "settings"} is a ${def.typeName}, which the plugin's schema cannot type (add it to components/config/pulumi-schema.ts)`);
  }
}

/**
 * The Pulumi schema of an object zod schema: its object types (by token, the root `<pkg>:index:<root>Settings`)
 * and the property that refers to the root. `omit` leaves top-level keys out (the secrets, which are
 * arguments of their own).
 */
export function pulumiSchemaOf(
  schema: z.ZodTypeAny,
  options: { pkg: string; root: string; omit?: readonly string[] },
): { property: PulumiPropertySpec; types: Record<string, PulumiObjectTypeSpec> } {
  const walk: Walk = { pkg: options.pkg, types: {} };
  const property = propertyOf(schema, "", [options.root], walk);
  const root = property.$ref ? walk.types[property.$ref.replace("#/types/", "")] : undefined;
  if (!root) throw new Error("settings schema: the root is not an object");
  for (const key of options.omit ?? []) {
    delete root.properties[key];
    root.required = root.required.filter((k) => k !== key);
  }
  // Types reachable only through an omitted key are dropped with it.
  const used = new Set<string>();
  const visit = (p: PulumiPropertySpec | undefined): void => {
    if (!p) return;
    if (p.$ref?.startsWith("#/types/")) {
      const token = p.$ref.slice("#/types/".length);
      if (used.has(token)) return;
      used.add(token);
      for (const f of Object.values(walk.types[token].properties)) visit(f);
    }
    visit(p.items);
    visit(p.additionalProperties);
    p.oneOf?.forEach(visit);
  };
  visit(property);
  return { property, types: Object.fromEntries(Object.entries(walk.types).filter(([token]) => used.has(token))) };
}

// The random resources the project uses, with the inputs/outputs of the @pulumi/random SDK typings.
// Every input forces replacement (values are generated once and never change in place), so no
// handler implements update; `keepers` exists only to trigger that replacement.
import bcrypt from "bcryptjs";
import { InputReader, changedKeys } from "../common/inputs";
import { CheckOutcome, DiffOutcome, PluginSpec, ResourceHandler } from "../common/provider";
import { Decoded, Props, isSet } from "../common/wire";
import { StringSpec, generateId, generateInteger, generateString, generateUuid, stringSpecProblems } from "./generators";

export const TYPES = {
  password: "random:index/randomPassword:RandomPassword",
  string: "random:index/randomString:RandomString",
  id: "random:index/randomId:RandomId",
  integer: "random:index/randomInteger:RandomInteger",
  uuid: "random:index/randomUuid:RandomUuid",
} as const;

const STRING_INPUTS = ["keepers", "length", "lower", "minLower", "minNumeric", "minSpecial", "minUpper", "number", "numeric", "overrideSpecial", "special", "upper"];

function replaceAll(inputKeys: string[]) {
  return (olds: Decoded, news: Decoded): DiffOutcome => {
    const changed = changedKeys(olds.values, news.values, inputKeys);
    return { changes: changed.length > 0, replaces: changed };
  };
}

function checkKeepers(r: InputReader): void {
  const v = r.values.keepers;
  if (isSet(v) && (typeof v !== "object" || Array.isArray(v))) {
    r.failures.push({ property: "keepers", reason: "must be a map" });
  }
}

/** Reads the string/password inputs with defaults applied; `spec` is undefined while values are unknown. */
export function readStringSpec(values: Props): { spec?: StringSpec; outcome: CheckOutcome } {
  const r = new InputReader(values);
  checkKeepers(r);
  const length = r.integer("length", true);
  const flags = { upper: r.bool("upper") ?? true, lower: r.bool("lower") ?? true, special: r.bool("special") ?? true };
  const number = r.bool("number");
  const numeric = r.bool("numeric");
  if (number !== undefined && numeric !== undefined && number !== numeric) {
    r.failures.push({ property: "numeric", reason: `conflicts with the deprecated "number" (${number}); set only numeric` });
  }
  const num = numeric ?? number ?? true;
  const mins = {
    minUpper: r.integer("minUpper") ?? 0,
    minLower: r.integer("minLower") ?? 0,
    minNumeric: r.integer("minNumeric") ?? 0,
    minSpecial: r.integer("minSpecial") ?? 0,
  };
  const overrideSpecial = r.string("overrideSpecial");
  const defaults: Props = { ...flags, ...mins, number: num, numeric: num };
  const anyUnknown = STRING_INPUTS.some((k) => r.unknown(k));
  if (r.failures.length || length === undefined || anyUnknown) return { outcome: { defaults, failures: r.failures } };
  const spec: StringSpec = { length, ...flags, numeric: num, ...mins, overrideSpecial };
  return { spec, outcome: { defaults, failures: stringSpecProblems(spec) } };
}

function stringHandler(password: boolean): ResourceHandler {
  return {
    check: (news) => readStringSpec(news.values).outcome,
    diff: replaceAll(STRING_INPUTS),
    create: async (_ctx, inputs) => {
      const { spec } = readStringSpec(inputs.values);
      if (!spec) throw new Error("inputs are not fully known");
      const result = generateString(spec);
      const outs: Props = { ...inputs.values, ...readStringSpec(inputs.values).outcome.defaults, result };
      if (password) {
        outs.bcryptHash = bcrypt.hashSync(result, 10);
        // The ID is a placeholder for passwords: IDs are never secret, so it must not be the result.
        return { id: "none", outs, secretOuts: ["result", "bcryptHash"] };
      }
      return { id: result, outs };
    },
  };
}

const randomId: ResourceHandler = {
  check: (news) => {
    const r = new InputReader(news.values);
    checkKeepers(r);
    const n = r.integer("byteLength", true);
    if (n !== undefined && n < 1) r.failures.push({ property: "byteLength", reason: `must be >= 1, got ${n}` });
    r.string("prefix");
    return { failures: r.failures };
  },
  diff: replaceAll(["byteLength", "keepers", "prefix"]),
  create: async (_ctx, inputs) => {
    const v = generateId(inputs.values.byteLength as number, inputs.values.prefix as string | undefined);
    return { id: v.id, outs: { ...inputs.values, hex: v.hex, dec: v.dec, b64Std: v.b64Std, b64Url: v.b64Url } };
  },
};

const randomInteger: ResourceHandler = {
  check: (news) => {
    const r = new InputReader(news.values);
    checkKeepers(r);
    const min = r.integer("min", true);
    const max = r.integer("max", true);
    r.string("seed");
    if (min !== undefined && max !== undefined && max < min) {
      r.failures.push({ property: "max", reason: `must be >= min (${min}), got ${max}` });
    }
    return { failures: r.failures };
  },
  diff: replaceAll(["keepers", "max", "min", "seed"]),
  create: async (_ctx, inputs) => {
    const { min, max, seed } = inputs.values as { min: number; max: number; seed?: string };
    const result = generateInteger(min, max, seed);
    return { id: String(result), outs: { ...inputs.values, result } };
  },
};

const randomUuid: ResourceHandler = {
  check: (news) => {
    const r = new InputReader(news.values);
    checkKeepers(r);
    return { failures: r.failures };
  },
  diff: replaceAll(["keepers"]),
  create: async (_ctx, inputs) => {
    const result = generateUuid();
    return { id: result, outs: { ...inputs.values, result } };
  },
};

export function randomPlugin(version: string): PluginSpec {
  return {
    name: "random",
    version,
    resources: {
      [TYPES.password]: stringHandler(true),
      [TYPES.string]: stringHandler(false),
      [TYPES.id]: randomId,
      [TYPES.integer]: randomInteger,
      [TYPES.uuid]: randomUuid,
    },
  };
}

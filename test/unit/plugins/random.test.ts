import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { MemoryLog } from "../../../scripts/plugins/common/engine-log";
import { makeProvider } from "../../../scripts/plugins/common/provider";
import { SECRET_SIG, SIG_KEY, UNKNOWN, wrapSecret } from "../../../scripts/plugins/common/wire";
import { DEFAULT_SPECIAL, LOWER, NUMERIC, UPPER, encodeId, generateInteger, generateString, stringSpecProblems } from "../../../scripts/plugins/random/generators";
import { TYPES, randomPlugin } from "../../../scripts/plugins/random/resources";

const urn = (type: string, name = "r") => `urn:pulumi:dev::proj::${type}::${name}`;
const provider = makeProvider(randomPlugin("4.21.2"), new MemoryLog());
const spec = { length: 32, upper: true, lower: true, numeric: true, special: true, minUpper: 0, minLower: 0, minNumeric: 0, minSpecial: 0 };

function count(s: string, set: string) {
  return [...s].filter((c) => set.includes(c)).length;
}

describe("string generation", () => {
  it("honours length, enabled classes and minimums", () => {
    for (let i = 0; i < 50; i++) {
      const s = generateString({ ...spec, length: 12, special: false, minUpper: 3, minNumeric: 4 });
      expect(s).toHaveLength(12);
      expect(count(s, UPPER)).toBeGreaterThanOrEqual(3);
      expect(count(s, NUMERIC)).toBeGreaterThanOrEqual(4);
      expect(count(s, DEFAULT_SPECIAL)).toBe(0);
    }
  });

  it("uses overrideSpecial instead of the default set", () => {
    const s = generateString({ ...spec, length: 40, upper: false, lower: false, numeric: false, overrideSpecial: "-_" });
    expect(s).toMatch(/^[-_]{40}$/);
  });

  it("uses every class of the charset (not a fixed subset)", () => {
    const s = generateString({ ...spec, length: 2000 });
    for (const set of [UPPER, LOWER, NUMERIC, DEFAULT_SPECIAL]) expect(count(s, set)).toBeGreaterThan(50);
  });

  it("names the offending inputs", () => {
    expect(stringSpecProblems({ ...spec, length: 3, minUpper: 2, minLower: 2 })).toEqual([
      { property: "length", reason: "must be at least minUpper+minLower+minNumeric+minSpecial = 4, got 3" },
    ]);
    expect(stringSpecProblems({ ...spec, upper: false, lower: false, numeric: false, special: false })[0].property).toBe("special");
    expect(() => generateString({ ...spec, length: 0 })).toThrow(/length: must be an integer >= 1/);
  });
});

describe("ids and integers", () => {
  it("encodes RandomId bytes the way the SDK documents (prefix on all but id)", () => {
    const v = encodeId(Buffer.from([0xfb, 0xff, 0x01]), "p-");
    expect(v).toEqual({ id: "-_8B", hex: "p-fbff01", dec: "p-16514817", b64Std: "p-+/8B", b64Url: "p--_8B" });
  });

  it("keeps integers in [min, max] and is deterministic with a seed", () => {
    for (let i = 0; i < 200; i++) {
      const n = generateInteger(-3, 3);
      expect(n).toBeGreaterThanOrEqual(-3);
      expect(n).toBeLessThanOrEqual(3);
    }
    expect(generateInteger(1, 1_000_000, "s")).toBe(generateInteger(1, 1_000_000, "s"));
    expect(new Set(Array.from({ length: 20 }, (_, i) => generateInteger(1, 1_000_000, `seed${i}`))).size).toBeGreaterThan(15);
  });
});

describe("random provider", () => {
  it("reports the SDK's version", () => {
    expect(provider.version).toBe("4.21.2");
  });

  it("check applies the upstream defaults and reports bad inputs by name", async () => {
    const ok = await provider.check!(urn(TYPES.password), {}, { length: 16 });
    expect(ok.failures).toEqual([]);
    expect(ok.inputs).toMatchObject({ length: 16, upper: true, lower: true, numeric: true, number: true, special: true, minUpper: 0 });
    const bad = await provider.check!(urn(TYPES.integer), {}, { min: 5, max: 1 });
    expect(bad.failures).toEqual([{ property: "max", reason: "must be >= min (5), got 1" }]);
    const missing = await provider.check!(urn(TYPES.string), {}, {});
    expect(missing.failures?.[0].property).toBe("length");
  });

  it("check accepts unknown values during preview", async () => {
    const r = await provider.check!(urn(TYPES.password), {}, { length: UNKNOWN, minUpper: 2 });
    expect(r.failures).toEqual([]);
  });

  it("creates a password whose result and bcrypt hash are secret and whose id is not the password", async () => {
    const inputs = (await provider.check!(urn(TYPES.password), {}, { length: 24, special: false, keepers: { k: "1" } })).inputs;
    const r = await provider.create!(urn(TYPES.password), inputs);
    expect(r.id).toBe("none");
    expect(r.outs.result[SIG_KEY]).toBe(SECRET_SIG);
    expect(r.outs.bcryptHash[SIG_KEY]).toBe(SECRET_SIG);
    const pw = r.outs.result.value as string;
    expect(pw).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(bcrypt.compareSync(pw, r.outs.bcryptHash.value)).toBe(true);
    expect(r.outs.keepers).toEqual({ k: "1" });
    expect(JSON.stringify({ id: r.id, keepers: r.outs.keepers, length: r.outs.length })).not.toContain(pw);
  });

  it("keeps a secret input secret in the outputs", async () => {
    const r = await provider.create!(urn(TYPES.uuid), { keepers: wrapSecret({ k: "v" }) });
    expect(r.outs.keepers).toEqual(wrapSecret({ k: "v" }));
    expect(r.outs.result).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.id).toBe(r.outs.result);
  });

  it("creates strings, ids and integers with the SDK's output names", async () => {
    const s = await provider.create!(urn(TYPES.string), { length: 8, special: false });
    expect(s.outs.result).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(s.id).toBe(s.outs.result);
    const id = await provider.create!(urn(TYPES.id), { byteLength: 4, prefix: "x" });
    expect(Object.keys(id.outs).sort()).toEqual(["b64Std", "b64Url", "byteLength", "dec", "hex", "prefix"]);
    expect(id.outs.hex).toMatch(/^x[0-9a-f]{8}$/);
    const n = await provider.create!(urn(TYPES.integer), { min: 10, max: 12 });
    expect([10, 11, 12]).toContain(n.outs.result);
    expect(n.id).toBe(String(n.outs.result));
  });

  it("replaces on any input change, keepers included, and reports no change otherwise", async () => {
    const olds = { length: 16, keepers: { a: "1" }, result: wrapSecret("x") };
    expect(await provider.diff!("none", urn(TYPES.password), olds, { length: 16, keepers: { a: "1" } })).toEqual({ changes: false, replaces: [], deleteBeforeReplace: undefined });
    const d = await provider.diff!("none", urn(TYPES.password), olds, { length: 16, keepers: { a: "2" } });
    expect(d).toMatchObject({ changes: true, replaces: ["keepers"] });
    const d2 = await provider.diff!("none", urn(TYPES.password), olds, { length: 20, keepers: { a: "1" } });
    expect(d2.replaces).toEqual(["length"]);
  });

  it("rejects types it does not implement, listing those it does", async () => {
    await expect(provider.check!(urn("random:index/randomPet:RandomPet"), {}, {})).rejects.toThrow(
      /"random:index\/randomPet:RandomPet" is not implemented by the offline "random" plugin 4\.21\.2.*implements only: .*randomPassword/,
    );
  });
});

import { describe, expect, it } from "vitest";
import { makeRedactor } from "../../../scripts/plugins/common/engine-log";
import { SECRET_SIG, SIG_KEY, UNKNOWN, containsUnknown, decode, deepEqual, encode, parseUrn, wrapSecret } from "../../../scripts/plugins/common/wire";

describe("wire values", () => {
  it("unwraps nested secrets and remembers which top-level keys held one", () => {
    const d = decode({ a: "plain", env: { K: wrapSecret("v"), L: "w" }, s: wrapSecret({ x: 1 }) });
    expect(d.values).toEqual({ a: "plain", env: { K: "v", L: "w" }, s: { x: 1 } });
    expect([...d.secretKeys].sort()).toEqual(["env", "s"]);
  });

  it("re-wraps secret keys and drops undefined values", () => {
    const out = encode({ a: 1, b: "x", c: undefined }, ["b"]);
    expect(out).toEqual({ a: 1, b: { [SIG_KEY]: SECRET_SIG, value: "x" } });
  });

  it("detects unknowns at any depth", () => {
    expect(containsUnknown({ a: [1, { b: UNKNOWN }] })).toBe(true);
    expect(containsUnknown({ a: [1, { b: "x" }] })).toBe(false);
  });

  it("compares structurally, ignoring key order and undefined members", () => {
    expect(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, z: undefined })).toBe(true);
    expect(deepEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });

  it("parses type and name from URNs, including parented ones", () => {
    expect(parseUrn("urn:pulumi:dev::proj::my:comp$command:remote:Command::step")).toEqual({ type: "command:remote:Command", name: "step" });
    expect(() => parseUrn("nonsense")).toThrow(/malformed resource URN/);
  });
});

describe("redaction", () => {
  it("replaces secrets, longest first, including single lines of multi-line secrets", () => {
    const redact = makeRedactor(["abc", "abcdef", "-----BEGIN KEY-----\nAAAAB3NzaC1yc2EAAAADAQAB\n-----END KEY-----", "xy"]);
    expect(redact("abcdef abc xy")).toBe("[secret] [secret] xy");
    expect(redact("line: AAAAB3NzaC1yc2EAAAADAQAB")).toBe("line: [secret]");
  });
});

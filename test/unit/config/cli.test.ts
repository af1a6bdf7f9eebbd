// `reprobench config validate|show` exit codes and output.
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { config } from "../../../cli/commands/config";
import { FIXTURES, REPO } from "./helpers";

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  const code = await config.run(args);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

afterEach(() => vi.restoreAllMocks());

describe("reprobench config", () => {
  it.each(["a100", "prod", "dev", "local", "local6x"])("validate Pulumi.%s.yaml prints ok and exits 0", async (stack) => {
    const r = await run(["validate", join(REPO, `Pulumi.${stack}.yaml`)]);
    expect(r).toMatchObject({ code: 0, out: "ok" });
  });

  it("notes missing secrets on stderr; --require-secrets makes them errors", async () => {
    const prod = join(REPO, "Pulumi.a100.yaml");
    expect((await run(["validate", prod])).err).toContain("note: secrets not set yet");
    const strict = await run(["validate", prod, "--require-secrets"]);
    expect(strict.code).toBe(1);
    expect(strict.err).toContain("reprobench:proxyUpstream: missing");
    expect(strict.out).toBe("");
  });

  it("every secret hint names the file's stack, and the note says how the stack comes to exist", async () => {
    const r = await run(["validate", join(REPO, "Pulumi.a100.yaml")]);
    const hints = r.err.split("\n").filter((l) => l.includes("pulumi config set"));
    expect(hints.length).toBeGreaterThan(0);
    for (const hint of hints) expect(hint).toContain("pulumi config set --stack a100 --secret");
    expect(r.err).toContain("bin/reprobench preview --stack a100` creates it");
    const strict = await run(["validate", join(REPO, "Pulumi.a100.yaml"), "--require-secrets"]);
    expect(strict.err).toContain("pulumi config set --stack a100 --secret reprobench:proxyUpstream");
  });

  it("a bad file exits 1 with one line per problem", async () => {
    const r = await run(["validate", join(FIXTURES, "bad", "tp-dp-exceeds-gpus.yaml")]);
    expect(r.code).toBe(1);
    expect(r.err.split("\n")).toEqual([
      expect.stringMatching(/tp-dp-exceeds-gpus\.yaml: 2 problems$/),
      expect.stringMatching(/^reprobench:hosts\[0\]\.gpus: got 8; expected at least tp×dp = 8×2 = 16 GPUs/),
      expect.stringMatching(/^reprobench:hosts\[1\]\.gpus: got 8;/),
    ]);
  });

  it("an unreadable file exits 1 naming it; bad usage exits 2", async () => {
    const missing = await run(["validate", "/nonexistent/Pulumi.x.yaml"]);
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining("cannot read stack file /nonexistent/Pulumi.x.yaml") });
    expect((await run([])).code).toBe(2);
    expect((await run(["frobnicate", "x"])).code).toBe(2);
    expect((await run(["validate"])).code).toBe(2);
  });

  it("show prints the defaulted config with secrets masked", async () => {
    const r = await run(["show", join(FIXTURES, "good", "base-real.yaml")]);
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.out);
    expect(shown.modelServer.tp).toBe(4);
    expect(shown.sshPrivateKeys).toEqual({ default: "[secret]" });
    expect(shown.proxyUpstream).toBe("[secret]");
  });
});

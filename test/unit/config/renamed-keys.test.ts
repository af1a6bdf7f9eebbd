// reprobench:sglang, the old name of reprobench:modelServer: still read (with a warning naming both), never
// together with the new name, problems named as the stack file writes the key, and an owner's clusterConfig
// from before the rename still combined with a run stack (silently).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { config as configCommand } from "../../../cli/commands/config";
import { combineWithCluster, parseConfig, parseRunStackConfig, publicConfig, readStackFile, resolveClusterConfig } from "../../../components/config";
import { REPO, minimalRealConfig } from "./helpers";

const WARNING = "reprobench:sglang is the old name of reprobench:modelServer; rename it (both work for now)";

/** A raw config with its model server section under the old name. */
function withOldName(raw: Record<string, unknown>): Record<string, unknown> {
  const { modelServer, ...rest } = raw;
  return { ...rest, sglang: modelServer };
}

function problemsOf(raw: Record<string, unknown>): { key: string; message: string }[] {
  const r = parseConfig(raw, { requireSecrets: false });
  return r.ok ? [] : r.problems;
}

beforeAll(() => {
  pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
});
afterEach(() => vi.restoreAllMocks());

describe("reprobench:sglang, the old name of reprobench:modelServer", () => {
  it("parses to the same config as the new name, with a warning naming both keys", () => {
    const raw = readStackFile(join(REPO, "Pulumi.a100.yaml"));
    const current = parseConfig(raw, { requireSecrets: false });
    const old = parseConfig(withOldName(raw), { requireSecrets: false });
    expect(current).toMatchObject({ ok: true, warnings: [] });
    expect(old).toMatchObject({ ok: true, warnings: [WARNING] });
    expect(old.ok && current.ok && old.config).toEqual(current.ok && current.config);
  });

  it("set together with reprobench:modelServer is a problem naming both", () => {
    const raw = { ...minimalRealConfig(), modelServer: { tp: 4 }, sglang: { tp: 2 } };
    const r = parseConfig(raw, { requireSecrets: false });
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.problems).toEqual([
      { key: "reprobench:sglang", message: expect.stringMatching(/^set together with reprobench:modelServer, its new name; expected only one of them .*remove reprobench:sglang/) },
    ]);
  });

  it("problems name the key as the stack file writes it, in keys and messages", () => {
    const bad = { tp: 0, engine: "vllm", image: "vllm/vllm-openai:v0.11.0", maxMambaCacheSize: 25 };
    const router = { image: "lmsysorg/sglang:v0.5.23-runtime" };
    const current = problemsOf({ ...minimalRealConfig(), modelServer: bad, router });
    const old = problemsOf({ ...minimalRealConfig(), sglang: bad, router });
    expect(current.map((p) => p.key)).toEqual(["reprobench:modelServer.tp"]);
    expect(old.map((p) => p.key)).toEqual(["reprobench:sglang.tp"]);
    const rule = (raw: Record<string, unknown>) => problemsOf({ ...raw, router }).find((p) => p.key.endsWith(".maxMambaCacheSize"));
    expect(rule({ ...minimalRealConfig(), modelServer: { ...bad, tp: 4 } })).toEqual({ key: "reprobench:modelServer.maxMambaCacheSize", message: expect.stringContaining("null for modelServer.engine vllm") });
    expect(rule({ ...minimalRealConfig(), sglang: { ...bad, tp: 4 } })).toEqual({ key: "reprobench:sglang.maxMambaCacheSize", message: expect.stringContaining("null for sglang.engine vllm") });
    const flag = (raw: Record<string, unknown>) => problemsOf(raw).find((p) => p.key.endsWith(".extraArgs[0]"));
    expect(flag({ ...minimalRealConfig(), modelServer: { extraArgs: ["--tp-size=2"] } })).toEqual({ key: "reprobench:modelServer.extraArgs[0]", message: expect.stringContaining("use the modelServer keys") });
    expect(flag({ ...minimalRealConfig(), sglang: { extraArgs: ["--tp-size=2"] } })).toEqual({ key: "reprobench:sglang.extraArgs[0]", message: expect.stringContaining("use the sglang keys") });
  });

  it("a run stack combines with an owner whose clusterConfig (brought up before the rename) says sglang, silently", () => {
    const parsed = parseConfig(readStackFile(join(REPO, "Pulumi.local.yaml")), { requireSecrets: false });
    if (!parsed.ok) throw new Error("Pulumi.local.yaml does not parse");
    const runRaw = { cluster: "local", run: { enabled: true, jobNamePrefix: "sim-6x" } };
    const run = parseRunStackConfig(runRaw);
    if (!run.ok) throw new Error("the run stack does not parse");
    const current = combineWithCluster(publicConfig(parsed.config), run.config, runRaw, "reprobench.local6x");
    const old = combineWithCluster(withOldName(publicConfig(parsed.config)), run.config, runRaw, "reprobench.local6x");
    expect(old).toMatchObject({ ok: true, warnings: [] });
    expect(old).toEqual(current);
  });

  it("reaches the user: resolveClusterConfig passes it to warn, `config validate` prints it (exit code 0)", async () => {
    const notes: string[] = [];
    const raw = withOldName(readStackFile(join(REPO, "Pulumi.a100.yaml")));
    resolveClusterConfig(raw, { projectDir: REPO, requireSecrets: false, warn: (m) => notes.push(m) });
    expect(notes[0]).toBe(WARNING);

    const file = join(mkdtempSync(join(tmpdir(), "reprobench-renamed-")), "Pulumi.a100.yaml");
    writeFileSync(file, readFileSync(join(REPO, "Pulumi.a100.yaml"), "utf8").replace(/^ {2}reprobench:modelServer:$/m, "  reprobench:sglang:"));
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
    vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
    expect(await configCommand.run(["validate", file])).toBe(0);
    expect(out).toEqual(["ok"]);
    expect(err[0]).toBe(`warning: ${WARNING}`);
  });
});

describe("secret hints name the stack", () => {
  it("a preview without secrets warns with `pulumi config set --stack S --secret …`, which works outside the selected stack", () => {
    const notes: string[] = [];
    resolveClusterConfig(readStackFile(join(REPO, "Pulumi.a100.yaml")), { projectDir: REPO, requireSecrets: false, warn: (m) => notes.push(m), stack: "a100" });
    const hint = notes.find((n) => n.startsWith("secrets not set"));
    expect(hint).toContain("pulumi config set --stack a100 --secret --path 'reprobench:sshPrivateKeys.");
    expect(hint).not.toMatch(/pulumi config set --secret/);
  });
});

// What `reprobench up|preview|down` do to the stack files, through the real engine: they open the stack
// with cli/pulumi-stack.ts (Automation API, --config-file on a per-checkout copy), so `stack init`,
// previews and destroys (whose summary the Automation API reads with a `stack history` that knows no
// --config-file) leave the tracked Pulumi.<stack>.yaml byte for byte as it was, the next operation reads the
// salt back from the state (no "incorrect passphrase"), and a user's own `pulumi config set` edits the
// tracked file as asked and is used by the next operation. Runs on a project copy with its own backend;
// the a100 stack's preview (seed 000's cluster, placeholder hosts) contacts no host.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OperationArgs, openStack, runOperation } from "../../cli/pulumi-stack";
import { mustRun } from "../../sim/exec";
import { repoRoot, type TestProject, testProject } from "../helpers/project";

let project: TestProject;
const trackedPath = () => join(project.dir, "Pulumi.a100.yaml");
const tracked = () => readFileSync(trackedPath(), "utf8");

const NO_ARGS: OperationArgs = { refresh: false, diff: true, expectNoChanges: false, target: [], replace: [], exclude: [], targetDependents: false, excludeDependents: false };

/** An operation the way the CLI runs it; returns its output. */
async function cli(op: "preview" | "down"): Promise<string> {
  const open = await openStack(project.dir, "a100", project.env);
  const out: string[] = [];
  await runOperation(open, op, NO_ARGS, { color: "never", onOutput: (o) => out.push(o), onError: (o) => out.push(o) });
  return out.join("");
}
const cliPreview = () => cli("preview");

/** `pulumi` by hand in the project, as a user with scripts/env.sh sourced would run it. */
const pulumi = (args: string[]) => mustRun(["pulumi", ...args], { cwd: project.dir, env: { ...process.env, ...project.env }, timeoutMs: 300_000 });

beforeAll(async () => {
  project = await testProject();
  // The checkout's stack file, as tracked.
  writeFileSync(trackedPath(), readFileSync(join(repoRoot, "Pulumi.a100.yaml")));
});
afterAll(() => project?.cleanup());

describe("the CLI's stack operations and the tracked stack file", () => {
  it("stack init + preview write nothing into it; the salt is in the stack's state", async () => {
    const before = tracked();
    const output = await cliPreview();
    expect(output).toMatch(/reprobench:[a-z]+:ModelServer/);
    expect(tracked()).toBe(before);
    const { stack } = await openStack(project.dir, "a100", project.env);
    const state = await stack.exportStack();
    expect(state.deployment.secrets_providers).toMatchObject({ type: "passphrase", state: { salt: expect.stringMatching(/^v1:/) } });
  });

  it("the next operation reads the salt back from the state", async () => {
    const before = tracked();
    expect(before).not.toContain("encryptionsalt");
    const output = await cliPreview();
    expect(output).not.toMatch(/incorrect passphrase|error:/);
    expect(tracked()).toBe(before);
  });

  it("down (destroy), whose summary the Automation API reads with `stack history`, writes nothing into it either", async () => {
    const before = tracked();
    const output = await cli("down");
    expect(output).toMatch(/Resources:|The resources in the stack have been deleted/);
    expect(tracked()).toBe(before);
  });

  it("a user's `pulumi config set` edits the tracked file as asked, and the next operation uses it", async () => {
    await pulumi(["config", "set", "--stack", "a100", "--path", "reprobench:modelServer.image", "lmsysorg/sglang:edited-by-hand"]);
    expect(tracked()).toContain("lmsysorg/sglang:edited-by-hand");
    expect(await cliPreview()).toContain("lmsysorg/sglang:edited-by-hand");
  });

  it("a secret set by hand is encrypted in the tracked file (with a salt there, Pulumi's way) and decrypts in the next operation", async () => {
    await pulumi(["config", "set", "--stack", "a100", "--secret", "reprobench:proxyUpstream", "http://127.0.0.1:3128"]);
    const text = tracked();
    expect(text).toMatch(/encryptionsalt: v1:/);
    expect(text).toMatch(/reprobench:proxyUpstream:\s+secure: v1:/);
    expect(text).not.toContain("127.0.0.1:3128");
    const output = await cliPreview();
    expect(output).not.toMatch(/incorrect passphrase|error:/);
    expect(tracked()).toBe(text);
  });
});

// The offline command/random plugins under the real Pulumi engine: a tiny program
// (test/fixtures/plugins/program) run with preview/up/destroy through the Automation API against a
// loopback sshd. Plugins are installed into a throw-away PULUMI_HOME with the same wrapper text
// scripts/toolchain.sh writes; the CLI is the toolchain's cached build (scripts/toolchain.sh).
import { LocalWorkspace, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sshd, startSshd } from "../unit/plugins/sshd-harness";

const repo = path.resolve(__dirname, "../..");
const cacheRoot = process.env.REPROBENCH_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"), "reprobench");
/** The CLI install root (holding bin/pulumi): explicit, else the `pulumi` on PATH, else the toolchain cache. */
function findPulumiRoot(): string {
  if (process.env.REPROBENCH_PULUMI_ROOT) return process.env.REPROBENCH_PULUMI_ROOT;
  try {
    const onPath = execFileSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" }).trim();
    if (onPath) return path.dirname(path.dirname(realpathSync(onPath)));
  } catch {
    // not on PATH: fall through to the toolchain's cache
  }
  return path.join(cacheRoot, `pulumi-${process.env.REPROBENCH_PULUMI_VERSION ?? "v3.274.1"}`);
}
const pulumiRoot = findPulumiRoot();
const pulumiBin = path.join(pulumiRoot, "bin", "pulumi");

/** Same text as scripts/toolchain.sh write_wrapper: node + tsx loader + the plugin's main.ts. */
function writeWrapper(file: string, plugin: string): void {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const loader = path.join(repo, "node_modules/tsx/dist/loader.mjs");
  writeFileSync(file, `#!/bin/sh\nexec ${q(process.execPath)} --import ${q(loader)} ${q(path.join(repo, "scripts/plugins", plugin, "main.ts"))} "$@"\n`, { mode: 0o755 });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile());
}

let sshd: Sshd;
let work: string;
let stack: Stack;
let marker: string;
let stateDir: string;
const output: string[] = [];
const onOutput = (s: string) => output.push(s);
/** What the remote commands appended to the marker file (each step writes one entry). */
const markerText = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");

beforeAll(async () => {
  if (!existsSync(pulumiBin)) {
    throw new Error(`no Pulumi CLI at ${pulumiBin}: run scripts/toolchain.sh first, or set REPROBENCH_PULUMI_ROOT to a directory holding bin/pulumi`);
  }
  sshd = await startSshd();
  work = mkdtempSync(path.join(tmpdir(), "rb-plugins-it-"));
  const home = path.join(work, "pulumi-home");
  const bin = path.join(work, "bin");
  const plugins = path.join(work, "plugins");
  const prog = path.join(work, "program");
  stateDir = path.join(work, "state");
  marker = path.join(work, "marker");
  for (const d of [home, bin, plugins, stateDir]) mkdirSync(d, { recursive: true });
  cpSync(path.join(repo, "test/fixtures/plugins/program"), prog, { recursive: true });
  symlinkSync(path.join(repo, "node_modules"), path.join(prog, "node_modules"));
  writeFileSync(path.join(prog, "package.json"), JSON.stringify({ name: "rb-plugins-it", private: true }));
  writeWrapper(path.join(bin, "pulumi-language-nodejs"), "language-nodejs");

  const envVars: Record<string, string> = {
    PATH: `${bin}:${path.dirname(process.execPath)}:${process.env.PATH}`,
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${stateDir}`,
    PULUMI_CONFIG_PASSPHRASE: "integration-test",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_DISABLE_REGISTRY_RESOLVE: "true",
  };
  for (const [name, version] of [["command", "1.2.1"], ["random", "4.21.2"]]) {
    const wrapper = path.join(plugins, `pulumi-resource-${name}`);
    writeWrapper(wrapper, name);
    execFileSync(pulumiBin, ["plugin", "install", "resource", name, version, "--file", wrapper], { env: { ...process.env, ...envVars }, stdio: "pipe" });
  }

  const pulumiCommand = await PulumiCommand.get({ root: pulumiRoot });
  stack = await LocalWorkspace.createOrSelectStack({ stackName: "it", workDir: prog }, { envVars, pulumiCommand });
  await stack.setAllConfig({
    sshPort: { value: String(sshd.port) },
    hostKey: { value: sshd.hostKey.trim() },
    privateKey: { value: sshd.clientKey, secret: true },
    marker: { value: marker },
  });
}, 10 * 60_000);

afterAll(async () => {
  try {
    if (stack) await stack.workspace.removeStack("it", { force: true });
  } finally {
    await sshd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }
}, 5 * 60_000);

describe("offline plugins under the real engine", () => {
  let password = "";

  it("preview plans three creates and runs no command", async () => {
    const p = await stack.preview({ onOutput });
    expect(p.changeSummary).toMatchObject({ create: 3 });
    expect(markerText()).toBe("");
  });

  it("up creates the password and runs the remote command with it, keeping both secret", async () => {
    const up = await stack.up({ onOutput });
    expect(up.summary.resourceChanges).toMatchObject({ create: 3 });
    expect(up.outputs.passwordLength).toEqual({ value: 24, secret: true });
    expect(up.outputs.stdout.secret).toBe(true);
    expect(markerText()).toBe("create 24\n");

    // exportStack decrypts (it runs `stack export --show-secrets`); the file on disk must hold ciphertext.
    const exported = await stack.exportStack();
    const pw = exported.deployment.resources.find((r: { type: string }) => r.type === "random:index/randomPassword:RandomPassword");
    password = JSON.parse(pw.outputs.result.plaintext) as string;
    const stateFile = filesUnder(stateDir).find((f) => f.endsWith(path.join("stacks", "rb-plugins-it", "it.json")))!;
    const onDisk = JSON.parse(readFileSync(stateFile, "utf8")).checkpoint.latest.resources;
    const diskPw = onDisk.find((r: { type: string }) => r.type === "random:index/randomPassword:RandomPassword");
    expect(diskPw.outputs.result).toMatchObject({ ciphertext: expect.any(String) });
    expect(String(up.outputs.stdout.value)).toBe(`created\npw=${password}`);
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
  });

  it("state and CLI output never contain the password or the SSH key in plaintext", () => {
    const keyBody = sshd.clientKey.split("\n")[1];
    expect(password).toHaveLength(24); // guards against vacuous "not contain" checks
    expect(keyBody.length).toBeGreaterThan(40);
    for (const f of filesUnder(stateDir)) {
      const text = readFileSync(f, "utf8");
      expect(text, f).not.toContain(password);
      expect(text, f).not.toContain(keyBody);
    }
    const shown = output.join("");
    expect(shown).toContain("pw=[secret]");
    expect(shown).not.toContain(password);
  });

  it("refresh keeps the state as is, and a second preview shows no changes", async () => {
    const r = await stack.refresh({ onOutput });
    expect(r.summary.resourceChanges).toMatchObject({ same: 3 });
    await stack.preview({ expectNoChanges: true, onOutput });
    expect(markerText()).toBe("create 24\n");
  });

  it("an input change updates in place, running `update` with the previous stdout", async () => {
    await stack.setConfig("stdin", { value: "new stdin" });
    const up = await stack.up({ onOutput });
    expect(up.summary.resourceChanges).toMatchObject({ update: 1, same: 2 });
    // PULUMI_COMMAND_STDOUT is the whole previous stdout: "created" and the pw= line.
    expect(markerText()).toBe(`create 24\nupdate prev=created\npw=${password}\n`);
  });

  it("a triggers change replaces the command (create the new one, then delete the old)", async () => {
    await stack.setConfig("trigger", { value: "t2" });
    const up = await stack.up({ onOutput });
    expect(up.summary.resourceChanges).toMatchObject({ replace: 1, same: 2 });
    expect(markerText().endsWith("create 24\ndelete prev=updated\n")).toBe(true);
  });

  it("destroy runs `delete` with the last stdout", async () => {
    const d = await stack.destroy({ onOutput });
    expect(d.summary.resourceChanges).toMatchObject({ delete: 3 });
    expect(markerText().endsWith(`delete prev=created\npw=${password}\n`)).toBe(true);
  });
});

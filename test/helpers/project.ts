// Runs the real program through the Automation API in a throw-away copy of the project, with its own
// file backend and passphrase, so tests never touch the checkout's stack files or state.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import YAML from "yaml";
import { mustRun } from "../../sim/exec";

export const repoRoot = path.resolve(__dirname, "../..");

/**
 * The environment scripts/env.sh sets up (toolchain on PATH, plugin home, no update checks). Asynchronous, as
 * every child process of a test worker is: a blocked event loop misses Vitest's worker RPC deadline.
 */
export async function toolchainEnv(): Promise<Record<string, string>> {
  const out = await mustRun(["bash", path.join(repoRoot, "scripts/toolchain.sh"), "--print-env"], { timeoutMs: 3_600_000 });
  const env: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = await mustRun(["bash", "-c", `printf %s ${m[2]}`]);
  }
  return env;
}

/**
 * Rewrites a parsed stack file's hosts to reach the hosts of a sim instance (ports, IPs, key files, and a
 * proxy.urlFile of the default instance's `.sim/proxy-url` to the instance's own `<stateDir>/proxy-url`, and
 * likewise a registries[].passwordFile of `.sim/registry-password`).
 */
export function pointAtSimInstance(
  doc: { config: Record<string, unknown> },
  plan: { privateKeyFile: string; stateDir?: string; hosts: { name: string; ip: string; sshHost: string; sshPort: number; hostKeyFile: string }[] },
): void {
  const hosts = doc.config["reprobench:hosts"] as { name: string; ssh: Record<string, unknown>; proxy?: Record<string, unknown> }[];
  doc.config["reprobench:hosts"] = hosts.map((h) => {
    const p = plan.hosts.find((x) => x.name === h.name);
    if (!p) throw new Error(`sim instance has no host ${h.name}`);
    const proxy = h.proxy?.urlFile === ".sim/proxy-url" && plan.stateDir !== undefined ? { proxy: { ...h.proxy, urlFile: `${plan.stateDir}/proxy-url` } } : {};
    return { ...h, ...proxy, privateIp: p.ip, ssh: { ...h.ssh, host: p.sshHost, port: p.sshPort, hostKeyFile: p.hostKeyFile, privateKeyFile: plan.privateKeyFile } };
  });
  const registries = doc.config["reprobench:registries"] as { passwordFile?: string }[] | undefined;
  if (registries !== undefined && plan.stateDir !== undefined) {
    doc.config["reprobench:registries"] = registries.map((r) => (r.passwordFile === ".sim/registry-password" ? { ...r, passwordFile: `${plan.stateDir}/registry-password` } : r));
  }
}

/**
 * A stack file without its secrets-provider settings: a salt or key in the checkout's file belongs to the
 * checkout's passphrase, and the copy's stack uses its own ("incorrect passphrase" otherwise).
 */
export function withoutSecretsSettings(text: string): string {
  const doc = YAML.parseDocument(text);
  for (const key of ["encryptionsalt", "encryptedkey", "secretsprovider"]) doc.delete(key);
  return doc.toString();
}

const COPIED = ["Pulumi.yaml", "package.json", "tsconfig.json", "infra", "components"];

export interface TestProject {
  dir: string;
  env: Record<string, string>;
  /** Creates (or selects) a stack whose config is the given stack file's, plus `extra` YAML text. */
  stack(name: string, stackFile: string): Promise<Stack>;
  cleanup(): void;
}

/**
 * The checkout's own `pulumi` (scripts/toolchain.sh puts it in .toolchain/bin beside the offline language
 * host); undefined for online installs, which use the one on PATH.
 */
export async function checkoutPulumi(): Promise<PulumiCommand | undefined> {
  const root = path.join(repoRoot, ".toolchain");
  return fs.existsSync(path.join(root, "bin/pulumi")) ? PulumiCommand.get({ root }) : undefined;
}

export async function testProject(extraFiles: Record<string, string> = {}): Promise<TestProject> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-project-"));
  for (const entry of COPIED) fs.cpSync(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
  fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
  // The provider plugin Pulumi.yaml names by path, as built by the toolchain (its ../dist resolves in the checkout).
  fs.symlinkSync(path.join(repoRoot, "plugin"), path.join(dir, "plugin"));
  for (const [rel, src] of Object.entries(extraFiles)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.cpSync(src, path.join(dir, rel), { recursive: true });
  }
  const state = path.join(dir, ".state");
  fs.mkdirSync(state);
  const env = {
    ...(await toolchainEnv()),
    PULUMI_BACKEND_URL: `file://${state}`,
    PULUMI_CONFIG_PASSPHRASE: "reprobench-test",
  };
  return {
    dir,
    env,
    async stack(name, stackFile) {
      fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), withoutSecretsSettings(fs.readFileSync(path.join(repoRoot, stackFile), "utf8")));
      return LocalWorkspace.createOrSelectStack({ stackName: name, workDir: dir }, { envVars: env, pulumiCommand: await checkoutPulumi() });
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// SSH to the sim hosts: the client and host key pairs, the known_hosts that pins them, and an ssh argv that
// trusts only those (components/transport.ts's sshArgv over the key files), run by the transport too.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runArgv, sshArgv } from "../components/transport";
import { mustRun, type RunResult } from "./exec";
import type { ClusterPlan, HostPlan } from "./layout";

/** "type base64" without the comment: the exact line the stack pins. */
export function publicKeyLine(pubFileText: string): string {
  const parts = pubFileText.trim().split(/\s+/);
  if (parts.length < 2 || !parts[0].startsWith("ssh-")) throw new Error(`not an OpenSSH public key line: ${JSON.stringify(pubFileText.slice(0, 40))}`);
  return `${parts[0]} ${parts[1]}`;
}

/** known_hosts for OpenSSH: non-default ports are written as [host]:port. */
export function knownHostsText(hosts: HostPlan[], keyLines: Record<string, string>): string {
  return hosts.map((h) => `[${h.sshHost}]:${h.sshPort} ${keyLines[h.name]}\n`).join("");
}

/** ssh argv that trusts only the pinned host key and only our generated client key (as root, or `user`). */
export function sshArgs(plan: ClusterPlan, host: HostPlan, command: string, user = "root"): string[] {
  const target = { host: host.sshHost, port: host.sshPort, user, keyFile: join(plan.root, plan.privateKeyFile), knownHostsFile: join(plan.root, plan.knownHostsFile) };
  return sshArgv(target, command, { connectTimeoutSecs: 5, options: ["GlobalKnownHostsFile=/dev/null", "LogLevel=ERROR"], userAtHost: true });
}

/**
 * Runs `command` on a sim host over ssh (sshArgs, as root or `user`) through the transport, `input` on
 * stdin; resolves as sim/exec.ts `run` does: exit 124 after `timeoutMs` (default 120 s), 127 when ssh
 * cannot be started, the reason appended to stderr.
 */
export async function sshRun(plan: ClusterPlan, host: HostPlan, command: string, o: { input?: string | Buffer; timeoutMs?: number; user?: string } = {}): Promise<RunResult> {
  const argv = sshArgs(plan, host, command, o.user);
  const timeoutMs = o.timeoutMs ?? 120_000;
  try {
    const r = await runArgv(argv, { input: o.input, timeoutMs });
    return { code: r.timedOut ? 124 : (r.code ?? 1), stdout: r.stdout, stderr: r.timedOut ? `${r.stderr}\ntimed out after ${timeoutMs} ms` : r.stderr };
  } catch (e) {
    return { code: 127, stdout: "", stderr: `\n${argv[0]}: ${(e as Error).message}` };
  }
}

/** Generates a key pair once; later calls keep it (host keys must stay stable across `sim up`). */
async function ensureKeyPair(privatePath: string, comment: string): Promise<void> {
  if (existsSync(privatePath) && existsSync(`${privatePath}.pub`)) return;
  mkdirSync(join(privatePath, ".."), { recursive: true });
  rmSync(privatePath, { force: true });
  rmSync(`${privatePath}.pub`, { force: true });
  await mustRun(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", privatePath], { timeoutMs: 30_000 });
  chmodSync(privatePath, 0o600);
}

export async function ensureKeys(plan: ClusterPlan): Promise<Record<string, string>> {
  const abs = (p: string) => join(plan.root, p);
  mkdirSync(abs(plan.stateDir), { recursive: true, mode: 0o700 });
  await ensureKeyPair(abs(plan.privateKeyFile), "reprobench-sim");
  const keyLines: Record<string, string> = {};
  for (const host of plan.hosts) {
    await ensureKeyPair(abs(host.hostPrivateKeyFile), "");
    // The .pub is rewritten as the bare "ssh-ed25519 AAAA…" line the stack pins.
    const line = publicKeyLine(readFileSync(abs(host.hostKeyFile), "utf8"));
    writeFileSync(abs(host.hostKeyFile), `${line}\n`);
    keyLines[host.name] = line;
  }
  return keyLines;
}

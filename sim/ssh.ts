// SSH to the sim hosts: the client and host key pairs, the known_hosts that pins them, and an ssh argv that trusts only those.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "./exec";
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
  return [
    "ssh",
    "-i", join(plan.root, plan.privateKeyFile),
    "-o", "IdentitiesOnly=yes",
    "-o", "BatchMode=yes",
    "-o", "StrictHostKeyChecking=yes",
    "-o", `UserKnownHostsFile=${join(plan.root, plan.knownHostsFile)}`,
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "ConnectTimeout=5",
    "-o", "LogLevel=ERROR",
    "-p", String(host.sshPort),
    `${user}@${host.sshHost}`,
    command,
  ];
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

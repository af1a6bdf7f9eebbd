// Shared bits for the config tests: fixture paths and Pulumi's flat config map format.
import { resolve } from "node:path";

export const REPO = resolve(__dirname, "../../..");
export const FIXTURES = resolve(REPO, "test/fixtures/config");

/** What the Pulumi language host hands the program: "reprobench:key" → string (objects as JSON text). */
export function toPulumiConfigMap(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(raw).map(([k, v]) => [`reprobench:${k}`, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/** Syntactically valid ed25519 public key line (placeholder bytes). */
export const HOST_KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
export const HOST_KEY_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB";
/** Shaped like a private key, but random text: tests check it never reaches output. */
export const FAKE_PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nVEVTVC1TRUNSRVQtTUFURVJJQUwtZG8tbm90LXByaW50\n-----END OPENSSH PRIVATE KEY-----\n";

/** The smallest valid real config: two seed hosts and their secrets; everything else defaulted. */
export function minimalRealConfig(): Record<string, unknown> {
  return {
    hosts: [
      { name: "worker-a", ssh: { host: "203.0.113.11", hostKey: HOST_KEY_A }, privateIp: "10.0.0.11", roles: ["worker"], gpus: 8 },
      { name: "worker-b", ssh: { host: "203.0.113.12", hostKey: HOST_KEY_B }, privateIp: "10.0.0.12", roles: ["worker", "router", "runner"], gpus: 8 },
    ],
    sshPrivateKeys: { default: "[secret]" },
    proxyUpstream: "[secret]",
  };
}

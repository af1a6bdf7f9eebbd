// The `connection` input of command:remote:* (and its `proxy` bastion), validated, with the defaults the
// SDK also applies (port 22, user root, dialErrorLimit 10, perDialTimeout 15 s).
import { createHash } from "node:crypto";
import { CheckFailure } from "../common/provider";
import { InputReader } from "../common/inputs";
import { UNKNOWN, isSet } from "../common/wire";

export interface ConnectionSpec {
  host: string;
  port: number;
  user: string;
  password?: string;
  privateKey?: string;
  privateKeyPassword?: string;
  agentSocketPath?: string;
  /** Failed dials tolerated before giving up; -1 = unlimited. */
  dialErrorLimit: number;
  /** Seconds allowed for one dial (TCP connect + SSH handshake + authentication). */
  perDialTimeout: number;
  hostKey?: HostKey;
  proxy?: ConnectionSpec;
}

export interface HostKey {
  type: string;
  blob: Buffer;
}

const KEY_TYPES = new Set([
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
]);

/**
 * Parses one public key in authorized_keys format ("[options] type base64 [comment]"). Throws an error
 * naming what is wrong; the type inside the blob must match the declared type.
 */
export function parseHostKey(text: string): HostKey {
  const line = text.trim().split(/\r?\n/).find((l) => l.trim() && !l.trim().startsWith("#"));
  if (!line) throw new Error("hostKey is empty; expected an authorized_keys line such as \"ssh-ed25519 AAAA...\"");
  const fields = line.trim().split(/\s+/);
  const at = fields.findIndex((f) => KEY_TYPES.has(f));
  if (at < 0 || at + 1 >= fields.length) {
    throw new Error(`hostKey is not in authorized_keys format ("<type> <base64>"), known types: ${[...KEY_TYPES].join(", ")}`);
  }
  const type = fields[at];
  const blob = Buffer.from(fields[at + 1], "base64");
  const innerLen = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  const inner = innerLen > 0 && blob.length >= 4 + innerLen ? blob.subarray(4, 4 + innerLen).toString("latin1") : "";
  if (inner !== type) throw new Error(`hostKey base64 does not decode to a ${type} key (found "${inner || "garbage"}")`);
  return { type, blob };
}

export function fingerprint(blob: Buffer): string {
  return "SHA256:" + createHash("sha256").update(blob).digest("base64").replace(/=+$/, "");
}

/** Host key algorithms to offer so the server presents the pinned key's type (RSA has three names). */
export function hostKeyAlgorithms(type: string): string[] {
  return type === "ssh-rsa" ? ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] : [type];
}

export function readConnection(value: unknown, path = "connection", allowProxy = true): { spec?: ConnectionSpec; failures: CheckFailure[] } {
  if (value === undefined || value === null) return { failures: [{ property: path, reason: "is required" }] };
  if (value === UNKNOWN) return { failures: [] }; // preview: computed from other resources' outputs
  if (typeof value !== "object" || Array.isArray(value)) return { failures: [{ property: path, reason: "must be an object" }] };
  const r = new InputReader(value as Record<string, unknown>, path + ".");
  const host = r.string("host", true);
  const port = r.integer("port") ?? 22;
  if (port < 1 || port > 65535) r.failures.push({ property: `${path}.port`, reason: `must be 1..65535, got ${port}` });
  const dialErrorLimit = r.integer("dialErrorLimit") ?? 10;
  if (dialErrorLimit < -1) r.failures.push({ property: `${path}.dialErrorLimit`, reason: `must be -1 (unlimited) or >= 0, got ${dialErrorLimit}` });
  const rawTimeout = (value as Record<string, unknown>).perDialTimeout;
  const timeout = rawTimeout === UNKNOWN ? 15 : (rawTimeout ?? 15);
  if (typeof timeout !== "number" || !(timeout > 0)) {
    r.failures.push({ property: `${path}.perDialTimeout`, reason: `must be a positive number of seconds, got ${JSON.stringify(timeout)}` });
  }
  let hostKey: HostKey | undefined;
  const hostKeyText = r.string("hostKey");
  if (hostKeyText !== undefined) {
    try {
      hostKey = parseHostKey(hostKeyText);
    } catch (e) {
      r.failures.push({ property: `${path}.hostKey`, reason: (e as Error).message });
    }
  }
  let proxy: ConnectionSpec | undefined;
  const rawProxy = (value as Record<string, unknown>).proxy;
  if (isSet(rawProxy)) {
    if (!allowProxy) {
      r.failures.push({ property: `${path}.proxy`, reason: "a proxy connection cannot have its own proxy" });
    } else {
      const p = readConnection(rawProxy, `${path}.proxy`, false);
      r.failures.push(...p.failures);
      proxy = p.spec;
    }
  }
  const spec: ConnectionSpec = {
    host: host ?? "",
    port,
    user: r.string("user") ?? "root",
    password: r.string("password"),
    privateKey: r.string("privateKey"),
    privateKeyPassword: r.string("privateKeyPassword"),
    agentSocketPath: r.string("agentSocketPath"),
    dialErrorLimit,
    perDialTimeout: typeof timeout === "number" ? timeout : 15,
    hostKey,
    proxy,
  };
  return r.failures.length || host === undefined ? { failures: r.failures } : { spec, failures: [] };
}

export function describe(c: ConnectionSpec): string {
  return `${c.user}@${c.host}:${c.port}` + (c.proxy ? ` via ${c.proxy.user}@${c.proxy.host}:${c.proxy.port}` : "");
}

// components/transport.ts: the one SSH transport. The docker provider's ssh:// URL and known_hosts line follow
// OpenSSH's forms (IPv6 in brackets, [host]:port off port 22), and the key material it needs on disk is
// written once, private (0600 files in a 0700 dir), under paths named by content alone.
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dockerHostUrl, knownHostsLine, sshMaterialDir, sshOptions, writeSshMaterial } from "../../../components/transport";
import { FAKE_PEM, HOST_KEY_A, HOST_KEY_B } from "../config/helpers";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "rb-ssh-"));
  dirs.push(d);
  return d;
}
const mode = (file: string) => statSync(file).mode & 0o777;

describe("dockerHostUrl", () => {
  it.each([
    [{ user: "root", host: "203.0.113.11", port: 22 }, "ssh://root@203.0.113.11:22"],
    [{ user: "ops", host: "worker-a.example", port: 2201 }, "ssh://ops@worker-a.example:2201"],
    [{ user: "root", host: "::1", port: 2201 }, "ssh://root@[::1]:2201"],
    [{ user: "root", host: "2001:db8::11", port: 22 }, "ssh://root@[2001:db8::11]:22"],
  ])("%j → %s", (c, url) => {
    expect(dockerHostUrl(c)).toBe(url);
    // A URL parser reads the same host and port back.
    const parsed = new URL(url);
    expect(parsed.hostname.replace(/^\[|\]$/g, "")).toBe(c.host);
    expect(Number(parsed.port || 22)).toBe(c.port);
  });
});

describe("knownHostsLine", () => {
  it("port 22: the bare host, as OpenSSH writes it", () => {
    expect(knownHostsLine({ host: "203.0.113.11", port: 22, hostKey: HOST_KEY_A })).toBe(`203.0.113.11 ${HOST_KEY_A}\n`);
  });

  it("another port: [host]:port", () => {
    expect(knownHostsLine({ host: "127.0.0.1", port: 2201, hostKey: HOST_KEY_A })).toBe(`[127.0.0.1]:2201 ${HOST_KEY_A}\n`);
  });

  it("trims the key line (a .pub file's trailing newline) and keeps its comment", () => {
    expect(knownHostsLine({ host: "h", port: 22, hostKey: `  ${HOST_KEY_A} root@worker-a\n` })).toBe(`h ${HOST_KEY_A} root@worker-a\n`);
  });
});

describe("writeSshMaterial", () => {
  const conn = { host: "127.0.0.1", port: 2201, privateKey: FAKE_PEM, hostKey: HOST_KEY_A };

  it("writes the key and known_hosts as 0600 files in a 0700 directory", () => {
    const dir = path.join(tempDir(), "ssh");
    const files = writeSshMaterial(conn, dir);
    expect(path.dirname(files.keyFile)).toBe(dir);
    expect(path.dirname(files.knownHostsFile)).toBe(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(files.keyFile)).toBe(0o600);
    expect(mode(files.knownHostsFile)).toBe(0o600);
    expect(readFileSync(files.keyFile, "utf8")).toBe(FAKE_PEM);
    expect(readFileSync(files.knownHostsFile, "utf8")).toBe(knownHostsLine(conn));
    expect(readdirSync(dir).sort()).toEqual([path.basename(files.keyFile), path.basename(files.knownHostsFile)].sort());
  });

  it("tightens a key file someone loosened, even when its content is current (ssh refuses readable keys)", () => {
    const dir = tempDir();
    const files = writeSshMaterial(conn, dir);
    chmodSync(files.keyFile, 0o644);
    writeSshMaterial(conn, dir);
    expect(mode(files.keyFile)).toBe(0o600);
  });

  it("tightens a directory that exists with looser permissions", () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    writeSshMaterial(conn, dir);
    expect(mode(dir)).toBe(0o700);
  });

  it("names files by content: the same paths on a second call and in any directory", () => {
    const dir = tempDir();
    const first = writeSshMaterial(conn, dir);
    const second = writeSshMaterial({ ...conn }, dir);
    expect(second).toEqual(first);
    expect(path.basename(first.keyFile)).toMatch(/^id-[0-9a-f]{20}$/);
    expect(path.basename(first.knownHostsFile)).toMatch(/^known_hosts-[0-9a-f]{20}$/);
    // The names do not depend on the directory (every checkout computes the same ones).
    const elsewhere = writeSshMaterial(conn, tempDir());
    expect(path.basename(elsewhere.keyFile)).toBe(path.basename(first.keyFile));
    expect(readdirSync(dir)).toHaveLength(2); // no temp files left behind
  });

  it("a key without its final newline is written with one, under the same name", () => {
    const dir = tempDir();
    const files = writeSshMaterial({ ...conn, privateKey: FAKE_PEM.trimEnd() }, dir);
    expect(readFileSync(files.keyFile, "utf8")).toBe(FAKE_PEM);
    expect(files).toEqual(writeSshMaterial(conn, dir));
  });

  it("a different key → a different key file; a different host key or port → a different known_hosts file", () => {
    const dir = tempDir();
    const a = writeSshMaterial(conn, dir);
    const otherKey = writeSshMaterial({ ...conn, privateKey: FAKE_PEM.replace("VEVT", "QUJD") }, dir);
    expect(otherKey.keyFile).not.toBe(a.keyFile);
    expect(otherKey.knownHostsFile).toBe(a.knownHostsFile);
    expect(readFileSync(a.keyFile, "utf8")).toBe(FAKE_PEM); // the first key is untouched
    expect(writeSshMaterial({ ...conn, hostKey: HOST_KEY_B }, dir).knownHostsFile).not.toBe(a.knownHostsFile);
    expect(writeSshMaterial({ ...conn, port: 22 }, dir).knownHostsFile).not.toBe(a.knownHostsFile);
  });

  it("repairs a file whose content was changed behind its back", () => {
    const dir = tempDir();
    const files = writeSshMaterial(conn, dir);
    writeFileSync(files.keyFile, "garbage");
    writeSshMaterial(conn, dir);
    expect(readFileSync(files.keyFile, "utf8")).toBe(FAKE_PEM);
    expect(mode(files.keyFile)).toBe(0o600);
  });
});

describe("sshMaterialDir", () => {
  it("REPROBENCH_SSH_DIR overrides ~/.reprobench/ssh", () => {
    expect(sshMaterialDir({ REPROBENCH_SSH_DIR: "/x/ssh" })).toBe("/x/ssh");
    expect(sshMaterialDir({})).toMatch(/\/\.reprobench\/ssh$/);
  });
});

describe("sshOptions", () => {
  it("pins the key and the host key, never prompts", () => {
    const opts = sshOptions({ keyFile: "/k/id-1", knownHostsFile: "/k/known_hosts-1" });
    expect(opts.slice(0, 2)).toEqual(["-i", "/k/id-1"]);
    const o = opts.filter((_, i) => opts[i - 1] === "-o");
    expect(o).toEqual(expect.arrayContaining(["IdentitiesOnly=yes", "BatchMode=yes", "StrictHostKeyChecking=yes", "UserKnownHostsFile=/k/known_hosts-1"]));
    // Every option is a flag followed by its value.
    expect(opts.filter((a) => a.startsWith("-"))).toHaveLength(opts.length / 2);
  });
});

// CheckedCommand's dynamic provider, called directly (no Pulumi engine): a refresh that cannot reach the
// host FAILS naming it (it never becomes drift, which the next `up` would "repair" by replacing a healthy
// model server); a reachable host whose script fails — even with exit 255, ssh's own failure code — is a
// script failure; drift plans a replace or an in-place update as the resource asks.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkedCommandProvider as provider, splitCheck } from "../../../components/checked-command";
import { loginRecordFile, recordLogin } from "../../../components/transport";
import { type JavaScriptValue, Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { HostConnection } from "../../../components/transport";
import { type Sshd, freePort, keyPair, sshdAvailable, startSshd } from "../../helpers/sshd";
import { rejection } from "../../helpers/rejection";

/** The provider's state (inputs plus expected/observed/stdout), loosely: tests build it by hand. */
type State = Record<string, unknown> & { connection: HostConnection };

const scratch = mkdtempSync(path.join(tmpdir(), "rb-checked-"));
const client = keyPair(scratch, "client");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function state(connection: HostConnection, fields: Record<string, unknown> = {}): State {
  return {
    connection,
    create: "echo created",
    check: "echo state=ok",
    environment: {},
    spec: "",
    summary: [],
    timeoutSeconds: 30,
    onDrift: "replace",
    expected: "state=ok",
    observed: "state=ok",
    stdout: "created\n",
    ...fields,
  };
}

describe("read() against a host nothing listens on", () => {
  it("rejects naming the host (stack name, user@address:port) and never resolves with drift", async () => {
    const port = await freePort();
    const connection: HostConnection = { name: "worker-x", host: "127.0.0.1", port, user: "root", privateKey: client.privateKey, hostKey: client.publicKey };
    const message = await rejection(provider.read!("id-1", state(connection)));
    expect(message).toContain(`host worker-x (root@127.0.0.1:${port}) cannot be reached`);
    expect(message).toMatch(/refused/i); // ssh's own words are kept in the tail
    expect(message).not.toContain("check failed");
  });

  it("create and delete fail the same way (nothing was run)", async () => {
    const port = await freePort();
    const connection: HostConnection = { name: "worker-y", host: "127.0.0.1", port, user: "root", privateKey: client.privateKey, hostKey: client.publicKey };
    expect(await rejection(provider.create!(state(connection)))).toContain(`host worker-y (root@127.0.0.1:${port}) cannot be reached`);
    expect(await rejection(provider.delete!("id-1", state(connection, { delete: "true" })))).toContain("host worker-y");
  });
});

describe("diff()", () => {
  const connection: HostConnection = { name: "h", host: "10.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "ssh-ed25519 AAAA" };

  it("drift with onDrift replace: replaces ['observed'], deleting first", async () => {
    const olds = state(connection, { observed: "absent", expected: "id=abc running=true" });
    const r = await provider.diff!("id", olds, state(connection, { onDrift: "replace" }));
    expect(r).toEqual({ changes: true, replaces: ["observed"], deleteBeforeReplace: true });
  });

  it("drift with onDrift update: no replacement, but a change (create runs again in place)", async () => {
    const olds = state(connection, { observed: "absent", expected: "id=abc running=true" });
    const r = await provider.diff!("id", olds, state(connection, { onDrift: "update" }));
    expect(r.changes).toBe(true);
    expect(r.replaces).toEqual([]);
  });

  it("onDrift left unset means update: drift is repaired in place", async () => {
    const olds = state(connection, { observed: "absent" });
    const r = await provider.diff!("id", olds, state(connection, { onDrift: undefined }));
    expect(r).toMatchObject({ changes: true, replaces: [] });
  });

  it("no drift and equal inputs: no change", async () => {
    expect(await provider.diff!("id", state(connection), state(connection))).toEqual({ changes: false, replaces: [], deleteBeforeReplace: true });
  });

  it("a changed script, spec or environment is an in-place update; a new address or port replaces", async () => {
    expect(await provider.diff!("id", state(connection), state(connection, { create: "echo other" }))).toMatchObject({ changes: true, replaces: [] });
    expect(await provider.diff!("id", state(connection), state(connection, { spec: "container-2" }))).toMatchObject({ changes: true, replaces: [] });
    expect(await provider.diff!("id", state(connection), state(connection, { environment: { A: "1" } }))).toMatchObject({ changes: true, replaces: [] });
    const moved = state({ ...connection, host: "10.0.0.2" });
    expect(await provider.diff!("id", state(connection), moved)).toMatchObject({ changes: true, replaces: ["connection"] });
    expect(await provider.diff!("id", state(connection), state({ ...connection, port: 2222 }))).toMatchObject({ changes: true, replaces: ["connection"] });
    // Drift on a resource whose host moved: still replaced for the connection.
    expect(await provider.diff!("id", state(connection, { observed: "absent" }), { ...moved, onDrift: "update" })).toMatchObject({ replaces: ["connection"] });
  });

  it("a new key, host-key comment, user or sudo setting is no change of the resource", async () => {
    for (const login of [{ privateKey: "k2" }, { hostKey: "ssh-ed25519 AAAA rotated-comment" }, { user: "bench" }, { sudo: true }, { name: "renamed" }]) {
      expect(await provider.diff!("id", state(connection), state({ ...connection, ...login }))).toEqual({ changes: false, replaces: [], deleteBeforeReplace: true });
    }
  });

  it("a login field the resource names in rerunOnLogin is an in-place update, never a replace", async () => {
    const news = state({ ...connection, user: "bench" }, { rerunOnLogin: ["user"] });
    expect(await provider.diff!("id", state(connection), news)).toEqual({ changes: true, replaces: [], deleteBeforeReplace: true });
    // The key is still no change for it.
    expect(await provider.diff!("id", state(connection), state({ ...connection, privateKey: "k3" }, { rerunOnLogin: ["user"] }))).toMatchObject({ changes: false });
  });
});

describe("splitCheck", () => {
  it("keeps info: lines out of the observed state", () => {
    expect(splitCheck("digest=sha256:aa\ninfo: upstream=sha256:bb\n")).toEqual({ observed: "digest=sha256:aa", info: "info: upstream=sha256:bb" });
    expect(splitCheck(" v=1 ")).toEqual({ observed: "v=1", info: "" });
  });
});

describe("a stand-in ssh on PATH (runs the script locally, as a connected ssh would)", () => {
  // The runner spawns `ssh` from PATH; this one records its argv and runs stdin with bash, exiting with
  // the script's status — what OpenSSH does once connected.
  const bin = path.join(scratch, "bin");
  const argvFile = path.join(scratch, "ssh-argv");
  const savedPath = process.env.PATH;
  beforeAll(() => {
    rmSync(bin, { recursive: true, force: true });
    mkdirSync(bin);
    writeFileSync(path.join(bin, "ssh"), `#!/usr/bin/env bash\nprintf '%s\\n' "$@" >${JSON.stringify(argvFile)}\nexec bash -s\n`);
    chmodSync(path.join(bin, "ssh"), 0o755);
    process.env.PATH = `${bin}:${savedPath}`;
  });
  afterEach(() => rmSync(argvFile, { force: true }));
  afterAll(() => {
    process.env.PATH = savedPath;
  });
  const connection: HostConnection = { name: "worker-z", host: "10.9.9.9", port: 2222, user: "ops", privateKey: client.privateKey, hostKey: client.publicKey };

  it("a script that exits 255 after connecting is a script failure naming the host, not 'cannot be reached'", async () => {
    const message = await rejection(provider.create!(state(connection, { create: "echo boom >&2; exit 255" })));
    expect(message).toContain("host worker-z (ops@10.9.9.9:2222): script failed (exit 255)");
    expect(message).toContain("boom");
    expect(message).not.toContain("cannot be reached");
    expect(message).not.toContain("reprobench: connected"); // the marker is the runner's, not the user's
  });

  it("a check that fails on a reachable host reads as drift (resolves), it does not fail the refresh", async () => {
    const r = await provider.read!("id-9", state(connection, { check: "echo gone >&2; exit 3" }));
    expect(r.id).toBe("id-9");
    expect(String(r.props!.observed)).toMatch(/^check failed: .*script failed \(exit 3\)/s);
    expect(r.props!.expected).toBe("state=ok");
  });

  it("read() records what the check prints now; create records it as both expected and observed", async () => {
    const created = await provider.create!(state(connection, { create: "echo made", check: "echo  v=1 ", expected: undefined, observed: undefined }));
    expect(created.outs).toMatchObject({ expected: "v=1", observed: "v=1", stdout: "made\n" });
    expect(created.id).toMatch(/^10\.9\.9\.9:2222\//);
    const read = await provider.read!(created.id, { ...created.outs, check: "echo v=2" });
    expect(read.props).toMatchObject({ expected: "v=1", observed: "v=2" });
  });

  it("inputs travel on stdin, not on ssh's command line; the key and host key are pinned through files", async () => {
    const secret = "sk-not-on-argv-8c1f";
    // The script gets the value (reversed here: stdout itself never shows a secret input).
    const r = await provider.create!(state(connection, { create: 'printf "%s" "$API_KEY" | rev', environment: { API_KEY: secret } }));
    expect(r.outs.stdout).toBe([...secret].reverse().join(""));
    const argv = readFileSync(argvFile, "utf8").split("\n");
    expect(argv.join(" ")).not.toContain(secret);
    expect(argv).toEqual(expect.arrayContaining(["-p", "2222", "-l", "ops", "10.9.9.9", "bash -s", "BatchMode=yes", "StrictHostKeyChecking=yes"]));
    const known = argv.find((a) => a.startsWith("UserKnownHostsFile="))!;
    expect(known).toBeDefined();
  });

  it("update and refresh scripts see what create printed last as PREVIOUS_STDOUT; info lines never read as drift", async () => {
    const created = await provider.create!(state(connection, { create: "echo digest=sha256:one", check: 'echo "have ${PREVIOUS_STDOUT}"; echo "info: upstream=two"', expected: undefined, observed: undefined }));
    expect(created.outs).toMatchObject({ expected: "have digest=sha256:one", observed: "have digest=sha256:one", info: "info: upstream=two" });
    const updated = await provider.update!("id", created.outs, { ...created.outs, create: 'echo "again after ${PREVIOUS_STDOUT}"' });
    expect(updated.outs!.stdout).toBe("again after digest=sha256:one\n");
    const read = await provider.read!("id", { ...updated.outs, check: 'echo "have ${PREVIOUS_STDOUT}"; echo "info: upstream=three"' });
    expect(read.props).toMatchObject({ observed: "have again after digest=sha256:one", info: "info: upstream=three" });
    // The info line moved (two → three), the state did not: no drift.
    expect((await provider.diff!("id", read.props as State, read.props as State)).changes).toBe(false);
  });

  it("stdout loses the secret inputs by value (a server echoing its API key)", async () => {
    const key = "sk-sentinel-0123456789abcdef";
    const r = await provider.create!(state(connection, { create: 'printf \'{"api_key":"%s","port":1}\' "$API_KEY"', environment: { API_KEY: key } }));
    expect(r.outs.stdout).toBe('{"api_key":"[secret not shown]","port":1}');
  });

  it("a script outliving timeoutSeconds is killed and named as such", async () => {
    const message = await rejection(provider.create!(state(connection, { create: "exec sleep 30", timeoutSeconds: 1 })));
    expect(message).toContain("host worker-z (ops@10.9.9.9:2222): script failed (killed by SIGKILL, timeout 1s)");
  });
});

// scripts/test.sh installs openssh-server: without sshd these tests fail, naming it, instead of skipping.
describe("against a real sshd on loopback", () => {
  let sshd: Sshd;
  beforeAll(async () => {
    if (!sshdAvailable()) throw new Error("needs /usr/sbin/sshd (scripts/test.sh installs openssh-server)");
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });
  const conn = (): HostConnection => ({ name: "worker-s", host: "127.0.0.1", port: sshd.port, user: sshd.user, privateKey: sshd.clientKey, hostKey: sshd.hostKey });

  it("create then read round-trips the check's output over the pinned connection", async () => {
    const created = await provider.create!(state(conn(), { create: 'echo "hello $NAME"', check: "echo checked", environment: { NAME: "it's me" }, expected: undefined, observed: undefined }));
    expect(created.outs).toMatchObject({ stdout: "hello it's me\n", expected: "checked", observed: "checked" });
    const read = await provider.read!(created.id, created.outs);
    expect(read.props!.observed).toBe("checked");
  });

  it("a script exiting 255 on the reachable host is a script failure, not 'cannot be reached'", async () => {
    const message = await rejection(provider.create!(state(conn(), { create: "echo nope >&2; exit 255" })));
    expect(message).toContain(`host worker-s (${sshd.user}@127.0.0.1:${sshd.port}): script failed (exit 255)`);
    expect(message).toContain("nope");
    expect(message).not.toContain("cannot be reached");
    // The same on a refresh: a failed check is drift, the read resolves.
    const read = await provider.read!("id", state(conn(), { check: "exit 255" }));
    expect(String(read.props!.observed)).toMatch(/^check failed: .*exit 255/s);
  });

  describe("a rotated key", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "rb-logins-"));
    const saved = process.env.REPROBENCH_SSH_DIR;
    beforeAll(() => {
      process.env.REPROBENCH_SSH_DIR = dir;
    });
    afterAll(() => {
      if (saved === undefined) delete process.env.REPROBENCH_SSH_DIR;
      else process.env.REPROBENCH_SSH_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    });
    const urn = "urn:pulumi:rot::proj::pulumi-nodejs:dynamic:Resource::r";

    it("refresh and delete use the login the program recorded last, and state then holds it", async () => {
      const rotated = keyPair(scratch, "rotated");
      const authorized = readFileSync(sshd.authorizedKeysFile, "utf8");
      writeFileSync(sshd.authorizedKeysFile, `${rotated.publicKey}\n`);
      try {
        const stored = state(conn(), { progressUrn: urn, check: "echo checked", delete: "echo deleted >&2" });
        // The old key is gone from authorized_keys: without the record the refresh cannot get in.
        expect(await rejection(provider.read!("id", stored))).toContain("cannot be reached");
        recordLogin(loginRecordFile("proj", "rot", "127.0.0.1", sshd.port), { ...conn(), privateKey: rotated.privateKey });
        const read = await provider.read!("id", stored);
        expect(read.props!.observed).toBe("checked");
        expect((read.props!.connection as HostConnection).privateKey).toBe(rotated.privateKey);
        // What read() returns reaches the engine as a protobuf Struct: no undefined anywhere (a root login).
        expect(() => Struct.fromJavaScript(read.props as Record<string, JavaScriptValue>)).not.toThrow();
        await provider.delete!("id", stored);
      } finally {
        writeFileSync(sshd.authorizedKeysFile, authorized);
      }
    });

    it("a recorded login that does not get in falls back to the one in state", async () => {
      const stored = state(conn(), { progressUrn: urn, check: "echo checked" });
      recordLogin(loginRecordFile("proj", "rot", "127.0.0.1", sshd.port), { ...conn(), privateKey: keyPair(scratch, "never-authorized").privateKey });
      const read = await provider.read!("id", stored);
      expect(read.props!.observed).toBe("checked");
      expect((read.props!.connection as HostConnection).privateKey).toBe(conn().privateKey);
    });
  });

  it("a host presenting another host key is unreachable (the pin holds), and read() rejects naming it", async () => {
    const other = keyPair(scratch, "other-host");
    const message = await rejection(provider.read!("id", state({ ...conn(), hostKey: other.publicKey })));
    expect(message).toContain(`host worker-s (${sshd.user}@127.0.0.1:${sshd.port}) cannot be reached`);
    expect(message).toMatch(/host key/i);
  });
});

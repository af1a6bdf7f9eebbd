// command:remote:* against a real OpenSSH server on loopback (test/fixtures/plugins/sshd.sh).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MemoryLog } from "../../../scripts/plugins/common/engine-log";
import { makeProvider } from "../../../scripts/plugins/common/provider";
import { ARCHIVE_SIG, ASSET_SIG, SECRET_SIG, SIG_KEY, UNKNOWN, wrapSecret } from "../../../scripts/plugins/common/wire";
import { TYPES, commandPlugin } from "../../../scripts/plugins/command/plugin";
import { Sshd, freePort, startSshd } from "./sshd-harness";

const urn = (type: string, name = "step") => `urn:pulumi:dev::proj::${type}::${name}`;
const CMD = urn(TYPES.remoteCommand);

let sshd: Sshd;
let work: string;
let log: MemoryLog;
let provider: ReturnType<typeof makeProvider>;

beforeAll(async () => {
  sshd = await startSshd();
  work = mkdtempSync(path.join(tmpdir(), "rb-cmd-"));
}, 30_000);
afterAll(async () => {
  await sshd?.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(() => {
  log = new MemoryLog();
  provider = makeProvider(commandPlugin("1.2.1"), log);
});

/** The connection as the SDK sends it: defaults applied, the whole object wrapped as a secret. */
function connection(extra: Record<string, unknown> = {}) {
  return wrapSecret({ host: "127.0.0.1", port: sshd.port, user: "root", privateKey: sshd.clientKey, dialErrorLimit: 1, perDialTimeout: 10, ...extra });
}

describe("remote Command lifecycle", () => {
  it("create runs `create` and returns stdout/stderr with the connection still secret", async () => {
    const r = await provider.create!(CMD, { connection: connection(), create: "echo out; echo err >&2; whoami" });
    expect(r.outs.stdout).toBe("out\nroot");
    expect(r.outs.stderr).toBe("err");
    expect(r.outs.connection[SIG_KEY]).toBe(SECRET_SIG);
    expect(r.outs.create).toBe("echo out; echo err >&2; whoami");
    expect(r.id).toMatch(/^step-[0-9a-f]{8}$/);
  });

  it("streams output lines to the engine log against the resource URN, unless logging says otherwise", async () => {
    await provider.create!(CMD, { connection: connection(), create: "echo first; echo second >&2" });
    expect(log.messages).toEqual(
      expect.arrayContaining([
        { severity: "info", message: "first", urn: CMD },
        { severity: "info", message: "second", urn: CMD },
      ]),
    );
    const quiet = new MemoryLog();
    await makeProvider(commandPlugin("1.2.1"), quiet).create!(CMD, { connection: connection(), create: "echo x; echo y >&2", logging: "stderr" });
    expect(quiet.messages.map((m) => m.message)).toEqual(["y"]);
  });

  it("update runs `update` with the previous output in the environment", async () => {
    const olds = { connection: connection(), create: "echo one", update: "echo \"was:$PULUMI_COMMAND_STDOUT\"", stdout: "one", stderr: "" };
    const r = await provider.update!("id", CMD, olds, { ...olds, stdout: undefined, stderr: undefined, delete: "true" });
    expect(r.outs.stdout).toBe("was:one");
  });

  it("update without `update` re-runs `create`, and addPreviousOutputInEnv=false hides the old output", async () => {
    const olds = { connection: connection(), create: "echo \"[${PULUMI_COMMAND_STDOUT-unset}]\"", stdout: "old", stderr: "" };
    const news = { connection: connection(), create: olds.create, delete: "echo bye", addPreviousOutputInEnv: false };
    const r = await provider.update!("id", CMD, olds, news);
    expect(r.outs.stdout).toBe("[unset]");
    const r2 = await provider.update!("id", CMD, olds, { ...news, addPreviousOutputInEnv: true });
    expect(r2.outs.stdout).toBe("[old]");
  });

  it("delete runs `delete` with PULUMI_COMMAND_STDOUT/STDERR of the last run", async () => {
    const marker = path.join(work, "deleted");
    await provider.delete!("id", CMD, {
      connection: connection(),
      create: "true",
      delete: `printf '%s|%s' "$PULUMI_COMMAND_STDOUT" "$PULUMI_COMMAND_STDERR" > ${marker}`,
      stdout: "last out",
      stderr: "last err",
    });
    expect(readFileSync(marker, "utf8")).toBe("last out|last err");
  });

  it("delete without `delete` does nothing and does not even connect", async () => {
    await provider.delete!("id", CMD, { connection: wrapSecret({ host: "127.0.0.1", port: 1, dialErrorLimit: 1, perDialTimeout: 1 }), create: "x" });
  });
});

describe("remote Command diff", () => {
  const base = { connection: connection, create: "a", delete: "d", triggers: [1, "x"] };
  const olds = () => ({ ...base, connection: connection(), stdout: "o", stderr: "" });

  it("reports no change for identical inputs", async () => {
    expect((await provider.diff!("id", CMD, olds(), { ...base, connection: connection() })).changes).toBe(false);
  });

  it("any input change other than triggers is an in-place update (even `delete`)", async () => {
    const d = await provider.diff!("id", CMD, olds(), { ...base, connection: connection(), delete: "d2" });
    expect(d).toMatchObject({ changes: true, replaces: [] });
    const c = await provider.diff!("id", CMD, olds(), { ...base, connection: connection({ port: 2222 }) });
    expect(c).toMatchObject({ changes: true, replaces: [] });
  });

  it("a triggers change replaces the resource; an unknown value counts as a change", async () => {
    const d = await provider.diff!("id", CMD, olds(), { ...base, connection: connection(), triggers: [2, "x"] });
    expect(d).toMatchObject({ changes: true, replaces: ["triggers"] });
    const u = await provider.diff!("id", CMD, olds(), { ...base, connection: connection(), create: UNKNOWN });
    expect(u).toMatchObject({ changes: true, replaces: [] });
  });
});

describe("remote Command failures", () => {
  it("a non-zero exit fails with the status and the tail of stderr", async () => {
    const create = "echo progress; for i in $(seq 1 30); do echo \"problem $i\" >&2; done; exit 3";
    await expect(provider.create!(CMD, { connection: connection(), create })).rejects.toThrow(
      /create command .* on root@127\.0\.0\.1:\d+ exited with status 3; stderr:\nproblem 11\n[\s\S]*problem 30$/,
    );
  });

  it("fails cleanly (no crash) when the connection dies mid-command", async () => {
    // $PPID is the sshd process serving this session: killing it drops the connection.
    await expect(provider.create!(CMD, { connection: connection(), create: "echo started; kill -9 $PPID; sleep 5" })).rejects.toThrow(
      /create command .* (was killed|SSH connection lost)/,
    );
  });

  it("refuses a server whose host key does not match connection.hostKey, without retrying", async () => {
    const started = Date.now();
    await expect(provider.create!(CMD, { connection: connection({ hostKey: sshd.otherHostKey, dialErrorLimit: 5 }), create: "touch /tmp/never" })).rejects.toThrow(
      /host key mismatch for 127\.0\.0\.1:\d+: connection\.hostKey pins ssh-ed25519 SHA256:.*refusing to connect/,
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("accepts the matching host key of each type the server offers (ed25519, RSA, ECDSA; known_hosts lines too)", async () => {
    for (const hostKey of [sshd.hostKey, sshd.rsaHostKey, sshd.ecdsaHostKey, `[127.0.0.1]:${sshd.port} ${sshd.rsaHostKey}`]) {
      const r = await provider.create!(CMD, { connection: connection({ hostKey }), create: "echo pinned" });
      expect(r.outs.stdout).toBe("pinned");
    }
  });

  it("check rejects a malformed hostKey and a missing host by name", async () => {
    const r = await provider.check!(CMD, {}, { connection: wrapSecret({ hostKey: "ssh-ed25519 AAAA" }), create: "x" });
    expect(r.failures?.map((f) => f.property)).toEqual(["connection.host", "connection.hostKey"]);
  });

  it("gives up after dialErrorLimit failed dials, naming the target", async () => {
    const closed = await freePort();
    await expect(
      provider.create!(CMD, { connection: wrapSecret({ host: "127.0.0.1", port: closed, user: "root", dialErrorLimit: 2, perDialTimeout: 2 }), create: "true" }),
    ).rejects.toThrow(new RegExp(`could not connect to root@127\\.0\\.0\\.1:${closed} after 2 attempt\\(s\\) \\(dialErrorLimit 2\\): .*ECONNREFUSED`));
    expect(log.messages.filter((m) => m.severity === "warning")).toHaveLength(1);
  });

  it("bounds each dial by perDialTimeout (a server that never answers the handshake)", async () => {
    const silent = net.createServer(() => {}); // accepts, never sends an SSH banner
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as net.AddressInfo).port;
    const started = Date.now();
    try {
      await expect(
        provider.create!(CMD, { connection: wrapSecret({ host: "127.0.0.1", port, user: "root", dialErrorLimit: 2, perDialTimeout: 1 }), create: "true" }),
      ).rejects.toThrow(/after 2 attempt\(s\).*[Tt]imed out/);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(2000); // two 1 s dials (+ 0.5 s backoff)
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it("reports a wrong key passphrase clearly", async () => {
    await expect(
      provider.create!(CMD, { connection: connection({ privateKey: sshd.encryptedClientKey, privateKeyPassword: "wrong" }), create: "true" }),
    ).rejects.toThrow(/privateKey/);
  });
});

describe("remote Command inputs", () => {
  it("passes the environment although sshd has no AcceptEnv, keeping values out of the remote argv", async () => {
    const env = { GREETING: "hello 'world' $x \\ 100%", TOKEN: "tok-123456" };
    const create = 'printf "%s\\n" "$GREETING"; tr "\\0" " " < /proc/$$/cmdline';
    const r = await provider.create!(CMD, { connection: connection(), create, environment: env });
    const [greeting, argv] = String(r.outs.stdout).split("\n");
    expect(greeting).toBe(env.GREETING);
    expect(argv).not.toContain("tok-123456");
  });

  it("feeds stdin to the command, also together with an environment", async () => {
    const r = await provider.create!(CMD, { connection: connection(), create: "cat; echo \"+$E\"", stdin: "line1\nline2\n", environment: { E: "e" } });
    expect(r.outs.stdout).toBe("line1\nline2\n+e");
  });

  it("connects with a passphrase-protected key", async () => {
    const r = await provider.create!(CMD, { connection: connection({ privateKey: sshd.encryptedClientKey, privateKeyPassword: sshd.passphrase }), create: "echo enc" });
    expect(r.outs.stdout).toBe("enc");
  });

  it("connects through a proxy (bastion) connection", async () => {
    const proxy = { host: "127.0.0.1", port: sshd.port, user: "root", privateKey: sshd.clientKey, hostKey: sshd.hostKey, dialErrorLimit: 1, perDialTimeout: 10 };
    const r = await provider.create!(CMD, { connection: connection({ proxy }), create: "echo via-proxy" });
    expect(r.outs.stdout).toBe("via-proxy");
  });

  it("keeps secret inputs secret in the outputs and out of the logs and errors", async () => {
    const r = await provider.create!(CMD, { connection: connection(), create: "echo \"token is $TOKEN\"", environment: wrapSecret({ TOKEN: "hunter2-secret" }) });
    expect(r.outs.stdout).toEqual(wrapSecret("token is hunter2-secret"));
    expect(r.outs.stderr).toEqual(wrapSecret(""));
    expect(r.outs.environment).toEqual(wrapSecret({ TOKEN: "hunter2-secret" }));
    expect(JSON.stringify(log.messages)).not.toContain("hunter2-secret");
    expect(log.messages.map((m) => m.message)).toContain("token is [secret]");
    const failing = provider.create!(CMD, { connection: connection(), create: "echo \"bad $TOKEN\" >&2; exit 1", environment: wrapSecret({ TOKEN: "hunter2-secret" }) });
    await expect(failing).rejects.toThrow(/bad \[secret\]/);
    await expect(failing).rejects.not.toThrow(/hunter2/);
  });

  it("keeps plain outputs plain", async () => {
    const r = await provider.create!(CMD, { connection: connection(), create: "echo visible" });
    expect(r.outs.stdout).toBe("visible");
  });
});

describe("CopyToRemote", () => {
  const COPY = urn(TYPES.copyToRemote, "copy");

  it("copies a file, text and a directory (into an existing directory) over SFTP", async () => {
    const src = path.join(work, "src");
    mkdirSync(path.join(src, "sub"), { recursive: true });
    writeFileSync(path.join(src, "a.sh"), "#!/bin/sh\necho a\n", { mode: 0o755 });
    writeFileSync(path.join(src, "sub", "b.txt"), "b");
    const dest = path.join(work, "dest");
    mkdirSync(dest);

    await provider.create!(COPY, { connection: connection(), remotePath: path.join(dest, "one.sh"), source: { [SIG_KEY]: ASSET_SIG, path: path.join(src, "a.sh") } });
    expect(readFileSync(path.join(dest, "one.sh"), "utf8")).toBe("#!/bin/sh\necho a\n");
    expect(statSync(path.join(dest, "one.sh")).mode & 0o777).toBe(0o755);

    await provider.create!(COPY, { connection: connection(), remotePath: path.join(dest, "t.txt"), source: { [SIG_KEY]: ASSET_SIG, text: "hello" } });
    expect(readFileSync(path.join(dest, "t.txt"), "utf8")).toBe("hello");

    const r = await provider.create!(COPY, { connection: connection(), remotePath: dest, source: { [SIG_KEY]: ARCHIVE_SIG, path: src } });
    expect(readFileSync(path.join(dest, "src", "sub", "b.txt"), "utf8")).toBe("b");
    expect(r.outs.connection[SIG_KEY]).toBe(SECRET_SIG);

    await provider.create!(COPY, { connection: connection(), remotePath: path.join(dest, "fresh"), source: { [SIG_KEY]: ARCHIVE_SIG, path: src } });
    expect(existsSync(path.join(dest, "fresh", "a.sh"))).toBe(true);
  });

  it("check names unsupported sources", async () => {
    const r = await provider.check!(COPY, {}, { connection: connection(), remotePath: "/tmp/x", source: { [SIG_KEY]: ARCHIVE_SIG, assets: {} } });
    expect(r.failures?.[0]).toMatchObject({ property: "source" });
    expect(r.failures?.[0].reason).toMatch(/only FileArchive of a directory/);
  });
});

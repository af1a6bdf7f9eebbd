// sim/proxy/sim-proxy.py for real: python3 listening on 127.0.0.1, a local origin server, raw sockets as
// clients. Nothing leaves loopback; every wait is bounded (socket timeouts, the proxy's "listening" line).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const SCRIPT = resolve(__dirname, "..", "..", "..", "sim", "proxy", "sim-proxy.py");
const USER = "reprobench";
const PASS = "0123abcd";
const AUTH = `Basic ${Buffer.from(`${USER}:${PASS}`).toString("base64")}`;
const BIG = Buffer.alloc(96 * 1024, "x");

let dir: string;
let origin: Server;
let originPort: number;
const running: { child: ChildProcess; output: string[] }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sim-proxy-test-"));
  writeFileSync(join(dir, "proxy-url"), `http://${USER}:${PASS}@127.0.0.1:1\n`, { mode: 0o600 });
  origin = createServer((req, res) => {
    if (req.url === "/big") {
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": BIG.length });
      res.end(BIG);
      return;
    }
    const body = `origin saw ${req.method} ${req.url} host=${req.headers.host} proxy-auth=${req.headers["proxy-authorization"] ?? "-"} connection=${req.headers.connection}`;
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
  originPort = (origin.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => origin.close(r));
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  for (const p of running.splice(0)) p.child.kill("SIGKILL");
});

/** Starts the proxy on 127.0.0.1:0 and resolves with its port once it says it listens (bounded). */
function startProxy(args: string[]): Promise<{ port: number; output: string[] }> {
  const child = spawn("python3", [SCRIPT, "--listen", "127.0.0.1", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  running.push({ child, output });
  return new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`proxy did not start in 10 s: ${output.join("")}`)), 10_000);
    const onData = (b: Buffer) => {
      output.push(b.toString());
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(output.join(""));
      if (m) {
        clearTimeout(timer);
        resolvePort({ port: Number(m[1]), output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`proxy exited ${code}: ${output.join("")}`)));
  });
}

const egress = (conditions?: object) => {
  const args = ["--mode", "egress", "--credentials-file", join(dir, "proxy-url"), "--allow", `origin.test:${originPort}`, "--resolve", "origin.test=127.0.0.1"];
  if (conditions) {
    const file = join(dir, `conditions-${Math.random().toString(16).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(conditions));
    args.push("--conditions", file);
  }
  return startProxy(args);
};

/** Sends raw bytes to the proxy, collects everything until the server closes (10 s bound). */
function exchange(port: number, request: string | ((send: (s: string) => void, received: () => string) => void)): Promise<{ text: string; ms: number; error?: string }> {
  return new Promise((done) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const sock = connect(port, "127.0.0.1");
    sock.setTimeout(10_000, () => sock.destroy(new Error("timeout")));
    let error: string | undefined;
    sock.on("data", (b) => chunks.push(b));
    sock.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    sock.on("close", () => done({ text: Buffer.concat(chunks).toString("latin1"), ms: Date.now() - started, error }));
    if (typeof request === "string") sock.write(request);
    else request((s) => sock.write(s), () => Buffer.concat(chunks).toString("latin1"));
  });
}

const get = (path: string, auth = AUTH, host = `origin.test:${originPort}`) =>
  `GET http://${host}${path} HTTP/1.1\r\nHost: ${host}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ""}Connection: keep-alive\r\n\r\n`;

describe("sim-proxy egress", () => {
  it("answers 407 without or with wrong credentials, and logs the refusal", async () => {
    const { port, output } = await egress();
    const none = await exchange(port, get("/x", ""));
    expect(none.text).toMatch(/^HTTP\/1\.1 407 /);
    expect(none.text).toContain('Proxy-Authenticate: Basic realm="reprobench-sim"');
    const wrong = await exchange(port, get("/x", `Basic ${Buffer.from(`${USER}:nope`).toString("base64")}`));
    expect(wrong.text).toMatch(/^HTTP\/1\.1 407 /);
    expect(output.join("")).toMatch(/REFUSED 127\.0\.0\.1:\d+ GET http:\/\/origin\.test:\d+\/x: 407 no credentials/);
    expect(output.join("")).toMatch(/REFUSED .*407 wrong credentials/);
    expect(output.join("")).not.toContain(PASS);
  });

  it("refuses destinations outside the allowlist with 403 naming them (HTTP and CONNECT)", async () => {
    const { port, output } = await egress();
    const http = await exchange(port, get("/", AUTH, "example.com"));
    expect(http.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(http.text).toContain("destination example.com:80 is not allowed");
    const tunnel = await exchange(port, `CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\nProxy-Authorization: ${AUTH}\r\n\r\n`);
    expect(tunnel.text).toContain("destination origin.test:443 is not allowed");
    expect(output.join("")).toContain("REFUSED");
  });

  it("answers the check host itself", async () => {
    const { port } = await egress();
    const r = await exchange(port, get("/", AUTH, "proxy-check.reprobench.test"));
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text).toContain("reprobench sim proxy ok");
  });

  it("forwards absolute-URI HTTP to the origin without the proxy credentials, with Connection: close", async () => {
    const { port, output } = await egress();
    const r = await exchange(port, get("/hello?q=1"));
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text).toContain(`origin saw GET /hello?q=1 host=origin.test:${originPort} proxy-auth=- connection=close`);
    expect(output.join("")).toMatch(/OK 127\.0\.0\.1:\d+ GET http:\/\/origin\.test:\d+\/hello: \d+ bytes up/);
  });

  it("tunnels CONNECT to an allowed destination", async () => {
    const { port } = await egress();
    const r = await exchange(port, (send, received) => {
      send(`CONNECT origin.test:${originPort} HTTP/1.1\r\nHost: origin.test:${originPort}\r\nProxy-Authorization: ${AUTH}\r\n\r\n`);
      // Once the tunnel is up, speak plain HTTP to the origin through it.
      const poll = setInterval(() => {
        if (received().includes("\r\n\r\n")) {
          clearInterval(poll);
          send(`GET /through-tunnel HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n`);
        }
      }, 5);
      setTimeout(() => clearInterval(poll), 5_000);
    });
    expect(r.text).toMatch(/^HTTP\/1\.1 200 Connection established\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(r.text).toContain("origin saw GET /through-tunnel host=origin.test");
  });

  it("failFraction 1 fails every connection (502, 429, or reset), logged as FAILED", async () => {
    const { port, output } = await egress({ failFraction: 1, failWith: "502" });
    const r = await exchange(port, get("/x"));
    expect(r.text).toMatch(/^HTTP\/1\.1 502 /);
    expect(r.text).toContain("injected failure");
    expect(output.join("")).toMatch(/FAILED 127\.0\.0\.1:\d+ GET http:\/\/origin\.test:\d+\/x: injected 502 \(failFraction 1\.0\)/);

    // An overloaded registry as a plain-HTTP client sees it through the proxy.
    const busy = await egress({ failFraction: 1, failWith: "429" });
    expect((await exchange(busy.port, get("/x"))).text).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);

    const reset = await egress({ failFraction: 1, failWith: "reset" });
    const rr = await exchange(reset.port, get("/x"));
    expect(rr.text).toBe("");
    expect(rr.error).toBe("ECONNRESET");
  });

  it("the same seed fails the same connections; conditions are re-read when the file changes", async () => {
    const outcomes = async (port: number) => {
      const out: string[] = [];
      for (let i = 0; i < 12; i++) out.push((await exchange(port, get("/x"))).text.slice(9, 12));
      return out.join(",");
    };
    const a = await egress({ failFraction: 0.5, seed: 7 });
    const b = await egress({ failFraction: 0.5, seed: 7 });
    const first = await outcomes(a.port);
    expect(first).toContain("502");
    expect(first).toContain("200");
    expect(await outcomes(b.port)).toBe(first);

    // Rewriting the file (new mtime/size) takes effect for the next connection.
    const file = join(dir, "live.json");
    writeFileSync(file, JSON.stringify({ failFraction: 1 }));
    const live = await startProxy(["--mode", "egress", "--credentials-file", join(dir, "proxy-url"), "--allow", `origin.test:${originPort}`, "--resolve", "origin.test=127.0.0.1", "--conditions", file]);
    expect((await exchange(live.port, get("/x"))).text).toMatch(/^HTTP\/1\.1 502/);
    writeFileSync(file, JSON.stringify({ failFraction: 0, latencyMs: 0 }));
    expect((await exchange(live.port, get("/x"))).text).toMatch(/^HTTP\/1\.1 200/);
  });

  it("failTargets: only matching connections may fail (host:port, or an http:// URL prefix); the others draw nothing", async () => {
    const host = `origin.test:${originPort}`;
    const byPrefix = await egress({ failFraction: 1, failTargets: [`http://${host}/rehearsal/`] });
    expect((await exchange(byPrefix.port, get("/rehearsal/a.txt"))).text).toMatch(/^HTTP\/1\.1 502 /);
    expect((await exchange(byPrefix.port, get("/simple/"))).text).toMatch(/^HTTP\/1\.1 200 /);
    expect((await exchange(byPrefix.port, get("/rehearsal/b.txt"))).text).toMatch(/^HTTP\/1\.1 502 /);
    // A tunnel shows no URL: a URL prefix never fails a CONNECT.
    const tunnel = await exchange(byPrefix.port, (send, received) => {
      send(`CONNECT ${host} HTTP/1.1\r\nHost: ${host}\r\nProxy-Authorization: ${AUTH}\r\n\r\n`);
      const poll = setInterval(() => {
        if (received().includes("\r\n\r\n")) {
          clearInterval(poll);
          send(`GET /rehearsal/c.txt HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n`);
        }
      }, 5);
      setTimeout(() => clearInterval(poll), 5_000);
    });
    expect(tunnel.text).toMatch(/^HTTP\/1\.1 200 Connection established/);
    expect(byPrefix.output.join("")).toMatch(/FAILED 127\.0\.0\.1:\d+ GET http:\/\/origin\.test:\d+\/rehearsal\/a\.txt: injected 502/);

    const byHost = await egress({ failFraction: 1, failTargets: [host] });
    expect((await exchange(byHost.port, get("/anything"))).text).toMatch(/^HTTP\/1\.1 502 /);
    const other = await egress({ failFraction: 1, failTargets: ["registry.sim:5000"] });
    expect((await exchange(other.port, get("/anything"))).text).toMatch(/^HTTP\/1\.1 200 /);

    // Non-matching requests take no draw: the matching ones fail exactly as the same seed fails them alone.
    const outcomes = async (port: number, paths: string[]) => {
      const out: string[] = [];
      for (const p of paths) out.push((await exchange(port, get(p))).text.slice(9, 12));
      return out;
    };
    const only = await egress({ failFraction: 0.5, seed: 11, failTargets: [`http://${host}/rehearsal/`] });
    const mixed = await egress({ failFraction: 0.5, seed: 11, failTargets: [`http://${host}/rehearsal/`] });
    const alone = await outcomes(only.port, Array.from({ length: 8 }, (_, i) => `/rehearsal/${i}.txt`));
    expect(alone).toContain("502");
    expect(alone).toContain("200");
    const interleaved = await outcomes(mixed.port, Array.from({ length: 16 }, (_, i) => (i % 2 ? `/rehearsal/${(i - 1) / 2}.txt` : "/simple/")));
    expect(interleaved.filter((_, i) => i % 2 === 0).every((s) => s === "200")).toBe(true);
    expect(interleaved.filter((_, i) => i % 2 === 1)).toEqual(alone);
  });

  it("keeps its conditions when failTargets in the file is invalid (rather than failing everything)", async () => {
    const file = join(dir, "targets.json");
    writeFileSync(file, JSON.stringify({ failFraction: 0 }));
    const live = await startProxy(["--mode", "egress", "--credentials-file", join(dir, "proxy-url"), "--allow", `origin.test:${originPort}`, "--resolve", "origin.test=127.0.0.1", "--conditions", file]);
    expect((await exchange(live.port, get("/x"))).text).toMatch(/^HTTP\/1\.1 200/);
    writeFileSync(file, JSON.stringify({ failFraction: 1, failTargets: ["https://pypi.sim/"] }));
    expect((await exchange(live.port, get("/x"))).text).toMatch(/^HTTP\/1\.1 200/);
    expect(live.output.join("")).toMatch(/failTargets entry 'https:\/\/pypi\.sim\/': https:\/\/ goes through a CONNECT tunnel/);
  });

  it("latencyMs delays every connection", async () => {
    const fast = await egress();
    const slow = await egress({ latencyMs: 400 });
    const f = await exchange(fast.port, get("/x"));
    const s = await exchange(slow.port, get("/x"));
    console.log(`latency: ${f.ms} ms without, ${s.ms} ms with latencyMs 400`);
    expect(s.text).toMatch(/^HTTP\/1\.1 200/);
    expect(s.ms).toBeGreaterThanOrEqual(400);
    expect(s.ms - f.ms).toBeGreaterThanOrEqual(300);
  });

  it("bandwidthKBps caps a transfer", async () => {
    const free = await egress();
    const capped = await egress({ bandwidthKBps: 64 });
    const f = await exchange(free.port, get("/big"));
    const c = await exchange(capped.port, get("/big"));
    console.log(`96 KiB: ${f.ms} ms uncapped, ${c.ms} ms at 64 KB/s`);
    expect(c.text.endsWith(BIG.toString("latin1"))).toBe(true);
    expect(f.text.endsWith(BIG.toString("latin1"))).toBe(true);
    // 96 KiB at 64 KiB/s: about 1.5 s (the first chunk goes at once).
    expect(c.ms).toBeGreaterThanOrEqual(1_200);
    expect(f.ms).toBeLessThan(1_000);
  });
});

describe("sim-proxy forward", () => {
  it("relays HTTP and CONNECT to the upstream proxy, adding the credentials clients do not have", async () => {
    const up = await egress();
    const upstreamFile = join(dir, "upstream-url");
    writeFileSync(upstreamFile, `http://${USER}:${PASS}@127.0.0.1:${up.port}\n`, { mode: 0o600 });
    const fwd = await startProxy(["--mode", "forward", "--upstream-file", upstreamFile]);
    const r = await exchange(fwd.port, get("/via-forwarder", ""));
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text).toContain("origin saw GET /via-forwarder");
    const check = await exchange(fwd.port, get("/", "", "proxy-check.reprobench.test"));
    expect(check.text).toContain("reprobench sim proxy ok");
    const denied = await exchange(fwd.port, get("/", "", "example.com"));
    expect(denied.text).toMatch(/^HTTP\/1\.1 403 /);
    const t = await exchange(fwd.port, (send, received) => {
      send(`CONNECT origin.test:${originPort} HTTP/1.1\r\nHost: origin.test:${originPort}\r\n\r\n`);
      const poll = setInterval(() => {
        if (received().includes("\r\n\r\n")) {
          clearInterval(poll);
          send(`GET /tunnel-via-forwarder HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n`);
        }
      }, 5);
      setTimeout(() => clearInterval(poll), 5_000);
    });
    expect(t.text).toMatch(/^HTTP\/1\.1 200 Connection established/);
    expect(t.text).toContain("origin saw GET /tunnel-via-forwarder");
    expect(fwd.output.join("")).toMatch(/OK 127\.0\.0\.1:\d+ GET http:\/\/origin\.test:\d+\/via-forwarder: relayed to 127\.0\.0\.1:\d+/);
    expect(fwd.output.join("") + up.output.join("")).not.toContain(PASS);
  });
});

// sim/images/registry/registry-gate.py for real: python3 on 127.0.0.1 in front of a fake registry (a node
// server on 127.0.0.1 that records what reaches it). Nothing leaves loopback; every wait is bounded (the
// gate's "listening" line, request timeouts); the window's expiry is tested on the gate's own functions
// with explicit times, not by waiting.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { manifestGetCounts, parseRegistryRequests } from "../../../sim/registry";

const SCRIPT = resolve(__dirname, "..", "..", "..", "sim", "images", "registry", "registry-gate.py");
const USER = "reprobench-pull";
const PASS = "0123456789abcdef0123456789abcdef";
const BASIC = `Basic ${Buffer.from(`${USER}:${PASS}`).toString("base64")}`;
const WRONG = `Basic ${Buffer.from(`${USER}:nope`).toString("base64")}`;
const MANIFEST = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.docker.distribution.manifest.v2+json", layers: [] }));
const BIG = Buffer.alloc(17 * 1024 * 1024 + 123);
for (let i = 0; i < BIG.length; i += 4096) BIG[i] = i % 251;
const ANON_BODY = { errors: [{ code: "TOOMANYREQUESTS", message: "You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit" }] };

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bytes: number;
  sha256: string;
}

let dir: string;
let upstream: Server;
let upstreamPort: number;
const seen: Seen[] = [];
const running: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "registry-gate-test-"));
  writeFileSync(join(dir, "password"), `${PASS}\n`, { mode: 0o600 });
  upstream = createServer((req, res) => {
    const hash = createHash("sha256");
    let bytes = 0;
    req.on("data", (b: Buffer) => {
      bytes += b.length;
      hash.update(b);
    });
    req.on("end", () => {
      const record: Seen = { method: req.method!, url: req.url!, headers: req.headers, bytes, sha256: hash.digest("hex") };
      seen.push(record);
      const path = req.url!.split("?")[0];
      const echo = { "x-seen": JSON.stringify({ te: req.headers["transfer-encoding"] ?? null, cl: req.headers["content-length"] ?? null, bytes, sha256: record.sha256, host: req.headers.host, auth: req.headers.authorization ?? null }) };
      const v2 = { "Docker-Distribution-Api-Version": "registry/2.0" };
      if (path === "/v2/") {
        res.writeHead(200, { ...v2, "Content-Type": "application/json", "Content-Length": 2 });
        res.end("{}");
      } else if (/\/manifests\/[^/]+$/.test(path)) {
        res.writeHead(200, { ...v2, "Content-Type": "application/vnd.docker.distribution.manifest.v2+json", "Content-Length": MANIFEST.length, "Docker-Content-Digest": "sha256:abc" });
        res.end(req.method === "HEAD" ? undefined : MANIFEST);
      } else if (path.endsWith("/blobs/big")) {
        const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? "");
        if (range) {
          const part = BIG.subarray(Number(range[1]), Number(range[2]) + 1);
          res.writeHead(206, { ...v2, "Content-Length": part.length, "Content-Range": `bytes ${range[1]}-${range[2]}/${BIG.length}` });
          res.end(part);
        } else {
          res.writeHead(200, { ...v2, "Content-Type": "application/octet-stream", "Content-Length": BIG.length });
          res.end(BIG);
        }
      } else if (path.endsWith("/blobs/chunky")) {
        res.writeHead(200, { ...v2, "Content-Type": "text/plain" }); // no length: node sends it chunked
        for (let i = 0; i < 5; i++) res.write(`part ${i};`);
        res.end();
      } else if (req.method === "POST" && path.endsWith("/blobs/uploads/")) {
        res.writeHead(202, { ...v2, Location: `http://${req.headers.host}${path}u-1?_state=s0`, Range: "0-0", "Docker-Upload-UUID": "u-1", "Content-Length": 0 });
        res.end();
      } else if (req.method === "PATCH" || req.method === "PUT") {
        res.writeHead(req.method === "PUT" ? 201 : 202, { ...v2, ...echo, Location: `http://${req.headers.host}${path}?_state=s1`, Range: `0-${Math.max(0, bytes - 1)}`, "Content-Length": 0 });
        res.end();
      } else {
        res.writeHead(404, { ...v2, ...echo, "Content-Type": "application/json", "Content-Length": 2 });
        res.end("{}");
      }
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamPort = (upstream.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  for (const p of running.splice(0)) p.kill("SIGKILL");
});

let gateCount = 0;

/** Starts a gate on 127.0.0.1:0 with its own quota and log files (or the given ones); bounded wait for its port. */
async function startGate(quota: object | undefined, opts: { log?: string; quotaFile?: string; extra?: string[] } = {}): Promise<{ port: number; quotaFile: string; logFile: string; output: string[] }> {
  gateCount++;
  const quotaFile = opts.quotaFile ?? join(dir, `quota-${gateCount}.json`);
  const logFile = opts.log ?? join(dir, `requests-${gateCount}.jsonl`);
  if (quota) writeFileSync(quotaFile, JSON.stringify(quota));
  const args = [SCRIPT, "--listen", "127.0.0.1", "--port", "0", "--upstream", `127.0.0.1:${upstreamPort}`, "--password-file", join(dir, "password"), "--quota", quotaFile, "--log", logFile, ...(opts.extra ?? [])];
  const child = spawn("python3", args, { stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  const output: string[] = [];
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`gate did not start in 10 s: ${output.join("")}`)), 10_000);
    const onData = (b: Buffer) => {
      output.push(b.toString());
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(output.join(""));
      if (m) {
        clearTimeout(timer);
        resolvePort(Number(m[1]));
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`gate exited ${code}: ${output.join("")}`)));
  });
  return { port, quotaFile, logFile, output };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP request to the gate (node:http, so Host can be set); `body` as an array is sent chunked. */
function call(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | Buffer[], agent?: Agent): Promise<Reply> {
  return new Promise((resolveReply, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { Host: "registry.sim:5000", ...headers, ...(Buffer.isBuffer(body) ? { "Content-Length": String(body.length) } : {}) }, agent: agent ?? false, timeout: 20_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b: Buffer) => parts.push(b));
      res.on("end", () => resolveReply({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    req.on("error", reject);
    if (Array.isArray(body)) for (const b of body) req.write(b);
    else if (body) req.write(body);
    req.end();
  });
}

const logOf = (file: string) => parseRegistryRequests(readFileSync(file, "utf8")).records;

describe("registry-gate: Docker Hub's headers and challenge", () => {
  it("answers GET /v2/ without credentials 401 with a Bearer challenge at its own /token, and every /v2/ response carries the rate-limit headers", async () => {
    const gate = await startGate({ anonymousPulls: 7, authenticatedPulls: 50, windowSeconds: 600 });
    const ping = await call(gate.port, "GET", "/v2/");
    expect(ping.status).toBe(401);
    expect(ping.headers["www-authenticate"]).toBe('Bearer realm="http://registry.sim:5000/token",service="registry.sim"');
    expect(ping.headers["docker-distribution-api-version"]).toBe("registry/2.0");
    expect(JSON.parse(ping.body.toString())).toEqual({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] });
    expect(ping.headers).toMatchObject({ "ratelimit-limit": "7;w=600", "ratelimit-remaining": "7;w=600", "docker-ratelimit-source": "127.0.0.1" });
    // The realm follows the address the client used (the control machine pushes to 127.0.0.1:<port>).
    expect((await call(gate.port, "GET", "/v2/", { Host: `127.0.0.1:${gate.port}` })).headers["www-authenticate"]).toContain(`realm="http://127.0.0.1:${gate.port}/token"`);
    // HEAD /v2/ and everything else without credentials are served anonymously.
    const head = await call(gate.port, "HEAD", "/v2/");
    expect(head.status).toBe(200);
    expect(head.headers).toMatchObject({ "ratelimit-limit": "7;w=600", "ratelimit-remaining": "7;w=600" });
    const withBasic = await call(gate.port, "GET", "/v2/", { Authorization: BASIC });
    expect(withBasic.status).toBe(200);
    expect(withBasic.headers).toMatchObject({ "ratelimit-limit": "50;w=600", "docker-ratelimit-source": USER });
    expect(seen.at(-1)!.headers.authorization).toBeUndefined(); // credentials stop at the gate
  });

  it("can challenge with Basic instead (--challenge basic)", async () => {
    const gate = await startGate(undefined, { extra: ["--challenge", "basic"] });
    expect((await call(gate.port, "GET", "/v2/")).headers["www-authenticate"]).toBe('Basic realm="registry.sim"');
  });

  it("gives anonymous and account tokens at /token; refuses wrong credentials and forged tokens with 401 on every request", async () => {
    const gate = await startGate({ anonymousPulls: 5, authenticatedPulls: 9, windowSeconds: 60 });
    const anon = JSON.parse((await call(gate.port, "GET", "/token?service=registry.sim&scope=repository:a/b:pull")).body.toString()) as { token: string; access_token: string; expires_in: number };
    expect(anon.token).toBe(anon.access_token);
    expect(anon.expires_in).toBe(300);
    const mine = await call(gate.port, "GET", "/token?service=registry.sim&scope=repository:a/b:pull&account=reprobench-pull", { Authorization: BASIC });
    expect(mine.status).toBe(200);
    const userToken = (JSON.parse(mine.body.toString()) as { token: string }).token;
    expect((await call(gate.port, "GET", "/v2/a/b/manifests/latest", { Authorization: `Bearer ${anon.token}` })).headers).toMatchObject({ "ratelimit-limit": "5;w=60", "docker-ratelimit-source": "127.0.0.1" });
    expect((await call(gate.port, "GET", "/v2/a/b/manifests/latest", { Authorization: `Bearer ${userToken}` })).headers).toMatchObject({ "ratelimit-limit": "9;w=60", "ratelimit-remaining": "8;w=60", "docker-ratelimit-source": USER });
    for (const [method, path] of [["GET", "/v2/"], ["HEAD", "/v2/a/b/manifests/latest"], ["GET", "/v2/a/b/blobs/big"], ["GET", "/token?service=registry.sim"]]) {
      const r = await call(gate.port, method, path, { Authorization: WRONG });
      expect(r.status, `${method} ${path}`).toBe(401);
      if (method === "GET") expect(JSON.parse(r.body.toString()).errors[0]).toEqual({ code: "UNAUTHORIZED", message: "incorrect username or password" });
    }
    const forged = `${userToken.split(".")[0]}.${"A".repeat(43)}`;
    expect((await call(gate.port, "GET", "/v2/a/b/manifests/latest", { Authorization: `Bearer ${forged}` })).status).toBe(401);
  });
});

describe("registry-gate: counting pulls", () => {
  it("counts manifest GETs per client IP anonymously, 429 with Docker Hub's body once the window is full; HEAD and blobs stay free", async () => {
    const gate = await startGate({ anonymousPulls: 3, authenticatedPulls: 10, windowSeconds: 60 });
    const upstreamBefore = seen.length;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(gate.port, "GET", "/v2/reprobench/task-base/manifests/latest");
      expect(r.status).toBe(200);
      expect(r.body.equals(MANIFEST)).toBe(true);
      remaining.push(String(r.headers["ratelimit-remaining"]));
    }
    expect(remaining).toEqual(["2;w=60", "1;w=60", "0;w=60"]);
    const over = await call(gate.port, "GET", "/v2/reprobench/task-base/manifests/latest");
    expect(over.status).toBe(429);
    expect(over.headers["retry-after"]).toBeUndefined();
    expect(over.headers).toMatchObject({ "ratelimit-limit": "3;w=60", "ratelimit-remaining": "0;w=60", "docker-ratelimit-source": "127.0.0.1", "content-type": "application/json; charset=utf-8" });
    expect(JSON.parse(over.body.toString())).toEqual(ANON_BODY);
    // The refused GET never reached the registry; HEAD and blobs still do.
    expect(seen.length - upstreamBefore).toBe(3);
    const head = await call(gate.port, "HEAD", "/v2/reprobench/task-base/manifests/latest");
    expect(head.status).toBe(200);
    expect(head.headers["content-length"]).toBe(String(MANIFEST.length));
    expect(head.headers["docker-content-digest"]).toBe("sha256:abc");
    expect((await call(gate.port, "GET", "/v2/reprobench/task-base/blobs/chunky")).body.toString()).toBe("part 0;part 1;part 2;part 3;part 4;");
    // With credentials: the account's own, larger window; its 429 names the account.
    for (let i = 0; i < 10; i++) expect((await call(gate.port, "GET", "/v2/reprobench/task-base/manifests/latest", { Authorization: BASIC })).status).toBe(200);
    const userOver = await call(gate.port, "GET", "/v2/reprobench/task-base/manifests/latest", { Authorization: BASIC });
    expect(userOver.status).toBe(429);
    expect(JSON.parse(userOver.body.toString()).errors[0].message).toMatch(/^You have reached your pull rate limit as 'reprobench-pull'\./);

    const log = logOf(gate.logFile);
    const manifestGets = log.filter((r) => r.method === "GET" && r.path.includes("/manifests/"));
    expect(manifestGets.map((r) => [r.user, r.counted, r.status])).toEqual([
      ...Array(3).fill([null, true, 200]),
      [null, false, 429],
      ...Array(10).fill([USER, true, 200]),
      [USER, false, 429],
    ]);
    expect(log[0]).toMatchObject({ client: "127.0.0.1", method: "GET", path: "/v2/reprobench/task-base/manifests/latest", repo: "reprobench/task-base", ref: "latest" });
    expect(manifestGetCounts(log)).toEqual([
      { repo: "reprobench/task-base", ref: "latest", client: "127.0.0.1", user: null, gets: 3, heads: 1, tooMany: 1 },
      { repo: "reprobench/task-base", ref: "latest", client: "127.0.0.1", user: USER, gets: 10, heads: 0, tooMany: 1 },
    ]);
  });

  it("applies a changed quota file at the next request, forgets counts before countsSince, and a restarted gate remembers the window from its log", async () => {
    const gate = await startGate({ anonymousPulls: 2, authenticatedPulls: 10, windowSeconds: 3600 });
    const get = (port: number) => call(port, "GET", "/v2/x/manifests/1");
    expect((await get(gate.port)).status).toBe(200);
    expect((await get(gate.port)).status).toBe(200);
    expect((await get(gate.port)).status).toBe(429);
    // Atomic rewrite, as `sim registry` does it: a new file (inode) in place.
    const rewrite = (q: object) => {
      writeFileSync(`${gate.quotaFile}.tmp`, JSON.stringify(q));
      renameSync(`${gate.quotaFile}.tmp`, gate.quotaFile);
    };
    rewrite({ anonymousPulls: 4, authenticatedPulls: 10, windowSeconds: 3600 });
    const more = await get(gate.port);
    expect(more.status).toBe(200);
    expect(more.headers["ratelimit-remaining"]).toBe("1;w=3600");
    // A restarted gate (same log) reads the 3 counted pulls back.
    const again = await startGate(undefined, { log: gate.logFile, quotaFile: gate.quotaFile });
    expect(again.output.join("")).toContain("3 counted pull(s) still in the window");
    expect((await call(again.port, "HEAD", "/v2/x/manifests/1")).headers["ratelimit-remaining"]).toBe("1;w=3600");
    rewrite({ anonymousPulls: 4, authenticatedPulls: 10, windowSeconds: 3600, countsSince: new Date(Date.now() + 1).toISOString() });
    expect((await call(again.port, "HEAD", "/v2/x/manifests/1")).headers["ratelimit-remaining"]).toBe("4;w=3600");
    // A broken file keeps the last good limits.
    writeFileSync(gate.quotaFile, "{ not json");
    expect((await call(again.port, "HEAD", "/v2/x/manifests/1")).headers["ratelimit-limit"]).toBe("4;w=3600");
    expect(again.output.join("")).toMatch(/quota file .* unusable/);
  });
});

describe("registry-gate: passes the registry protocol through", () => {
  it("streams a 17 MiB blob, a Range request, and re-chunks a response without length", async () => {
    const gate = await startGate(undefined);
    const blob = await call(gate.port, "GET", "/v2/r/blobs/big");
    expect(blob.status).toBe(200);
    expect(blob.headers["content-length"]).toBe(String(BIG.length));
    expect(createHash("sha256").update(blob.body).digest("hex")).toBe(createHash("sha256").update(BIG).digest("hex"));
    const part = await call(gate.port, "GET", "/v2/r/blobs/big", { Range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.headers["content-range"]).toBe(`bytes 100-199/${BIG.length}`);
    expect(part.body.equals(BIG.subarray(100, 200))).toBe(true);
    const chunky = await call(gate.port, "GET", "/v2/r/blobs/chunky");
    expect(chunky.headers["transfer-encoding"]).toBe("chunked");
    expect(chunky.body.toString()).toBe("part 0;part 1;part 2;part 3;part 4;");
  });

  it("passes a chunked PATCH and a Content-Length PUT through byte for byte, with the client's Host and the registry's Location and Range", async () => {
    const gate = await startGate(undefined);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const start = await call(gate.port, "POST", "/v2/r/blobs/uploads/", { "Content-Length": "0" }, undefined, agent);
      expect(start.status).toBe(202);
      expect(start.headers.location).toBe("http://registry.sim:5000/v2/r/blobs/uploads/u-1?_state=s0");
      expect(start.headers["docker-upload-uuid"]).toBe("u-1");
      const pieces = [BIG.subarray(0, 1_000_000), BIG.subarray(1_000_000, 9_000_000), BIG.subarray(9_000_000)];
      const patch = await call(gate.port, "PATCH", "/v2/r/blobs/uploads/u-1?_state=s0", { "Content-Type": "application/octet-stream" }, pieces, agent);
      expect(patch.status).toBe(202);
      expect(patch.headers.range).toBe(`0-${BIG.length - 1}`);
      expect(patch.headers.location).toBe("http://registry.sim:5000/v2/r/blobs/uploads/u-1?_state=s1");
      const patchSeen = JSON.parse(String(patch.headers["x-seen"])) as { te: string; bytes: number; sha256: string; host: string };
      expect(patchSeen).toMatchObject({ te: "chunked", bytes: BIG.length, sha256: createHash("sha256").update(BIG).digest("hex"), host: "registry.sim:5000" });
      const body = Buffer.from("the last piece");
      const put = await call(gate.port, "PUT", "/v2/r/blobs/uploads/u-1?_state=s1&digest=sha256%3Aabc", { "Content-Type": "application/octet-stream" }, body, agent);
      expect(put.status).toBe(201);
      expect(JSON.parse(String(put.headers["x-seen"]))).toMatchObject({ te: null, cl: String(body.length), bytes: body.length });
      expect(seen.at(-1)!.url).toBe("/v2/r/blobs/uploads/u-1?_state=s1&digest=sha256%3Aabc");
    } finally {
      agent.destroy();
    }
  });

  it("answers 502 naming the registry behind it when that is down", async () => {
    const gate = await startGate(undefined, { extra: ["--upstream", "127.0.0.1:1"] });
    const r = await call(gate.port, "GET", "/v2/r/blobs/big");
    expect(r.status).toBe(502);
    expect(r.body.toString()).toContain("127.0.0.1:1");
  });
});

describe("registry-gate: its functions", () => {
  /** Runs python code with the gate imported as `gate`; returns what it prints as JSON. */
  const py = (code: string): unknown => {
    const prelude = `import importlib.util, json\nspec = importlib.util.spec_from_file_location("gate", ${JSON.stringify(SCRIPT)})\ngate = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(gate)\n`;
    // No __pycache__ next to the script (the checkout stays clean).
    const r = spawnSync("python3", ["-c", prelude + code], { encoding: "utf8", timeout: 20_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout);
  };

  it("slides the window: a pull leaves it windowSeconds after it was counted; countsSince forgets earlier ones", () => {
    expect(
      py(`w = gate.Windows()
out = []
for t in (0, 1, 2, 9.9, 10.0, 10.5, 11.0):
    out.append([t, *w.take("ip:a", 2, 10, 0, t)])
out.append(["other", *w.take("user:x", 2, 10, 0, 11.0)])
out.append(["since", w.remaining("ip:a", 2, 10, 11.0, 11.0)])
print(json.dumps(out))`),
    ).toEqual([
      [0, true, 1],
      [1, true, 0],
      [2, false, 0],
      [9.9, false, 0],
      [10.0, true, 0], // the pull at 0 left at 10
      [10.5, false, 0],
      [11.0, true, 0], // the one at 1 left at 11
      ["other", true, 1],
      ["since", 1], // only the pull at 11 is at or after countsSince
    ]);
  });

  it("validates quota files naming the key, and expires tokens", () => {
    expect(
      py(`out = []
for q in ({"anonymousPulls": -1}, {"windowSeconds": 0}, {"anonymousPulls": True}, {"limit": 3}, {"countsSince": "yesterday"}):
    try:
        gate.normalize_quota(q, None, "q.json")
        out.append("accepted")
    except ValueError as e:
        out.append(str(e))
k = gate.token_key("pw")
t = gate.make_token(k, "reprobench-pull", 1000, 300)
out.append([gate.check_token(k, t, 1299), gate.check_token(k, t, 1301), gate.check_token(gate.token_key("other"), t, 1000), gate.check_token(k, gate.make_token(k, None, 1000), 1000)])
print(json.dumps(out))`),
    ).toEqual([
      "q.json: anonymousPulls: got -1; expected an integer from 0 to 10000000",
      "q.json: windowSeconds: got 0; expected an integer from 1 to 10000000",
      "q.json: anonymousPulls: got true; expected an integer from 0 to 10000000",
      "q.json: unknown key 'limit'; expected anonymousPulls, authenticatedPulls, windowSeconds, countsSince",
      "q.json: countsSince: got 'yesterday'; expected an ISO time",
      ["reprobench-pull", null, null, ""],
    ]);
  });
});

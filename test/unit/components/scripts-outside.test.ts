// The host scripts that reach the outside (harbor-install.sh's online path, harbor-dataset.sh's clone,
// tool-bundle.sh's wheel download) run here for real, with retry.sh prepended as CheckedCommand runs them,
// against loopback servers: a PEP 503 index, a dumb-HTTP git repository (a real bare repo served as
// files), and a proxy that refuses (407 for HTTP, 403 for CONNECT). Nothing waits: RETRY_BACKOFF_SCALE=0.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { scriptWithEnv } from "../../../components/host-script";
import { isGitUrl } from "../../../components/run-config";

const REPO = resolve(__dirname, "../../..");
const PIN = "0.21.0";
const WHEEL = `harbor-${PIN}-py3-none-any.whl`;
const WHEEL_BYTES = "the pinned wheel\n";
const WHEEL_SHA = createHash("sha256").update(WHEEL_BYTES).digest("hex");
const SECRET = "s3cretPassw0rd";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "reprobench-outside-"));
  dirs.push(d);
  return d;
}

/** A loopback server whose answers the test sets per path; it records every request line. */
interface Outside {
  url: string;
  port: number;
  requests: string[];
  routes: Map<string, (res: ServerResponse) => void>;
  server: Server;
}
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, setup?: (s: Server) => void): Promise<Server> {
  const server = createServer(handler);
  setup?.(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return server;
}
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((ok) => s.close(ok));
});

let outside: Outside;
let proxy: { port: number; requests: string[] };
beforeAll(async () => {
  const routes = new Map<string, (res: ServerResponse) => void>();
  const requests: string[] = [];
  const server = await listen((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const route = routes.get((req.url ?? "").split("?")[0]);
    if (route) return route(res);
    res.writeHead(404).end("not found\n");
  });
  servers.push(server);
  const port = (server.address() as AddressInfo).port;
  outside = { url: `http://127.0.0.1:${port}`, port, requests, routes, server };
  // The proxy refuses everything: 407 to absolute-URI requests, 403 to CONNECT (as a proxy denying a host).
  const proxyRequests: string[] = [];
  const p = await listen(
    (req, res) => {
      proxyRequests.push(`${req.method} ${req.url}`);
      res.writeHead(407, { "Proxy-Authenticate": 'Basic realm="sim"' }).end("proxy authentication required\n");
    },
    (s) =>
      s.on("connect", (req: IncomingMessage, socket) => {
        proxyRequests.push(`CONNECT ${req.url}`);
        socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
      }),
  );
  servers.push(p);
  proxy = { port: (p.address() as AddressInfo).port, requests: proxyRequests };
});
afterEach(() => {
  outside.routes.clear();
  outside.requests.length = 0;
  proxy.requests.length = 0;
});

/** Runs a host script as CheckedCommand does: retry.sh and the script, inputs exported first, on `bash -s`. */
function runScript(name: string, env: Record<string, string>, processEnv: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-s"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", RETRY_BACKOFF_SCALE: "0", ...processEnv },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", fail);
    child.on("close", (status) => done({ status, stdout, stderr }));
    child.stdin.end(`set -euo pipefail\n${scriptWithEnv(["retry", "registry", "owned-dir", name], env)}\n`);
  });
}

function installEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HARBOR_VERSION: PIN,
    WHEEL_SHA256: WHEEL_SHA,
    VENV: join(dir, "venv"),
    PYTHON_VERSION: "3.13",
    FIND_LINKS: "",
    INDEX_URL: `${outside.url}/simple/`,
    UV_VERSION: "0.13.9",
    EXTRAS: "",
    WORK_DIR: join(dir, "work"),
    JOBS_DIR: join(dir, "jobs"),
    UPLOADS_DIR: join(dir, "uploads"),
    ...extra,
  };
}

function indexPage(links: string[]): (res: ServerResponse) => void {
  return (res) => res.writeHead(200, { "Content-Type": "text/html" }).end(`<!DOCTYPE html>\n<html><body>\n${links.join("<br/>\n")}\n</body></html>\n`);
}

describe("harbor-install.sh online (PEP 503 index)", () => {
  it("is shellcheck-clean, like retry.sh and the other scripts that go outside", () => {
    const files = ["retry", "owned-dir", "harbor-install", "harbor-dataset", "tool-bundle"].map((n) => join(REPO, "components/scripts", `${n}.sh`));
    const r = spawnSync("shellcheck", ["--severity=style", ...files], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("names the versions the index has when the pinned one is missing (and never shows the index's credentials)", async () => {
    outside.routes.set(
      "/simple/harbor/",
      indexPage([
        `<a href="../../files/harbor-0.20.1-py3-none-any.whl#sha256=${"a".repeat(64)}">harbor-0.20.1-py3-none-any.whl</a>`,
        `<a href="../../files/harbor-0.9.0.tar.gz">harbor-0.9.0.tar.gz</a>`,
        `<a href="/files/harbor-0.22.0-py3-none-any.whl" data-requires-python="&gt;=3.12">harbor-0.22.0-py3-none-any.whl</a>`,
        `<a href="../../files/harbor_cli-0.21.0-py3-none-any.whl">harbor_cli-0.21.0-py3-none-any.whl</a>`,
      ]),
    );
    const dir = tempDir();
    const r = await runScript("harbor-install", installEnv(dir, { INDEX_URL: `http://mirror:${SECRET}@127.0.0.1:${outside.port}/simple` }));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`harbor-install: index http://127.0.0.1:${outside.port}/simple/ has no harbor ${PIN} (versions: 0.9.0, 0.20.1, 0.22.0)`);
    expect(r.stderr).not.toContain(SECRET);
    expect(outside.requests).toEqual(["GET /simple/harbor/"]);
  });

  it("refuses a wheel whose sha256 on the index differs from the pin before downloading it", async () => {
    outside.routes.set("/simple/harbor/", indexPage([`<a href="../../files/${WHEEL}#sha256=${"B".repeat(64)}">${WHEEL}</a>`]));
    const r = await runScript("harbor-install", installEnv(tempDir()));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`lists ${WHEEL} with sha256 ${"b".repeat(64)}, expected ${WHEEL_SHA} (harbor.wheelSha256); not downloading it`);
    expect(outside.requests).toEqual(["GET /simple/harbor/"]);
  });

  it("retries a flaky index (saying so), resolves a relative link against the page, and checks the downloaded file again", async () => {
    let pageGets = 0;
    const page = indexPage([`<a href="../../files/${WHEEL}#sha256=${WHEEL_SHA}">${WHEEL}</a>`]);
    outside.routes.set("/simple/harbor/", (res) => (++pageGets <= 2 ? res.writeHead(502).end("bad gateway\n") : page(res)));
    outside.routes.set(`/files/${WHEEL}`, (res) => res.writeHead(200).end("not the wheel the index describes\n"));
    const dir = tempDir();
    const r = await runScript("harbor-install", installEnv(dir));
    expect(r.status).toBe(1);
    expect(pageGets).toBe(3);
    const progress = r.stderr.split("\n").filter((l) => l.startsWith("harbor-install: progress: retrying"));
    expect(progress).toEqual([
      `harbor-install: progress: retrying GET ${outside.url}/simple/harbor/ (attempt 2/5 in 0s): curl: (22) The requested URL returned error: 502`,
      `harbor-install: progress: retrying GET ${outside.url}/simple/harbor/ (attempt 3/5 in 0s): curl: (22) The requested URL returned error: 502`,
    ]);
    expect(r.stderr).toContain(`progress: downloading ${WHEEL} from ${outside.url}/files/${WHEEL}`);
    expect(r.stderr).toMatch(new RegExp(`harbor wheel sha256 mismatch for .*${WHEEL}.part: expected ${WHEEL_SHA} \\(harbor.wheelSha256\\)`));
    expect(existsSync(join(dir, "work", WHEEL))).toBe(false);
  });

  it("says the index has no harbor project when the page is missing (not retried)", async () => {
    const r = await runScript("harbor-install", installEnv(tempDir()));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`index ${outside.url}/simple/ has no harbor project (${outside.url}/simple/harbor/ answered HTTP 404)`);
    expect(outside.requests).toEqual(["GET /simple/harbor/"]);
  });

  it("a proxy asking for credentials: names the proxy's host:port and the URL, never the credentials, and does not retry", async () => {
    const url = `http://reprobench:${SECRET}@127.0.0.1:${proxy.port}`;
    const r = await runScript("harbor-install", installEnv(tempDir(), { INDEX_URL: "http://pypi.sim/simple/" }), { http_proxy: url, HTTP_PROXY: url, no_proxy: "localhost" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `harbor-install: cannot read the index page for harbor: proxy 127.0.0.1:${proxy.port} refused http://pypi.sim/simple/harbor/: 407 Proxy Authentication Required (check the credentials in the proxy URL)`,
    );
    expect(r.stderr).not.toContain(SECRET);
    expect(proxy.requests).toEqual(["GET http://pypi.sim/simple/harbor/"]);
  });

  it("a proxy refusing the tunnel to an https index: names the proxy and the URL", async () => {
    const url = `http://reprobench:${SECRET}@127.0.0.1:${proxy.port}/`;
    const r = await runScript("harbor-install", installEnv(tempDir(), { INDEX_URL: "https://pypi.sim/simple/" }), { https_proxy: url, HTTPS_PROXY: url });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`proxy 127.0.0.1:${proxy.port} refused the tunnel (CONNECT) for https://pypi.sim/simple/harbor/: HTTP 403 (not retried)`);
    expect(r.stderr).not.toContain(SECRET);
    expect(proxy.requests).toEqual(["CONNECT pypi.sim:443"]);
  });

  it("goes direct to a host in NO_PROXY", async () => {
    const url = `http://u:${SECRET}@127.0.0.1:${proxy.port}`;
    const r = await runScript("harbor-install", installEnv(tempDir()), { http_proxy: url, no_proxy: "localhost,127.0.0.1" });
    expect(r.stderr).toContain("has no harbor project");
    expect(proxy.requests).toEqual([]);
  });
});

/** A bare repository with three commits (1, 2 or 3 task directories), its commits oldest first. */
function bareRepo(root: string): { bare: string; commits: string[] } {
  const work = join(root, "work");
  const git = (...args: string[]) => spawnSync("git", args, { cwd: work, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" } });
  mkdirSync(work, { recursive: true });
  git("init", "-q", "-b", "main");
  const commits: string[] = [];
  for (const n of [1, 2, 3]) {
    mkdirSync(join(work, "tasks", `t${n}`), { recursive: true });
    writeFileSync(join(work, "tasks", `t${n}`, "task.toml"), `name = "t${n}"\n`);
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", `commit ${n}`);
    commits.push(git("rev-parse", "HEAD").stdout.trim());
  }
  const bare = join(root, "repo.git");
  spawnSync("git", ["clone", "-q", "--bare", work, bare]);
  spawnSync("git", ["-C", bare, "update-server-info"]); // what a dumb-HTTP server needs
  return { bare, commits };
}

/** Serves `bare` as plain files under /repo.git/ (dumb HTTP: no git on the server). */
function serveDumb(bare: string): void {
  for (const f of ["HEAD", "info/refs", "objects/info/packs"]) {
    outside.routes.set(`/repo.git/${f}`, (res) => res.writeHead(200).end(readFileSync(join(bare, f))));
  }
  const original = outside.server.listeners("request")[0] as (req: IncomingMessage, res: ServerResponse) => void;
  outside.server.removeAllListeners("request");
  outside.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/repo\.git\/(objects\/.+)$/.exec(req.url ?? "");
    const file = m ? join(bare, m[1]) : "";
    if (m && !m[1].includes("..") && existsSync(file) && statSync(file).isFile()) {
      outside.requests.push(`${req.method} ${req.url}`);
      res.writeHead(200).end(readFileSync(file));
      return;
    }
    original(req, res);
  });
  restoreHandler = () => {
    outside.server.removeAllListeners("request");
    outside.server.on("request", original);
  };
}
let restoreHandler: (() => void) | undefined;
afterEach(() => {
  restoreHandler?.();
  restoreHandler = undefined;
});

describe("harbor-dataset.sh (git over HTTP)", () => {
  it("isGitUrl accepts the sim's dumb-HTTP dataset URL", () => {
    expect(isGitUrl("http://git.sim/terminal-bench-sim.git")).toBe(true);
    expect(isGitUrl("https://github.com/harbor-framework/terminal-bench-2-1.git")).toBe(true);
    expect(isGitUrl("sim/dataset")).toBe(false);
  });

  function datasetEnv(dir: string, commit: string, count: number, repo = `${outside.url}/repo.git`): Record<string, string> {
    return { DATASET_REPO: repo, DATASET_COMMIT: commit, UPLOAD_DIR: "", DATASET_DIR: join(dir, "dataset"), TASKS_DIR: join(dir, "dataset/tasks"), EXPECTED_COUNT: String(count) };
  }

  it("clones a dumb-HTTP repository and checks out the pinned commit, not HEAD", async () => {
    const dir = tempDir();
    const { bare, commits } = bareRepo(dir);
    serveDumb(bare);
    const r = await runScript("harbor-dataset", datasetEnv(dir, commits[1], 2));
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as { identity: string; count: number };
    expect(report).toMatchObject({ identity: commits[1], count: 2 });
    expect(outside.requests.some((l) => l.startsWith("GET /repo.git/objects/"))).toBe(true);
  });

  it("names the repository's HEAD when the pinned commit is not in it", async () => {
    const dir = tempDir();
    const { bare, commits } = bareRepo(dir);
    serveDumb(bare);
    const missing = "0123456789abcdef0123456789abcdef01234567";
    const r = await runScript("harbor-dataset", datasetEnv(dir, missing, 2));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`harbor-dataset: dataset commit ${missing} is not in ${outside.url}/repo.git (its HEAD is ${commits[2]}; harbor.datasetCommit)`);
  });

  it("a local bare repository works the same (and the message is the same)", async () => {
    const dir = tempDir();
    const { bare, commits } = bareRepo(dir);
    const missing = "f".repeat(40);
    const r = await runScript("harbor-dataset", datasetEnv(dir, missing, 2, `file://${bare}`));
    expect(r.stderr).toContain(`dataset commit ${missing} is not in file://${bare} (its HEAD is ${commits[2]}`);
  });

  it("a proxy refusing: names the proxy's host:port and the repository, never the credentials, not retried", async () => {
    const dir = tempDir();
    const url = `http://reprobench:${SECRET}@127.0.0.1:${proxy.port}`;
    const r = await runScript("harbor-dataset", datasetEnv(dir, "a".repeat(40), 3, "http://git.sim/terminal-bench-sim.git"), { http_proxy: url, HTTP_PROXY: url });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`harbor-dataset: git clone http://git.sim/terminal-bench-sim.git failed through proxy 127.0.0.1:${proxy.port}: .*407`));
    expect(r.stderr).not.toContain("progress: retrying");
    expect(r.stderr).not.toContain(SECRET);
    expect(proxy.requests.length).toBeGreaterThanOrEqual(1);
  });
});

describe("tool-bundle.sh (asciinema wheel download)", () => {
  it("names the URL (without credentials) and the proxy when the wheel cannot be downloaded", async () => {
    const dir = tempDir();
    // Stand-ins for the host's tmux and docker (the script stops at the download, before using them).
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "docker"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, "docker"), 0o755);
    symlinkSync("/bin/true", join(bin, "tmux"));
    const env = {
      TOOLS_DIR: join(dir, "tools"),
      MOUNT_PATH: "/opt/harbor-tools",
      WHEEL_URL: `http://user:${SECRET}@127.0.0.1:${outside.port}/files/asciinema-2.4.0-py3-none-any.whl`,
      WHEEL_SHA256: "0".repeat(64),
      CANARY_IMAGE: "registry.sim:5000/reprobench/task-base:latest",
    };
    outside.routes.set("/files/asciinema-2.4.0-py3-none-any.whl", (res) => res.writeHead(503).end("busy\n"));
    const r = await runScript("tool-bundle", env, { PATH: `${bin}:${process.env.PATH}` });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`tool-bundle: progress: retrying GET ${outside.url}/files/asciinema-2.4.0-py3-none-any.whl (attempt 5/5 in 0s)`);
    expect(r.stderr).toContain(
      `tool-bundle: cannot download the asciinema wheel (toolBundle.asciinemaWheelUrl): ${outside.url}/files/asciinema-2.4.0-py3-none-any.whl answered HTTP 503 after 5 attempts`,
    );
    expect(r.stderr).not.toContain(SECRET);
    expect(outside.requests).toHaveLength(5);
    expect(existsSync(join(dir, "tools.building"))).toBe(false); // failed before building anything
  });
});

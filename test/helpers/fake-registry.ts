// A Docker-Hub-like registry in the test process, reached as an HTTP forward proxy: the host scripts talk to
// registries as http://<registry>/v2/… through $http_proxy, so pointing http_proxy at this server makes every
// plain-HTTP registry name (registry.sim:5000, r.io, mirror.sim:5000 …) land here. Nothing is forwarded: every
// answer is made up here, so no test traffic leaves loopback (an https:// URL arrives as CONNECT and is refused
// with 403, and recorded).
//
// What it does, as Docker Hub does:
// - HEAD/GET /v2/<repo>/manifests/<ref>: 200 with Docker-Content-Digest sha256(<registry>/<repo>:<tag>) for a
//   tag (the digest itself for a digest reference); a GET is a pull and counts against the client's quota,
//   a HEAD is free;
// - quota per registry host and client (anonymous, or the account that authenticated), in a sliding window,
//   announced on every /v2/ answer as `ratelimit-limit: N;w=S` and `ratelimit-remaining: N;w=S`; over the
//   limit a GET answers 429 TOOMANYREQUESTS (not counted);
// - Basic credentials (users), or, for the hosts listed in `bearer`, a Bearer challenge whose realm is
//   http://auth.fake/token (anonymous tokens without credentials, the account's with them).
// Time is a fake clock that only moves when told (advance(), or `POST http://fake.control/advance?seconds=N`
// through the proxy, which the stand-in `sleep` does); `GET http://fake.control/now` is its epoch seconds
// (the stand-in `date +%s`). Every request but the control ones is recorded.
//
// Also here: the stand-in docker / skopeo / sleep / date / curl the task-images tests put on PATH, and an
// async runner (the scripts must run beside this server's event loop: spawnSync would block it).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterEach } from "vitest";

export const CONTROL_HOST = "fake.control";
export const AUTH_HOST = "auth.fake";
/** 2026-01-01T00:00:00Z: the fake clock's default start (so a test can name the HH:MM:SS a script prints). */
export const DEFAULT_EPOCH = 1_767_225_600;

export interface Quota {
  /** Pulls per window for an anonymous client. */
  anonymous: number;
  /** Pulls per window for an authenticated one. */
  authenticated: number;
  windowSeconds: number;
}

export interface FakeRegistryOptions {
  /** The quota of every registry host; null: no limit and no ratelimit-* headers. Default 100/200 per 6 h. */
  quota?: Quota | null;
  /** Per registry host ("registry.sim:5000"), overriding `quota`. */
  hostQuota?: Record<string, Quota | null>;
  /** Accounts: user → password (Basic, and the token endpoint). */
  users?: Record<string, string>;
  /** "<host>/<repo>:<ref>" → how many times its HEAD answers 503 first (Infinity: always). */
  headFailures?: Record<string, number>;
  /** "<host>/<repo>:<ref>" → which of its HEADs (1 = the first) answer 503. */
  headFailOn?: Record<string, number[]>;
  /** "<host>/<repo>:<ref>" → the status its failing HEADs (headFailures, headFailOn) answer instead of 503 (429: TOOMANYREQUESTS). */
  headFailStatus?: Record<string, number>;
  /** "<host>/<repo>:<ref>" that answer 404 MANIFEST_UNKNOWN. */
  missing?: string[];
  /** Registry hosts that want a Bearer token (401 with a challenge naming http://auth.fake/token). */
  bearer?: string[];
  /** A HEAD announces this many more remaining pulls than are really left (someone else pulls meanwhile). */
  overstate?: number;
  /** The fake clock's start, epoch seconds. */
  epoch?: number;
}

export interface RegistryRequest {
  method: string;
  /** The registry host[:port] the request named (auth.fake for the token endpoint). */
  host: string;
  path: string;
  /** The query string ("?service=…"), or "". */
  query: string;
  /** For a manifest request. */
  repo?: string;
  ref?: string;
  /** The account that authenticated; undefined: anonymous. */
  user?: string;
  /** A pull the quota counted. */
  counted: boolean;
  status: number;
  /** The Authorization header's scheme ("Basic", "Bearer"), when one was sent. */
  auth?: string;
}

export interface FakeRegistry {
  /** http://127.0.0.1:PORT, for http_proxy / https_proxy. */
  proxyUrl: string;
  /** Every request so far, in the order answered. */
  requests: RegistryRequest[];
  /** The fake clock, epoch seconds. */
  now(): number;
  advance(seconds: number): void;
  /** The manifest requests, optionally of one method and/or repo. */
  manifests(filter?: { method?: string; repo?: string; host?: string }): RegistryRequest[];
  /** The counted pulls (GETs that answered 200). */
  counted(filter?: { repo?: string; host?: string; user?: string }): RegistryRequest[];
  close(): Promise<void>;
}

/** The digest the fake registry gives a tag: sha256 of "<registry>/<repo>:<tag>". */
export function tagDigest(ref: string): string {
  return `sha256:${createHash("sha256").update(ref).digest("hex")}`;
}

const DEFAULT_QUOTA: Quota = { anonymous: 100, authenticated: 200, windowSeconds: 21_600 };
const MANIFEST = /^\/v2\/(.+)\/manifests\/([^/]+)$/;
const ANON_MESSAGE = "You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit";

export async function startFakeRegistry(options: FakeRegistryOptions = {}): Promise<FakeRegistry> {
  let clock = options.epoch ?? DEFAULT_EPOCH;
  const requests: RegistryRequest[] = [];
  const users = options.users ?? {};
  const headFailures = new Map(Object.entries(options.headFailures ?? {}));
  const headFailOn = options.headFailOn ?? {};
  const headCount = new Map<string, number>();
  const missing = new Set(options.missing ?? []);
  const bearer = new Set(options.bearer ?? []);
  const tokens = new Map<string, string | undefined>();
  // "<host> <client>" → the times of its counted pulls.
  const pulls = new Map<string, number[]>();

  const quotaOf = (host: string): Quota | null => (options.hostQuota && host in options.hostQuota ? options.hostQuota[host] : options.quota === undefined ? DEFAULT_QUOTA : options.quota);
  const inWindow = (host: string, user: string | undefined, q: Quota): number[] => {
    const key = `${host} ${user ?? "-"}`;
    const kept = (pulls.get(key) ?? []).filter((t) => t > clock - q.windowSeconds);
    pulls.set(key, kept);
    return kept;
  };

  /** The account the Authorization header names: a user, undefined (anonymous), or "bad" (wrong credentials). */
  const identify = (header: string | undefined): { user?: string; bad: boolean; scheme?: string } => {
    if (!header) return { bad: false };
    const [scheme, value = ""] = header.split(" ", 2);
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const user = decoded.slice(0, colon);
      return colon > 0 && users[user] === decoded.slice(colon + 1) ? { user, bad: false, scheme: "Basic" } : { bad: true, scheme: "Basic" };
    }
    if (/^bearer$/i.test(scheme)) return tokens.has(value) ? { user: tokens.get(value), bad: false, scheme: "Bearer" } : { bad: true, scheme: "Bearer" };
    return { bad: true, scheme };
  };

  const answer = (res: http.ServerResponse, status: number, headers: Record<string, string>, body = ""): void => {
    res.writeHead(status, { ...headers, "Content-Length": String(Buffer.byteLength(body)) });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
    const raw = req.url ?? "/";
    const url = raw.startsWith("/") ? new URL(raw, `http://${req.headers.host ?? "unknown"}`) : new URL(raw);
    const host = url.host;
    const method = req.method ?? "GET";
    req.resume();

    if (host === CONTROL_HOST) {
      if (method === "POST" && url.pathname === "/advance") {
        const seconds = Number(url.searchParams.get("seconds"));
        if (!Number.isFinite(seconds) || seconds < 0) return answer(res, 400, {}, "seconds?\n");
        clock += Math.ceil(seconds);
        return answer(res, 200, {}, `${clock}\n`);
      }
      if (url.pathname === "/now") return answer(res, 200, {}, `${clock}\n`);
      return answer(res, 404, {}, "unknown control\n");
    }

    const who = identify(req.headers.authorization);
    const record = (r: Omit<RegistryRequest, "method" | "host" | "path" | "query" | "user" | "auth">) => requests.push({ method, host, path: url.pathname, query: url.search, user: who.user, auth: who.scheme, ...r });

    if (host === AUTH_HOST && url.pathname === "/token") {
      if (who.bad) {
        record({ counted: false, status: 401 });
        return answer(res, 401, { "Content-Type": "application/json" }, JSON.stringify({ details: "incorrect username or password" }));
      }
      const token = `tok-${randomBytes(12).toString("hex")}`;
      tokens.set(token, who.user);
      record({ counted: false, status: 200 });
      return answer(res, 200, { "Content-Type": "application/json" }, JSON.stringify({ token, access_token: token, expires_in: 300 }));
    }

    const m = MANIFEST.exec(url.pathname);
    const repo = m?.[1];
    const ref = m?.[2];
    const q = quotaOf(host);
    const quotaHeaders = (extra = 0): Record<string, string> => {
      if (!q) return {};
      const limit = who.user ? q.authenticated : q.anonymous;
      const remaining = Math.max(0, limit - inWindow(host, who.user, q).length) + extra;
      return { "ratelimit-limit": `${limit};w=${q.windowSeconds}`, "ratelimit-remaining": `${remaining};w=${q.windowSeconds}`, "docker-ratelimit-source": who.user ?? "127.0.0.1" };
    };
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) => {
      record({ repo, ref, counted: false, status });
      answer(res, status, { "Content-Type": "application/json", ...quotaHeaders(), ...headers }, method === "HEAD" ? "" : JSON.stringify({ errors: [{ code, message }] }));
    };

    const challenge = `Bearer realm="http://${AUTH_HOST}/token",service="fake",scope="repository:${repo ?? "x"}:pull"`;
    if (bearer.has(host) && who.scheme !== "Bearer") return error(401, "UNAUTHORIZED", "authentication required", { "WWW-Authenticate": challenge });
    if (who.bad) return error(401, "UNAUTHORIZED", "incorrect username or password", bearer.has(host) ? { "WWW-Authenticate": challenge } : { "WWW-Authenticate": `Basic realm="fake"` });
    if (url.pathname === "/v2/" || url.pathname === "/v2") return (record({ counted: false, status: 200 }), answer(res, 200, { ...quotaHeaders() }, "{}"));
    if (!m || (method !== "HEAD" && method !== "GET") || !repo || !ref) return error(404, "NAME_UNKNOWN", "not here");

    const key = `${host}/${repo}${ref.startsWith("sha256:") ? "@" : ":"}${ref}`;
    if (missing.has(key)) return error(404, "MANIFEST_UNKNOWN", "manifest unknown");
    if (method === "HEAD") {
      const n = (headCount.get(key) ?? 0) + 1;
      headCount.set(key, n);
      const left = headFailures.get(key) ?? 0;
      const status = options.headFailStatus?.[key] ?? 503;
      const fail = () => (status === 429 ? error(429, "TOOMANYREQUESTS", who.user ? `You have reached your pull rate limit as '${who.user}'.` : ANON_MESSAGE) : error(status, "UNAVAILABLE", "simulated failure"));
      if (headFailOn[key]?.includes(n)) return fail();
      if (left > 0) {
        headFailures.set(key, left - 1);
        return fail();
      }
    }
    let counted = false;
    if (method === "GET" && q) {
      const limit = who.user ? q.authenticated : q.anonymous;
      const window = inWindow(host, who.user, q);
      if (window.length >= limit) {
        return error(429, "TOOMANYREQUESTS", who.user ? `You have reached your pull rate limit as '${who.user}'. You may increase the limit by upgrading. https://www.docker.com/increase-rate-limit` : ANON_MESSAGE);
      }
      window.push(clock);
      counted = true;
    }
    const digest = ref.startsWith("sha256:") ? ref : tagDigest(`${host}/${repo}:${ref}`);
    const manifest = JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: { mediaType: "application/vnd.oci.image.config.v1+json", digest, size: 2 }, layers: [] });
    record({ repo, ref, counted, status: 200 });
    const headers = { "Content-Type": "application/vnd.oci.image.manifest.v1+json", "Docker-Content-Digest": digest, ...quotaHeaders(method === "HEAD" ? (options.overstate ?? 0) : 0) };
    if (method === "HEAD") {
      res.writeHead(200, { ...headers, "Content-Length": String(Buffer.byteLength(manifest)) });
      return res.end();
    }
    answer(res, 200, headers, manifest);
  });
  // https:// through the proxy: refused (nothing here may reach the network).
  server.on("connect", (req: http.IncomingMessage, socket) => {
    const target = req.url ?? "";
    requests.push({ method: "CONNECT", host: target.replace(/:443$/, ""), path: "", query: "", counted: false, status: 403 });
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const match = (r: RegistryRequest, f: Record<string, string | undefined>) => Object.entries(f).every(([k, v]) => v === undefined || (r as unknown as Record<string, unknown>)[k] === v);
  return {
    proxyUrl: `http://127.0.0.1:${port}`,
    requests,
    now: () => clock,
    advance: (seconds) => {
      clock += seconds;
    },
    manifests: (filter = {}) => requests.filter((r) => r.repo !== undefined && match(r, filter)),
    counted: (filter = {}) => requests.filter((r) => r.counted && match(r, filter)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The environment that sends every HTTP(S) request of a script (and its tools) to the fake registry. */
export function proxyEnv(registry: FakeRegistry): Record<string, string> {
  const p = registry.proxyUrl;
  return { http_proxy: p, HTTP_PROXY: p, https_proxy: p, HTTPS_PROXY: p, all_proxy: "", ALL_PROXY: "", no_proxy: "", NO_PROXY: "" };
}

/** A tool's absolute path on this host's PATH (so a stand-in can call the real one). */
export function realTool(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  throw new Error(`${name} is not on PATH`);
}

function executable(file: string, text: string): void {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

export interface FakeImageTools {
  bin: string;
  /** $STATE: one file per image present in the stand-in docker (its architecture), and `calls`. */
  state: string;
  /** Every argv the stand-ins saw, one "tool args…" line each (docker, skopeo, sleep, curl). */
  calls(): string[];
  /** The seconds each `sleep` was asked for, in order. */
  sleeps(): number[];
}

/**
 * Stand-ins on PATH for task-images.sh, with $STATE (set it in the script's environment to `state`):
 * - docker: `image inspect` answers for images present as files in $STATE (content: the architecture),
 *   `image rm` deletes the file;
 * - skopeo: `copy … docker://REPO@DIGEST oci:LAYOUT:image` GETs that manifest with the real curl through
 *   $http_proxy (https unless --src-tls-verify=false; through the mirror a leading --registries-conf FILE names;
 *   with the credentials of REGISTRY_AUTH_FILE, sent from a file, never on a command line), printing skopeo's
 *   own kind of error on a failure (`… toomanyrequests: You have reached …` for a 429); `copy oci:LAYOUT:image
 *   docker-daemon:IMAGE` loads it (arm64 when the source's name says arm64);
 * - sleep: records its argument and advances the fake registry's clock by that much (no waiting);
 * - date: `date +%s` is the fake clock, anything else the real date;
 * - curl: records its argv, then runs the real curl.
 */
export function fakeImageTools(dir: string): FakeImageTools {
  const bin = path.join(dir, "bin");
  const state = path.join(dir, "state");
  mkdirSync(bin, { recursive: true });
  mkdirSync(state, { recursive: true });
  const curl = realTool("curl");
  const date = realTool("date");
  executable(
    path.join(bin, "docker"),
    `#!/usr/bin/env bash
set -euo pipefail
key() { printf '%s' "$1" | tr '/:' '__'; }
echo "docker $*" >>"$STATE/calls"
case "$1 $2" in
  "image inspect")
    image=\${!#}
    [ -f "$STATE/$(key "$image")" ] || { echo "Error: No such image: $image" >&2; exit 1; }
    case "$*" in *Architecture*) cat "$STATE/$(key "$image")";; *RepoDigests*) echo '[]';; *Id*) echo "sha256:$(key "$image")";; esac ;;
  "image rm") rm -f "$STATE/$(key "\${!#}")" ;;
  *) exit 2 ;;
esac
`,
  );
  executable(
    path.join(bin, "skopeo"),
    `#!/usr/bin/env bash
set -euo pipefail
echo "skopeo $*" >>"$STATE/calls"
# Like skopeo 1.18 (Debian trixie): mirrors only from the global --registries-conf flag; it reads no
# CONTAINERS_REGISTRIES_CONF from the environment.
conf=
if [ "\${1:-}" = --registries-conf ]; then conf=$2; shift 2; fi
[ "\${1:-}" = copy ] || { echo "fake skopeo: only copy is simulated" >&2; exit 2; }
src=; dst=; layout=; scheme=https
for a in "$@"; do
  case "$a" in
    docker://*) src=\${a#docker://} ;;
    docker-daemon:*) dst=\${a#docker-daemon:} ;;
    oci:*) layout=\${a#oci:}; layout=\${layout%:image} ;;
    --src-tls-verify=false) scheme=http ;;
  esac
done
if [ -z "$src" ]; then
  # oci:LAYOUT:image → docker-daemon:IMAGE loads what the layout holds.
  from=$(cat "$layout/src")
  arch=amd64; case "$from" in *arm64*) arch=arm64 ;; esac
  echo "$arch" >"$STATE/$(printf '%s' "$dst" | tr '/:' '__')"
  exit 0
fi
case "$src" in *@sha256:*) ;; *) echo "fake skopeo: expected docker://REPO@DIGEST, got $src" >&2; exit 2 ;; esac
name=\${src%@*} digest=\${src##*@}
first=\${name%%/*}
case "$first" in
  *.* | *:* | localhost) registry=$first repo=\${name#*/} ;;
  *) registry=docker.io repo=$name; case "$repo" in */*) ;; *) repo=library/$repo ;; esac ;;
esac
host=$registry
[ "$host" != docker.io ] || host=registry-1.docker.io
# A mirror from registries.conf: [[registry]] location = "<registry>" then [[registry.mirror]] location = "…".
if [ -n "$conf" ]; then
  mirror=$(awk -v r="$registry" '
    /^\\[\\[registry\\]\\]/ { inreg = 1; hit = 0; inmirror = 0; next }
    /^\\[\\[registry\\.mirror\\]\\]/ { inmirror = 1; next }
    /^[[:space:]]*location[[:space:]]*=/ {
      v = $0; sub(/^[^=]*=[[:space:]]*"/, "", v); sub(/".*$/, "", v)
      if (inmirror) { if (hit) { print v; exit } } else if (v == r) hit = 1
    }' "$conf")
  [ -z "$mirror" ] || { host=$mirror scheme=http; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hdr=()
if [ -n "\${REGISTRY_AUTH_FILE:-}" ] && [ -f "$REGISTRY_AUTH_FILE" ]; then
  auth=$(jq -r --arg k "$host" '.auths[$k].auth // empty' "$REGISTRY_AUTH_FILE")
  if [ -n "$auth" ]; then
    (umask 077 && printf 'Authorization: Basic %s\\n' "$auth" >"$tmp/auth")
    hdr=(-H "@$tmp/auth")
  fi
fi
code=$(curl -sS -o "$tmp/body" -w '%{http_code}' "\${hdr[@]}" "$scheme://$host/v2/$repo/manifests/$digest" 2>"$tmp/err" </dev/null) || code=000
ts='time="2026-01-01T00:00:00Z" level=fatal'
case "$code" in
  200) mkdir -p "$layout"; echo "$src" >"$layout/src" ;;
  000) echo "$ts msg=\\"initializing source docker://$src: pinging container registry $host: $(tail -n 1 "$tmp/err")\\"" >&2; exit 1 ;;
  *)
    why=$(jq -r '.errors[0] | "\\(.code | ascii_downcase): \\(.message)"' "$tmp/body" 2>/dev/null || echo "received unexpected HTTP status: $code")
    echo "$ts msg=\\"initializing source docker://$src: reading manifest $digest in $host/$repo: $why\\"" >&2
    exit 1 ;;
esac
`,
  );
  executable(path.join(bin, "sleep"), `#!/bin/sh\necho "sleep $*" >>"$STATE/calls"\n${curl} -fsS -X POST "http://${CONTROL_HOST}/advance?seconds=$1" >/dev/null </dev/null\n`);
  executable(path.join(bin, "date"), `#!/bin/sh\nif [ "$*" = "+%s" ]; then exec ${curl} -fsS "http://${CONTROL_HOST}/now" </dev/null; fi\nexec ${date} "$@"\n`);
  executable(path.join(bin, "curl"), `#!/bin/sh\necho "curl $*" >>"$STATE/calls"\nexec ${curl} "$@"\n`);
  const calls = (): string[] => {
    try {
      return readFileSync(path.join(state, "calls"), "utf8").split("\n").filter((l) => l !== "");
    } catch {
      return [];
    }
  };
  return { bin, state, calls, sleeps: () => calls().filter((l) => l.startsWith("sleep ")).map((l) => Number(l.slice(6))) };
}

export interface ScriptResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `bash -s` with `script` on stdin (as CheckedCommand does), without blocking this process's event loop. */
export function runBash(script: string, env: Record<string, string>, timeoutMs = 25_000): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout ends the script's children too (xargs, curl) and nothing else.
    const child = spawn("bash", ["-s"], { env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(script);
  });
}

/** A test file's temporary directories and fake registries, removed (and closed) after each test. */
export function scratchSpace(prefix: string): { tempDir(): string; keep(registry: FakeRegistry): FakeRegistry } {
  const dirs: string[] = [];
  const registries: FakeRegistry[] = [];
  afterEach(async () => {
    for (const r of registries.splice(0)) await r.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    tempDir() {
      const d = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    keep(registry) {
      registries.push(registry);
      return registry;
    },
  };
}

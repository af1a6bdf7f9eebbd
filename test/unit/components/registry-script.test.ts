// registry.sh: how host scripts name registries and read a manifest's digest and pull quota with a free HEAD.
// The pure functions run in a real bash that sources the file; registry_head runs against the in-process fake
// registry (test/helpers/fake-registry.ts) through http_proxy, Basic and Bearer, with a curl stand-in that
// records every argv (no credential may be on one).
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { registryAuthJson } from "../../../components/registry-access";
import { type FakeRegistryOptions, fakeImageTools, proxyEnv, runBash, scratchSpace, startFakeRegistry, tagDigest } from "../../helpers/fake-registry";

const SCRIPTS = path.resolve(__dirname, "../../../components/scripts");
const LIBS = `. ${SCRIPTS}/retry.sh\n. ${SCRIPTS}/registry.sh\n`;

const scratch = scratchSpace("reprobench-registry-");
const tempDir = scratch.tempDir;

/** One registry.sh function's output (no network: these are string functions). */
function fn(name: string, ...args: string[]): string {
  return execFileSync("bash", ["-c", `${LIBS}set -euo pipefail\n"$@"`, "registry-test", name, ...args], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
}

describe("registry.sh", () => {
  it("is shellcheck-clean", () => {
    const r = spawnSync("shellcheck", ["--severity=style", path.join(SCRIPTS, "registry.sh")], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed (apt-get install -y shellcheck)").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it.each([
    // ref, registry, repository, tag or digest
    ["ubuntu", "docker.io", "library/ubuntu", "latest"],
    ["ubuntu:22.04", "docker.io", "library/ubuntu", "22.04"],
    ["docker.io/ubuntu", "docker.io", "library/ubuntu", "latest"],
    ["docker.io/library/ubuntu:24.04", "docker.io", "library/ubuntu", "24.04"],
    ["alexgshaw/x:20251031", "docker.io", "alexgshaw/x", "20251031"],
    ["alexgshaw/regex-chess", "docker.io", "alexgshaw/regex-chess", "latest"],
    ["registry.sim:5000/a/b:1", "registry.sim:5000", "a/b", "1"],
    ["registry.sim:5000/a/b", "registry.sim:5000", "a/b", "latest"],
    ["ghcr.io/org/team/img:v1.2", "ghcr.io", "org/team/img", "v1.2"],
    ["localhost/x", "localhost", "x", "latest"],
    // Docker Hub's other host names are Docker Hub (one quota, one set of credentials).
    ["index.docker.io/library/ubuntu:2", "docker.io", "library/ubuntu", "2"],
    ["registry-1.docker.io/alexgshaw/x:1", "docker.io", "alexgshaw/x", "1"],
    ["localhost:5000/x:2", "localhost:5000", "x", "2"],
    [`registry.sim:5000/a/b@sha256:${"a".repeat(64)}`, "registry.sim:5000", "a/b", `sha256:${"a".repeat(64)}`],
    [`ubuntu@sha256:${"b".repeat(64)}`, "docker.io", "library/ubuntu", `sha256:${"b".repeat(64)}`],
    [`alexgshaw/x:20251031@sha256:${"c".repeat(64)}`, "docker.io", "alexgshaw/x", `sha256:${"c".repeat(64)}`],
  ])("names %s: registry %s, repository %s, reference %s", (ref, registry, repo, tag) => {
    expect(fn("registry_of", ref)).toBe(registry);
    expect(fn("registry_repo", ref)).toBe(repo);
    expect(fn("registry_ref", ref)).toBe(tag);
  });

  it("reaches Docker Hub at registry-1.docker.io, REGISTRY_INSECURE registries over HTTP, others over HTTPS", () => {
    const endpoint = (registry: string, insecure = ",") =>
      execFileSync("bash", ["-c", `${LIBS}REGISTRY_INSECURE=$2; registry_endpoint "$1"`, "registry-test", registry, insecure], { encoding: "utf8" });
    expect(endpoint("docker.io")).toBe("https://registry-1.docker.io");
    expect(endpoint("registry.sim:5000", ",registry.sim:5000,r.io,")).toBe("http://registry.sim:5000");
    expect(endpoint("r.io", ",registry.sim:5000,r.io,")).toBe("http://r.io");
    expect(endpoint("registry.sim", ",registry.sim:5000,")).toBe("https://registry.sim");
  });

  it("reads the first policy of ratelimit-limit / ratelimit-remaining (N;w=S), whatever the header's case", () => {
    const dir = tempDir();
    const field = (headers: string, name: string) => {
      writeFileSync(path.join(dir, "h"), headers);
      return execFileSync("bash", ["-c", `${LIBS}registry_quota_field "$1" "$2"`, "registry-test", name, path.join(dir, "h")], { encoding: "utf8" });
    };
    expect(field("HTTP/1.1 200 OK\r\nRateLimit-Limit: 100;w=21600\r\nRateLimit-Remaining: 76;w=21600\r\n\r\n", "ratelimit-limit")).toBe("100 21600");
    expect(field("HTTP/1.1 200 OK\r\nRateLimit-Limit: 100;w=21600\r\nRateLimit-Remaining: 76;w=21600\r\n\r\n", "ratelimit-remaining")).toBe("76 21600");
    expect(field("HTTP/1.1 200 OK\r\nratelimit-limit: 100;w=21600, 5000;w=86400\r\n\r\n", "ratelimit-limit")).toBe("100 21600");
    expect(field("HTTP/1.1 200 OK\r\n\r\n", "ratelimit-limit")).toBe("- -");
    expect(field("HTTP/1.1 200 OK\r\nratelimit-limit: lots\r\n\r\n", "ratelimit-limit")).toBe("- -");
  });

  it("registry_setup writes the credentials into a private directory, refuses a malformed value without showing it, and cleans up", () => {
    const secret = "hunter2-not-json";
    const ok = execFileSync(
      "bash",
      ["-c", `${LIBS}set -euo pipefail\nregistry_setup\nstat -c '%a' "$REGISTRY_DIR" "$REGISTRY_DIR/config.json"\n[ "$DOCKER_CONFIG" = "$REGISTRY_DIR" ] && [ "$REGISTRY_AUTH_FILE" = "$REGISTRY_DIR/config.json" ] && echo exported\nregistry_has_auth docker.io && echo docker.io\nregistry_has_auth registry.sim:5000 || echo none-for-sim\nd=$REGISTRY_DIR; registry_cleanup; [ ! -e "$d" ] && echo cleaned`],
      { encoding: "utf8", env: { PATH: process.env.PATH ?? "", TMPDIR: tempDir(), REGISTRY_AUTH_JSON: registryAuthJson([{ registry: "docker.io", username: "u", password: "p" }]) } },
    );
    // Docker Hub's credentials under either of its names (here both: registryAuthJson writes both keys).
    expect(ok.split("\n")).toEqual(["700", "600", "exported", "docker.io", "none-for-sim", "cleaned", ""]);
    const bad = spawnSync("bash", ["-c", `${LIBS}registry_setup`], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", TMPDIR: tempDir(), REGISTRY_AUTH_JSON: secret } });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("REGISTRY_AUTH_JSON is not");
    expect(bad.stderr + bad.stdout).not.toContain(secret);
  });

  describe("registry_head", () => {
    /** Runs registry_head REF in a bash with the fake registry as its proxy; returns its REGISTRY_* results. */
    async function head(ref: string, options: FakeRegistryOptions = {}, env: Record<string, string> = {}) {
      const registry = await startFakeRegistry(options);
      scratch.keep(registry);
      const dir = tempDir();
      const tools = fakeImageTools(dir);
      const script = `${LIBS}set -euo pipefail
REGISTRY_INSECURE=,registry.sim:5000,
registry_setup
trap registry_cleanup EXIT
status=0
registry_head "$REF" || status=$?
jq -cn --arg rc "$status" --arg s "$REGISTRY_STATUS" --arg d "$REGISTRY_DIGEST" --arg l "$REGISTRY_LIMIT" --arg r "$REGISTRY_REMAINING" --arg w "$REGISTRY_WINDOW" --arg e "$REGISTRY_ERROR" \\
  '{rc: ($rc | tonumber), status: $s, digest: $d, limit: $l, remaining: $r, window: $w, error: $e}'
`;
      const r = await runBash(script, { PATH: `${tools.bin}:${process.env.PATH}`, HOME: dir, TMPDIR: dir, STATE: tools.state, REF: ref, ...proxyEnv(registry), ...env });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout.trim().split("\n").pop()!) as { rc: number; status: string; digest: string; limit: string; remaining: string; window: string; error: string };
      return { ...out, registry, calls: tools.calls(), stderr: r.stderr };
    }

    it("reads the digest and the quota with one HEAD, which the registry does not count", async () => {
      const h = await head("registry.sim:5000/a/b:1", { quota: { anonymous: 7, authenticated: 70, windowSeconds: 3600 } });
      expect(h).toMatchObject({ rc: 0, status: "200", digest: tagDigest("registry.sim:5000/a/b:1"), limit: "7", remaining: "7", window: "3600", error: "" });
      expect(h.registry.requests.map((r) => [r.method, r.host, r.repo, r.ref, r.user, r.counted, r.status])).toEqual([["HEAD", "registry.sim:5000", "a/b", "1", undefined, false, 200]]);
      expect(h.calls.filter((c) => c.startsWith("curl ")).join("\n")).toContain("--head");
    });

    it("leaves the quota empty when the registry announces none", async () => {
      const h = await head("registry.sim:5000/a/b:1", { quota: null });
      expect(h).toMatchObject({ rc: 0, digest: tagDigest("registry.sim:5000/a/b:1"), limit: "", remaining: "", window: "" });
    });

    it("sends Basic credentials from a curl config file, never on a command line (a password with \" and \\ too)", async () => {
      const password = 'pa"ss\\w0rd-Xq7';
      const auth = registryAuthJson([{ registry: "registry.sim:5000", username: "ci-user", password }]);
      const h = await head("registry.sim:5000/a/b:1", { users: { "ci-user": password }, quota: { anonymous: 1, authenticated: 50, windowSeconds: 600 } }, { REGISTRY_AUTH_JSON: auth });
      expect(h).toMatchObject({ rc: 0, status: "200", limit: "50", remaining: "50", window: "600" });
      expect(h.registry.requests.map((r) => [r.method, r.user, r.auth])).toEqual([["HEAD", "ci-user", "Basic"]]);
      const argv = h.calls.join("\n");
      expect(argv).toContain(" -K ");
      expect(argv).not.toContain(password);
      expect(argv).not.toContain(Buffer.from(`ci-user:${password}`).toString("base64"));
      expect(h.stderr).not.toContain(password);
    });

    it("says so when the credentials are refused, and that retrying cannot help (97)", async () => {
      const auth = registryAuthJson([{ registry: "registry.sim:5000", username: "ci-user", password: "wrong" }]);
      const h = await head("registry.sim:5000/a/b:1", { users: { "ci-user": "right" } }, { REGISTRY_AUTH_JSON: auth });
      expect(h).toMatchObject({ rc: 97, status: "401", error: "HEAD http://registry.sim:5000/v2/a/b/manifests/1: 401 Unauthorized (sent with credentials)" });
    });

    it("follows a Bearer challenge anonymously: a token from the realm for repository:<repo>:pull, then the HEAD with it", async () => {
      const h = await head("registry.sim:5000/a/b:1", { bearer: ["registry.sim:5000"], quota: { anonymous: 3, authenticated: 30, windowSeconds: 21600 } });
      expect(h).toMatchObject({ rc: 0, status: "200", digest: tagDigest("registry.sim:5000/a/b:1"), limit: "3", remaining: "3", window: "21600" });
      const seen = h.registry.requests.map((r) => [r.method, r.host, r.path, r.status, r.auth, r.user]);
      expect(seen).toEqual([
        ["HEAD", "registry.sim:5000", "/v2/a/b/manifests/1", 401, undefined, undefined],
        ["GET", "auth.fake", "/token", 200, undefined, undefined],
        ["HEAD", "registry.sim:5000", "/v2/a/b/manifests/1", 200, "Bearer", undefined],
      ]);
      const token = new URLSearchParams(h.registry.requests[1].query);
      expect(token.get("service")).toBe("fake");
      expect(token.get("scope")).toBe("repository:a/b:pull");
      // The token went in a header file, not on curl's command line.
      expect(h.calls.join("\n")).not.toMatch(/tok-[0-9a-f]{24}/);
      expect(h.registry.counted()).toEqual([]);
    });

    it("fetches the Bearer token with the credentials: the account's quota applies", async () => {
      const auth = registryAuthJson([{ registry: "registry.sim:5000", username: "ci-user", password: "s3cr3t-Bearer" }]);
      const h = await head("registry.sim:5000/a/b:1", { bearer: ["registry.sim:5000"], users: { "ci-user": "s3cr3t-Bearer" }, quota: { anonymous: 3, authenticated: 30, windowSeconds: 21600 } }, { REGISTRY_AUTH_JSON: auth });
      expect(h).toMatchObject({ rc: 0, limit: "30", remaining: "30" });
      expect(h.registry.requests.map((r) => [r.method, r.host, r.status, r.auth, r.user])).toEqual([
        // The first HEAD carries the Basic credentials (a registry that takes them answers at once).
        ["HEAD", "registry.sim:5000", 401, "Basic", "ci-user"],
        ["GET", "auth.fake", 200, "Basic", "ci-user"],
        ["HEAD", "registry.sim:5000", 200, "Bearer", "ci-user"],
      ]);
      expect(h.calls.join("\n")).not.toContain("s3cr3t-Bearer");
    });

    it("gives up at once (97) on 404, returns 1 on a 503, and goes over HTTPS (CONNECT) to a registry not listed as insecure", async () => {
      const gone = await head("registry.sim:5000/a/gone:1", { missing: ["registry.sim:5000/a/gone:1"] });
      expect(gone).toMatchObject({ rc: 97, status: "404", digest: "", error: "HEAD http://registry.sim:5000/v2/a/gone/manifests/1: HTTP 404" });
      const flaky = await head("registry.sim:5000/a/flaky:1", { headFailures: { "registry.sim:5000/a/flaky:1": 1 } });
      expect(flaky).toMatchObject({ rc: 1, status: "503", error: "HEAD http://registry.sim:5000/v2/a/flaky/manifests/1: HTTP 503" });
      const secure = await head("secure.sim/x:1");
      expect(secure.rc).toBe(1);
      expect(secure.status).toBe("000");
      expect(secure.error).toMatch(/^no answer from https:\/\/secure\.sim\/v2\/x\/manifests\/1: curl: \(56\)/);
      expect(secure.registry.requests.map((r) => [r.method, r.host])).toEqual([["CONNECT", "secure.sim"]]);
    });
  });
});

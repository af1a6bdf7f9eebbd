// The registry's pull limits on the TS side: the quota (validation, the scenario's section, the file and
// `sim registry`'s changes), the credentials files, the request log's summary, and where the layout, the
// docker argv and cluster.json put the gate and the mirror.
import { mkdirSync, mkdtempSync, copyFileSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clusterJson, type ClusterImages } from "../../../sim/cluster-json";
import { formatStatus } from "../../../sim/cluster";
import { hostCreateArgs, mirrorCreateArgs, registryRunArgs } from "../../../sim/docker-args";
import { instanceLayout, planCluster } from "../../../sim/layout";
import { parseSimArgs } from "../../../cli/commands/sim";
import { readRegistryQuota, registryCounts, setRegistryQuota } from "../../../sim/settings";
import {
  curlAuthConfig,
  DEFAULT_QUOTA,
  dockerAuthConfig,
  ensureRegistryPassword,
  formatManifestCounts,
  manifestGetCounts,
  nextQuota,
  normalizeQuota,
  parseRegistryRequests,
  pullsInWindow,
  readQuotaFile,
  readRegistryRequests,
  scenarioQuota,
  writeQuotaFile,
  type RegistryRequest,
} from "../../../sim/registry";

const repoRoot = resolve(__dirname, "..", "..", "..");
const tmps: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "sim-registry-test-"));
  tmps.push(d);
  return d;
};
afterEach(() => {
  for (const d of tmps.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project root with just the scenario file (what setRegistryQuota reads for --reset). */
function fakeRoot(): string {
  const root = tmp();
  mkdirSync(join(root, "sim", "scenarios"), { recursive: true });
  copyFileSync(join(repoRoot, "sim", "scenarios", "sim-default.json"), join(root, "sim", "scenarios", "sim-default.json"));
  return root;
}

const rec = (over: Partial<RegistryRequest>): RegistryRequest => ({
  t: "2026-12-01T10:00:00.000Z",
  client: "172.29.240.3",
  user: null,
  method: "GET",
  path: "/v2/reprobench/task-base/manifests/latest",
  repo: "reprobench/task-base",
  ref: "latest",
  counted: true,
  status: 200,
  ...over,
});

describe("quota", () => {
  it("checks every field, naming it", () => {
    expect(normalizeQuota({ anonymousPulls: 3 })).toEqual({ ...DEFAULT_QUOTA, anonymousPulls: 3 });
    expect(normalizeQuota({ anonymousPulls: 0, windowSeconds: 1 })).toMatchObject({ anonymousPulls: 0, windowSeconds: 1 });
    expect(() => normalizeQuota({ anonymousPulls: -1 })).toThrow(/registry quota: anonymousPulls: got -1; expected an integer from 0 to 10000000/);
    expect(() => normalizeQuota({ windowSeconds: 0 })).toThrow(/windowSeconds: got 0; expected an integer from 1/);
    expect(() => normalizeQuota({ authenticatedPulls: 1.5 })).toThrow(/authenticatedPulls: got 1.5/);
    expect(() => normalizeQuota({ limit: 3 } as never)).toThrow(/unknown key 'limit'; expected anonymousPulls, authenticatedPulls, windowSeconds, countsSince/);
    expect(() => normalizeQuota({ countsSince: "soon" })).toThrow(/countsSince: got "soon"; expected an ISO time or null/);
    expect(normalizeQuota({ countsSince: null })).toEqual(DEFAULT_QUOTA);
  });

  it("starts from the scenario's registry section: numbers the local stack and the tests stay inside", () => {
    const q = scenarioQuota(repoRoot);
    expect(q).toEqual({ anonymousPulls: 100, authenticatedPulls: 2000, windowSeconds: 3600 });
    expect(q.authenticatedPulls).toBeGreaterThan(q.anonymousPulls);
  });

  it("changes only what is given, keeps countsSince across --reset, and --clear-counts sets it to now", () => {
    const scenario = { anonymousPulls: 100, authenticatedPulls: 2000, windowSeconds: 3600 };
    const current = { anonymousPulls: 3, authenticatedPulls: 2000, windowSeconds: 60, countsSince: "2026-12-01T09:00:00.000Z" };
    expect(nextQuota(current, scenario, { authenticatedPulls: 5 })).toEqual({ ...current, authenticatedPulls: 5 });
    expect(nextQuota(current, scenario, {}, { reset: true })).toEqual({ ...scenario, countsSince: current.countsSince });
    expect(nextQuota(undefined, scenario, { windowSeconds: 10 })).toEqual({ ...scenario, windowSeconds: 10 });
    const now = new Date("2026-12-01T10:00:00.000Z");
    expect(nextQuota(current, scenario, {}, { clearCounts: true, now }).countsSince).toBe(now.toISOString());
  });

  it("writes the quota file atomically and reads it back; setRegistryQuota works on the instance's file", () => {
    const root = fakeRoot();
    const file = join(root, "q", "quota.json");
    writeQuotaFile(file, { anonymousPulls: 1, authenticatedPulls: 2, windowSeconds: 3 });
    expect(readQuotaFile(file)).toEqual({ anonymousPulls: 1, authenticatedPulls: 2, windowSeconds: 3 });
    expect(readQuotaFile(join(root, "missing.json"))).toBeUndefined();

    const instance = { name: "regtest", slot: 9 };
    expect(readRegistryQuota({ root, instance })).toBeUndefined();
    expect(setRegistryQuota({ root, instance }, { anonymousPulls: 3, windowSeconds: 60 })).toEqual({ anonymousPulls: 3, authenticatedPulls: 2000, windowSeconds: 60 });
    const written = JSON.parse(readFileSync(join(root, ".sim/instances/regtest/registry/quota.json"), "utf8"));
    expect(written).toEqual({ anonymousPulls: 3, authenticatedPulls: 2000, windowSeconds: 60 });
    expect(setRegistryQuota({ root, instance }, {}, { reset: true })).toEqual(scenarioQuota(root));
    expect(setRegistryQuota({ root, instance }, {}, { clearCounts: true }).countsSince).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe("credentials", () => {
  it("makes the pull password once (0600) and keeps it", () => {
    const file = join(tmp(), "state", "registry-password");
    const pw = ensureRegistryPassword(file);
    expect(pw).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ensureRegistryPassword(file)).toBe(pw);
    writeFileSync(file, "not hex\n");
    expect(ensureRegistryPassword(file)).not.toBe(pw);
  });

  it("writes curl and docker/skopeo auth files with the account", () => {
    expect(curlAuthConfig('p"w\\x')).toBe('user = "reprobench-pull:p\\"w\\\\x"\n');
    const auths = JSON.parse(dockerAuthConfig(["registry.sim:5000", "mirror.sim:5000"], "pw")) as { auths: Record<string, { auth: string }> };
    expect(Object.keys(auths.auths)).toEqual(["registry.sim:5000", "mirror.sim:5000"]);
    expect(Buffer.from(auths.auths["registry.sim:5000"].auth, "base64").toString()).toBe("reprobench-pull:pw");
  });
});

describe("request log", () => {
  it("parses the gate's lines, skipping broken ones", () => {
    const text = [JSON.stringify(rec({})), "{ half a line", "", JSON.stringify({ nope: 1 }), JSON.stringify(rec({ method: "HEAD", counted: false }))].join("\n");
    const { records, malformed } = parseRegistryRequests(text);
    expect(records.map((r) => r.method)).toEqual(["GET", "HEAD"]);
    expect(malformed).toBe(2);
    expect(readRegistryRequests(join(tmp(), "none.jsonl"))).toEqual([]);
  });

  it("counts GETs, HEADs and 429s per repository:reference and client/account, since the last clear", () => {
    const records = [
      rec({ t: "2026-12-01T08:00:00.000Z" }), // before countsSince
      rec({}),
      rec({}),
      rec({ method: "HEAD", counted: false }),
      rec({ counted: false, status: 429 }),
      rec({ user: "reprobench-pull", client: "172.29.240.30" }),
      rec({ path: "/v2/reprobench/task-base/blobs/sha256:1", ref: "sha256:1" }), // not a manifest
      rec({ path: "/v2/reprobench/sglang-double/manifests/sha256:abc", repo: "reprobench/sglang-double", ref: "sha256:abc" }),
      rec({ method: "PUT", counted: false, status: 201, path: "/v2/pushed/manifests/latest", repo: "pushed" }), // a push: no pull
    ];
    const rows = manifestGetCounts(records, { since: "2026-12-01T09:00:00.000Z" });
    expect(rows).toEqual([
      { repo: "reprobench/sglang-double", ref: "sha256:abc", client: "172.29.240.3", user: null, gets: 1, heads: 0, tooMany: 0 },
      { repo: "reprobench/task-base", ref: "latest", client: "172.29.240.3", user: null, gets: 2, heads: 1, tooMany: 1 },
      { repo: "reprobench/task-base", ref: "latest", client: "172.29.240.30", user: "reprobench-pull", gets: 1, heads: 0, tooMany: 0 },
    ]);
    const quota = { anonymousPulls: 100, authenticatedPulls: 2000, windowSeconds: 3600 };
    const inWindow = pullsInWindow(records, quota, new Date("2026-12-01T10:30:00.000Z"));
    expect(inWindow).toEqual({ "ip:172.29.240.3": 4, "user:reprobench-pull": 1 });
    const text = formatManifestCounts(rows, inWindow, quota);
    expect(text.split("\n")[0]).toMatch(/^REPOSITORY:REFERENCE\s+CLIENT\s+USER\s+GET\s+HEAD\s+429$/);
    expect(text).toMatch(/reprobench\/task-base:latest\s+172\.29\.240\.3\s+-\s+2\s+1\s+1/);
    expect(text).toMatch(/total\s+4\s+1\s+1/);
    expect(text).toContain("ip:172.29.240.3: 4 of 100 pulls used in the last 3600s");
    expect(text).toContain("user:reprobench-pull: 1 of 2000 pulls used in the last 3600s");
    expect(formatManifestCounts([])).toBe("no manifest requests logged");
    const digest = `sha256:${"ab".repeat(32)}`;
    expect(formatManifestCounts([{ repo: "r", ref: digest, client: "c", user: null, gets: 1, heads: 0, tooMany: 0 }])).toContain(`r:sha256:${"ab".repeat(6)}…`);
  });

  it("reads an instance's counts through registryCounts", () => {
    const root = fakeRoot();
    const instance = { name: "regtest", slot: 9 };
    const layout = instanceLayout(instance);
    mkdirSync(join(root, layout.registry.stateDir), { recursive: true });
    writeFileSync(join(root, layout.registry.requestLog), `${JSON.stringify(rec({ t: new Date().toISOString() }))}\n`);
    const counts = registryCounts({ root, instance });
    expect(counts.since).toBeNull();
    expect(counts.rows).toHaveLength(1);
    expect(counts.inWindow).toEqual({ "ip:172.29.240.3": 1 });
  });
});

describe("layout, argv and cluster.json", () => {
  const root = "/repo";

  it("puts the credentials and the gate's files in the state dir and the mirror at fixed addresses", () => {
    const d = instanceLayout();
    expect(d.registry).toMatchObject({
      username: "reprobench-pull",
      passwordFile: ".sim/registry-password",
      stateDir: ".sim/registry",
      quotaFile: ".sim/registry/quota.json",
      requestLog: ".sim/registry/requests.jsonl",
    });
    expect(d.mirror).toEqual({ container: "reprobench-sim-mirror", ip: "172.31.250.4", outsideIp: "172.29.240.30", hostname: "mirror.sim", port: 5000 });
    const t = instanceLayout({ name: "regtest", slot: 9 });
    expect(t.registry.passwordFile).toBe(".sim/instances/regtest/registry-password");
    expect(t.mirror).toMatchObject({ container: "reprobench-sim-regtest-mirror", ip: "172.30.253.4", outsideIp: "172.29.249.30" });
  });

  it("mounts the password read-only and the state dir into the registry; the password is in no argv", () => {
    const plan = planCluster(root, 2);
    const r = registryRunArgs(plan, "reprobench/sim-registry:x").join(" ");
    expect(r).toContain("-v /repo/.sim/registry-password:/etc/reprobench/registry-password:ro");
    expect(r).toContain("-v /repo/.sim/registry:/etc/reprobench/registry ");
    expect(r).toContain("-p 127.0.0.1:5000:5000");
    const m = mirrorCreateArgs(plan, "reprobench/sim-registry:x");
    expect(m.join(" ")).toContain("--name reprobench-sim-mirror --hostname mirror.sim");
    expect(m.join(" ")).toContain("--network reprobench-sim-outside --ip 172.29.240.30 --add-host registry.sim:172.29.240.10");
    expect(m.join(" ")).toContain("-v /repo/.sim/registry-password:/etc/reprobench/registry-password:ro");
    expect(m.join(" ")).toContain("--label io.reprobench.sim.role=mirror");
    expect(m.slice(-4)).toEqual(["/usr/local/lib/reprobench/entrypoint.sh", "mirror", "reprobench-pull", "http://registry.sim:5000"]);
    expect(hostCreateArgs(plan, plan.hosts[0], "img").join(" ")).toContain("--add-host mirror.sim:172.31.250.4");
  });

  it("records the registry's account, files and the mirror in cluster.json (project-relative)", () => {
    const images = { hostImage: "h", registryImage: "r", outsideImage: "o", taskBase: "t", tasks: {}, prepull: [], probe: "p" } as ClusterImages;
    const json = clusterJson(planCluster(root, 2), images) as { registry: Record<string, unknown> };
    expect(json.registry).toEqual({
      host: "registry.sim:5000",
      pushHost: "127.0.0.1:5000",
      ip: "172.29.240.10",
      container: "reprobench-sim-registry",
      username: "reprobench-pull",
      passwordFile: ".sim/registry-password",
      quotaFile: ".sim/registry/quota.json",
      requestLog: ".sim/registry/requests.jsonl",
      mirror: { host: "mirror.sim:5000", ip: "172.31.250.4", outsideIp: "172.29.240.30", container: "reprobench-sim-mirror" },
    });
  });

  it("shows the mirror and the limits in sim status", () => {
    const text = formatStatus({
      registry: { name: "registry.sim (172.29.240.10)", state: "running", repositories: 25, quota: { anonymousPulls: 100, authenticatedPulls: 2000, windowSeconds: 3600 } },
      mirror: { name: "mirror.sim:5000 (172.31.250.4)", state: "running" },
      hosts: [],
    });
    expect(text).toContain("registry registry.sim (172.29.240.10): running, 25 repositories; pull limits 100 anonymous (per IP) / 2000 authenticated per 3600s\nmirror mirror.sim:5000 (172.31.250.4): running");
  });
});

describe("sim registry arguments", () => {
  it("parses the limits and the switches", () => {
    expect(parseSimArgs(["registry", "--anonymous", "3", "--window=60"])).toMatchObject({ action: "registry", quota: { anonymousPulls: 3, windowSeconds: 60 } });
    expect(parseSimArgs(["registry", "--authenticated", "0"]).quota).toEqual({ authenticatedPulls: 0 });
    expect(parseSimArgs(["registry", "--reset", "--clear-counts", "--counts", "--json"])).toMatchObject({ reset: true, clearCounts: true, counts: true, json: true });
    expect(parseSimArgs(["registry"]).quota).toBeUndefined();
  });

  it("names the flag of a bad value, and refuses the flags elsewhere", () => {
    expect(() => parseSimArgs(["registry", "--anonymous", "-1"])).toThrow(/--anonymous: got '-1'; expected an integer from 0 to 10000000/);
    expect(() => parseSimArgs(["registry", "--window", "0"])).toThrow(/--window: got '0'; expected an integer from 1 to 10000000/);
    expect(() => parseSimArgs(["registry", "--authenticated", "lots"])).toThrow(/--authenticated: got 'lots'/);
    expect(() => parseSimArgs(["registry", "--window"])).toThrow(/--window: missing value/);
    expect(() => parseSimArgs(["network", "--anonymous", "3"])).toThrow(/--anonymous is not an option of 'sim network'/);
    expect(() => parseSimArgs(["status", "--counts"])).toThrow(/--counts is not an option of 'sim status'/);
    expect(() => parseSimArgs(["registry", "--latency-ms", "5"])).toThrow(/--latency-ms is not an option of 'sim registry'/);
  });
});

// The sim's outside: the dataset's deterministic git history (real git, temp dirs), the PEP 503 pages,
// the network conditions file and the proxy credentials.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readNetworkConditions, setNetworkConditions } from "../../../sim/settings";
import { mustRun } from "../../../sim/exec";
import { buildOutsideTree, datasetCommits, ensureProxyUrl, failTargetProblem, NO_FAULTS, normalizeConditions, scenarioConditions, simpleIndexPages, UNPINNED_TASK, writeConditionsFile } from "../../../sim/outside";

const root = resolve(__dirname, "..", "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "sim-outside-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("dataset history", () => {
  it("is deterministic: the same pinned commit and HEAD every time", async () => {
    const a = await datasetCommits(root);
    const b = await datasetCommits(root);
    console.log(`dataset: pinned ${a.pinned}, HEAD ${a.head}`);
    expect(a).toEqual(b);
    expect(a.pinned).toMatch(/^[0-9a-f]{40}$/);
    expect(a.head).not.toBe(a.pinned);
  });

  it("serves three tasks at the pin and four at HEAD over dumb HTTP files", async () => {
    const tree = join(tmp, "tree");
    const wheels = join(tmp, "wheels");
    mkdirSync(wheels);
    writeFileSync(join(wheels, "harbor-0.21.0-py3-none-any.whl"), "not really a wheel");
    writeFileSync(join(wheels, "Foo_Bar-1.0-py3-none-any.whl"), "x");
    writeFileSync(join(wheels, "uv-0.13.9-py3-none-any.whl"), "uv");
    const built = await buildOutsideTree(root, tree, [{ dir: wheels, only: /^(harbor|Foo)/ }]);
    expect(built.wheels).toBe(2);
    expect(built.harborSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(tree, "simple", "harbor", "index.html"), "utf8")).toContain(`href="/files/harbor-0.21.0-py3-none-any.whl#sha256=${built.harborSha256}"`);
    expect(existsSync(join(tree, "simple", "foo-bar", "index.html"))).toBe(true);
    expect(existsSync(join(tree, "files", "uv-0.13.9-py3-none-any.whl"))).toBe(false);
    const bare = join(tree, "terminal-bench-sim.git");
    expect(readFileSync(join(bare, "info", "refs"), "utf8")).toContain(`${built.commits.head}\trefs/heads/main`);
    const ls = async (rev: string) => (await mustRun(["git", "--git-dir", bare, "ls-tree", "--name-only", rev], { timeoutMs: 30_000 })).trim().split("\n");
    expect(await ls(built.commits.pinned)).toEqual(["README.md", "hello-file", "sha-preimage", "sum-numbers"]);
    expect(await ls(built.commits.head)).toEqual(["README.md", "hello-file", "sha-preimage", "sum-numbers", UNPINNED_TASK]);
    const first = (await mustRun(["git", "--git-dir", bare, "rev-list", "--reverse", "HEAD"], { timeoutMs: 30_000 })).trim().split("\n");
    expect(first).toHaveLength(3);
    expect(await ls(first[0])).toEqual(["README.md", "hello-file", "sum-numbers"]);
    // Idempotent: a second run keeps the repository.
    expect((await buildOutsideTree(root, tree, [{ dir: wheels }])).commits).toEqual(built.commits);
  });
});

describe("simple index pages", () => {
  it("normalizes project names and links every wheel with its sha256", () => {
    const pages = simpleIndexPages([
      { file: "Jinja2-3.1.0-py3-none-any.whl", sha256: "1".repeat(64) },
      { file: "typing_extensions-4.0-py3-none-any.whl", sha256: "2".repeat(64) },
    ]);
    expect(Object.keys(pages).sort()).toEqual(["", "jinja2", "typing-extensions"]);
    expect(pages[""]).toContain('<a href="/simple/typing-extensions/">typing-extensions</a>');
    expect(pages["jinja2"]).toContain(`<a href="/files/Jinja2-3.1.0-py3-none-any.whl#sha256=${"1".repeat(64)}">`);
  });
});

describe("network conditions", () => {
  it("start from the scenario's network section (no faults)", () => {
    expect(scenarioConditions(root)).toEqual({ latencyMs: 0, bandwidthKBps: 0, failFraction: 0, failWith: "502", seed: 0, failTargets: [] });
  });

  it("set/read merge partial changes and --reset goes back to the scenario", () => {
    const fake = join(tmp, "proj");
    mkdirSync(join(fake, "sim", "scenarios"), { recursive: true });
    writeFileSync(join(fake, "sim", "scenarios", "sim-default.json"), JSON.stringify({ network: { latencyMs: 5 } }));
    const instance = { name: "unit", slot: 9 };
    expect(readNetworkConditions({ root: fake, instance })).toBeUndefined();
    expect(setNetworkConditions({ root: fake, instance }, { failFraction: 0.25, seed: 3 })).toEqual({ latencyMs: 5, bandwidthKBps: 0, failFraction: 0.25, failWith: "502", seed: 3, failTargets: [] });
    expect(setNetworkConditions({ root: fake, instance }, { failWith: "reset" })).toMatchObject({ failFraction: 0.25, failWith: "reset" });
    expect(readNetworkConditions({ root: fake, instance })).toMatchObject({ latencyMs: 5, failFraction: 0.25, failWith: "reset", seed: 3 });
    expect(JSON.parse(readFileSync(join(fake, ".sim/instances/unit/network/conditions.json"), "utf8"))).toMatchObject({ failWith: "reset" });
    expect(setNetworkConditions({ root: fake, instance }, { failTargets: ["http://pypi.sim/rehearsal/"] })).toMatchObject({ failFraction: 0.25, failTargets: ["http://pypi.sim/rehearsal/"] });
    expect(readNetworkConditions({ root: fake, instance })?.failTargets).toEqual(["http://pypi.sim/rehearsal/"]);
    expect(setNetworkConditions({ root: fake, instance }, { failTargets: [] }).failTargets).toEqual([]);
    expect(setNetworkConditions({ root: fake, instance }, {}, { reset: true })).toEqual({ latencyMs: 5, bandwidthKBps: 0, failFraction: 0, failWith: "502", seed: 0, failTargets: [] });
  });

  it("failTargets: host:port or http:// URL prefixes, checked as the proxy checks them", () => {
    expect(normalizeConditions({ failTargets: ["pypi.sim:80", "http://pypi.sim/rehearsal/", "registry.sim:5000", "pypi.sim:80"] }).failTargets).toEqual(["pypi.sim:80", "http://pypi.sim/rehearsal/", "registry.sim:5000"]);
    expect(failTargetProblem("http://pypi.sim")).toBeUndefined();
    expect(() => normalizeConditions({ failTargets: "pypi.sim:80" as never })).toThrow(/failTargets: got "pypi.sim:80"; expected a list/);
    expect(() => normalizeConditions({ failTargets: ["https://pypi.sim/x"] })).toThrow(/failTargets: got "https:\/\/pypi.sim\/x"; https:\/\/ goes through a CONNECT tunnel.*host:443/);
    expect(() => normalizeConditions({ failTargets: ["pypi.sim"] })).toThrow(/expected "host:port" or an absolute http:\/\/ URL prefix/);
    expect(() => normalizeConditions({ failTargets: ["pypi.sim:0"] })).toThrow(/port 0 is not 1..65535/);
    expect(() => normalizeConditions({ failTargets: [7] as never })).toThrow(/got 7; expected a string/);
    // The file is checked before it is written: the proxy would otherwise keep its old conditions.
    expect(() => writeConditionsFile(join(tmp, "bad.json"), { ...NO_FAULTS, failTargets: ["ftp://x"] })).toThrow(/bad\.json: failTargets/);
    expect(existsSync(join(tmp, "bad.json"))).toBe(false);
  });

  it("rejects bad values naming the field", () => {
    expect(() => normalizeConditions({ failFraction: 1.5 })).toThrow(/failFraction: got 1.5/);
    expect(() => normalizeConditions({ latencyMs: 1.5 })).toThrow(/latencyMs: got 1.5; expected an integer >= 0/);
    expect(() => normalizeConditions({ jitter: 1 } as never)).toThrow(/unknown key 'jitter'/);
  });
});

describe("proxy credentials", () => {
  it("are made once, 0600, as http://reprobench:<hex>@proxy.sim:3128", () => {
    const file = join(tmp, "state", "proxy-url");
    const url = ensureProxyUrl(file);
    expect(url).toMatch(/^http:\/\/reprobench:[0-9a-f]{32}@proxy\.sim:3128$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ensureProxyUrl(file)).toBe(url);
  });
});

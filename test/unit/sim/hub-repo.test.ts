// The sim's hub.sim: where it sits on the outside network, how the proxy and the hosts see it, the repo it
// serves (built for real with hf_model.py + hub.py add-repo in temp dirs: its commit is the one docs/sim.md
// pins) and how modelServer.download's pinned wheels join pypi.sim's index without changing Harbor's picks.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clusterJson, type ClusterImages } from "../../../sim/cluster-json";
import { egressAllow, hostCreateArgs, hubRunArgs, proxyCreateArgs } from "../../../sim/docker-args";
import { ensureHubRepo, HUB_ENDPOINT, HUB_REPO, HUB_REVISION, hubRepoHash, hubRepoInputs } from "../../../sim/hub-repo";
import { imageSpecs, resolveImages } from "../../../sim/images";
import { instanceLayout, planCluster } from "../../../sim/layout";
import { buildOutsideTree, compareVersions, mergeableWheels, wheelVersion } from "../../../sim/outside";

const root = resolve(__dirname, "..", "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "sim-hub-repo-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("hub.sim in the layout", () => {
  it("sits at .40 of each instance's outside network, its state beside the registry's", () => {
    const d = instanceLayout();
    expect(d.hub).toMatchObject({ container: "reprobench-sim-hub", ip: "172.29.240.40", hostname: "hub.sim", port: 80, stateDir: ".sim/hub", faultsFile: ".sim/hub/faults.json", requestLog: ".sim/hub/requests.jsonl" });
    expect(d.hub.treeDir).toMatch(/\/reprobench\/sim-hub\/default$/);
    const t = instanceLayout({ name: "hubtest", slot: 11 });
    expect(t.hub).toMatchObject({ container: "reprobench-sim-hubtest-hub", ip: "172.29.251.40", stateDir: ".sim/instances/hubtest/hub" });
    expect(t.hub.treeDir).toMatch(/\/reprobench\/sim-hub\/hubtest$/);
    // Clear of the registry (.10), the index/git server (.20), the mirror (.30) and the proxy (.3).
    expect([d.registry.ip, d.outside.ip, d.mirror.outsideIp, d.proxy.outsideIp]).not.toContain(d.hub.ip);
  });

  it("runs hub.py from the sim-outside image on the outside network only, repos read-only, faults and log in the state dir", () => {
    const plan = planCluster("/repo", 2);
    const args = hubRunArgs(plan, "reprobench/sim-outside:x");
    const joined = args.join(" ");
    expect(joined).toContain("--network reprobench-sim-outside --ip 172.29.240.40");
    expect(joined).not.toContain("--network reprobench-sim ");
    expect(joined).not.toContain(" -p ");
    expect(joined).toMatch(/-v \S+\/reprobench\/sim-hub\/default:\/srv\/hub:ro/);
    expect(joined).toContain("-v /repo/.sim/hub:/etc/reprobench/hub");
    expect(joined).toContain("--label io.reprobench.sim.role=hub");
    expect(joined).toContain("--label io.reprobench.sim.instance=default");
    expect(args.slice(args.indexOf("reprobench/sim-outside:x") + 1)).toEqual([
      "python3", "/usr/local/lib/reprobench/hub.py", "serve", "--root", "/srv/hub", "--listen", "0.0.0.0", "--port", "80",
      "--faults", "/etc/reprobench/hub/faults.json", "--log", "/etc/reprobench/hub/requests.jsonl",
    ]);
  });

  it("is resolved and allowed by the proxy, and resolved (but dropped) on the hosts, like pypi.sim", () => {
    const plan = planCluster("/repo", 2, { name: "hubtest", slot: 11 });
    expect(egressAllow(plan)).toEqual(["registry.sim:5000", "pypi.sim:80", "git.sim:80", "hub.sim:80"]);
    const proxy = proxyCreateArgs(plan, "img");
    expect(proxy.join(" ")).toContain("--add-host hub.sim:172.29.251.40");
    expect(proxy[proxy.indexOf("--allow") + 1]).toBe("registry.sim:5000,pypi.sim:80,git.sim:80,hub.sim:80");
    expect(hostCreateArgs(plan, plan.hosts[0], "img").join(" ")).toContain("--add-host hub.sim:172.29.251.40");
  });

  it("is in .sim/cluster.json with what a modelServer.download stanza needs", () => {
    const images = { hostImage: "h", registryImage: "r", outsideImage: "o" } as unknown as ClusterImages;
    const json = clusterJson(planCluster("/repo", 2), images, { commits: { pinned: "a".repeat(40), head: "b".repeat(40) }, wheels: 3, hub: { repo: HUB_REPO, revision: HUB_REVISION } }) as { outside: { indexUrl: string; hub: Record<string, unknown> } };
    expect(json.outside.indexUrl).toBe("http://pypi.sim/simple/");
    expect(json.outside.hub).toEqual({
      endpoint: "http://hub.sim", repo: "reprobench/small-qwen3", revision: HUB_REVISION, container: "reprobench-sim-hub", ip: "172.29.240.40",
      faultsFile: ".sim/hub/faults.json", requestLog: ".sim/hub/requests.jsonl",
    });
    expect(HUB_ENDPOINT).toBe("http://hub.sim");
  });
});

describe("the sim-outside image", () => {
  it("carries hub.py: its build context is sim/ and hub.py is hashed (hf-venv.sh, used by tests only, is not)", () => {
    const outside = (read?: (p: string) => Buffer) => resolveImages(imageSpecs(root, []), root, read).find((i) => i.name === "sim-outside")!;
    const base = outside();
    expect(base.contextDir).toBe(join(root, "sim"));
    expect(base.dockerfile).toBe(join(root, "sim", "proxy", "Dockerfile"));
    const dockerfile = readFileSync(base.dockerfile, "utf8");
    expect(dockerfile).toContain("COPY proxy/sim-proxy.py /usr/local/lib/reprobench/sim-proxy.py");
    expect(dockerfile).toContain("COPY hub/hub.py /usr/local/lib/reprobench/hub.py");
    const edited = (name: string) => (p: string) => (p.endsWith(name) ? Buffer.concat([readFileSync(p), Buffer.from("\n# edited\n")]) : readFileSync(p));
    expect(outside(edited("sim/hub/hub.py")).hash).not.toBe(base.hash);
    expect(outside(edited("sim/hub/hf-venv.sh")).hash).toBe(base.hash);
  });
});

describe("the repo hub.sim serves", () => {
  it("hashes its generator, hub.py and the tokenizer files", () => {
    const inputs = hubRepoInputs(root).map((p) => p.slice(root.length + 1));
    expect(inputs).toEqual(["sim/models/hf_model.py", "sim/hub/hub.py", "sim/sglang-double/tiny-model/config.json", "sim/sglang-double/tiny-model/tokenizer.json", "sim/sglang-double/tiny-model/tokenizer_config.json"]);
    const h = hubRepoHash(root);
    expect(hubRepoHash(root)).toBe(h);
    expect(hubRepoHash(root, (p) => (p.endsWith("hf_model.py") ? Buffer.from("other") : readFileSync(p)))).not.toBe(h);
  });

  it("is built once, at the commit docs/sim.md pins, and linked into each instance's tree", async () => {
    const cache = join(tmp, "build-cache");
    const a = join(tmp, "hub-a");
    const first = await ensureHubRepo(root, a, cache);
    expect(first).toEqual({ repo: HUB_REPO, revision: HUB_REVISION, files: 8, bytes: 17572305, changed: true });
    const commitDir = join(a, HUB_REPO, HUB_REVISION);
    expect(existsSync(join(commitDir, "model-00001-of-00002.safetensors"))).toBe(true);
    expect(statSync(join(commitDir, "model-00001-of-00002.safetensors")).size).toBe(11659512);
    expect(JSON.parse(readFileSync(join(a, HUB_REPO, "repo.json"), "utf8"))).toEqual({ refs: { main: HUB_REVISION }, gated: false });
    // Warm: the stamp says so, nothing is rebuilt or relinked.
    expect(await ensureHubRepo(root, a, cache)).toMatchObject({ revision: HUB_REVISION, changed: false });
    // Another instance gets hard links to the same files, not another 17.6 MB.
    const b = join(tmp, "hub-b");
    expect(await ensureHubRepo(root, b, cache)).toMatchObject({ revision: HUB_REVISION, changed: true });
    const shard = (dir: string) => statSync(join(dir, HUB_REPO, HUB_REVISION, "model-00001-of-00002.safetensors")).ino;
    expect(shard(b)).toBe(shard(a));
    // A lost revision directory is put back although the stamp is there.
    rmSync(join(b, HUB_REPO, HUB_REVISION), { recursive: true });
    expect(await ensureHubRepo(root, b, cache)).toMatchObject({ changed: true });
    expect(existsSync(join(b, HUB_REPO, HUB_REVISION, "config.json"))).toBe(true);
  });

  it("is the commit docs/sim.md's modelServer.download example pins", () => {
    const doc = readFileSync(join(root, "docs", "sim.md"), "utf8");
    expect(doc).toContain(`repo: ${HUB_REPO}`);
    expect(doc).toContain(`revision: ${HUB_REVISION}`);
    expect(doc).toContain("endpoint: http://hub.sim");
  });
});

describe("modelServer.download's wheels on pypi.sim", () => {
  it("compares plain versions and gives up on the rest", () => {
    expect(compareVersions("1.17.0", "2.4.0")).toBeLessThan(0);
    expect(compareVersions("0.29.2", "0.25.1")).toBeGreaterThan(0);
    expect(compareVersions("26.4", "26.4.0")).toBe(0);
    expect(compareVersions("2026.10.19.post1", "2026.10.19")).toBeGreaterThan(0);
    expect(compareVersions("1.0rc1", "1.0")).toBeUndefined();
    expect(wheelVersion("huggingface_hub-1.17.0-py3-none-any.whl")).toBe("1.17.0");
  });

  it("adds new projects and older versions, serves shared files once, skips what could outrank Harbor's", () => {
    const harbor = ["huggingface_hub-2.4.0-py3-none-any.whl", "typer-0.29.2-py3-none-any.whl", "packaging-26.4-py3-none-any.whl", "rich-15.0.0-py3-none-any.whl"];
    const hf = ["huggingface_hub-1.17.0-py3-none-any.whl", "typer-0.25.1-py3-none-any.whl", "packaging-26.4-py3-none-any.whl", "shellingham-1.5.4-py2.py3-none-any.whl", "rich-15.1.0-py3-none-any.whl", "Rich-15.0.0-py3-none-manylinux_2_17_x86_64.whl"];
    const m = mergeableWheels(harbor, hf);
    expect(m.add).toEqual(["huggingface_hub-1.17.0-py3-none-any.whl", "shellingham-1.5.4-py2.py3-none-any.whl", "typer-0.25.1-py3-none-any.whl"]);
    expect(m.already).toEqual(["packaging-26.4-py3-none-any.whl"]);
    expect(m.skipped.map((s) => s.file)).toEqual(["Rich-15.0.0-py3-none-manylinux_2_17_x86_64.whl", "rich-15.1.0-py3-none-any.whl"]);
    expect(m.skipped[1].reason).toBe("rich 15.1.0 is not older than the index's 15.0.0: serving it could change what the base wheelhouse's installs resolve");
  });

  it("merges an extra wheel dir into the simple index, each file once", async () => {
    const base = join(tmp, "wheelhouse");
    const extra = join(tmp, "hf-wheelhouse");
    mkdirSync(base);
    mkdirSync(extra);
    for (const f of ["harbor-0.21.0-py3-none-any.whl", "huggingface_hub-2.4.0-py3-none-any.whl", "idna-3.20-py3-none-any.whl"]) writeFileSync(join(base, f), f);
    for (const f of ["huggingface_hub-1.17.0-py3-none-any.whl", "idna-3.20-py3-none-any.whl", "idna-3.30-py3-none-any.whl"]) writeFileSync(join(extra, f), f);
    const tree = join(tmp, "tree");
    const built = await buildOutsideTree(root, tree, [{ dir: base }, { dir: extra, extra: true }]);
    expect(built.wheels).toBe(4);
    expect(built.skippedWheels.map((s) => s.file)).toEqual(["idna-3.30-py3-none-any.whl"]);
    const page = readFileSync(join(tree, "simple", "huggingface-hub", "index.html"), "utf8");
    expect(page).toContain("/files/huggingface_hub-1.17.0-py3-none-any.whl#sha256=");
    expect(page).toContain("/files/huggingface_hub-2.4.0-py3-none-any.whl#sha256=");
    expect(readFileSync(join(tree, "simple", "idna", "index.html"), "utf8").match(/<a /g)).toHaveLength(1);
    expect(existsSync(join(tree, "files", "idna-3.30-py3-none-any.whl"))).toBe(false);
  });

  it("would serve every pin of components/weights/requirements.txt beside Harbor 0.21.0's wheelhouse", () => {
    // Harbor's resolution (sim/wheelhouse.sh) as of these pins: the two projects it shares at other versions.
    const harbor = ["huggingface_hub-2.4.0-py3-none-any.whl", "typer-0.29.2-py3-none-any.whl"];
    const pins = readFileSync(join(root, "components", "weights", "requirements.txt"), "utf8")
      .split("\n")
      .map((l) => /^([A-Za-z0-9_.-]+)==(\S+)/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => `${m[1]}-${m[2]}-py3-none-any.whl`);
    expect(pins).toHaveLength(21);
    expect(mergeableWheels(harbor, pins).skipped).toEqual([]);
  });
});

// `reprobench check`'s look at the outside from the runner (components/preflight/runner.ts, check-runner.sh,
// check-registry.sh): the plan and its secrets from a stack, the judging of recorded facts, and the two
// scripts run for real with bash against a git repository (file://), an in-process proxy that wants
// credentials, a closed port, and the in-process fake registry (test/helpers/fake-registry.ts) with the
// stand-in docker. Ends with `check` itself on the local stack with the scripts run here.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { collectCheck, renderCheck } from "../../../cli/check";
import { SECRET_PLACEHOLDER } from "../../../components/config/schema";
import { checkStackFile } from "../../../components/config/stack-file";
import { scriptWithEnv, hostScript } from "../../../components/host-script";
import {
  type DatasetFact, type ImageNeed, type ProbeFact, type RegistryFacts, type RunnerCheckPlan, type RunnerSecrets,
  REGISTRY_CHECK_SCRIPTS, RUNNER_CHECK_SCRIPTS, imageNeed, judgeDataset, judgeProxy, judgeRegistry, originOf, parseRegistryFacts, parseRunnerFacts,
  registryScriptEnv, runnerCheckPlan, runnerScriptEnv, runnerSecretsFromOutputs, runnerSecretsFromStackFile,
} from "../../../components/preflight/runner";
import { registryAuthJson } from "../../../components/registry-access";
import { fakeImageTools, runBash, scratchSpace, startFakeRegistry } from "../../helpers/fake-registry";
import { HostDouble } from "./host-double";

const REPO = path.resolve(__dirname, "../../..");
const SCRIPTS = path.join(REPO, "components/scripts");
const local = checkStackFile(path.join(REPO, "Pulumi.local.yaml")).config!;
const a100 = checkStackFile(path.join(REPO, "Pulumi.a100.yaml")).config!;
const scratch = scratchSpace("reprobench-outside-");
const BUDGET = 12_600;

const noSecrets: RunnerSecrets = { proxyEnv: { HTTPS_PROXY: "http://10.0.0.1:3128" }, proxyUnknown: null, registryEnv: {}, anonymous: [], values: {} };
const planA100 = runnerCheckPlan(a100, { stack: "a100" });

describe("the plan and its secrets", () => {
  it("a100: the runner worker-b, its proxy, the pinned git dataset, the canary's and the server image's registry", () => {
    expect(planA100).toMatchObject({
      runner: "worker-b", proxy: true, noDataset: null, noImages: null, canaryPulled: true, registries: ["docker.io"],
      dataset: { kind: "git", repo: "https://github.com/harbor-framework/terminal-bench-2-1.git", commit: "7131e4375048a0e408a8fb404b5f499d726b695b", expected: 89, keys: { repo: "harbor.datasetRepo" } },
    });
    const env = runnerScriptEnv(planA100, "STATE");
    expect(env).toMatchObject({ PROBE_URLS: "https://github.com/", PROBE_REGISTRIES: "docker.io", DATASET_COMMIT: "7131e4375048a0e408a8fb404b5f499d726b695b", DATASET_STATE_SCRIPT: "STATE" });
    // A run stack's own dataset is named by its own keys.
    expect(runnerCheckPlan(a100, { stack: "dev", ownDataset: true }).dataset?.keys).toEqual({ repo: "dataset.repo", commit: "dataset.commit" });
  });

  it("a cluster without Harbor needs no dataset and no images; hf-sandbox pulls none on the runner", () => {
    const off = structuredClone(a100);
    off.harbor.enabled = false;
    expect(runnerCheckPlan(off, { stack: "x" })).toMatchObject({ dataset: null, noDataset: expect.stringContaining("run.enabled and harbor.enabled are off") });
    const hf = structuredClone(a100);
    hf.run.environment = "hf-sandbox";
    const plan = runnerCheckPlan(hf, { stack: "x" });
    expect(plan.noImages).toContain("hf-sandbox");
    expect(imageNeed(plan, null)).toBeNull();
  });

  it("the proxy URL from the stack file when it is there, else why not; registry passwords from their files only", () => {
    const s = runnerSecretsFromStackFile(local, { proxyUrlFiles: {}, registryPasswordFiles: { "registry.sim:5000": "pw-from-file" } }, "local");
    expect(s.proxyEnv).toMatchObject({ HTTPS_PROXY: "http://127.0.0.1:27890", NO_PROXY: "127.0.0.1,localhost" });
    expect(JSON.parse(s.registryEnv.REGISTRY_AUTH_JSON).auths["registry.sim:5000"].auth).toBe(Buffer.from("reprobench-pull:pw-from-file").toString("base64"));
    const secretOnly = structuredClone(a100);
    secretOnly.hosts[1].proxy = { noProxy: ["127.0.0.1"] };
    secretOnly.proxyUrls = { default: SECRET_PLACEHOLDER };
    secretOnly.registries = [{ ...local.registries[0], host: "docker.io", passwordFile: undefined }];
    secretOnly.registryPasswords = { "docker.io": SECRET_PLACEHOLDER };
    const u = runnerSecretsFromStackFile(secretOnly, { proxyUrlFiles: {}, registryPasswordFiles: {} }, "a100");
    expect(u.proxyEnv).toBeNull();
    expect(u.proxyUnknown).toContain("reprobench:proxyUrls.worker-b");
    expect(u.proxyUnknown).toContain("reprobench up --stack a100");
    expect(u.anonymous).toEqual(["docker.io"]);
  });

  it("the outputs' runnerPullEnv, when the stack has it", () => {
    const proxy = { HTTPS_PROXY: "http://u:p4ssw0rd@10.0.0.1:3128", NO_PROXY: "127.0.0.1" };
    const s = runnerSecretsFromOutputs({ proxy, registry: { REGISTRY_AUTH_JSON: "{}" } }, a100, "a100")!;
    expect(s.proxyEnv).toEqual(proxy);
    expect(s.values.HTTPS_PROXY).toBe(proxy.HTTPS_PROXY);
    expect(runnerSecretsFromOutputs(undefined, a100, "a100")).toBeNull();
    expect(runnerSecretsFromOutputs({ proxy: {}, registry: {} }, a100, "a100")!.proxyUnknown).toContain("proxyUrls.worker-b");
  });

  it("an origin without credentials; none for an ssh URL", () => {
    expect(originOf("https://tok:en@github.com/a/b.git")).toBe("https://github.com/");
    expect(originOf("git@github.com:a/b.git")).toBeNull();
  });
});

const probe = (p: Partial<ProbeFact>): ProbeFact => ({ url: "https://github.com/", proxy: "10.0.0.1:3128", code: "000", connect: "000", exit: 0, error: "", ...p });

describe("the proxy row", () => {
  it("passes when each destination answered through the proxy, whatever its status", () => {
    const r = judgeProxy(planA100, noSecrets, [probe({ code: "200", connect: "200" }), probe({ url: "https://registry-1.docker.io/v2/", code: "401", connect: "200" })]);
    expect(r).toMatchObject({ status: "ok", detail: "via 10.0.0.1:3128: github.com HTTP 200, registry-1.docker.io HTTP 401 answered" });
  });

  it.each([
    [{ connect: "407", exit: 56 }, "proxy 10.0.0.1:3128 refused https://github.com/: 407 Proxy Authentication Required", "check the credentials in the runner's proxy URL"],
    [{ connect: "403", exit: 56 }, "proxy 10.0.0.1:3128 refused the tunnel (CONNECT) for https://github.com/: HTTP 403", "let the proxy reach github.com"],
    [{ url: "http://git.sim/", code: "403" }, "proxy 10.0.0.1:3128 (or the server behind it) refused http://git.sim/: HTTP 403", "let the proxy reach git.sim"],
    [{ exit: 7, error: "curl: (7) Failed to connect to 10.0.0.1 port 3128 after 1 ms: Couldn't connect to server" }, "cannot reach https://github.com/ through proxy 10.0.0.1:3128: the proxy refused the connection or cannot be reached: curl: (7) Failed to connect to 10.0.0.1 port 3128", "check that proxy 10.0.0.1:3128 runs"],
  ])("names a refusal %# with the proxy's host:port and the fix", (p, message, fix) => {
    const r = judgeProxy(planA100, noSecrets, [probe(p)]);
    expect(r.status).toBe("fail");
    expect(r.problems[0].subject).toBe("proxy 10.0.0.1:3128");
    expect(r.problems[0].message).toContain(message);
    expect(r.problems[0].fix).toContain(fix);
  });

  it("skips a runner without a proxy; warns, checking nothing, when its URL is not known here", () => {
    expect(judgeProxy({ ...planA100, proxy: false }, noSecrets, []).status).toBe("skip");
    const r = judgeProxy(planA100, { ...noSecrets, proxyEnv: null, proxyUnknown: "its URL is a secret" }, []);
    expect(r).toMatchObject({ status: "warn", notes: ["its URL is a secret"] });
  });
});

const fact = (d: Partial<DatasetFact>): DatasetFact => ({
  repo: "https://github.com/harbor-framework/terminal-bench-2-1.git", proxy: "10.0.0.1:3128", state: "dataset=missing", lsRemote: 0, lsRemoteError: "", tip: "", head: "a".repeat(40), fetch: -1, fetchError: "", ...d,
});
const COMMIT = "7131e4375048a0e408a8fb404b5f499d726b695b";

describe("the dataset row", () => {
  it("passes for a tip, a commit fetched alone, or the runner's checkout at the pin", () => {
    expect(judgeDataset(planA100, fact({ tip: "refs/heads/main" }))).toMatchObject({ status: "ok", detail: expect.stringContaining("7131e4375048 is the tip of refs/heads/main"), notes: ["not on the runner yet: up clones it"] });
    expect(judgeDataset(planA100, fact({ fetch: 0 })).status).toBe("ok");
    expect(judgeDataset(planA100, fact({ state: `dataset=${COMMIT} tasks=89` }))).toMatchObject({ status: "ok", detail: expect.stringContaining("checked out at 7131e4375048 on the runner (89 tasks)") });
  });

  it("fails naming the commit and the key when the repository has no such commit", () => {
    const r = judgeDataset(planA100, fact({ fetch: 128, fetchError: `fatal: remote error: upload-pack: not our ref ${COMMIT}` }));
    expect(r.status).toBe("fail");
    expect(r.problems[0]).toMatchObject({ message: expect.stringContaining(`commit ${COMMIT} is not in https://github.com/harbor-framework/terminal-bench-2-1.git`), fix: "set harbor.datasetCommit to a commit of https://github.com/harbor-framework/terminal-bench-2-1.git" });
  });

  it("fails when the repository does not answer, with the fix the error points to", () => {
    const proxy = judgeDataset(planA100, fact({ lsRemote: 128, lsRemoteError: "fatal: unable to access 'https://github.com/x.git/': Received HTTP code 407 from proxy after CONNECT" }));
    expect(proxy.problems[0]).toMatchObject({ message: expect.stringContaining("git ls-remote failed through proxy 10.0.0.1:3128: fatal: unable to access"), fix: expect.stringContaining("check the credentials") });
    expect(judgeDataset(planA100, fact({ lsRemote: 128, lsRemoteError: "remote: Repository not found." })).problems[0].fix).toBe("check harbor.datasetRepo");
    expect(judgeDataset(planA100, fact({ lsRemote: 124 })).problems[0].message).toContain("no answer within 15s");
  });

  it("warns when the commit can be confirmed only by a clone (a dumb-HTTP server); fails a checkout with another task count", () => {
    const dumb = judgeDataset(planA100, fact({ fetch: 128, fetchError: "fatal: dumb http transport does not support shallow capabilities" }));
    expect(dumb.status).toBe("warn");
    expect(dumb.notes[0]).toContain("up clones the repository and checks it then");
    expect(judgeDataset(planA100, fact({ state: `dataset=${COMMIT} tasks=88` })).problems[0].message).toContain("has 88 task.toml files");
  });

  it("a project directory: its task count, here", () => {
    const plan = runnerCheckPlan({ ...a100, harbor: { ...a100.harbor, datasetRepo: "sim/dataset", datasetTasksSubdir: "", expectedTaskCount: 3 } }, { stack: "x" });
    expect(judgeDataset(plan, null, { exists: true, taskTomls: 3, path: "/p/sim/dataset" }).status).toBe("ok");
    expect(judgeDataset(plan, null, { exists: true, taskTomls: 2, path: "/p/sim/dataset" }).problems[0].message).toContain("has 2 task.toml files");
    expect(judgeDataset(plan, null, { exists: false, taskTomls: 0, path: "/p/nope" }).status).toBe("fail");
  });
});

const images = (n: number, registry = "alexgshaw") => Array.from({ length: n }, (_, i) => `${registry}/task-${i}:20251031`);
const need = (list: string[]): ImageNeed => ({ images: list, estimate: null });
const head = (h: Partial<RegistryFacts["registries"][number]>): RegistryFacts["registries"][number] => ({ registry: "docker.io", image: "alexgshaw/task-0:20251031", status: "200", limit: "10", remaining: "10", window: "3600", error: "", credentials: false, ...h });

describe("the registry row", () => {
  it("passes when the pulls left cover the images still to pull", () => {
    const r = judgeRegistry(planA100, noSecrets, need(images(10)), { docker: true, missing: images(8), registries: [head({ remaining: "9" })] }, BUDGET);
    expect(r).toMatchObject({ status: "ok", detail: "docker.io: 8 of 10 to pull, 9 pulls left of 10 per 3600s, anonymous" });
  });

  it("fails when the windows the images need exceed the pre-pull's wait, with task-images.sh's fix", () => {
    const r = judgeRegistry(planA100, noSecrets, need(images(89)), { docker: true, missing: images(89), registries: [head({})] }, BUDGET);
    expect(r.status).toBe("fail");
    expect(r.problems[0].message).toBe("the 89 images still to pull from docker.io need 8 more pull window(s) of 3600s (480 min) beyond the 10 pulls left (anonymous: 10 pulls per 3600s), more than the pre-pull may wait (210 min)");
    expect(r.problems[0].fix).toBe("set credentials for docker.io (reprobench:registries[].username and the secret reprobench:registryPasswords) or a pull-through mirror (reprobench:registries[].mirror), then run up again");
  });

  it("warns when up will wait for a window within its budget; fails a 429 and a refused login", () => {
    const wait = judgeRegistry(planA100, noSecrets, need(images(15)), { docker: true, missing: images(15), registries: [head({})] }, BUDGET);
    expect(wait.status).toBe("warn");
    expect(wait.notes[0]).toContain("up waits for them");
    const used = judgeRegistry(planA100, noSecrets, need(images(3)), { docker: true, missing: images(3), registries: [head({ status: "429", remaining: "0" })] }, BUDGET);
    expect(used.problems[0].message).toContain("its pull limit is used up now (anonymous; alexgshaw/task-0:20251031 answered 429 Too Many Requests): 3 images still to pull");
    const refused = judgeRegistry(planA100, noSecrets, need(images(3)), { docker: true, missing: images(3), registries: [head({ status: "401", credentials: true, error: "HEAD …: 401 Unauthorized (sent with credentials)" })] }, BUDGET);
    expect(refused.problems[0].fix).toBe('check reprobench:registries[].username and the secret registryPasswords["docker.io"]');
  });

  it("all present needs no HEAD; a mirrored registry's quota is the mirror's; before the dataset, an estimate from the canary", () => {
    expect(judgeRegistry(planA100, noSecrets, need(images(3)), { docker: true, missing: [], registries: [] }, BUDGET)).toMatchObject({ status: "ok", detail: "docker.io: all 3 images present" });
    expect(judgeRegistry({ ...planA100, mirrored: ["docker.io"] }, noSecrets, need(images(3)), { docker: true, missing: images(3), registries: [] }, BUDGET).detail).toContain("through its mirror");
    const estimate = imageNeed(planA100, null)!;
    expect(estimate.images).toEqual(["alexgshaw/regex-chess:20251031"]);
    const r = judgeRegistry(planA100, noSecrets, estimate, { docker: true, missing: [], registries: [head({ image: "alexgshaw/regex-chess:20251031" })] }, BUDGET);
    expect(r.status).toBe("fail");
    expect(r.problems[0].message).toContain("the 90 images still to pull from docker.io");
    expect(r.notes[0]).toContain("89 task images (harbor.expectedTaskCount) assumed from docker.io");
  });

  it("the dataset's images and the canary, from task.toml texts", () => {
    const n = imageNeed(planA100, { "a/task.toml": '[environment]\ndocker_image = "alexgshaw/a:1"\n', "b/task.toml": "[metadata]\n" })!;
    expect(n).toEqual({ images: ["alexgshaw/a:1", "alexgshaw/regex-chess:20251031"], estimate: null });
    expect(registryScriptEnv(planA100, n)).toMatchObject({ IMAGES: "alexgshaw/a:1\nalexgshaw/regex-chess:20251031", HEAD_PRESENT: "0" });
  });
});

// ---------------------------------------------------------------------------------------------------------
// The scripts, for real

const baseEnv = (dir: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TMPDIR: dir, LC_ALL: "C" });
const proxyVars = (url: string) => ({ http_proxy: url, HTTP_PROXY: url, https_proxy: url, HTTPS_PROXY: url, no_proxy: "", NO_PROXY: "" });

describe("check-runner.sh and check-registry.sh", () => {
  it.each(["check-runner.sh", "check-registry.sh"])("%s is shellcheck-clean", (name) => {
    const r = spawnSync("shellcheck", ["--severity=style", path.join(SCRIPTS, name)], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  /** A git repository with two commits: [first, second (the tip)]. */
  function gitRepo(dir: string): { url: string; commits: string[] } {
    const src = path.join(dir, "src");
    const git = (...args: string[]) => execFileSync("git", ["-C", src, ...args], { encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } }).trim();
    mkdirSync(path.join(src, "task-a"), { recursive: true });
    execFileSync("git", ["init", "-q", "-b", "main", src]);
    writeFileSync(path.join(src, "task-a", "task.toml"), '[environment]\ndocker_image = "registry.sim:5000/tb/a:1"\n');
    git("add", ".");
    git("commit", "-qm", "one");
    const first = git("rev-parse", "HEAD");
    writeFileSync(path.join(src, "README"), "x\n");
    git("add", ".");
    git("commit", "-qm", "two");
    return { url: `file://${src}`, commits: [first, git("rev-parse", "HEAD")] };
  }

  /** An HTTP proxy that wants credentials: 407 to everything. */
  async function authProxy(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = http.createServer((_req, res) => {
      res.writeHead(407, { "Proxy-Authenticate": 'Basic realm="p"', "Content-Length": "0" });
      res.end();
    });
    server.on("connect", (_req, socket) => socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const { port } = server.address() as AddressInfo;
    return { url: `127.0.0.1:${port}`, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) };
  }


  it("check-runner.sh: the commit as a ref's tip, fetched alone, or absent; the checkout's task.toml texts at the pin", async () => {
    const dir = scratch.tempDir();
    const { url, commits } = gitRepo(dir);
    const plan = runnerCheckPlan({ ...local, hosts: local.hosts.map((h) => ({ ...h, proxy: undefined })) }, { stack: "local" });
    const run = async (commit: string, datasetDir = path.join(dir, "none")) => {
      const env = { ...runnerScriptEnv({ ...plan, dataset: { ...(plan.dataset as Extract<RunnerCheckPlan["dataset"], { kind: "git" }>), repo: url, commit, dir: datasetDir, tasksDir: datasetDir } }, hostScript("harbor-dataset-check")) };
      const r = await runBash(scriptWithEnv(RUNNER_CHECK_SCRIPTS, env), baseEnv(dir));
      expect(r.status, r.stderr).toBe(0);
      return parseRunnerFacts(r.stdout);
    };
    const tip = await run(commits[1]);
    expect(tip.probes).toEqual([]);
    expect(tip.dataset).toMatchObject({ lsRemote: 0, tip: "refs/heads/main", state: "dataset=missing", fetch: -1 });
    const older = await run(commits[0]);
    expect(older.dataset).toMatchObject({ tip: "", fetch: 0 });
    expect(judgeDataset(plan, older.dataset).status).toBe("ok");
    const absent = await run("0".repeat(39) + "1");
    expect(judgeDataset(plan, absent.dataset).problems[0].message).toContain(`is not in ${url}`);
    // A checkout at the pin: its tasks, for the image list.
    const checkout = path.join(dir, "checkout");
    execFileSync("git", ["clone", "-q", url.replace("file://", ""), checkout]);
    execFileSync("git", ["-C", checkout, "checkout", "-q", "--detach", commits[0]]);
    const at = await run(commits[0], checkout);
    expect(at.dataset?.state).toBe(`dataset=${commits[0]} tasks=1`);
    expect(at.taskTomls).toEqual({ "task-a/task.toml": '[environment]\ndocker_image = "registry.sim:5000/tb/a:1"\n' });
  });

  it("check-runner.sh: a proxy that wants credentials and a closed one are named by host:port, never with the credentials", async () => {
    const dir = scratch.tempDir();
    const proxy = await authProxy();
    try {
      const plan = runnerCheckPlan(local, { stack: "local" });
      const env = { ...runnerScriptEnv({ ...plan, dataset: null }, hostScript("harbor-dataset-check")), PROBE_URLS: "http://git.example/\nhttps://github.example/", INSECURE_REGISTRIES: "registry.sim:5000" };
      const r = await runBash(scriptWithEnv(RUNNER_CHECK_SCRIPTS, env), { ...baseEnv(dir), ...proxyVars(`http://someone:s3cr3t-pw@${proxy.url}`) });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain("s3cr3t-pw");
      const facts = parseRunnerFacts(r.stdout);
      const row = judgeProxy(plan, noSecrets, facts.probes);
      expect(row.status).toBe("fail");
      expect(row.problems.map((p) => p.message)).toEqual(expect.arrayContaining([`proxy ${proxy.url} refused http://git.example/: 407 Proxy Authentication Required`, `proxy ${proxy.url} refused https://github.example/: 407 Proxy Authentication Required`]));
      // The registry's /v2/ too (plain HTTP for an insecure one).
      expect(facts.probes.map((p) => p.url)).toContain("http://registry.sim:5000/v2/");
    } finally {
      await proxy.close();
    }
    const closed = await runBash(scriptWithEnv(RUNNER_CHECK_SCRIPTS, { ...runnerScriptEnv({ ...runnerCheckPlan(local, { stack: "local" }), dataset: null }, hostScript("harbor-dataset-check")), PROBE_URLS: "http://git.example/", PROBE_REGISTRIES: "" }), { ...baseEnv(dir), ...proxyVars("http://someone:s3cr3t-pw@127.0.0.1:9") });
    const row = judgeProxy(runnerCheckPlan(local, { stack: "local" }), noSecrets, parseRunnerFacts(closed.stdout).probes);
    expect(row.problems[0].message).toContain("cannot reach http://git.example/ through proxy 127.0.0.1:9: the proxy refused the connection or cannot be reached");
    expect(JSON.stringify(row)).not.toContain("s3cr3t-pw");
  });

  it("check-registry.sh: the images the runner lacks, one free HEAD per registry with the quota, credentials from a file", async () => {
    const dir = scratch.tempDir();
    const registry = scratch.keep(await startFakeRegistry({ quota: { anonymous: 2, authenticated: 5, windowSeconds: 3600 }, users: { puller: "pw-123456" } }));
    const tools = fakeImageTools(dir);
    writeFileSync(path.join(tools.state, "registry.sim:5000/tb/a:1".replace(/[/:]/g, "_")), "amd64\n");
    const plan = runnerCheckPlan(local, { stack: "local" });
    const list = ["registry.sim:5000/tb/a:1", "registry.sim:5000/tb/b:1", "registry.sim:5000/tb/c:1", "r.io/x/y:2"];
    const env = { ...registryScriptEnv({ ...plan, insecureRegistries: ["registry.sim:5000", "r.io"] }, need(list)), REGISTRY_AUTH_JSON: registryAuthJson([{ registry: "registry.sim:5000", username: "puller", password: "pw-123456" }]) };
    const r = await runBash(scriptWithEnv(REGISTRY_CHECK_SCRIPTS, env), { ...baseEnv(dir), PATH: `${tools.bin}:${process.env.PATH}`, STATE: tools.state, ...proxyVars(registry.proxyUrl) });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("pw-123456");
    const facts = parseRegistryFacts(r.stdout);
    expect(facts.missing).toEqual(["r.io/x/y:2", "registry.sim:5000/tb/b:1", "registry.sim:5000/tb/c:1"]);
    expect(facts.registries.map((h) => [h.registry, h.image, h.status, h.limit, h.remaining, h.credentials])).toEqual([
      ["r.io", "r.io/x/y:2", "200", "2", "2", false],
      ["registry.sim:5000", "registry.sim:5000/tb/b:1", "200", "5", "5", true],
    ]);
    // HEADs only: nothing counted.
    expect(registry.counted()).toEqual([]);
    expect(registry.manifests().map((m) => m.method)).toEqual(["HEAD", "HEAD"]);
    expect(judgeRegistry(plan, noSecrets, need(list), facts, BUDGET)).toMatchObject({ status: "ok", detail: "r.io: 1 of 1 to pull, 2 pulls left of 2 per 3600s, anonymous, registry.sim:5000: 2 of 3 to pull, 5 pulls left of 5 per 3600s, with this stack's credentials" });
  });
});

describe("reprobench check on the local stack, with the outside scripts run here", () => {
  it("adds proxy, dataset and registry rows to the runner's table, fails naming the quota's shortfall, keeps the credentials out of --json", async () => {
    const dir = scratch.tempDir();
    const host = new HostDouble();
    try {
      const src = path.join(dir, "src");
      mkdirSync(path.join(src, "t"), { recursive: true });
      const genv = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
      execFileSync("git", ["init", "-q", "-b", "main", src]);
      writeFileSync(path.join(src, "t", "task.toml"), "[metadata]\n");
      execFileSync("git", ["-C", src, "add", "."], { env: genv });
      execFileSync("git", ["-C", src, "commit", "-qm", "one"], { env: genv });
      const placeholder = path.join(host.dir, "sim-placeholder");
      mkdirSync(placeholder);
      writeFileSync(path.join(placeholder, "tokenizer.json"), "{}");
      const config = structuredClone(local);
      config.modelServer.gpus = "none";
      config.modelServer.modelPath = placeholder;
      config.harbor.datasetRepo = `file://${src}`;
      config.harbor.datasetCommit = execFileSync("git", ["-C", src, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
      config.harbor.datasetDir = path.join(dir, "none");
      config.harbor.insecureRegistries = ["registry.sim:5000"];
      const registry = scratch.keep(await startFakeRegistry({ quota: { anonymous: 1, authenticated: 1, windowSeconds: 21_600 } }));
      const tools = fakeImageTools(dir);
      const proxyUrl = registry.proxyUrl.replace("http://", "http://who:n0t-to-be-seen@");
      const pullEnv = { proxy: { ...proxyVars(proxyUrl) }, registry: {} };
      const conn = (name: string) => ({ name, host: "127.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "h" });
      const report = await collectCheck({
        stack: "local",
        root: dir,
        resolve: async () => ({ config, connections: new Map([["worker-a", conn("worker-a")], ["worker-b", conn("worker-b")]]), notes: [], pullEnv }),
        runScript: async (_c, script, env) => {
          if (env.HOST_NAME === "worker-a") throw new Error("127.0.0.1:2201 is unreachable over SSH: Connection refused");
          if (env.HOST_NAME) return host.run(env);
          const r = await runBash(scriptWithEnv([], env) + script, { ...baseEnv(dir), PATH: `${tools.bin}:${process.env.PATH}`, STATE: tools.state });
          if (r.status !== 0) throw new Error(`script failed: ${r.stderr}`);
          return r.stdout;
        },
      });
      expect(report.ready).toBe(false);
      const runner = report.hosts.find((h) => h.host === "worker-b")!;
      expect(runner.checks.slice(-3).map((c) => [c.check, c.status])).toEqual([["proxy", "ok"], ["dataset", "ok"], ["registry", "fail"]]);
      const text = renderCheck(report);
      expect(text).toContain("worker-a (worker): NOT READY\n  cannot be checked: 127.0.0.1:2201 is unreachable over SSH");
      expect(text).toMatch(/ {2}proxy +ok +via 127\.0\.0\.1:\d+: registry\.sim:5000 HTTP 200 answered/);
      expect(text).toContain("is the tip of refs/heads/main");
      expect(text).toContain("✗ worker-b: registry registry.sim:5000: the 4 images still to pull from registry.sim:5000 need 3 more pull window(s) of 21600s (1080 min) beyond the 1 pulls left (anonymous: 1 pulls per 21600s), more than the pre-pull may wait (210 min); fix: set credentials for registry.sim:5000");
      expect(JSON.stringify(report)).not.toContain("n0t-to-be-seen");
      expect(text).not.toContain("n0t-to-be-seen");
    } finally {
      host.cleanup();
    }
  });

  it("a runner whose preflight passes and whose outside script fails gets a failing row naming why", async () => {
    const host = new HostDouble();
    try {
      const config = structuredClone(local);
      config.modelServer.gpus = "none";
      config.modelServer.modelPath = host.model();
      const conn = (name: string) => ({ name, host: "127.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "h" });
      const report = await collectCheck({
        stack: "local",
        resolve: async () => ({ config, connections: new Map([["worker-a", conn("worker-a")], ["worker-b", conn("worker-b")]]), notes: [], pullEnv: { proxy: proxyVars("http://127.0.0.1:9"), registry: {} } }),
        runScript: async (_c, _s, env) => {
          if (env.HOST_NAME) return host.run(env);
          throw new Error("worker-b (127.0.0.1:22): no answer within 90s");
        },
      });
      const runner = report.hosts.find((h) => h.host === "worker-b")!;
      expect(runner.checks.at(-1)).toMatchObject({ check: "outside", status: "fail", detail: "cannot be checked: worker-b (127.0.0.1:22): no answer within 90s" });
      expect(runner.ready).toBe(false);
    } finally {
      host.cleanup();
    }
  });

  it("names a runner whose outside checks cannot run, once", async () => {
    const config = structuredClone(local);
    const conn = (name: string) => ({ name, host: "127.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "h" });
    const report = await collectCheck({
      stack: "local",
      resolve: async () => ({ config, connections: new Map([["worker-a", conn("worker-a")], ["worker-b", conn("worker-b")]]), notes: [], pullEnv: { proxy: proxyVars("http://127.0.0.1:9"), registry: {} } }),
      runScript: async () => {
        throw new Error("127.0.0.1:2202 is unreachable over SSH: Connection refused");
      },
    });
    const runner = report.hosts.find((h) => h.host === "worker-b")!;
    expect(runner.problems).toEqual(["worker-b: 127.0.0.1:2202 is unreachable over SSH: Connection refused"]);
    expect(runner.checks).toEqual([]);
  });
});

// The simulated cluster against a real Docker engine: `sim up` (twice: idempotent), SSH with the pinned
// host key only, the outside (registry, package index, git server) reachable from the hosts only through
// the authenticated proxy (direct connections dropped; injected failures seen and reset), Docker inside
// every host running an image fetched through the proxy, the REAL sglang-router on
// worker-b in front of the doubles on both hosts (--dp-aware, ONE --worker-urls: 4 workers, every rank
// reached), and `sim down` copying job results out and leaving nothing with our label behind.
// Traffic goes only to 127.0.0.1 (SSH, registry) and the test instance's networks 172.31.251.0/24 and
// 172.29.241.0/24.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { listSimResources } from "../../sim/docker";
import { setNetworkConditions } from "../../sim/settings";
import { simDown, simUp } from "../../sim/cluster";
import { runArgv } from "../../components/transport";
import { sshArgs, sshRun } from "../../sim/ssh";
import { MODEL_DIR, JOBS_DIR, type ClusterPlan, type HostPlan, type SimInstance } from "../../sim/layout";
import { mustRun, run, waitFor } from "../../sim/exec";
import { simCacheDir } from "../../sim/images";
import { HUB_REPO, HUB_REVISION } from "../../sim/hub-repo";
import { datasetCommits } from "../../sim/outside";

const root = resolve(__dirname, "..", "..");
// A cluster of its own (network 172.31.251.0/24, SSH 2301+, registry 127.0.0.1:5001, state in
// .sim/instances/itest): this test brings it down, which must not disturb the default cluster that
// `reprobench sim up` and the local stack use. Everything else is the same code path.
const instance: SimInstance = { name: "itest", slot: 1 };
const timings: Record<string, number> = {};
const log = (m: string) => console.log(`sim: ${m}`);

const DOUBLE = "registry.sim:5000/reprobench/sglang-double:latest";
const MODEL = "Qwen/Qwen3.8-27B";
const WORKER_PORT = 30001;
const ROUTER_PORT = 30000;

let plan: ClusterPlan;
const ssh = (host: HostPlan, command: string, timeoutMs = 120_000) => sshRun(plan, host, command, { timeoutMs });
const mustSsh = async (host: HostPlan, command: string, timeoutMs = 120_000) => {
  const r = await ssh(host, command, timeoutMs);
  if (r.code !== 0) throw new Error(`ssh ${host.name} '${command}' exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
};
/** Runs `command` on a host with the proxy variables set from the instance's proxy-url (sent on stdin). */
const viaProxy = (host: HostPlan, command: string, timeoutMs = 120_000) =>
  sshRun(plan, host, `IFS= read -r u; export http_proxy="$u" https_proxy="$u" HTTP_PROXY="$u" HTTPS_PROXY="$u"; ${command}`, {
    input: readFileSync(join(root, plan.proxyUrlFile), "utf8"),
    timeoutMs,
  });
const mustViaProxy = async (host: HostPlan, command: string, timeoutMs = 120_000) => {
  const r = await viaProxy(host, command, timeoutMs);
  if (r.code !== 0) throw new Error(`ssh ${host.name} (through the proxy) '${command}' exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
};
/** An image from registry.sim into a host's dockerd through the proxy (the sim leaves dockerd without one). */
const fetchImage = (host: HostPlan, ref: string) =>
  mustViaProxy(host, `skopeo copy -q --src-tls-verify=false docker://${ref} docker-daemon:${ref} >/dev/null`, 600_000);

async function fetchJson<T>(url: string, init?: RequestInit): Promise<{ status: number; json: T; headers: Headers }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

describe("simulated cluster (real docker)", () => {
  let pinnedKeys: string[] = [];

  beforeAll(async () => {
    const first = await simUp({ root, log, instance });
    timings[first.built.length > 0 ? "first sim up (built images)" : "first sim up (images cached)"] = first.seconds;
    plan = first.plan;
    pinnedKeys = plan.hosts.map((h) => readFileSync(join(root, h.hostKeyFile), "utf8"));
  });

  afterAll(async () => {
    console.log(`sim up/down timings (s): ${JSON.stringify(timings, (_k, v) => (typeof v === "number" ? Number(v.toFixed(1)) : v))}`);
    // The tests bring the instance down themselves; after a failure (setup included) this does it.
    await simDown({ root, log, instance, discardResults: true });
  });

  it("a second sim up changes nothing, keeps host keys and takes seconds", async () => {
    const again = await simUp({ root, log, instance });
    timings["sim up re-run (cluster up)"] = again.seconds;
    expect(again.built).toEqual([]);
    expect(again.pushed).toEqual([]);
    expect(again.createdHosts).toEqual([]);
    expect(plan.hosts.map((h) => readFileSync(join(root, h.hostKeyFile), "utf8"))).toEqual(pinnedKeys);
    expect(again.seconds).toBeLessThan(60);
    const cluster = JSON.parse(readFileSync(join(root, plan.clusterFile), "utf8")) as { hosts: { name: string; ip: string; sshPort: number }[] };
    expect(cluster.hosts.map((h) => [h.name, h.ip, h.sshPort])).toEqual([
      ["worker-a", "172.31.251.11", 2301],
      ["worker-b", "172.31.251.12", 2302],
    ]);
  });

  it("reaches every host over SSH with the pinned host key", async () => {
    for (const host of plan.hosts) {
      expect((await mustSsh(host, "hostname")).trim()).toBe(host.name);
      expect((await mustSsh(host, "ps -p 1 -o comm=")).trim()).toBe("systemd");
      // The key the host presents is the one recorded in .sim/hosts/<name>/.
      const scanned = await mustRun(["ssh-keyscan", "-t", "ed25519", "-p", String(host.sshPort), host.sshHost], { timeoutMs: 30_000 });
      expect(scanned).toContain(readFileSync(join(root, host.hostKeyFile), "utf8").trim());
    }
  });

  it("refuses a wrong host key, an unknown host and a foreign client key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-ssh-"));
    try {
      const [a, b] = plan.hosts;
      const withKnownHosts = (file: string, host: HostPlan, identity = join(root, plan.privateKeyFile)) =>
        sshArgs(plan, host, "true").map((arg) => arg.replace(/^UserKnownHostsFile=.*/, `UserKnownHostsFile=${file}`).replace(join(root, plan.privateKeyFile), identity));
      // worker-b's key recorded for worker-a's address: OpenSSH must refuse the connection.
      const wrong = join(dir, "known_hosts_wrong");
      writeFileSync(wrong, `[${a.sshHost}]:${a.sshPort} ${readFileSync(join(root, b.hostKeyFile), "utf8").trim()}\n`);
      const refused = await runArgv(withKnownHosts(wrong, a), { timeoutMs: 30_000 });
      expect(refused.code).toBe(255);
      expect(refused.stderr).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
      // No entry at all: StrictHostKeyChecking=yes refuses instead of trusting on first use.
      const empty = join(dir, "known_hosts_empty");
      writeFileSync(empty, "");
      const unknown = await runArgv(withKnownHosts(empty, a), { timeoutMs: 30_000 });
      expect(unknown.code).toBe(255);
      expect(unknown.stderr).toMatch(/Host key verification failed|No ED25519 host key is known/);
      // The right host key but a client key the host does not know: root login is by our key only.
      const foreign = join(dir, "foreign_key");
      await mustRun(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", foreign], { timeoutMs: 30_000 });
      const denied = await runArgv(withKnownHosts(join(root, plan.knownHostsFile), a, foreign), { timeoutMs: 30_000 });
      expect(denied.code).toBe(255);
      expect(denied.stderr).toMatch(/Permission denied \(publickey\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reaches the outside only through the proxy: registry, index, git and hub; direct connections are dropped", async () => {
    const cluster = JSON.parse(readFileSync(join(root, plan.clusterFile), "utf8")) as { outside: { harborWheelSha256: string; datasetPinnedCommit: string; datasetHeadCommit: string; hub: { revision: string } } };
    const commits = await datasetCommits(root);
    expect(cluster.outside).toMatchObject({ datasetPinnedCommit: commits.pinned, datasetHeadCommit: commits.head });
    const harborSha = createHash("sha256").update(readFileSync(join(simCacheDir("wheelhouse"), "harbor-0.21.0-py3-none-any.whl"))).digest("hex");
    expect(cluster.outside.harborWheelSha256).toBe(harborSha);
    for (const host of plan.hosts) {
      for (const url of ["http://registry.sim:5000/v2/", "http://pypi.sim/simple/", `http://${plan.hub.ip}/api/models/${HUB_REPO}`, "http://proxy.sim:3128/"]) {
        const direct = await ssh(host, `curl --noproxy '*' --connect-timeout 3 --max-time 6 -sS -o /dev/null ${url}`, 30_000);
        // proxy.sim itself is reachable (it answers a non-proxy request with 400); the outside is not.
        if (url.includes("proxy.sim")) expect(direct.code).toBe(0);
        else expect(direct.code, `${host.name}: direct ${url}: ${direct.stderr}`).not.toBe(0);
      }
      // Nothing beyond the cluster subnet either (DOCKER-USER rule; 192.0.2.1 is TEST-NET-1, never routed).
      expect((await ssh(host, "curl --noproxy '*' --connect-timeout 3 --max-time 6 -sS -o /dev/null http://192.0.2.1/", 30_000)).code).not.toBe(0);
      expect(await mustViaProxy(host, "curl -fsS http://registry.sim:5000/v2/_catalog")).toContain("reprobench/task-hello-file");
      const page = await mustViaProxy(host, "curl -fsS http://pypi.sim/simple/harbor/");
      expect(page).toContain(`harbor-0.21.0-py3-none-any.whl#sha256=${harborSha}`);
      const wheelSha = await mustViaProxy(host, "curl -fsS http://pypi.sim/files/harbor-0.21.0-py3-none-any.whl | sha256sum");
      expect(wheelSha.split(" ")[0]).toBe(harborSha);
      const refs = await mustViaProxy(host, "git ls-remote http://git.sim/terminal-bench-sim.git");
      expect(refs).toContain(`${commits.head}\tHEAD`);
      // The hub serves its repo at the pinned commit, and pypi.sim the client modelServer.download installs.
      const info = JSON.parse(await mustViaProxy(host, `curl -fsS http://hub.sim/api/models/${HUB_REPO}/revision/main`)) as { sha: string };
      expect(info.sha).toBe(HUB_REVISION);
      expect(cluster.outside.hub.revision).toBe(HUB_REVISION);
      expect(await mustViaProxy(host, "curl -fsS http://pypi.sim/simple/huggingface-hub/")).toContain("huggingface_hub-1.17.0-py3-none-any.whl#sha256=3b8156d23118e87f6a587648bfbc04f04a12a757ccb4ed298b35c4ae638bf24c");
      // Without credentials the proxy answers 407; to a destination outside its allowlist 403.
      const anon = await ssh(host, "curl -sS -o /dev/null -w '%{http_code}' -x http://proxy.sim:3128 http://registry.sim:5000/v2/");
      expect(anon.stdout).toBe("407");
      const other = await viaProxy(host, "curl -sS -o /dev/null -w '%{http_code}' http://172.31.251.1:22/");
      expect(other.stdout).toBe("403");
    }
  });

  it("fails proxied requests while failFraction is 1 (502, logged) and works again after a reset", async () => {
    const a = plan.hosts[0];
    try {
      expect(setNetworkConditions({ root, instance }, { failFraction: 1, failWith: "502" })).toMatchObject({ failFraction: 1 });
      const failed = await viaProxy(a, "curl -sS -o /dev/null -w '%{http_code}' http://registry.sim:5000/v2/");
      expect(failed.stdout).toBe("502");
      const logs = await run(["docker", "logs", "--tail", "20", plan.proxy.container], { timeoutMs: 30_000 });
      expect(logs.stdout + logs.stderr).toMatch(/FAILED \S+ GET http:\/\/registry\.sim:5000\/v2\/: injected 502/);
    } finally {
      setNetworkConditions({ root, instance }, {}, { reset: true });
    }
    // A HEAD: an anonymous GET /v2/ is Docker Hub's 401 Bearer challenge (the sim registry's pull-limit gate).
    expect((await viaProxy(a, "curl -sS -I -o /dev/null -w '%{http_code}' http://registry.sim:5000/v2/")).stdout).toBe("200");
  });

  it("runs Docker inside every host (overlay2, registry.sim trusted) and runs an image fetched through the proxy", async () => {
    for (const host of plan.hosts) {
      const info = JSON.parse(await mustSsh(host, "docker info --format '{{json .}}'")) as { Driver: string; ServerVersion: string; RegistryConfig: { IndexConfigs: Record<string, { Secure: boolean }> } };
      expect(info.Driver).toBe("overlay2");
      expect(info.ServerVersion).toMatch(/^26\./);
      expect(info.RegistryConfig.IndexConfigs["registry.sim:5000"]?.Secure).toBe(false);
      // The daemon.json our DockerDaemonConfig component finds (and must preserve).
      expect(JSON.parse(await mustSsh(host, "cat /etc/docker/daemon.json"))).toEqual({ "insecure-registries": ["registry.sim:5000"] });
      expect((await mustSsh(host, "docker compose version --short")).trim()).toMatch(/^2\./);
      // The host's dockerd has no proxy (the stack configures it), so it cannot pull by itself.
      const pull = await ssh(host, "timeout 60 docker pull -q registry.sim:5000/reprobench/sim-probe:latest", 90_000);
      expect(pull.code).not.toBe(0);
      // A task image: copied from registry.sim through the proxy (skopeo), then run (runc inside the host).
      await fetchImage(host, "registry.sim:5000/reprobench/task-hello-file:latest");
      const out = await mustSsh(
        host,
        "docker run --rm registry.sim:5000/reprobench/task-hello-file:latest bash -c 'pwd; python3 -c \"print(6*7)\"; command -v tmux asciinema || echo no-tmux'",
        300_000,
      );
      expect(out.trim().split("\n")).toEqual(["/app", "42", "no-tmux"]);
      expect((await mustSsh(host, `ls ${MODEL_DIR}`)).split("\n")).toContain("tokenizer.json");
    }
  });

  it("runs the loopback forwarder on the runner host only; it adds the credentials from a root-only file", async () => {
    const [a, b] = plan.hosts;
    expect((await ssh(b, "systemctl is-active reprobench-sim-proxy.service")).stdout.trim()).toBe("active");
    expect((await ssh(a, "systemctl is-active reprobench-sim-proxy.service")).stdout.trim()).not.toBe("active");
    expect((await mustSsh(b, "stat -c '%U %a' /etc/reprobench/sim-proxy-upstream")).trim()).toBe("root 600");
    expect(await mustSsh(b, "systemctl show -p ExecStart reprobench-sim-proxy.service")).not.toMatch(/reprobench:[0-9a-f]{32}/);
    expect(await mustSsh(b, "curl -fsS -x http://127.0.0.1:27890 http://proxy-check.reprobench.test/")).toContain("reprobench sim proxy ok");
    expect(await mustSsh(b, "curl -fsS -x http://127.0.0.1:27890 http://registry.sim:5000/v2/_catalog")).toContain("repositories");
  });

  describe("real sglang-router on worker-b over the doubles on both hosts", () => {
    const routerUrl = () => `http://${plan.hosts[1].ip}:${ROUTER_PORT}`;
    const workerUrl = (h: HostPlan) => `http://${h.ip}:${WORKER_PORT}`;

    beforeAll(async () => {
      for (const host of plan.hosts) {
        await ssh(host, "docker rm -f sim-test-double sim-test-router >/dev/null 2>&1; true");
        await fetchImage(host, DOUBLE);
        // Seed 000's worker command, with the host's placeholder model dir mounted like the real model.
        await mustSsh(
          host,
          [
            "docker run -d --name sim-test-double --network host",
            `-e SGLANG_DOUBLE_HOST_TAG=${host.name}`,
            `-v ${MODEL_DIR}:/models/Qwen3.8-27B:ro`,
            DOUBLE,
            "sglang serve --model-path /models/Qwen3.8-27B",
            `--served-model-name ${MODEL} --host ${host.ip} --port ${WORKER_PORT}`,
            "--tp-size 4 --dp-size 2 --context-length 262144 --max-running-requests 5",
            "--max-mamba-cache-size 25 --mem-fraction-static 0.90 --reasoning-parser qwen3 --tool-call-parser qwen3_coder",
          ].join(" "),
          300_000,
        );
      }
      const b = plan.hosts[1];
      // ONE --worker-urls followed by both URLs, as seed 000 does. Prometheus stays on the host's loopback.
      await mustSsh(
        b,
        [
          "docker run -d --name sim-test-router --network host -e HF_HUB_OFFLINE=1",
          `-v ${MODEL_DIR}:/models/Qwen3.8-27B:ro`,
          DOUBLE,
          `python3 -m sglang_router.launch_router --host ${b.ip} --port ${ROUTER_PORT}`,
          `--worker-urls ${plan.hosts.map(workerUrl).join(" ")}`,
          "--dp-aware --policy cache_aware --balance-abs-threshold 1 --balance-rel-threshold 1.2",
          "--prometheus-host 127.0.0.1 --prometheus-port 29000",
        ].join(" "),
      );
    });

    afterAll(async () => {
      if (!plan) return;
      for (const host of plan.hosts) await ssh(host, "docker rm -f sim-test-double sim-test-router >/dev/null 2>&1; true");
    });

    it("lists 4 healthy workers (2 hosts x dp 2)", async () => {
      let last = "";
      const wait = waitFor(
        "4 healthy workers in the router's /workers",
        async () => {
          try {
            const r = await fetchJson<{ workers: { url: string; is_healthy: boolean; model_id: string }[] }>(`${routerUrl()}/workers`);
            last = JSON.stringify(r.json);
            return r.json.workers.length === 4 && r.json.workers.every((w) => w.is_healthy) ? r.json.workers : undefined;
          } catch (err) {
            last = String(err);
            return undefined;
          }
        },
        { timeoutMs: 120_000, intervalMs: 500, lastError: () => last },
      );
      const workers = await wait.catch(async (err: Error) => {
        const logs = await ssh(plan.hosts[1], "docker logs --tail 30 sim-test-router 2>&1");
        throw new Error(`${err.message}\nrouter log:\n${logs.stdout}`);
      });
      console.log(`router workers: ${workers.map((w) => w.url).sort().join(" ")}`);
      expect(workers.map((w) => w.url).sort()).toEqual(plan.hosts.flatMap((h) => [`${workerUrl(h)}@0`, `${workerUrl(h)}@1`]).sort());
      expect(new Set(workers.map((w) => w.model_id))).toEqual(new Set([MODEL]));
    });

    it("answers READY and spreads a batch of completions over every rank of every host", async () => {
      const chat = (content: string) =>
        fetchJson<{ id: string; choices: { message: { content: string } }[] }>(`${routerUrl()}/v1/chat/completions`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content }], max_tokens: 32, temperature: 0, chat_template_kwargs: { enable_thinking: false } }),
        });
      const ready = await chat("Reply with exactly READY.");
      expect(ready.status).toBe(200);
      expect(ready.json.choices[0].message.content).toBe("READY");

      for (const host of plan.hosts) await fetch(`${workerUrl(host)}/_double/reset`, { method: "POST", signal: AbortSignal.timeout(10_000) });
      const batch = 24;
      const replies = await Promise.all(Array.from({ length: batch }, (_, i) => chat(`[[double:routing-probe]] request ${i}`)));
      expect(replies.map((r) => r.status)).toEqual(Array(batch).fill(200));
      const seen = new Map<string, number>();
      for (const reply of replies) {
        const key = `${reply.headers.get("x-double-worker")}@${reply.headers.get("x-double-dp-rank")}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      console.log(`router spread of ${batch} requests over the sim hosts: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
      expect([...seen.keys()].sort()).toEqual(["worker-a@0", "worker-a@1", "worker-b@0", "worker-b@1"]);
      // Each double counted the requests the router sent it with an explicit data_parallel_rank.
      let routed = 0;
      for (const host of plan.hosts) {
        const stats = await fetchJson<{ host_tag: string; ranks: { requests: number; routed_by_router: number }[] }>(`${workerUrl(host)}/_double/stats`);
        expect(stats.json.host_tag).toBe(host.name);
        for (const rank of stats.json.ranks) {
          expect(rank.routed_by_router).toBe(rank.requests);
          routed += rank.routed_by_router;
        }
      }
      expect(routed).toBe(batch);
    });
  });

  it("sim down copies job results out, removes everything labelled and nothing else", async () => {
    const runner = plan.hosts[1];
    const job = `sim-test-${process.pid}-${Date.now()}`;
    await mustSsh(runner, `mkdir -p ${JOBS_DIR}/${job}/trial-1 && echo '{"reward": 1}' > ${JOBS_DIR}/${job}/trial-1/result.json`);
    // Something of ours without the label must survive.
    const bystander = `reprobench-sim-test-bystander-${process.pid}`;
    await mustRun(["docker", "volume", "create", bystander], { timeoutMs: 30_000 });
    try {
      const before = await listSimResources(instance);
      console.log(`before sim down: ${JSON.stringify(before)}`);
      expect(before.containers).toEqual(["reprobench-sim-itest-hub", "reprobench-sim-itest-mirror", "reprobench-sim-itest-outside", "reprobench-sim-itest-proxy", "reprobench-sim-itest-registry", "reprobench-sim-itest-worker-a", "reprobench-sim-itest-worker-b"]);
      expect(before.volumes).toEqual(["reprobench-sim-itest-worker-a-docker", "reprobench-sim-itest-worker-b-docker"]);
      expect(before.networks).toEqual(["reprobench-sim-itest", "reprobench-sim-itest-outside"]);
      // Whatever else carries the sim label (the default cluster, if up) is not ours to remove.
      const othersBefore = await listSimResources();

      const rules = () => run(["iptables", "-S", "DOCKER-USER"], { timeoutMs: 30_000 }).then((r) => r.stdout);
      expect(await rules()).toMatch(/^-A DOCKER-USER ! -d 172\.31\.251\.0\/24 -i rbsim1 -m comment --comment "?reprobench-sim-egress:itest"? -j DROP$/m);
      const down = await simDown({ root, log, instance });
      expect(await rules()).not.toContain("reprobench-sim-egress:itest");
      const after = await listSimResources(instance);
      console.log(`after sim down: ${JSON.stringify(after)}`);
      expect(after).toEqual({ containers: [], volumes: [], networks: [] });
      expect(down.removed).toEqual(before);

      expect(await listSimResources()).toEqual(othersBefore);
      const saved = join(root, plan.resultsDir, runner.name, "jobs", job, "trial-1/result.json");
      expect(down.savedResults[runner.name]).toBe(`${plan.resultsDir}/${runner.name}/jobs`);
      expect(JSON.parse(readFileSync(saved, "utf8"))).toEqual({ reward: 1 });
      // Only results remain in the state dir (keys, known_hosts, cluster.json, proxy-url and network/ are gone).
      expect(readdirSync(join(root, plan.stateDir))).toEqual(["results"]);
      expect((await run(["docker", "volume", "inspect", bystander], { timeoutMs: 30_000 })).code).toBe(0);
      // Images and the registry's storage are caches, not cluster state: they stay for the next warm `sim up`.
      expect(existsSync(join(plan.registry.cacheDir, "docker/registry/v2/repositories/reprobench/task-base"))).toBe(true);
      expect((await run(["docker", "image", "inspect", "reprobench/debian-base:trixie"], { timeoutMs: 30_000 })).code).toBe(0);
    } finally {
      await run(["docker", "volume", "rm", "-f", bystander], { timeoutMs: 30_000 });
      rmSync(join(root, plan.stateDir), { recursive: true, force: true });
    }
  });

  it("comes back warm after down (images cached) and goes down clean again", async () => {
    const warm = await simUp({ root, log, instance });
    timings["warm sim up after down (images cached)"] = warm.seconds;
    expect(warm.built).toEqual([]);
    expect(warm.createdHosts).toEqual(["worker-a", "worker-b"]);
    // The registry came back with its cached storage: nothing had to be pushed again.
    expect(warm.pushed).toEqual([]);
    // A fresh cluster gets fresh host keys (down deleted the old ones with the hosts).
    expect(plan.hosts.map((h) => readFileSync(join(root, h.hostKeyFile), "utf8"))).not.toEqual(pinnedKeys);
    await simDown({ root, log, instance });
    expect(await listSimResources(instance)).toEqual({ containers: [], volumes: [], networks: [] });
    expect(existsSync(join(root, plan.clusterFile))).toBe(false);
    expect(existsSync(join(root, plan.stateDir))).toBe(false);
  });
});

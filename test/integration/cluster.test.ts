// The cluster components converged by the REAL Pulumi engine (Automation API) and the official plugins on
// the simulated cluster: idempotence, a one-worker change, drift repair (a killed container, pools removed
// from daemon.json), a refresh that cannot reach a host failing instead of planning a replacement, refused
// faults that leave daemon.json untouched, and a destroy that leaves nothing of ours behind. Traffic goes
// to 127.0.0.1 (SSH) and the sim hosts only.
import { mkdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { run } from "../../sim/exec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPlan } from "../../sim/layout";
import { type LooseConfig, type SimStack, simStack } from "../helpers/sim-stack";

let sim: SimStack;
let plan: ClusterPlan;
let stack: Stack;
const originalDaemonJson: Record<string, string> = {};

const ssh = (name: string, command: string) => sim.ssh(name, command);
const editConfig = (edit: (c: LooseConfig) => void) => sim.editConfig(edit);
const daemonJson = (name: string) => ssh(name, "cat /etc/docker/daemon.json 2>/dev/null || echo ABSENT");

/**
 * A concurrent batch of chat completions through the router; returns the set of "host@rank" tags that
 * answered. Each request is a distinct routing probe the doubles answer in 0.3 s, so the batch is in flight
 * together and cache_aware (abs 1 / rel 1.2) balances it by load: identical fast prompts would follow the
 * prefix cache to whichever rank answered first, and the spread would depend on timing.
 */
async function routedTags(n: number): Promise<Set<string>> {
  const key = (await stack.outputs()).sglangApiKey.value as string;
  const requests = Array.from({ length: n }, (_, i) => {
    const body = JSON.stringify({ model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: `[[double:routing-probe]] request ${i}` }], max_tokens: 32 });
    return `curl -fsS -D - -o /dev/null -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '${body}' http://127.0.0.1:30000/v1/chat/completions &`;
  });
  const script = `${requests.join("\n")}\nwait`;
  const out = await ssh("worker-b", script);
  const tags = new Set<string>();
  let worker = "";
  for (const line of out.split("\n")) {
    const [name, value] = line.split(":").map((s) => s.trim());
    if (name?.toLowerCase() === "x-double-worker") worker = value;
    if (name?.toLowerCase() === "x-double-dp-rank") tags.add(`${worker}@${value}`);
  }
  return tags;
}

beforeAll(async () => {
  // A cluster of its own (network, ports, containers), so the default `reprobench sim` one is never
  // touched; the run-level components are exercised by their own suite.
  sim = await simStack({ name: "cluster", slot: 2 }, { baseline: (c) => (c["reprobench:run"] = { enabled: false }) });
  ({ plan, stack } = sim);
  for (const h of plan.hosts) originalDaemonJson[h.name] = await daemonJson(h.name);
});

afterAll(() => sim?.cleanup());

describe("cluster on the simulated hosts (real engine)", () => {
  it("up converges; preview and up --refresh then see no changes", async () => {
    const up = await stack.up({ onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    const status = JSON.parse(up.outputs.routerStatus.value as string);
    expect(status.workers.sort()).toEqual(plan.hosts.flatMap((h) => [`http://${h.ip}:30001@0`, `http://${h.ip}:30001@1`]).sort());
    const info = JSON.parse((up.outputs.workerServerInfo.value as string[])[0]);
    expect(info).toMatchObject({ tp_size: 4, dp_size: 2, max_running_requests: 5, max_mamba_cache_size: 25 });

    const started = Date.now();
    const preview = await stack.preview({ expectNoChanges: true });
    expect(Object.keys(preview.changeSummary).filter((k) => k !== "same")).toEqual([]);
    const refreshed = await stack.up({ refresh: true, expectNoChanges: true, onOutput: () => undefined });
    expect(refreshed.summary.resourceChanges).toEqual({ same: refreshed.summary.resourceChanges?.same });
    console.log(`cluster: first up ${up.summary.resourceChanges?.create} created in ${seconds(up)}s; no-op preview + up --refresh ${((Date.now() - started) / 1000).toFixed(1)}s, up --refresh alone ${seconds(refreshed)}s`);
  });

  it("the containers are @pulumi/docker resources, their images pulled with a digest", async () => {
    const resources = (await stack.exportStack()).deployment.resources as { type: string; urn: string; outputs?: Record<string, unknown> }[];
    const containers = resources.filter((r) => r.type === "docker:index/container:Container").map((r) => r.urn.split("::").pop());
    // The cluster's parts are named after it (`cluster-<role>`).
    expect(containers.sort()).toEqual(["cluster-router-container", "cluster-worker-a-sglang-container", "cluster-worker-b-sglang-container"]);
    const images = resources.filter((r) => r.type === "docker:index/remoteImage:RemoteImage");
    expect(images).toHaveLength(3);
    for (const image of images) expect(String(image.outputs?.repoDigest)).toMatch(/@sha256:[0-9a-f]{64}$/);
    const id = resources.find((r) => r.urn.endsWith("::cluster-worker-a-sglang-container"))?.outputs?.id;
    expect(await ssh("worker-a", "docker inspect -f '{{.Id}}' qwen38-worker-a")).toContain(String(id));
  });

  it("the router spreads completions over every DP rank of every host", async () => {
    const tags = await routedTags(24);
    expect([...tags].sort()).toEqual(["worker-a@0", "worker-a@1", "worker-b@0", "worker-b@1"]);
  });

  it("changing one worker's maxRunningRequests previews as that worker's container replaced, nothing else", async () => {
    editConfig((c) => (c.modelServer.overrides = { "worker-b": { maxRunningRequests: 4 } }));
    const out: string[] = [];
    const preview = await stack.preview({ diff: true, onOutput: (o) => out.push(o) });
    const diff = out.join("");
    // One container replaced (its argv changed); its gate re-runs against the new container.
    expect(preview.changeSummary.replace).toBe(1);
    expect(preview.changeSummary.create ?? 0).toBe(0);
    expect(preview.changeSummary.delete ?? 0).toBe(0);
    const replaced = [...diff.matchAll(/\+-docker:index\/container:Container: \(replace\)\s+\[id=[0-9a-f]+\]\s+\[urn=[^\]]*::([a-z-]+)\]/g)].map((m) => m[1]);
    expect(replaced).toEqual(["cluster-worker-b-sglang-container"]);
    // The one argv element that changed: --max-running-requests 5 → 4.
    expect(diff).toMatch(/~ \[\d+\]: "5" => "4"/);
    const before = await ssh("worker-a", "docker inspect -f '{{.Id}}' qwen38-worker-a");
    const up = await stack.up({ onOutput: () => undefined });
    expect(up.summary.resourceChanges?.replace).toBe(1);
    const infoB = JSON.parse((up.outputs.workerServerInfo.value as string[])[1]);
    expect(infoB.max_running_requests).toBe(4);
    const infoA = JSON.parse((up.outputs.workerServerInfo.value as string[])[0]);
    expect(infoA.max_running_requests).toBe(5);
    expect(await ssh("worker-a", "docker inspect -f '{{.Id}}' qwen38-worker-a")).toBe(before);
  });

  it("a killed worker container is restarted and re-gated by up --refresh, and serves through the router again", async () => {
    await ssh("worker-a", "docker kill qwen38-worker-a >/dev/null");
    const out: string[] = [];
    const preview = await stack.preview({ refresh: true, diff: true, onOutput: (o) => out.push(o) });
    // The container is started again in place, and its gate re-runs: nothing else changes.
    expect(preview.changeSummary.update).toBe(2);
    expect(preview.changeSummary.replace ?? 0).toBe(0);
    const updated = [...out.join("").matchAll(/~ [a-z:/A-Z-]+: \(update\)\s+(?:\[id=[^\]]+\]\s+)?\[urn=[^\]]*::([a-z-]+)\]/g)].map((m) => m[1]);
    expect(updated.sort()).toEqual(["cluster-worker-a-sglang-container", "cluster-worker-a-sglang-ready"]);
    const up = await stack.up({ refresh: true, onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    expect(await ssh("worker-a", "docker inspect -f '{{.State.Running}}' qwen38-worker-a")).toContain("true");
    const tags = await routedTags(24);
    expect([...tags].filter((t) => t.startsWith("worker-a")).sort()).toEqual(["worker-a@0", "worker-a@1"]);
    const again = await stack.preview({ refresh: true, expectNoChanges: true });
    expect(Object.keys(again.changeSummary).filter((k) => k !== "same")).toEqual([]);
  });

  it("a removed worker container is recreated by up --refresh", async () => {
    await ssh("worker-a", "docker rm -f qwen38-worker-a >/dev/null");
    const up = await stack.up({ refresh: true, onOutput: () => undefined });
    expect(up.summary.resourceChanges?.create).toBe(1);
    expect(await ssh("worker-a", "docker inspect -f '{{.State.Running}}' qwen38-worker-a")).toContain("true");
  });

  it("a tag moved to another build upstream is no drift: preview --refresh warns with both digests and plans nothing; pinning the new digest replaces exactly the servers", async () => {
    const tag = `${plan.registry.pushHost}/reprobench/sglang-double:latest`;
    const sh = async (script: string) => {
      const r = await run(["sh", "-c", script], { timeoutMs: 600_000 });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const digestsBefore = (await stack.outputs()).serverImages.value as Record<string, string>;
    const kept = digestsBefore["worker/worker-a"].split("@")[1];
    // The same tag, another build: a derived image with one more label.
    await sh(`docker pull -q ${tag} && printf 'FROM ${tag}\\nLABEL io.reprobench.test.moved=1\\n' | DOCKER_BUILDKIT=0 docker build -q -t ${tag} - && docker push ${tag}`);
    const moved = (await sh(`docker inspect -f '{{index .RepoDigests 0}}' ${tag}`)).trim().split("@")[1];
    expect(moved).not.toBe(kept);
    const out: string[] = [];
    // Warnings are diagnostics: pulumi prints them on stderr.
    const preview = await stack.preview({ refresh: true, diff: true, onOutput: (o) => out.push(o), onError: (o) => out.push(o) });
    const text = out.join("");
    expect(Object.keys(preview.changeSummary).filter((k) => k !== "same")).toEqual([]);
    const warning = text.split("\n").find((l) => l.includes("has moved upstream")) ?? "";
    console.log(`cluster: preview --refresh after the tag moved (kept ${kept}, moved ${moved}): ${JSON.stringify(preview.changeSummary)}\n${warning.trim() || text.slice(-3000)}`);
    expect(warning).toContain(`the registry now names ${moved}`);
    expect(warning).toContain(`keeps running ${kept}`);
    expect(await ssh("worker-a", "docker inspect -f '{{index .Config.Labels \"io.reprobench.test.moved\"}}' qwen38-worker-a")).not.toContain("1");

    // Pinning the new build: exactly the servers (both workers and the router, which runs the same image)
    // and their images are replaced; nothing else.
    editConfig((c) => (c.modelServer.image = `${String(c.modelServer.image).replace(/:[^:/@]+$/, "")}@${moved}`));
    const pinOut: string[] = [];
    const pinPreview = await stack.preview({ diff: true, onOutput: (o) => pinOut.push(o) });
    const replaced = [...pinOut.join("").matchAll(/\+-[a-z:/A-Z-]+: \(replace\)\s+\[id=[^\]]+\]\s+\[urn=[^\]]*::([a-z-]+)\]/g)].map((m) => m[1]).sort();
    expect(replaced).toEqual(["cluster-router-container", "cluster-router-image", "cluster-worker-a-sglang-container", "cluster-worker-a-sglang-image", "cluster-worker-b-sglang-container", "cluster-worker-b-sglang-image"]);
    expect(pinPreview.changeSummary.delete ?? 0).toBe(0);
    const up = await stack.up({ onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    const digestsAfter = up.outputs.serverImages.value as Record<string, string>;
    for (const key of Object.keys(digestsBefore)) expect(digestsAfter[key]).toBe(`${digestsBefore[key].split("@")[0]}@${moved}`);
    expect(await ssh("worker-a", "docker inspect -f '{{index .Config.Labels \"io.reprobench.test.moved\"}}' qwen38-worker-a")).toContain("1");
    editConfig(() => undefined);
    // Back to the tag: its digest resolves to the build just pinned, and nothing restarts.
    const back = await stack.up({ onOutput: () => undefined });
    expect(back.summary.resourceChanges?.replace ?? 0).toBe(0);
  });

  it("a rotated SSH key (and rotated back) changes nothing: no replace or delete planned, containers, daemon.json, units and the claim as they were", async () => {
    const keyDir = path.join(sim.project.dir, ".rotated");
    mkdirSync(keyDir, { recursive: true });
    const r = await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rotated", "-f", path.join(keyDir, "id_ed25519")], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const pub = readFileSync(path.join(keyDir, "id_ed25519.pub"), "utf8").trim();
    for (const h of plan.hosts) {
      await ssh(h.name, `for d in /root/.ssh /home/bench/.ssh; do [ -d "$d" ] && echo '${pub}' >>"$d/authorized_keys"; done; true`);
    }
    const snapshot = async () => {
      const out: Record<string, string> = {};
      for (const h of plan.hosts) {
        out[`${h.name} containers`] = await ssh(h.name, "docker ps -q --no-trunc | sort");
        out[`${h.name} daemon.json`] = await daemonJson(h.name);
        out[`${h.name} docker started`] = await ssh(h.name, "systemctl show -p ActiveEnterTimestampMonotonic docker");
        out[`${h.name} units`] = await ssh(h.name, "for u in $(systemctl list-units 'reprobench-*' --plain --no-legend | awk '{print $1}' | sort); do echo \"$u $(systemctl show -p ActiveEnterTimestampMonotonic --value \"$u\")\"; done");
        out[`${h.name} claim`] = await ssh(h.name, "cat /var/lib/reprobench/owner.json");
      }
      return out;
    };
    // Converged on the stack file as tracked (earlier tests leave overrides in place).
    editConfig(() => undefined);
    expect((await stack.up({ onOutput: () => undefined })).summary.result).toBe("succeeded");
    const before = await snapshot();
    const rotate = async (keyFile: string | undefined) => {
      editConfig((c) => {
        if (keyFile) for (const h of c.hosts) h.ssh.privateKeyFile = keyFile;
      });
      const out: string[] = [];
      const preview = await stack.preview({ diff: true, onOutput: (o) => out.push(o) });
      console.log(`cluster: preview after pointing the stack at ${keyFile ?? "the original key"}: ${JSON.stringify(preview.changeSummary)}\n${out.join("").split("\n").filter((l) => /\((replace|update|delete|create)\)|urn=/.test(l)).join("\n")}`);
      expect(preview.changeSummary.replace ?? 0).toBe(0);
      expect(preview.changeSummary.delete ?? 0).toBe(0);
      expect(preview.changeSummary.create ?? 0).toBe(0);
      expect(out.join("")).not.toMatch(/\((replace|delete|create-replacement|delete-replaced)\)/);
      const up = await stack.up({ onOutput: () => undefined });
      expect(up.summary.result).toBe("succeeded");
      expect(up.summary.resourceChanges?.replace ?? 0).toBe(0);
      expect(await snapshot()).toEqual(before);
    };
    await rotate(".rotated/id_ed25519");
    // A refresh reaches the hosts with the new key and reads no drift.
    const clean = await stack.preview({ refresh: true, expectNoChanges: true });
    expect(Object.keys(clean.changeSummary).filter((k) => k !== "same")).toEqual([]);
    await rotate(undefined);
  });

  it("the restart guard is part of the change it guards: after an up that failed past the guard, a job starts, and the next up refuses; an environment-only change is guarded too", async () => {
    const containerId = () => ssh("worker-b", "docker inspect -f '{{.Id}}' qwen38-worker-b");
    // worker-b's server replaced by one that cannot start: the guard passes (no job runs), the old
    // container goes, the new one exits and its gate fails the up.
    editConfig((c) => (c.modelServer.overrides = { "worker-b": { extraArgs: ["--reprobench-no-such-flag"] } }));
    const first = await stack.up({ onOutput: () => undefined }).then(() => new Error("up succeeded"), (err: Error) => err);
    expect(first.message).toMatch(/unrecognized arguments: --reprobench-no-such-flag/);
    // A job starts on the runner (a unit named in runs/current.d, as any stack's Harbor job is).
    const current = "/var/lib/reprobench/runs/current.d";
    await ssh("worker-b", `mkdir -p ${current} /tmp/guard-job/t1 && systemd-run --unit=reprobench-harbor-guardtest --collect sleep 600 >/dev/null && echo 'guardtest reprobench-harbor-guardtest.service /tmp/guard-job /dev/null' >${current}/other-stack`);
    try {
      // The config put right: replacing the failed server is a change under the job, asked about again.
      editConfig(() => undefined);
      const broken = await containerId();
      const refused = await stack.up({ onOutput: () => undefined }).then(() => new Error("up succeeded under a running job"), (err: Error) => err);
      console.log(`cluster: the next up under a running job:\n${refused.message.split("\n").filter((l) => l.includes("restart-guard")).slice(0, 3).join("\n")}`);
      expect(refused.message).toContain("restart-guard: refusing to restart worker-b's model server");
      expect(refused.message).toContain("guardtest (stack other-stack)");
      expect(refused.message).toContain("trials that would lose their model server: 1 (guardtest/t1)");
      expect(await containerId()).toBe(broken);
    } finally {
      await ssh("worker-b", `systemctl stop reprobench-harbor-guardtest 2>/dev/null; rm -f ${current}/other-stack; rm -rf /tmp/guard-job; true`);
    }
    const healed = await stack.up({ onOutput: () => undefined });
    expect(healed.summary.result).toBe("succeeded");
    expect(await ssh("worker-b", "docker inspect -f '{{.State.Running}}' qwen38-worker-b")).toContain("true");

    // An environment-only change restarts the server too: refused while a job runs, nothing restarted.
    await ssh("worker-b", `mkdir -p /tmp/guard-job/t2 && systemd-run --unit=reprobench-harbor-guardtest --collect sleep 600 >/dev/null && echo 'guardtest reprobench-harbor-guardtest.service /tmp/guard-job /dev/null' >${current}/other-stack`);
    try {
      const running = await containerId();
      editConfig((c) => (c.modelServer.env = { ...(c.modelServer.env ?? { HOME: "/tmp", HF_HOME: "/tmp/huggingface" }), REPROBENCH_GUARD_TEST: "1" }));
      const refused = await stack.up({ onOutput: () => undefined }).then(() => new Error("up succeeded under a running job"), (err: Error) => err);
      expect(refused.message).toMatch(/restart-guard: refusing to restart worker-[ab]'s model server/);
      expect(await containerId()).toBe(running);
    } finally {
      await ssh("worker-b", `systemctl stop reprobench-harbor-guardtest 2>/dev/null; rm -f ${current}/other-stack; rm -rf /tmp/guard-job; true`);
    }
    editConfig(() => undefined);
    expect((await stack.up({ onOutput: () => undefined })).summary.result).toBe("succeeded");
  });

  it("with sshd stopped on worker-a, preview --refresh FAILS naming the host and plans nothing; with sshd back it is clean", async () => {
    const host = plan.hosts.find((h) => h.name === "worker-a")!;
    const sshd = async (action: "stop" | "start") => {
      const r = await run(["docker", "exec", host.container, "systemctl", action, "ssh.service"], { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
    };
    await sshd("stop");
    try {
      const events: string[] = [];
      const failure = await stack.preview({ refresh: true, onOutput: (o) => events.push(o) }).then(
        () => new Error("preview --refresh succeeded with worker-a unreachable"),
        (err: Error) => err,
      );
      const text = `${failure.message}\n${events.join("")}`;
      expect(text).toMatch(/host worker-a \([a-z]+@127\.0\.0\.1:\d+\) cannot be reached over SSH/);
      expect(text).not.toMatch(/\(replace\)|\(delete-replaced\)/);
      console.log(`cluster: preview --refresh with sshd stopped on worker-a:\n${text.split("\n").filter((l) => /error:|cannot be reached|Connection refused/.test(l)).slice(0, 8).join("\n")}`);
    } finally {
      await sshd("start");
    }
    const clean = await stack.preview({ refresh: true, expectNoChanges: true });
    expect(Object.keys(clean.changeSummary).filter((k) => k !== "same")).toEqual([]);
  });

  it("address pools removed from daemon.json by hand are drift that up --refresh restores", async () => {
    const pools = async () => JSON.parse(await ssh("worker-a", "jq -c '.\"default-address-pools\"' /etc/docker/daemon.json"));
    const wanted = await pools();
    expect(wanted).toEqual([{ base: "172.18.0.0/15", size: 24 }]);
    await ssh("worker-a", "jq 'del(.\"default-address-pools\")' /etc/docker/daemon.json > /tmp/d.json && cp /tmp/d.json /etc/docker/daemon.json");
    const out: string[] = [];
    const preview = await stack.preview({ refresh: true, diff: true, onOutput: (o) => out.push(o) });
    expect(preview.changeSummary.update).toBe(1);
    expect(out.join("")).toMatch(/worker-a-docker-daemon-json/);
    const containers = await ssh("worker-a", "docker ps -q --no-trunc | sort");
    const up = await stack.up({ refresh: true, onOutput: () => undefined });
    expect(up.summary.resourceChanges?.update).toBe(1);
    expect(await pools()).toEqual(wanted);
    // dockerd has run with these pools since reprobench applied them: the file is put back, nothing restarts.
    expect(await ssh("worker-a", "docker ps -q --no-trunc | sort")).toBe(containers);
  });

  it("a server that dies while loading fails the gate with its log, and leaves no container Pulumi does not know", async () => {
    // An unknown flag: the double exits 2 at start, as SGLang's argparse does.
    editConfig((c) => (c.modelServer.overrides = { "worker-a": { extraArgs: ["--reprobench-no-such-flag"] } }));
    const failure = await stack.up({ onOutput: () => undefined }).then(() => new Error("up succeeded"), (err: Error) => err);
    expect(failure.message).toMatch(/container exited before \/health answered 200/);
    expect(failure.message).toMatch(/unrecognized arguments: --reprobench-no-such-flag/);
    // The log tail it carries is the server's, which prints its API key at start-up: not in the error.
    const key = (await stack.outputs()).sglangApiKey.value as string;
    expect(failure.message).not.toContain(key);
    const onHost = (await ssh("worker-a", "docker ps -a --no-trunc --filter label=io.reprobench.managed=1 --format '{{.ID}} {{.Names}} {{.State}}'")).trim().split("\n");
    const resources = (await stack.exportStack()).deployment.resources as { type: string; outputs?: Record<string, unknown> }[];
    const known = resources.filter((r) => r.type === "docker:index/container:Container").map((r) => String(r.outputs?.id));
    console.log(`cluster: after a failed gate, docker ps -a on worker-a:\n${onHost.join("\n")}`);
    expect(onHost).toHaveLength(1);
    const [id, name, state] = onHost[0].split(" ");
    expect(name).toBe("qwen38-worker-a");
    expect(state).not.toBe("running");
    // Recorded in the state: the next up replaces it, destroy removes it.
    expect(known).toContain(id);
    editConfig(() => undefined);
    const healed = await stack.up({ onOutput: () => undefined });
    expect(healed.summary.result).toBe("succeeded");
    expect(await ssh("worker-a", "docker inspect -f '{{.State.Running}}' qwen38-worker-a")).toContain("true");
  });

  describe("refused faults leave daemon.json byte-identical", () => {
    const cases: [string, (c: LooseConfig) => void, RegExp][] = [
      ["invalid pool", (c) => (c.docker.addressPools = [{ base: "172.18.0.0/15", size: 33 }]), /reprobench:docker\.addressPools\[0\]\.size/],
      // A route the host has that no config value reveals (added below), so only the host check sees it.
      ["pool overlapping a route", (c) => (c.docker.addressPools = [{ base: "10.250.0.0/16", size: 24 }]), /overlaps route 10\.250\.7\.0\/24/],
      ["restart needed while containers run", (c) => (c.docker.addressPools = [{ base: "10.213.0.0/16", size: 24 }]), /refusing to restart docker while containers run/],
    ];
    beforeAll(() => ssh("worker-a", "ip route add blackhole 10.250.7.0/24"));
    afterAll(() => ssh("worker-a", "ip route del blackhole 10.250.7.0/24"));
    it.each(cases)("%s", async (_name, edit, message) => {
      const before = { a: await daemonJson("worker-a"), b: await daemonJson("worker-b") };
      editConfig((c) => {
        c.docker = { ...(c.docker ?? {}) };
        edit(c);
      });
      await expect(stack.up({ onOutput: () => undefined })).rejects.toThrow(message);
      expect({ a: await daemonJson("worker-a"), b: await daemonJson("worker-b") }).toEqual(before);
      editConfig(() => undefined);
    });
  });

  it("destroy removes every container and unit of ours and restores daemon.json", async () => {
    await stack.destroy({ runProgram: true, onOutput: () => undefined });
    for (const h of plan.hosts) {
      expect(await ssh(h.name, "docker ps -a --filter label=io.reprobench.managed=1 --format '{{.Names}}'")).toBe("");
      expect(await ssh(h.name, "docker network ls --filter label=io.reprobench.managed=1 --format '{{.Name}}'")).toBe("");
      // Our units (the proxy bridge, Harbor's); the sim's own (its upstream proxy, its /dev/shm size) are not ours.
      expect(await ssh(h.name, "ls /etc/systemd/system /run/systemd/transient 2>/dev/null | grep reprobench | grep -v -e reprobench-sim-proxy -e reprobench-sim-shm || true")).toBe("");
      expect(await daemonJson(h.name)).toBe(originalDaemonJson[h.name]);
    }
  });
});

function seconds(result: { summary: { startTime: Date; endTime: Date } }): string {
  return ((new Date(result.summary.endTime).getTime() - new Date(result.summary.startTime).getTime()) / 1000).toFixed(1);
}

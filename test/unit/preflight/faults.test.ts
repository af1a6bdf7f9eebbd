// The preflight against every fault of issue 30's Acceptance list, end to end on one host: the real
// scripts (preflight-weights.sh + preflight-host.sh) run with stand-ins that print the real tools' outputs
// and messages, then the same judging `up` and `check` use. Each fault gives one line naming the host, the
// GPU or the file, and the fix.
import { chmodSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkStackFile } from "../../../components/config/stack-file";
import { parseHostReport } from "../../../components/preflight/facts";
import { type HostPlan, hostPlan, judgeHost, preflightEnv } from "../../../components/preflight/plan";
import { problemLine } from "../../../components/preflight/verdict";
import { HostDouble, isRoot } from "./host-double";

const REPO = path.resolve(__dirname, "../../..");
const a100 = checkStackFile(path.join(REPO, "Pulumi.a100.yaml")).config!;

let host: HostDouble;
let plan: HostPlan;
beforeEach(() => {
  host = new HostDouble();
  const base = hostPlan(a100, "worker-a");
  plan = { ...base, worker: { ...base.worker!, modelPath: host.model(), user: isRoot ? "65534:65534" : "ssh-user" } };
});
afterEach(() => host.cleanup());

function verdict(p: HostPlan = plan) {
  return judgeHost(p, parseHostReport(host.run(preflightEnv(p)), p.host));
}
function lines(p: HostPlan = plan): string[] {
  return verdict(p).problems.map(problemLine);
}

describe("the preflight on a healthy 8 × A100-SXM4-40GB host (seed 000: tp 4 × dp 2, mfs 0.90)", () => {
  it("passes, and records the inventory, the driver, the weights size and the fit", () => {
    const v = verdict();
    expect(v.problems.map(problemLine)).toEqual([]);
    expect(v.ready).toBe(true);
    expect(v.facts.gpus).toMatchObject({ count: 8, names: ["NVIDIA A100-SXM4-40GB"], driver: "580.95.05", cuda: "13.0", visibleInImage: 8, migEnabled: [] });
    expect(v.facts.weights).toMatchObject({ kind: "safetensors", shards: 4, totalSize: 4 * 6_750_010_240 });
    // 27 GB / tp 4 ≈ 6.3 GiB per GPU; (39.5 GiB × 0.9) − 6.3 − 1 ≈ 28.3 GiB of KV at 64 KiB per token.
    expect(v.facts.fit!.maxTokens).toBeGreaterThan(400_000);
    expect(v.checks.find((c) => c.check === "cuda")?.status).toBe("skip");
  });
});

describe("each fault of the Acceptance list is refused, naming it", () => {
  it("toolkit absent: docker's own message, the cause and the fix", () => {
    host.gpus.toolkit = "absent";
    expect(lines()).toEqual([
      expect.stringMatching(/^worker-a: lmsysorg\/sglang:latest-runtime with --gpus all: docker cannot give the container GPUs \(`could not select device driver "" with capabilities: \[\[gpu\]\]`\).*fix: install nvidia-container-toolkit, then `nvidia-ctk runtime configure --runtime=docker && systemctl restart docker`$/),
    ]);
  });

  it("driver older than the image's CUDA: the requirement, the driver, and both ways out", () => {
    Object.assign(host.gpus, { driver: "570.172.08", cuda: "12.8", imageRequiresCuda: "13.0" });
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toContain("requires cuda>=13.0 and driver 570.172.08 (CUDA 12.8) is older");
    expect(line).toContain("fix: upgrade the driver to one that supports CUDA 13.0 (R580 or newer for CUDA 13), or pin an image built for the driver's CUDA 12.8");
  });

  it("4 GPUs for tp 4 × dp 2: the host's count and the image's", () => {
    host.gpus.count = 4;
    const l = lines();
    expect(l.some((x) => /^worker-a: 4 GPUs: tp 4 × dp 2 needs 8 GPUs, the host has 4 \(hosts\[\]\.gpus says 8\).*invalid device ordinal.*fix: lower modelServer\.tp or modelServer\.dp/.test(x))).toBe(true);
    expect(l.some((x) => x.includes("the container sees 4 GPUs and tp × dp needs 8"))).toBe(true);
  });

  it("10 GiB used on GPU 3 by a foreign process: the process (pid, name, MiB) and the GPU's memory", () => {
    host.gpus.busy = [{ gpu: 3, mib: 10240, pid: 4242, name: "/usr/bin/python3" }];
    const l = lines();
    expect(l).toContain("worker-a: GPU 3 (GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b03): pid 4242 (/usr/bin/python3) holds 10240 MiB; it is not this stack's server; fix: stop it (`kill 4242`; a leftover server: `docker ps`), or allow it with modelServer.preflight.allowedGpuProcesses: [\"python3\"]");
    expect(l.some((x) => x.startsWith("worker-a: GPU 3 (GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b03): 30716 of 40960 MiB free, 10244 MiB used by others (by pid 4242 /usr/bin/python3 10240 MiB); mem-fraction-static 0.9 claims 36864 MiB"))).toBe(true);
    expect(l).toHaveLength(2);
  });

  it("an allowed foreign process is named but not refused; its memory still counts", () => {
    host.gpus.busy = [{ gpu: 3, mib: 200, pid: 77, name: "nv-hostengine" }];
    const p = { ...plan, worker: { ...plan.worker!, allowedGpuProcesses: ["nv-hostengine"] } };
    const v = verdict(p);
    expect(v.problems).toEqual([]);
    expect(v.checks.find((c) => c.check === "gpu processes")!.notes[0]).toContain("pid 77 (nv-hostengine) holds 200 MiB (allowed");
  });

  it("MIG on one GPU", () => {
    host.gpus.mig = [5];
    const l = lines();
    expect(l).toContain("worker-a: GPU 5 (GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b05): is in MIG mode: the server sees MIG slices, not the GPU; fix: disable MIG as root with the GPU idle: `nvidia-smi -i 5 -mig 0` (a GPU reset or reboot may follow)");
  });

  it("fabric manager stopped on the NVSwitch board", () => {
    host.gpus.fabricManager = "inactive";
    expect(lines()).toEqual([
      "worker-a: nvidia-fabricmanager: nvidia-fabricmanager is inactive on an NVSwitch board (8 × NVIDIA A100-SXM4-40GB): the first CUDA call fails with error 802 'system not yet initialized'; fix: start it (`systemctl enable --now nvidia-fabricmanager`; its version must equal the driver's, here 580.95.05)",
    ]);
  });

  it("a shard deleted", () => {
    rmSync(path.join(plan.worker!.modelPath, "model-00003-of-00004.safetensors"));
    expect(lines()).toEqual([
      `worker-a: ${plan.worker!.modelPath}/model-00003-of-00004.safetensors: is named in model.safetensors.index.json's weight_map but missing (SGLang before PR 32279 loads without it and serves wrong answers); fix: download it again (\`hf download REPO model-00003-of-00004.safetensors --local-dir ${plan.worker!.modelPath}\`)`,
    ]);
  });

  it("a shard truncated: its size against the size its header implies", () => {
    const f = path.join(plan.worker!.modelPath, "model-00002-of-00004.safetensors");
    truncateSync(f, 5_000_000_000);
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toMatch(/model-00002-of-00004\.safetensors: is 5000000000 bytes, its header implies 67500\d+ \(8 \+ header \+ data\): truncated \(loading fails with 'SafetensorError: Error while deserializing header: MetadataIncompleteBuffer'\)/);
  });

  it.skipIf(!isRoot)("weights unreadable by the container's user (the login's uid:gid)", () => {
    chmodSync(path.join(plan.worker!.modelPath, "model-00001-of-00004.safetensors"), 0o600);
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toContain("1 file or directory is not readable by 65534:65534, the container's user (docker --user; first: model-00001-of-00004.safetensors -rw------- 0:0)");
    expect(line).toContain(`fix: \`chmod -R a+rX ${plan.worker!.modelPath}\``);
  });

  it("a Hugging Face cache snapshot: refused, with the command that makes a plain directory of it", () => {
    const snap = host.hfCache();
    const p = { ...plan, worker: { ...plan.worker!, modelPath: snap } };
    const l = lines(p);
    expect(l).toHaveLength(1);
    expect(l[0]).toContain("is a Hugging Face cache snapshot (models--Qwen--Qwen3.8-27B/snapshots/0123456789abcdef0123456789abcdef01234567): its 7 files are symlinks into ../../blobs, which the read-only bind mount at /models/Qwen3.8-27B cannot follow");
    expect(l[0]).toContain("fix: materialise it: `hf download Qwen/Qwen3.8-27B --revision 0123456789abcdef0123456789abcdef01234567 --local-dir DIR`");
  });

  it("a wrong path: what the parent holds instead", () => {
    const p = { ...plan, worker: { ...plan.worker!, modelPath: path.join(path.dirname(plan.worker!.modelPath), "Qwen3.8-27b") } };
    expect(lines(p)).toEqual([
      expect.stringMatching(/^worker-a: \/.+\/Qwen3\.8-27b: modelServer\.modelPath does not exist; .+ holds: bin, model, .+ \(docker refuses the bind mount: 'bind source path does not exist'\); fix: put the model there, or point modelServer\.modelPath \(modelServer\.overrides\.worker-a\.modelPath\) at where it is$/),
    ]);
  });

  it("a partial download left behind, and a missing config.json", () => {
    writeFileSync(path.join(plan.worker!.modelPath, "model-00004-of-00004.safetensors.incomplete"), "");
    rmSync(path.join(plan.worker!.modelPath, "config.json"));
    const l = lines();
    expect(l.some((x) => x.includes("model-00004-of-00004.safetensors.incomplete: is a partial download"))).toBe(true);
    expect(l.some((x) => x.includes("config.json: is missing"))).toBe(true);
  });

  it("a model that cannot fit at tp 1: refused with the figures", () => {
    const big = host.model("big", { shards: 8 });
    const q = { ...plan, worker: { ...plan.worker!, tp: 1, dp: 1, modelPath: big } };
    const l = lines(q);
    expect(l).toHaveLength(1);
    expect(l[0]).toMatch(/^worker-a: model at tp 1: does not fit: weights 50\.3 GiB \/ tp 1 = 50\.3 GiB per GPU, 39\.5 GiB free per GPU .*'torch\.OutOfMemoryError: CUDA out of memory'; fix: raise modelServer\.tp \(tp 2: 25\.1 GiB per GPU\)/);
  });
});

// The GPU checks: the host's inventory against tp × dp and mem-fraction-static (count, MIG, compute mode, ECC,
// fabric manager, foreign compute processes, free memory per GPU and its balance inside each TP group), and
// the decisive check — the server image itself run with the server's --gpus — with the real Docker and
// NVIDIA container toolkit messages mapped to their causes and fixes (reference gpus.md §1, §2a). Pure.
import { type ComputeApp, type GpuFactsRaw, type GpuRow, type ToolkitFactsRaw, cgroupOwner, parseComputeApps, parseGpuList, parseGpuQuery, parseSmiReport } from "./facts";
import { type CheckResult, type Problem, result, skipped } from "./verdict";

/** What a worker's server needs of its GPUs. */
export interface GpuNeeds {
  tp: number;
  dp: number;
  memFractionStatic: number;
  /** hosts[].gpus of the stack (said when it disagrees with the host). */
  configuredGpus: number;
  /** modelServer.preflight.allowedGpuProcesses. */
  allowedProcesses: readonly string[];
  image: string;
  gpusFlag: string;
}

/** The GPU facts the preflight records (outputs, the run manifest). */
export interface GpuInventory {
  count: number;
  names: string[];
  driver: string | null;
  cuda: string | null;
  memoryTotalMiB: number[];
  /** Free per GPU once the stack's own server (if it runs) is gone. */
  freeMiB: number[];
  migEnabled: number[];
  foreignProcesses: { gpu: number; pid: number; name: string; usedMiB: number | null; allowed: boolean }[];
  fabricManager: string;
  /** GPUs the server image saw with --gpus (null: the check did not run). */
  visibleInImage: number | null;
}

/**
 * What marks a compute process as the stack's own: its pid among those docker top and systemd listed, or
 * its cgroup naming one of the stack's container ids or units (raw.cgroups), which also holds for a pid
 * docker top could not list.
 */
export interface OwnProcesses {
  pids: readonly number[];
  containerIds: readonly { name: string; id: string }[];
  units: readonly string[];
}

/** SGLang's balance rule inside a TP group (scheduler: min free < 0.9 × local free fails). */
export const IMBALANCE_RATIO = 0.9;

/** Everything the GPU side says about a host: the inventory, and the checks gpus, processes, memory. */
export function evaluateGpus(host: string, raw: GpuFactsRaw | null, own: OwnProcesses, need: GpuNeeds): { inventory: GpuInventory | null; checks: CheckResult[] } {
  if (!raw) return { inventory: null, checks: [skipped("gpus", "not read (modelServer.gpus: none)")] };
  const want = need.tp * need.dp;
  const problem = (subject: string, message: string, fix: string): Problem => ({ host, subject, message, fix });
  if (!raw.nvidiaSmi) {
    return {
      inventory: null,
      checks: [result("gpus", "no nvidia-smi", [problem("NVIDIA driver", "nvidia-smi is not installed, so no NVIDIA driver is", "install the NVIDIA driver (R580 or newer for CUDA 13 images such as lmsysorg/sglang:latest) and reboot, or set modelServer.gpus: none for a host without GPUs")])],
    };
  }
  if (raw.query.rc !== 0) {
    const said = lastLine(raw.query.out + "\n" + raw.query.err);
    const fix = /couldn't communicate with the NVIDIA driver|driver not loaded|No devices were found/i.test(said)
      ? "load the NVIDIA kernel driver (`modprobe nvidia`, or reinstall the driver matching the running kernel and reboot)"
      : "run `nvidia-smi` on the host and repair what it reports";
    return { inventory: null, checks: [result("gpus", "nvidia-smi fails", [problem("NVIDIA driver", `nvidia-smi fails: ${said}`, fix)])] };
  }
  const { gpus } = parseGpuQuery(raw.query.out);
  const smi = parseSmiReport(raw.report);
  const apps = raw.apps.rc === 0 ? parseComputeApps(raw.apps.out) : [];
  const ownPids = new Set(own.pids);
  const cgroups = raw.cgroups ?? {};
  const isOwn = (a: ComputeApp) => ownPids.has(a.pid) || cgroupOwner(cgroups[String(a.pid)] ?? "", own) !== null;
  const byUuid = new Map(gpus.map((g) => [g.uuid, g]));
  const foreign = apps.filter((a) => !isOwn(a));
  const allowed = (a: ComputeApp) => need.allowedProcesses.some((n) => n === a.name || n === a.name.split("/").pop());

  // gpus: count, MIG, compute mode, ECC, fabric manager.
  const gpuProblems: Problem[] = [];
  const gpuNotes: string[] = [];
  if (gpus.length < want) {
    gpuProblems.push(problem(`${gpus.length} GPU${gpus.length === 1 ? "" : "s"}`, `tp ${need.tp} × dp ${need.dp} needs ${want} GPUs, the host has ${gpus.length}${need.configuredGpus !== gpus.length ? ` (hosts[].gpus says ${need.configuredGpus})` : ""}; SGLang would fail at init with 'CUDA error: invalid device ordinal'`, `lower modelServer.tp or modelServer.dp (an override for this host: modelServer.overrides.${host}) so that tp × dp ≤ ${gpus.length}, or use a host with ${want} GPUs`));
  }
  for (const g of gpus) {
    if (g.mig === "Enabled") gpuProblems.push(problem(gpuLabel(g), "is in MIG mode: the server sees MIG slices, not the GPU", `disable MIG as root with the GPU idle: \`nvidia-smi -i ${g.index} -mig 0\` (a GPU reset or reboot may follow)`));
    if (g.computeMode === "Prohibited") gpuProblems.push(problem(gpuLabel(g), "compute mode is Prohibited: no process may use it", `\`nvidia-smi -i ${g.index} -c DEFAULT\``));
    if (g.eccUncorrected !== null && g.eccUncorrected > 0) gpuProblems.push(problem(gpuLabel(g), `has ${g.eccUncorrected} uncorrected ECC errors since the driver loaded`, `drain it and reset it (\`nvidia-smi -r -i ${g.index}\`), or have the host serviced`));
  }
  const names = [...new Set(gpus.map((g) => g.name))];
  if (names.length > 1) gpuNotes.push(`mixed GPU models: ${names.join(", ")}`);
  const fm = fabricManagerVerdict(gpus, raw.fabricManager, smi.fabricStates);
  if (fm.problem) gpuProblems.push(problem("nvidia-fabricmanager", fm.problem, "start it (`systemctl enable --now nvidia-fabricmanager`; its version must equal the driver's, here " + (gpus[0]?.driver ?? "?") + ")"));
  if (fm.note) gpuNotes.push(fm.note);
  const driver = gpus[0]?.driver ?? smi.driver;
  const detail = gpus.length
    ? `${gpus.length} × ${names.join(" + ")}, driver ${driver ?? "?"}${smi.cuda ? `, CUDA ${smi.cuda}` : ""}${raw.fabricManager ? `, fabric manager ${raw.fabricManager}` : ""}`
    : "nvidia-smi lists no GPU";
  if (!gpus.length && !gpuProblems.length) gpuProblems.push(problem("GPUs", "nvidia-smi lists no GPU", "check `nvidia-smi -L` on the host (driver, PCIe, a GPU fallen off the bus: `dmesg | grep -i xid`)"));

  // processes: every foreign compute process, named.
  const procProblems: Problem[] = [];
  const procNotes: string[] = [];
  for (const a of foreign) {
    const g = byUuid.get(a.gpuUuid);
    const where = g ? gpuLabel(g) : `GPU ${a.gpuUuid}`;
    const held = a.usedMiB === null ? "memory" : `${a.usedMiB} MiB`;
    if (allowed(a)) procNotes.push(`${where}: pid ${a.pid} (${a.name}) holds ${held} (allowed by modelServer.preflight.allowedGpuProcesses)`);
    else procProblems.push(problem(where, `pid ${a.pid} (${a.name}) holds ${held}; it is not this stack's server`, `stop it (\`kill ${a.pid}\`; a leftover server: \`docker ps\`), or allow it with modelServer.preflight.allowedGpuProcesses: [${JSON.stringify(a.name.split("/").pop())}]`));
  }

  // memory: the GPUs the server will use (the first tp × dp), free once our own server is gone.
  const used = gpus.slice(0, want);
  const ownUse = new Map<string, number>();
  for (const a of apps) if (isOwn(a) && a.usedMiB !== null) ownUse.set(a.gpuUuid, (ownUse.get(a.gpuUuid) ?? 0) + a.usedMiB);
  const free = (g: GpuRow) => Math.min(g.memoryTotalMiB, g.memoryTotalMiB - g.memoryUsedMiB + (ownUse.get(g.uuid) ?? 0));
  const memProblems: Problem[] = [];
  for (let start = 0; start < used.length; start += need.tp) {
    const group = used.slice(start, start + need.tp);
    const maxFree = Math.max(...group.map(free));
    for (const g of group) {
      const f = free(g);
      const claim = need.memFractionStatic * g.memoryTotalMiB;
      const takers = foreign.filter((a) => a.gpuUuid === g.uuid).map((a) => `pid ${a.pid} ${a.name}${a.usedMiB === null ? "" : ` ${a.usedMiB} MiB`}`);
      const by = takers.length ? ` (by ${takers.join(", ")})` : "";
      if (f < claim) {
        const most = Math.floor((f / g.memoryTotalMiB) * 100) / 100;
        memProblems.push(problem(gpuLabel(g), `${f} of ${g.memoryTotalMiB} MiB free, ${g.memoryTotalMiB - f} MiB used by others${by}; mem-fraction-static ${need.memFractionStatic} claims ${Math.round(claim)} MiB per GPU ('Not enough memory' or 'The memory capacity is unbalanced' at start)`, `free the GPU${takers.length ? " (stop the processes named)" : ""}, or lower modelServer.memFractionStatic to at most ${most.toFixed(2)}`));
      } else if (f < IMBALANCE_RATIO * maxFree) {
        memProblems.push(problem(gpuLabel(g), `${f} MiB free against ${maxFree} MiB on another GPU of its TP group${by}: SGLang refuses with 'The memory capacity is unbalanced. Some GPUs may be occupied by other processes'`, `free the GPU${takers.length ? " (stop the processes named)" : ""} so that every GPU of the group has the same memory free`));
      }
    }
  }
  const inventory: GpuInventory = {
    count: gpus.length,
    names,
    driver: driver ?? null,
    cuda: smi.cuda,
    memoryTotalMiB: gpus.map((g) => g.memoryTotalMiB),
    freeMiB: gpus.map(free),
    migEnabled: gpus.filter((g) => g.mig === "Enabled").map((g) => g.index),
    foreignProcesses: foreign.map((a) => ({ gpu: byUuid.get(a.gpuUuid)?.index ?? -1, pid: a.pid, name: a.name, usedMiB: a.usedMiB, allowed: allowed(a) })),
    fabricManager: raw.fabricManager,
    visibleInImage: null,
  };
  const freeList = used.map(free);
  return {
    inventory,
    checks: [
      result("gpus", detail, gpuProblems, gpuNotes),
      result("gpu processes", foreign.length ? `${foreign.length} foreign compute process${foreign.length === 1 ? "" : "es"}` : `none besides this stack's${apps.length ? ` (${apps.length} of its own)` : ""}`, procProblems, procNotes),
      result("gpu memory", freeList.length ? `free per GPU ${Math.min(...freeList)}–${Math.max(...freeList)} MiB of ${used[0].memoryTotalMiB}; mem-fraction-static ${need.memFractionStatic}` : "no GPU", memProblems),
    ],
  };
}

/**
 * Whether the fabric manager must run and does: only 8-GPU SXM boards (HGX, NVSwitch) need it; without it
 * the first CUDA call fails with error 802 'system not yet initialized'. The Fabric state of nvidia-smi -q
 * (newer drivers) wins over systemd's word.
 */
export function fabricManagerVerdict(gpus: readonly GpuRow[], unit: string, fabricStates: readonly string[]): { problem?: string; note?: string } {
  const nvswitch = gpus.length >= 8 && gpus.some((g) => /SXM/i.test(g.name));
  if (!nvswitch) return {};
  const pending = fabricStates.filter((s) => /not started|in progress/i.test(s));
  if (pending.length) return { problem: `the GPUs' fabric is not ready (nvidia-smi -q: Fabric State ${pending[0]}): CUDA fails with error 802 'system not yet initialized' on ${gpus[0].name} × ${gpus.length}` };
  if (fabricStates.some((s) => /completed/i.test(s))) return {};
  if (unit === "active" || unit === "") return {};
  if (unit === "not-installed") return { note: `no nvidia-fabricmanager unit on an NVSwitch board (${gpus.length} × ${gpus[0].name}); CUDA needs it (error 802) unless the image's CUDA probe passed` };
  return { problem: `nvidia-fabricmanager is ${unit} on an NVSwitch board (${gpus.length} × ${gpus[0].name}): the first CUDA call fails with error 802 'system not yet initialized'` };
}

/** "GPU 3 (GPU-5c1f…)". */
export function gpuLabel(g: Pick<GpuRow, "index" | "uuid">): string {
  return `GPU ${g.index} (${g.uuid})`;
}

function lastLine(text: string): string {
  return text.trim().split("\n").map((l) => l.trim()).filter(Boolean).pop() ?? "(no output)";
}

/** The known Docker / NVIDIA container toolkit failures: what a `docker run --gpus` stderr means, and the fix. */
export function classifyToolkitError(stderr: string, ctx: { image: string; driver: string | null; cuda: string | null }): { cause: string; message: string; fix: string } {
  const said = lastLine(stderr.replace(/: unknown\.?\s*$/gm, ""));
  const m = (re: RegExp) => re.exec(stderr);
  let x: RegExpExecArray | null;
  if ((x = m(/could not select device driver "([^"]*)" with capabilities: \[\[gpu\]\]/))) {
    return {
      cause: "no-toolkit",
      message: `docker cannot give the container GPUs (\`could not select device driver "${x[1]}" with capabilities: [[gpu]]\`): the NVIDIA container toolkit is not installed, or dockerd was not restarted after installing it (dockerd registers --gpus only when nvidia-container-runtime-hook is on its PATH at start)`,
      fix: "install nvidia-container-toolkit, then `nvidia-ctk runtime configure --runtime=docker && systemctl restart docker`",
    };
  }
  if (m(/unknown or invalid runtime name: nvidia/)) {
    return { cause: "no-runtime", message: "dockerd has no 'nvidia' runtime (`unknown or invalid runtime name: nvidia`)", fix: "`nvidia-ctk runtime configure --runtime=docker && systemctl restart docker`" };
  }
  if ((x = m(/unsatisfied condition: (cuda[<>=]+\s*[0-9.]+)/))) {
    const needs = x[1].replace(/\s+/g, "");
    const has = ctx.driver ? `driver ${ctx.driver}${ctx.cuda ? ` (CUDA ${ctx.cuda})` : ""}` : "the host's driver";
    return {
      cause: "driver-too-old",
      message: `${ctx.image} requires ${needs} and ${has} is older (\`nvidia-container-cli: requirement error: unsatisfied condition: ${needs}\`)`,
      fix: `upgrade the driver to one that supports ${needs.replace(/^cuda[<>=]+/, "CUDA ")} (R580 or newer for CUDA 13), or pin an image built for the driver's CUDA${ctx.cuda ? ` ${ctx.cuda}` : ""} (e.g. lmsysorg/sglang:v0.5.19-cu129, the last CUDA 12 tag)`,
    };
  }
  if (m(/nvml error: driver not loaded|libnvidia-ml\.so\.1: cannot open shared object file|couldn't communicate with the NVIDIA driver/)) {
    return { cause: "driver-not-loaded", message: `the toolkit finds no working NVIDIA driver (${said})`, fix: "install or load the NVIDIA kernel driver (`nvidia-smi` on the host must work), then retry" };
  }
  if ((x = m(/device error: ([^:]+): unknown device/))) {
    return { cause: "unknown-device", message: `docker asked for GPU '${x[1].trim()}', which the host does not have (\`nvidia-container-cli: device error: ${x[1].trim()}: unknown device\`)`, fix: "request only the GPUs the host has (modelServer.gpus: all)" };
  }
  if (m(/Failed to initialize NVML: Unknown Error/)) {
    return { cause: "nvml-unknown", message: "the container cannot reach the GPUs (`Failed to initialize NVML: Unknown Error`), typically after `systemctl daemon-reload` with the systemd cgroup driver", fix: "set `\"exec-opts\": [\"native.cgroupdriver=cgroupfs\"]` in daemon.json or restart the affected containers; see NVIDIA/nvidia-container-toolkit#48" };
  }
  if (m(/executable file not found in \$PATH|"nvidia-smi": executable file not found|exec: "nvidia-smi"/)) {
    return { cause: "no-nvidia-smi", message: "with --gpus the container has no nvidia-smi: the toolkit mounted no driver utilities into it", fix: "check the toolkit (`nvidia-ctk --version`) and the image's NVIDIA_DRIVER_CAPABILITIES (it needs utility)" };
  }
  if (m(/Unable to find image|No such image/)) {
    return { cause: "no-image", message: `${ctx.image} is not on the host`, fix: "`reprobench up` pulls it before this check runs" };
  }
  return { cause: "other", message: `the server image does not start with --gpus: ${said}`, fix: "run the same `docker run --rm --gpus all --entrypoint nvidia-smi IMAGE -L` on the host and repair what it says" };
}

/** The decisive check: what the server image saw with the server's --gpus. */
export function evaluateToolkit(host: string, raw: ToolkitFactsRaw | null, ctx: { need: number; driver: string | null; cuda: string | null; hooks: readonly string[]; gpusFlag: string }): { visible: number | null; check: CheckResult } {
  if (!raw) return { visible: null, check: skipped("toolkit", "not run (modelServer.gpus: none)") };
  const problem = (message: string, fix: string): Problem => ({ host, subject: `${raw.image} with --gpus ${ctx.gpusFlag}`, message, fix });
  if (!raw.ran) {
    const notes = [`the server image did not run (${raw.reason}): the decisive check runs in \`up\` once the image is pulled`];
    if (!ctx.hooks.length) {
      return { visible: null, check: result("toolkit", "image not run; no toolkit hook on PATH", [problem("neither nvidia-container-runtime-hook nor nvidia-cdi-hook is installed, so docker cannot honour --gpus (it would answer `could not select device driver \"\" with capabilities: [[gpu]]`)", "install nvidia-container-toolkit, then `nvidia-ctk runtime configure --runtime=docker && systemctl restart docker`")], notes) };
    }
    return { visible: null, check: result("toolkit", `image not run; hook ${ctx.hooks[0]}`, [], notes) };
  }
  if (raw.rc === 124) return { visible: null, check: result("toolkit", "timed out", [problem("`docker run --gpus … nvidia-smi -L` did not finish in time", "run it on the host by hand and see where it hangs (dockerd, the toolkit hook)")]) };
  if (raw.rc !== 0) {
    const c = classifyToolkitError(`${raw.err}\n${raw.out}`, { image: raw.image, driver: ctx.driver, cuda: ctx.cuda });
    return { visible: null, check: result("toolkit", c.cause, [problem(c.message, c.fix)]) };
  }
  const listed = parseGpuList(raw.out);
  const problems: Problem[] = [];
  if (listed.length < ctx.need) {
    problems.push(problem(`the container sees ${listed.length} GPU${listed.length === 1 ? "" : "s"} and tp × dp needs ${ctx.need}: SGLang would fail with 'CUDA error: invalid device ordinal'`, "give the container every GPU the server needs (modelServer.gpus: all; no NVIDIA_VISIBLE_DEVICES in modelServer.env), or lower tp × dp"));
  }
  const mig = listed.filter((g) => g.migDevices > 0);
  if (mig.length) problems.push(problem(`GPU${mig.length === 1 ? "" : "s"} ${mig.map((g) => g.index).join(", ")} appear as MIG devices in the container`, "disable MIG (`nvidia-smi -i N -mig 0`)"));
  return { visible: listed.length, check: result("toolkit", `${listed.length} GPU${listed.length === 1 ? "" : "s"} visible in the image with --gpus ${ctx.gpusFlag}`, problems) };
}

/** The CUDA probe (python3 + torch in the image): the first CUDA call, which the fabric manager and the driver's CUDA decide. */
export function evaluateCudaProbe(host: string, raw: { rc: number; out: string; err: string } | null, ctx: { image: string; need: number; driver: string | null }): CheckResult {
  if (!raw) return skipped("cuda", "not run");
  let r: { torch?: string | null; cuda?: string; available?: boolean; count?: number; error?: string; warnings?: string[] };
  try {
    r = JSON.parse(raw.out);
  } catch {
    return skipped("cuda", `no probe in the image (${lastLine(raw.err || raw.out).slice(0, 120)})`);
  }
  if (!r.torch) return skipped("cuda", "the image has no torch to probe with");
  const said = [r.error ?? "", ...(r.warnings ?? [])].join(" ");
  const problem = (message: string, fix: string): CheckResult =>
    result("cuda", `torch ${r.torch} (CUDA ${r.cuda ?? "?"}): not available`, [{ host, subject: `CUDA in ${ctx.image}`, message, fix }]);
  if (/\b802\b|system not yet initialized/i.test(said)) return problem("CUDA error 802 'system not yet initialized': the NVSwitch fabric is not up", "start the fabric manager (`systemctl enable --now nvidia-fabricmanager`, the same version as the driver)");
  if (/driver on your system is too old|driver version is insufficient/i.test(said)) return problem(`the driver${ctx.driver ? ` ${ctx.driver}` : ""} is too old for torch's CUDA ${r.cuda ?? ""}: ${said.trim().slice(0, 200)}`, "upgrade the driver (R580 or newer for CUDA 13) or use an image built for the driver's CUDA");
  if (/\b804\b|forward compatibility was attempted/i.test(said)) return problem("CUDA error 804: the image's forward-compatibility libraries do not work on this GPU", "upgrade the driver instead of relying on forward compatibility");
  if (r.available === false || r.error) return problem(`torch.cuda is not available: ${said.trim().slice(0, 200) || "no reason given"}`, "run `python3 -c 'import torch; torch.zeros(1).cuda()'` in the image with --gpus all and repair what it says");
  if ((r.count ?? 0) < ctx.need) return problem(`torch sees ${r.count} GPUs, tp × dp needs ${ctx.need}`, "give the container every GPU, or lower tp × dp");
  return result("cuda", `torch ${r.torch} (CUDA ${r.cuda ?? "?"}): ${r.count} GPUs initialised`);
}

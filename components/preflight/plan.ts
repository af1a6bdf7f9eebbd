// What the preflight asks of each host of a stack (its plan: the tools its roles' host scripts run, the
// ports the stack binds there and whose they are, and for a worker what its server needs), the inputs of
// preflight-host.sh from it, and the verdict: the host's report judged against its plan. The
// WorkerPreflight component (`up`) and `reprobench check` both go through `judgeHost`. Pure.
import { hostByName, routerSettings, usesModelBridge, workerSettings } from "../config/derive";
import type { ReprobenchConfig } from "../config/schema";
import { type HostFactsReport, cgroupOwner, parseSsListeners } from "./facts";
import { type GpuInventory, type OwnProcesses, evaluateCudaProbe, evaluateGpus, evaluateToolkit } from "./gpus";
import { type CheckResult, type Problem, listSome, problemLine, result, skipped } from "./verdict";
import { type FitEstimate, type WeightsMode, type WeightsSummary, evaluateFit, evaluateWeights } from "./weights";

/** The systemd units of the bridges (components/proxy-bridge.ts PROXY_BRIDGE_UNIT, model-bridge.ts MODEL_BRIDGE_UNIT). */
export const BRIDGE_UNITS = { proxy: "reprobench-proxy-bridge", model: "reprobench-model-bridge" } as const;

/** A command a host script runs, who runs it, and the Debian package that has it. */
export interface ToolNeed {
  tool: string;
  usedBy: string;
  pkg: string;
}

/** A port the stack binds on the host: where, and what of the stack binds it. */
export interface PortNeed {
  port: number;
  /** The address it binds ("0.0.0.0": all; "*": an address known only on the host, the docker gateway). */
  bind: string;
  what: string;
  /** The config key that sets it. */
  key: string;
}

/** What a worker's model server needs of its host. */
export interface WorkerNeeds {
  gpus: "all" | "none";
  image: string;
  containerName: string;
  tp: number;
  dp: number;
  memFractionStatic: number;
  contextLength: number | null;
  kvCacheDtype: string | null;
  configuredGpus: number;
  modelPath: string;
  modelMountPath: string;
  /** docker --user: ssh-user or uid[:gid]. */
  user: string;
  weights: WeightsMode;
  weightsSha256: Record<string, string>;
  allowedGpuProcesses: string[];
  cudaProbe: boolean;
}

/** What the preflight checks on one host. */
export interface HostPlan {
  host: string;
  roles: string[];
  tools: ToolNeed[];
  ports: PortNeed[];
  own: { containers: string[]; units: string[] };
  worker: WorkerNeeds | null;
}

const T = (tool: string, usedBy: string, pkg: string): ToolNeed => ({ tool, usedBy, pkg });

/** The tools of a host's roles, from what components/scripts/*.sh call (each `for tool in …` and use). */
export function requiredTools(config: ReprobenchConfig, roles: readonly string[]): ToolNeed[] {
  const tools: ToolNeed[] = [
    T("docker", "every host script (host-facts.sh, the Docker provider)", "docker.io or docker-ce"),
    T("jq", "host-facts.sh, docker-daemon.sh and the gates", "jq"),
    T("curl", "image-digest.sh (registry.sh) and the readiness gates", "curl"),
    T("python3", "docker-daemon.sh (daemon.json) and the preflight's safetensors reader", "python3"),
    T("systemctl", "docker-daemon.sh (restarts dockerd)", "systemd"),
    T("ip", "docker-daemon.sh (address pools)", "iproute2"),
    T("ss", "the preflight's port check and proxy-bridge.sh", "iproute2"),
    T("sha256sum", "docker-daemon-check.sh", "coreutils"),
    T("base64", "registry.sh (registry credentials)", "coreutils"),
  ];
  // dockerd runs the host's ps for `docker top`: without it the preflight lists none of the server's pids.
  if (roles.includes("worker")) tools.push(T("ps", "the preflight (docker top lists the model server's processes)", "procps"));
  if (roles.includes("runner")) {
    const runner = [
      ...(config.proxy.enabled || usesModelBridge(config) ? [T("socat", "proxy-bridge.sh (the proxy and model bridges)", "socat")] : []),
      ...(config.run.enabled || config.harbor.enabled
        ? [
            T("git", "harbor-dataset.sh (the dataset checkout)", "git"),
            T("systemd-run", "harbor-launch.sh (the job's unit)", "systemd"),
            ...(config.run.environment === "docker" ? [T("skopeo", "task-images.sh (task image pre-pull)", "skopeo"), T("flock", "task-images.sh", "util-linux"), T("xargs", "task-images.sh", "findutils")] : []),
          ]
        : []),
      ...(config.toolBundle.enabled ? [T("tmux", "tool-bundle.sh (tmux for the task containers)", "tmux"), T("ldd", "tool-bundle.sh", "libc-bin")] : []),
    ];
    // git is only needed for a git dataset; a project directory is uploaded.
    tools.push(...runner.filter((t) => t.tool !== "git" || /^(https?|git|ssh):|^git@|\.git$/.test(config.harbor.datasetRepo)));
  }
  return tools;
}

/** The ports the stack binds on a host, and whose. */
export function stackPorts(config: ReprobenchConfig, hostName: string): PortNeed[] {
  const host = hostByName(config, hostName);
  const ports: PortNeed[] = [];
  if (host.roles.includes("worker")) {
    const s = workerSettings(config, hostName);
    ports.push({ port: s.port, bind: s.listenAddress, what: `the model server ${s.containerName}`, key: "modelServer.port" });
  }
  if (host.roles.includes("router") && config.router.enabled) {
    const r = routerSettings(config);
    ports.push({ port: r.port, bind: r.host, what: `the router ${r.containerName}`, key: "router.port" });
    // sglang-router 0.3.2 binds its metrics on 0.0.0.0 whatever --host says.
    ports.push({ port: r.prometheusPort, bind: "0.0.0.0", what: `the router's metrics (${r.containerName})`, key: "router.prometheusPort" });
  }
  if (host.roles.includes("runner")) {
    if (config.proxy.enabled) ports.push({ port: config.proxy.bridgePort, bind: "*", what: `the proxy bridge (${BRIDGE_UNITS.proxy})`, key: "proxy.bridgePort" });
    if (usesModelBridge(config)) ports.push({ port: config.run.modelBridgePort, bind: "*", what: `the model bridge (${BRIDGE_UNITS.model})`, key: "run.modelBridgePort" });
  }
  return ports;
}

/** The preflight plan of one host of a (validated) stack config. */
export function hostPlan(config: ReprobenchConfig, hostName: string): HostPlan {
  const host = hostByName(config, hostName);
  const containers: string[] = [];
  const units: string[] = [];
  let worker: WorkerNeeds | null = null;
  if (host.roles.includes("worker")) {
    const s = workerSettings(config, hostName);
    containers.push(s.containerName);
    const pf = config.modelServer.preflight;
    worker = {
      gpus: s.gpus,
      image: s.image,
      containerName: s.containerName,
      tp: s.tp,
      dp: s.dp,
      memFractionStatic: s.memFractionStatic,
      contextLength: s.contextLength,
      kvCacheDtype: s.kvCacheDtype,
      configuredGpus: host.gpus,
      modelPath: s.modelPath,
      modelMountPath: s.modelMountPath,
      user: s.user,
      weights: pf.weights,
      weightsSha256: pf.weightsSha256,
      allowedGpuProcesses: pf.allowedGpuProcesses,
      cudaProbe: pf.cudaProbe,
    };
  }
  if (host.roles.includes("router") && config.router.enabled) containers.push(config.router.containerName);
  if (host.roles.includes("runner")) {
    if (config.proxy.enabled) units.push(BRIDGE_UNITS.proxy);
    if (usesModelBridge(config)) units.push(BRIDGE_UNITS.model);
  }
  return { host: hostName, roles: [...host.roles], tools: requiredTools(config, host.roles), ports: stackPorts(config, hostName), own: { containers, units }, worker };
}

/** The host scripts of a preflight run, in order (preflight-weights.sh defines what preflight-host.sh calls). */
export const PREFLIGHT_SCRIPTS = ["preflight-weights", "preflight-host"];

/**
 * preflight-host.sh's inputs for a plan. `image` is the image the server's container runs (the pinned
 * reference in `up`; the config's in `check`). `full` false leaves out the slow parts (the CUDA probe,
 * the sha256 of the weights): what the component records after the checks passed.
 */
export function preflightEnv(plan: HostPlan, o: { image?: string; full?: boolean } = {}): Record<string, string> {
  const w = plan.worker;
  const full = o.full ?? true;
  const env: Record<string, string> = {
    HOST_NAME: plan.host,
    TOOLS: [...new Set(plan.tools.map((t) => t.tool))].join(" "),
    PORTS: [...new Set(plan.ports.map((p) => String(p.port)))].join(" "),
    OWN_CONTAINERS: plan.own.containers.join(" "),
    OWN_UNITS: plan.own.units.join(" "),
    CHECK_GPUS: w && w.gpus !== "none" ? "1" : "0",
  };
  if (w) {
    Object.assign(env, {
      GPUS_FLAG: w.gpus,
      IMAGE: o.image ?? w.image,
      IMAGE_OF_CONTAINER: w.containerName,
      CUDA_PROBE: full && w.cudaProbe ? "1" : "0",
      MODEL_PATH: w.modelPath,
      CONTAINER_USER: w.user,
      WEIGHTS_SHA256_JSON: JSON.stringify(full ? w.weightsSha256 : {}),
    });
  }
  return env;
}

// ---------------------------------------------------------------------------------------------------------
// Tools and ports.

export function evaluateTools(host: string, found: Record<string, string | null>, tools: readonly ToolNeed[]): CheckResult {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.tool)) continue;
    seen.add(t.tool);
    if (found[t.tool] === null || found[t.tool] === undefined) {
      problems.push({ host, subject: `tool ${t.tool}`, message: `is not installed; ${t.usedBy} runs it`, fix: `install it (Debian/Ubuntu: \`apt-get install ${t.pkg}\`)` });
    }
  }
  return result("tools", problems.length ? `missing: ${problems.map((p) => p.subject.replace(/^tool /, "")).join(", ")}` : `${seen.size} present`, problems);
}

/** The stack's processes as the report knows them: listed pids, and the container ids and units a cgroup names. */
function ownProcesses(report: HostFactsReport): OwnProcesses {
  return { pids: report.own.pids, containerIds: report.own.containers.map((c) => ({ name: c.name, id: c.id })), units: Object.values(BRIDGE_UNITS) };
}

const WILDCARD = new Set(["0.0.0.0", "::", "*", ""]);
function overlaps(ours: string, theirs: string): boolean {
  return ours === "*" || WILDCARD.has(theirs) || ours === "0.0.0.0" || ours === theirs;
}

export function evaluatePorts(host: string, report: HostFactsReport, ports: readonly PortNeed[]): CheckResult {
  if (!ports.length) return skipped("ports", "the stack binds no port here");
  if (report.ports.state === "no-ss") return skipped("ports", "not read: ss is missing (see tools)");
  const ours = ownProcesses(report);
  const own = new Set(ours.pids);
  const problems: Problem[] = [];
  for (const need of ports) {
    const raw = report.ports.listeners.find((l) => l.port === need.port);
    if (!raw) continue;
    for (const l of parseSsListeners(raw.ss).filter((x) => x.port === need.port && overlaps(need.bind, x.address))) {
      const foreign = l.processes.filter((p) => !own.has(p.pid) && cgroupOwner(raw.cgroups[String(p.pid)] ?? "", ours) === null);
      if (l.processes.length && !foreign.length) continue;
      const who = foreign.length ? foreign.map((p) => `${p.name} (pid ${p.pid})`).join(", ") : "a process ss does not name";
      problems.push({ host, subject: `port ${need.port}`, message: `${need.what} binds ${need.bind === "*" ? "it" : `${need.bind}:${need.port}`}, and ${who} already listens on ${l.address}:${l.port}`, fix: `stop ${foreign.length ? `pid ${foreign.map((p) => p.pid).join(", ")}` : "that listener"} (\`ss -ltnp 'sport = :${need.port}'\`), or choose another port (${need.key})` });
    }
  }
  return result("ports", `${ports.map((p) => p.port).join(", ")}${problems.length ? "" : " free or ours"}`, problems);
}

// ---------------------------------------------------------------------------------------------------------
// The verdict of a host.

/** What the preflight records of a worker (outputs, the run manifest). */
export interface PreflightFacts {
  host: string;
  hostname: string;
  containerUser: string;
  gpus: GpuInventory | null;
  weights: WeightsSummary | null;
  fit: FitEstimate | null;
}

export interface HostVerdict {
  host: string;
  ready: boolean;
  checks: CheckResult[];
  problems: Problem[];
  facts: PreflightFacts;
}

/** A host's report judged against its plan: every check's row, every problem, the facts to record. */
export function judgeHost(plan: HostPlan, report: HostFactsReport): HostVerdict {
  const host = plan.host;
  const checks: CheckResult[] = [];
  const w = plan.worker;
  let inventory: GpuInventory | null = null;
  let weights: WeightsSummary | null = null;
  let fit: FitEstimate | null = null;
  if (w) {
    const need = w.tp * w.dp;
    if (w.gpus === "none") {
      checks.push(skipped("gpus", "modelServer.gpus: none"));
    } else {
      const g = evaluateGpus(host, report.gpus, ownProcesses(report), { tp: w.tp, dp: w.dp, memFractionStatic: w.memFractionStatic, configuredGpus: w.configuredGpus, allowedProcesses: w.allowedGpuProcesses, image: w.image, gpusFlag: w.gpus });
      inventory = g.inventory;
      const tk = evaluateToolkit(host, report.toolkit, { need, driver: inventory?.driver ?? null, cuda: inventory?.cuda ?? null, hooks: report.gpus?.hooks ?? [], gpusFlag: w.gpus });
      if (inventory) inventory.visibleInImage = tk.visible;
      const cuda = evaluateCudaProbe(host, report.cudaProbe, { image: report.toolkit?.image ?? w.image, need, driver: inventory?.driver ?? null });
      // A CUDA probe that initialised every GPU settles the fabric manager question.
      if (cuda.status === "ok") for (const c of g.checks) c.notes = c.notes.filter((n) => !n.includes("nvidia-fabricmanager"));
      for (const c of g.checks) if (!c.problems.length) c.status = c.notes.length ? "warn" : "ok";
      checks.push(tk.check, ...g.checks, cuda);
    }
    const wv = evaluateWeights(host, report.weights, { modelPath: w.modelPath, modelMountPath: w.modelMountPath, mode: w.weights, gpus: w.gpus !== "none", sha256: w.weightsSha256 });
    weights = wv.summary;
    checks.push(wv.check);
    if (w.gpus === "none") checks.push(skipped("memory fit", "modelServer.gpus: none"));
    else {
      const used = inventory ? inventory.freeMiB.slice(0, need) : [];
      const total = weights?.totalSize ?? null;
      const inputs = used.length && total ? { freeMiB: Math.min(...used), tp: w.tp, memFractionStatic: w.memFractionStatic, totalSize: total, geometry: weights?.geometry ?? null, kvCacheDtype: w.kvCacheDtype, contextLength: w.contextLength } : null;
      const f = evaluateFit(host, inputs, !used.length ? "no GPU memory read" : "no weights size (index total_size) read");
      fit = f.estimate;
      checks.push(f.check);
    }
  }
  checks.push(evaluateTools(host, report.tools, plan.tools), evaluatePorts(host, report, plan.ports));
  const problems = checks.flatMap((c) => c.problems);
  return { host, ready: problems.length === 0, checks, problems, facts: { host, hostname: report.hostname, containerUser: report.containerUser, gpus: inventory, weights, fit } };
}

/** The error text of a verdict that is not ready: one line per problem. */
export function refusal(v: HostVerdict, what: string): string {
  return [`preflight of ${what} refused (nothing was started or stopped):`, ...v.problems.map((p) => `  - ${problemLine(p)}`)].join("\n");
}

/** A short line of what a ready host has, for the log. */
export function readyLine(v: HostVerdict): string {
  const f = v.facts;
  const parts = [
    f.gpus ? `${f.gpus.count} × ${listSome(f.gpus.names, 2)} (driver ${f.gpus.driver ?? "?"})` : null,
    f.weights ? `weights ${f.weights.kind}${f.weights.shards ? `, ${f.weights.shards} shards` : ""}` : null,
    f.fit?.maxTokens ? `≈${f.fit.maxTokens} KV tokens per replica` : null,
  ].filter(Boolean);
  return `preflight of ${v.host} passed${parts.length ? `: ${parts.join("; ")}` : ""}`;
}

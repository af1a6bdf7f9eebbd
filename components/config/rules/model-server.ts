// Rules of the model server section (modelServer.*): GPUs per worker, overrides naming workers, and what the
// engine (SGLang or vLLM) takes.
import { LAUNCHERS, type ReprobenchConfig } from "../schema";
import { SGLANG_ONLY_SETTINGS, hostsWithRole, settingValue, workerSettings } from "../derive";
import { type ConfigProblem, type PathPart, problem } from "../problems";

/** Config path of a worker setting: the override's key when the override sets it. */
export function settingPath(config: ReprobenchConfig, hostName: string, field: string): PathPart[] {
  const override = config.modelServer.overrides[hostName] as Record<string, unknown> | undefined;
  return override && override[field] !== undefined ? ["modelServer", "overrides", hostName, field] : ["modelServer", field];
}

export function gpuProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  config.hosts.forEach((host, i) => {
    if (!host.roles.includes("worker")) return;
    const s = workerSettings(config, host.name);
    // Simulated hosts have simulated GPUs (sim/gpus.ts) and the double also runs without any ("none");
    // a server that asks for GPUs needs as many on its host as on a real one.
    if (config.environment === "sim" && s.gpus === "none") return;
    if (s.gpus === "none") {
      out.push(problem(settingPath(config, host.name, "gpus"), `got "none" for worker ${host.name}; expected "all" on environment real (SGLang needs the GPUs)`));
    }
    const needed = s.tp * s.dp;
    if (host.gpus < needed) {
      out.push(problem(["hosts", i, "gpus"], `got ${host.gpus}; expected at least tp×dp = ${s.tp}×${s.dp} = ${needed} GPUs on worker ${host.name} (environment ${config.environment})`));
    }
  });
  return out;
}

export function overrideProblems(config: ReprobenchConfig): ConfigProblem[] {
  const workers = hostsWithRole(config, "worker").map((h) => h.name);
  return Object.keys(config.modelServer.overrides).flatMap((name) =>
    workers.includes(name)
      ? []
      : [problem(["modelServer", "overrides", name], `names ${config.hosts.some((h) => h.name === name) ? "a host without the worker role" : "no host"}; expected a worker host: ${workers.join(", ") || "(none)"}`)],
  );
}

/** vLLM differs from SGLang where reprobench relies on SGLang: flags, /server_info, the router's DP discovery. */
export function engineProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const engine = config.modelServer.engine;
  const launchers = LAUNCHERS[engine];
  const launcherPaths: PathPart[][] = [["modelServer", "launcher"], ...Object.keys(config.modelServer.overrides).map((n) => ["modelServer", "overrides", n, "launcher"])];
  for (const path of launcherPaths) {
    const value = path.length === 2 ? config.modelServer.launcher : config.modelServer.overrides[String(path[2])]?.launcher;
    if (value !== undefined && value !== null && !launchers.includes(value)) {
      out.push(problem(path, `got ${JSON.stringify(value)}; expected ${launchers.map((l) => JSON.stringify(l)).join(" or ")} for modelServer.engine ${engine} (or null)`));
    }
  }
  if (engine !== "vllm") return out;
  for (const host of hostsWithRole(config, "worker")) {
    const s = workerSettings(config, host.name);
    for (const name of SGLANG_ONLY_SETTINGS) {
      if (settingValue(s, name) !== null) {
        const [head, ...rest] = name.split(".");
        out.push(problem([...settingPath(config, host.name, head), ...rest], `got ${JSON.stringify(settingValue(s, name))}; expected null for modelServer.engine vllm (an SGLang flag with no vLLM equivalent here: pass vLLM's own flag in extraArgs)`));
      }
    }
  }
  if (config.router.enabled) {
    if (config.router.dpAware) {
      out.push(problem(["router", "dpAware"], "got true; expected false for modelServer.engine vllm: --dp-aware discovers DP ranks through SGLang's /server_info, which vLLM does not have (vLLM balances its --data-parallel-size ranks itself)"));
    }
    if (config.router.image === null) {
      out.push(problem(["router", "image"], "missing; expected an image with sglang-router 0.3.2 for modelServer.engine vllm (the vLLM image has no router; e.g. the SGLang image), or router.enabled: false to use the worker directly"));
    }
  }
  return out;
}

/** Where a path lies relative to another: the same, inside it, or around it (plain string paths, no '..'). */
function nested(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * modelServer.download writes into every worker's modelPath (and replaces what it downloaded there): each
 * must be a directory of its own, at least two levels deep, and apart from the client's venv.
 */
export function downloadProblems(config: ReprobenchConfig): ConfigProblem[] {
  const download = config.modelServer.download;
  if (download === undefined) return [];
  const out: ConfigProblem[] = [];
  for (const host of hostsWithRole(config, "worker")) {
    const s = workerSettings(config, host.name);
    if (!/^\/[^/]+\/[^/]+(\/[^/]+)*$/.test(s.modelPath)) {
      out.push(problem(settingPath(config, host.name, "modelPath"), `got ${JSON.stringify(s.modelPath)} for worker ${host.name}; expected a directory of its own at least two levels deep, without a trailing '/' (modelServer.download writes the weights into it), such as /var/lib/reprobench/models/NAME`));
    } else if (nested(s.modelPath, download.venv)) {
      out.push(problem(["modelServer", "download", "venv"], `got ${JSON.stringify(download.venv)}, which overlaps modelServer.modelPath ${s.modelPath} of worker ${host.name}; expected a directory apart from the weights`));
    }
  }
  return out;
}

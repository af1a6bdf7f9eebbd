// Rules of ports and the router's address: no two listeners on one host share a port, and the runner can
// reach the router where it binds.
import type { ReprobenchConfig } from "../schema";
import { hostsWithRole, workerSettings } from "../derive";
import { type ConfigProblem, type PathPart, configKey, duplicates, problem } from "../problems";
import { settingPath } from "./model-server";

export function portProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const host of config.hosts) {
    const used: { port: number; path: PathPart[] }[] = [];
    if (host.roles.includes("worker")) used.push({ port: workerSettings(config, host.name).port, path: settingPath(config, host.name, "port") });
    if (host.roles.includes("router") && config.router.enabled) {
      used.push({ port: config.router.port, path: ["router", "port"] }, { port: config.router.prometheusPort, path: ["router", "prometheusPort"] });
    }
    if (host.roles.includes("runner") && config.proxy.enabled) used.push({ port: config.proxy.bridgePort, path: ["proxy", "bridgePort"] });
    out.push(
      ...duplicates(used, (u) => String(u.port), (i, f) =>
        problem(used[i].path, `got ${used[i].port}; expected a port not already taken on host ${host.name} by ${configKey(used[f].path)}`)),
    );
  }
  return out;
}

export function routerReachProblems(config: ReprobenchConfig): ConfigProblem[] {
  const routers = hostsWithRole(config, "router");
  const runners = hostsWithRole(config, "runner");
  if (!config.router.enabled || routers.length !== 1 || runners.length !== 1) return []; // reported by roleProblems
  const [router, runner] = [routers[0], runners[0]];
  const bind = config.router.host;
  const loopback = bind.startsWith("127.");
  if (bind !== "0.0.0.0" && !loopback && bind !== router.privateIp) {
    return [problem(["router", "host"], `got ${JSON.stringify(bind)}; expected 127.0.0.1, 0.0.0.0 or the router host's privateIp (${router.privateIp})`)];
  }
  if (loopback && router.name !== runner.name) {
    return [problem(["router", "host"], `got ${JSON.stringify(bind)}; expected an address the runner host ${runner.name} can reach (router host ${router.name}'s privateIp ${router.privateIp} or 0.0.0.0): loopback only works when router and runner share a host`)];
  }
  return [];
}

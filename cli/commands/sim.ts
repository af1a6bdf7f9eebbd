// `reprobench sim up|down|status|network|registry|gpus|rehearsal`: the simulated cluster the `local` stack runs
// on (sim/cluster.ts), its hosts' simulated GPUs (sim/gpus.ts) and the on-demand rehearsal dataset
// (sim/rehearsal/prepare.ts).
import { resolve } from "node:path";
import { command, UsageError } from "./command";
import { existsSync } from "node:fs";
import { join } from "node:path";
// The value checks of the arguments (light modules); the cluster code is loaded when the command runs.
import { type GpuChanges, parseGpuOptions } from "../../sim/gpus";
import { MAX_HOSTS } from "../../sim/layout";
import { normalizeConditions, type NetworkConditions } from "../../sim/outside";
import { QUOTA_MAX, type RegistryQuota } from "../../sim/registry";
import { MAX_REHEARSAL_TASKS } from "../../sim/rehearsal/tasks";

// The project root, wherever the CLI is started from: .sim/ paths in Pulumi.local.yaml are relative to it.
const root = resolve(__dirname, "..", "..");

export const sim = command("sim", {
  summary: "simulated cluster for the local stack: sim up [--hosts N] | down | status | network | registry | gpus | rehearsal",
  define: (cmd) =>
    cmd
      .usage("up|down|status|network|registry|gpus|rehearsal [HOST] [options]")
      .argument("<action>", "up, down, status, network, registry, gpus or rehearsal")
      .argument("[host]", "gpus: one host (default: every host)")
      .option("--hosts <n>", "up: number of hosts")
      .option("--take-over", "up: take over a cluster another checkout started")
      .option("--discard-results", "down: do not copy the job results to .sim/results/ first")
      .option("--purge-images", "down: also remove the images and the registry cache")
      .option("--json", "status, registry --counts, gpus: as JSON")
      .option("--latency-ms <n>", "network: added latency")
      .option("--bandwidth-kbps <n>", "network: bandwidth limit")
      .option("--fail-fraction <f>", "network: share of connections that fail")
      .option("--fail-with <kind>", "network: 502, 503, 429 or reset")
      .option("--fail-targets <targets>", "network: only these host:port or http:// URL prefixes may fail ('' = every connection)")
      .option("--seed <n>", "network: the failure sequence's seed; rehearsal: the dataset's seed")
      .option("--reset", "network, registry: start from the scenario's section; gpus: the default inventory")
      .option("--count <n>", "gpus: number of GPUs")
      .option("--name <s>", "gpus: product name (e.g. 'NVIDIA A100-SXM4-80GB')")
      .option("--memory-mib <m>", "gpus: memory per GPU")
      .option("--driver <v>", "gpus: driver version[:CUDA] (e.g. 570.172.08)")
      .option("--busy <gpu:mib[:process]>", "gpus: a foreign process holding MiB on a GPU (repeatable; MIB 0 frees it)", (v: string, all: string[] = []) => [...all, v])
      .option("--mig <gpu[:on|off]>", "gpus: MIG mode of a GPU (repeatable)", (v: string, all: string[] = []) => [...all, v])
      .option("--toolkit <state>", "gpus: present or absent (restarts the host's dockerd, as on a real host)")
      .option("--fabric-manager <state>", "gpus: running or stopped")
      .option("--anonymous <n>", "registry: anonymous pulls per window")
      .option("--authenticated <n>", "registry: authenticated pulls per window")
      .option("--window <seconds>", "registry: the sliding window")
      .option("--clear-counts", "registry: forget the pulls counted so far")
      .option("--counts", "registry: manifest requests per repository:reference and client")
      .option("--tasks <n>", "rehearsal: the dataset's task count")
      .option("--instance <name>", "rehearsal: publish on the test instance NAME")
      .addHelpText("after", `\n${SIM_USAGE}`),
  async action({ argv }) {
    // commander checked the option names; which action takes which, and the values, are checked here.
    let parsed;
    try {
      parsed = parseSimArgs(argv);
    } catch (err) {
      throw new UsageError(`${(err as Error).message}`);
    }
    const { formatStatus, simDown, simStatus, simUp } = await import("../../sim/cluster");
    const { instanceLayout } = await import("../../sim/layout");
    const { formatManifestCounts } = await import("../../sim/registry");
    const { instanceByName, prepareRehearsal } = await import("../../sim/rehearsal/prepare");
    const { registryCounts, setNetworkConditions, setRegistryQuota } = await import("../../sim/settings");
    if (parsed.action === "up") {
      const report = await simUp({ root, hosts: parsed.hosts, takeOver: parsed.takeOver });
      console.log(`sim up: ${report.plan.hosts.map((h) => `${h.name}=${h.ip} ssh 127.0.0.1:${h.sshPort}`).join(", ")} (${report.seconds.toFixed(1)}s)`);
      return 0;
    }
    if (parsed.action === "down") {
      const report = await simDown({ root, discardResults: parsed.discardResults, purgeImages: parsed.purgeImages });
      for (const [host, path] of Object.entries(report.savedResults)) console.log(`job results of ${host} saved in ${path}`);
      console.log(`sim down: removed containers [${report.removed.containers.join(", ")}], volumes [${report.removed.volumes.join(", ")}], networks [${report.removed.networks.join(", ")}]`);
      return 0;
    }
    if (parsed.action === "network") {
      const conditions = setNetworkConditions({ root }, parsed.conditions ?? {}, { reset: parsed.reset });
      console.log(JSON.stringify(conditions));
      if (!existsSync(join(root, instanceLayout().stateDir, "cluster.json"))) console.error("reprobench sim: note: the simulated cluster is not up; `sim up` starts its proxy with these conditions");
      return 0;
    }
    if (parsed.action === "registry") {
      const notUp = !existsSync(join(root, instanceLayout().stateDir, "cluster.json"));
      const changes = parsed.quota !== undefined || parsed.reset === true || parsed.clearCounts === true;
      // Without changes the file is still written (from the scenario when it is missing): `sim up` then keeps it.
      const quota = changes || !parsed.counts ? setRegistryQuota({ root }, parsed.quota ?? {}, { reset: parsed.reset, clearCounts: parsed.clearCounts }) : undefined;
      if (parsed.counts) {
        const counts = registryCounts({ root });
        if (parsed.json) console.log(JSON.stringify(counts, null, 2));
        else {
          console.log(`manifest requests since ${counts.since ?? "the registry started logging"} (${instanceLayout().registry.requestLog}):`);
          console.log(formatManifestCounts(counts.rows, counts.inWindow, counts.quota));
        }
      } else if (quota) {
        console.log(JSON.stringify(quota));
      }
      if (notUp) console.error("reprobench sim: note: the simulated cluster is not up; `sim up` starts its registry with these limits");
      return 0;
    }
    if (parsed.action === "gpus") {
      const { simGpus } = await import("../../sim/gpus");
      const report = await simGpus({ root, host: parsed.gpus?.host, changes: parsed.gpus?.changes, json: parsed.json, log: (m) => console.error(m) });
      console.log(report.text);
      return 0;
    }
    if (parsed.action === "rehearsal") {
      let instance;
      try {
        instance = parsed.rehearsal?.instance ? instanceByName(root, parsed.rehearsal.instance) : undefined;
      } catch (err) {
        console.error(`reprobench sim: ${(err as Error).message}`);
        return 2;
      }
      const report = await prepareRehearsal({ root, instance, count: parsed.rehearsal?.tasks, seed: parsed.rehearsal?.seed });
      console.log(`repository: ${report.repoUrl}`);
      console.log(`commit: ${report.commit}`);
      console.log(`tasks: ${report.taskCount}`);
      console.log(`ground truth: ${report.groundTruthFile}`);
      return 0;
    }
    const status = await simStatus({ root });
    console.log(parsed.json ? JSON.stringify(status, null, 2) : formatStatus(status));
    const healthy =
      status.hosts.length > 0 &&
      status.registry.state === "running" &&
      status.mirror?.state === "running" &&
      status.proxy?.state === "running" &&
      status.outside?.state === "running" &&
      status.hub?.state === "running" &&
      status.hosts.every((h) => h.ssh && h.docker !== "down" && h.docker !== "-");
    return healthy ? 0 : 3;
  },
});

// The arguments of `reprobench sim …`.

export interface SimArgs {
  action: "up" | "down" | "status" | "network" | "registry" | "gpus" | "rehearsal";
  /** network: the fields to change (the rest keep their current values). */
  conditions?: Partial<NetworkConditions>;
  /** network/registry --reset: start from the scenario's `network` / `registry` section. */
  reset?: boolean;
  /** registry: the limits to change. */
  quota?: Partial<RegistryQuota>;
  /** registry --clear-counts: the gate forgets the pulls counted so far. */
  clearCounts?: boolean;
  /** registry --counts: manifest requests per repository:reference and client/account, from the log. */
  counts?: boolean;
  hosts?: number;
  /** gpus: the host (all when absent) and the inventory changes (none: print only). */
  gpus?: { host?: string; changes: GpuChanges };
  /** rehearsal: the dataset's task count and seed, and which instance (by name) to publish it on. */
  rehearsal?: { tasks?: number; seed?: number; instance?: string };
  /** up: take over a cluster another checkout started (its job results are copied here first). */
  takeOver: boolean;
  discardResults: boolean;
  purgeImages: boolean;
  json: boolean;
}

export const SIM_USAGE = [
  "usage: reprobench sim up [--hosts N] [--take-over]",
  "                                                start (or complete) the simulated cluster; idempotent.",
  "                                                --take-over: the cluster was started by another checkout;",
  "                                                copy its job results here and recreate it for this one",
  "       reprobench sim down [--discard-results] [--purge-images]",
  "                                                remove everything `sim up` made (job results are copied",
  "                                                to .sim/results/<host>/ first unless --discard-results);",
  "                                                images and the registry cache stay unless --purge-images",
  "       reprobench sim status [--json]           state of the registry, mirror, proxy, hub and hosts",
  "       reprobench sim network [--latency-ms N] [--bandwidth-kbps N] [--fail-fraction F]",
  "                              [--fail-with 502|503|429|reset] [--seed N] [--fail-targets T,T…] [--reset]",
  "                                                the egress proxy's network conditions (applied to new",
  "                                                connections at once); --fail-targets: only connections to",
  "                                                these host:port or http:// URL prefixes may fail",
  "                                                (e.g. http://pypi.sim/rehearsal/; '' = every connection);",
  "                                                --reset: back to the `network` section of",
  "                                                sim/scenarios/sim-default.json first",
  "       reprobench sim registry [--anonymous N] [--authenticated M] [--window SECONDS] [--reset]",
  "                               [--clear-counts] [--counts] [--json]",
  "                                                the registry's pull limits (Docker Hub's: a pull is a",
  "                                                manifest GET, counted per client IP anonymously and per",
  "                                                account with credentials, in a sliding window); prints",
  "                                                them. --reset: back to the `registry` section of",
  "                                                sim/scenarios/sim-default.json first; --clear-counts:",
  "                                                forget the pulls counted so far; --counts: manifest GETs,",
  "                                                HEADs and 429s per repository:reference and client/user",
  "                                                since the last clear, from the gate's request log",
  "       reprobench sim gpus [HOST] [--count N] [--name S] [--memory-mib M] [--driver V[:CUDA]]",
  "                           [--busy GPU:MIB[:PROCESS]]… [--mig GPU[:on|off]]… [--toolkit present|absent]",
  "                           [--fabric-manager running|stopped] [--reset] [--json]",
  "                                                change and print a host's simulated GPUs (every host",
  "                                                without HOST); new containers and the host's nvidia-smi",
  "                                                see a change at once; --toolkit restarts that host's",
  "                                                dockerd (its containers stop; those with a restart policy",
  "                                                come back); --busy starts a real process on the host",
  `       reprobench sim rehearsal [--tasks N] [--seed S] [--instance NAME]`,
  "                                                generate the rehearsal dataset (seed 000's run in",
  `                                                miniature: 89 tasks unless --tasks, 1 to ${MAX_REHEARSAL_TASKS}; seed 0),`,
  "                                                build and push its task images and publish it as",
  "                                                http://git.sim/terminal-bench-rehearsal.git on the running",
  "                                                cluster (the default one, or the test instance NAME);",
  "                                                prints the repository, commit, task count and the path of",
  "                                                its ground-truth.json",
].join("\n");

const REGISTRY_FLAGS: Record<string, "anonymousPulls" | "authenticatedPulls" | "windowSeconds"> = {
  "--anonymous": "anonymousPulls",
  "--authenticated": "authenticatedPulls",
  "--window": "windowSeconds",
};

const NETWORK_FLAGS: Record<string, keyof NetworkConditions> = {
  "--latency-ms": "latencyMs",
  "--bandwidth-kbps": "bandwidthKBps",
  "--fail-fraction": "failFraction",
  "--fail-with": "failWith",
  "--seed": "seed",
};

const SIM_ACTIONS: readonly SimArgs["action"][] = ["up", "down", "status", "network", "registry", "gpus", "rehearsal"];
// sim gpus: flag → its SimGpusCliValues key, and whether it repeats.
const GPU_FLAGS: Record<string, { key: "count" | "name" | "memoryMib" | "driver" | "busy" | "mig" | "toolkit" | "fabricManager"; repeats?: true }> = {
  "--count": { key: "count" },
  "--name": { key: "name" },
  "--memory-mib": { key: "memoryMib" },
  "--driver": { key: "driver" },
  "--busy": { key: "busy", repeats: true },
  "--mig": { key: "mig", repeats: true },
  "--toolkit": { key: "toolkit" },
  "--fabric-manager": { key: "fabricManager" },
};

/** `sim gpus [HOST] …`: its own flags; --reset and --json as the other actions spell them. */
function parseGpuArgs(rest: string[], out: SimArgs): SimArgs {
  const values: Record<string, string | string[] | boolean> = {};
  let host: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const flag = arg.split("=")[0];
    if (arg === "--reset") values.reset = true;
    else if (arg === "--json") out.json = true;
    else if (flag in GPU_FLAGS) {
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (value === undefined) throw new Error(`${flag}: missing value`);
      const { key, repeats } = GPU_FLAGS[flag];
      values[key] = repeats ? [...((values[key] as string[] | undefined) ?? []), value] : value;
    } else if (!arg.startsWith("-") && host === undefined) host = arg;
    else throw new Error(`unknown argument '${arg}' for 'sim gpus'`);
  }
  out.gpus = { host, changes: parseGpuOptions(values) };
  return out;
}
const REHEARSAL_FLAGS = ["--tasks", "--seed", "--instance"] as const;

/** `--fail-targets a,b`: the list ('' clears it: every connection may fail again). */
export function parseFailTargets(value: string): string[] {
  return value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
}

/** Parses `sim` arguments; throws an Error naming the bad argument. */
export function parseSimArgs(args: string[]): SimArgs {
  const [action, ...rest] = args;
  if (!SIM_ACTIONS.includes(action as SimArgs["action"])) {
    const expected = `expected ${SIM_ACTIONS.slice(0, -1).join(", ")} or ${SIM_ACTIONS[SIM_ACTIONS.length - 1]}`;
    throw new Error(action === undefined ? `missing subcommand; ${expected}` : `unknown subcommand '${action}'; ${expected}`);
  }
  const out: SimArgs = { action: action as SimArgs["action"], takeOver: false, discardResults: false, purgeImages: false, json: false };
  if (out.action === "gpus") return parseGpuArgs(rest, out);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const flag = arg.split("=")[0];
    // Before the network flags: --seed is an option of both (the proxy's failure sequence, the dataset's shuffle).
    if (out.action === "rehearsal" && (REHEARSAL_FLAGS as readonly string[]).includes(flag)) {
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (flag === "--instance") {
        if (value === undefined || !/^[a-z][a-z0-9-]{0,15}$/.test(value)) throw new Error(`--instance: got ${value === undefined ? "no value" : `'${value}'`}; expected an instance name (lower-case letters, digits and '-', starting with a letter)`);
        out.rehearsal = { ...out.rehearsal, instance: value };
        continue;
      }
      const [min, max] = flag === "--tasks" ? [1, MAX_REHEARSAL_TASKS] : [0, 2 ** 31 - 1];
      if (value === undefined) throw new Error(`${flag}: missing value; expected an integer from ${min} to ${max}`);
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new Error(`${flag}: got '${value}'; expected an integer from ${min} to ${max}`);
      out.rehearsal = { ...out.rehearsal, [flag === "--tasks" ? "tasks" : "seed"]: Number(value) };
      continue;
    }
    if (flag === "--fail-targets") {
      if (action !== "network") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (value === undefined) throw new Error(`${flag}: missing value; expected host:port or http:// URL prefixes, comma-separated ('' for every connection)`);
      const failTargets = parseFailTargets(value);
      normalizeConditions({ failTargets }, undefined, flag);
      out.conditions = { ...out.conditions, failTargets };
      continue;
    }
    if (flag in NETWORK_FLAGS) {
      if (action !== "network") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (value === undefined) throw new Error(`${flag}: missing value`);
      const key = NETWORK_FLAGS[flag];
      const parsed = key === "failWith" ? value : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      // Throws naming the flag when the value is out of range.
      normalizeConditions({ [key]: parsed } as Partial<NetworkConditions>, undefined, flag);
      out.conditions = { ...out.conditions, [key]: parsed };
      continue;
    }
    if (flag in REGISTRY_FLAGS) {
      if (action !== "registry") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      const key = REGISTRY_FLAGS[flag];
      const min = key === "windowSeconds" ? 1 : 0;
      if (value === undefined) throw new Error(`${flag}: missing value; expected an integer from ${min} to ${QUOTA_MAX}`);
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > QUOTA_MAX) throw new Error(`${flag}: got '${value}'; expected an integer from ${min} to ${QUOTA_MAX}`);
      out.quota = { ...out.quota, [key]: Number(value) };
      continue;
    }
    if (arg === "--reset") {
      if (action !== "network" && action !== "registry") throw new Error(`--reset is not an option of 'sim ${action}'`);
      out.reset = true;
      continue;
    }
    if (arg === "--clear-counts" || arg === "--counts") {
      if (action !== "registry") throw new Error(`${arg} is not an option of 'sim ${action}'`);
      if (arg === "--counts") out.counts = true;
      else out.clearCounts = true;
      continue;
    }
    const allowed = (flag: string, actions: SimArgs["action"][]) => {
      if (!actions.includes(out.action)) throw new Error(`${flag} is not an option of 'sim ${action}'`);
    };
    if (arg === "--hosts" || arg.startsWith("--hosts=")) {
      allowed("--hosts", ["up"]);
      const value = arg.includes("=") ? arg.slice("--hosts=".length) : rest[++i];
      if (value === undefined) throw new Error("--hosts: missing value; expected an integer from 1 to 20");
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_HOSTS) {
        throw new Error(`--hosts: got '${value}'; expected an integer from 1 to ${MAX_HOSTS}`);
      }
      out.hosts = Number(value);
    } else if (arg === "--take-over") {
      allowed(arg, ["up"]);
      out.takeOver = true;
    } else if (arg === "--discard-results") {
      allowed(arg, ["down"]);
      out.discardResults = true;
    } else if (arg === "--purge-images") {
      allowed(arg, ["down"]);
      out.purgeImages = true;
    } else if (arg === "--json") {
      allowed(arg, ["status", "registry"]);
      out.json = true;
    } else {
      throw new Error(`unknown argument '${arg}' for 'sim ${action}'`);
    }
  }
  return out;
}

// `reprobench sim up|down|status|network|registry|rehearsal`: the simulated cluster the `local` stack runs on
// (sim/cluster.ts) and the on-demand rehearsal dataset (sim/rehearsal/prepare.ts).
import { resolve } from "node:path";
import type { Command } from "./index";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { formatStatus, instanceLayout, parseSimArgs, registryCounts, setNetworkConditions, setRegistryQuota, SIM_USAGE, simDown, simStatus, simUp } from "../../sim/cluster";
import { formatManifestCounts } from "../../sim/registry";
import { instanceByName, prepareRehearsal } from "../../sim/rehearsal/prepare";

// The project root, wherever the CLI is started from: .sim/ paths in Pulumi.local.yaml are relative to it.
const root = resolve(__dirname, "..", "..");

export const sim: Command = {
  summary: "simulated cluster for the local stack: sim up [--hosts N] | down | status | network | registry | rehearsal",
  async run(args) {
    if (args.includes("--help") || args.includes("-h")) {
      console.log(SIM_USAGE);
      return 0;
    }
    let parsed;
    try {
      parsed = parseSimArgs(args);
    } catch (err) {
      console.error(`reprobench sim: ${(err as Error).message}\n\n${SIM_USAGE}`);
      return 2;
    }
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
      status.hosts.every((h) => h.ssh && h.docker !== "down" && h.docker !== "-");
    return healthy ? 0 : 3;
  },
};

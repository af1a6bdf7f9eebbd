// An instance's docker networks and the iptables rule that keeps its cluster network from reaching beyond its own subnet.
import { simLabels } from "./docker-args";
import { docker, tryDocker } from "./docker";
import { run } from "./exec";
import type { ClusterPlan, SimInstance } from "./layout";
import type { Log } from "./log";

export async function ensureNetwork(plan: ClusterPlan, network: { name: string; subnet: string; gateway: string }, bridge: string): Promise<void> {
  const { name, subnet, gateway } = network;
  const r = await tryDocker(["network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", name], 20_000);
  if (r.code === 0) {
    if (r.stdout.trim() !== subnet) throw new Error(`docker network ${name} exists with subnet ${r.stdout.trim()}; expected ${subnet} (run \`reprobench sim down\`)`);
    return;
  }
  await docker(["network", "create", ...simLabels(plan), "--subnet", subnet, "--gateway", gateway, "-o", `com.docker.network.bridge.name=${bridge}`, name]);
}

/** Linux bridge names of an instance's networks (at most 15 characters). */
export function bridgeNames(instance: SimInstance): { cluster: string; outside: string } {
  return { cluster: `rbsim${instance.slot}`, outside: `rbsim${instance.slot}-out` };
}

/** The comment that tags an instance's egress rule in DOCKER-USER. */
export function egressComment(instance: SimInstance): string {
  return `reprobench-sim-egress:${instance.name}`;
}

/** DOCKER-USER rule: the cluster network reaches nothing but its own subnet (the proxy is on it). */
export function egressDropRule(bridge: string, subnet: string, instance: SimInstance): string[] {
  return ["DOCKER-USER", "-i", bridge, "!", "-d", subnet, "-m", "comment", "--comment", egressComment(instance), "-j", "DROP"];
}

/** The bridge a docker network uses (our name, or docker's br-<id> for networks made before we named them). */
async function networkBridge(name: string): Promise<string | undefined> {
  const r = await tryDocker(["network", "inspect", "--format", `{{.Id}} {{index .Options "com.docker.network.bridge.name"}}`, name], 20_000);
  if (r.code !== 0) return undefined;
  const [id, bridge] = r.stdout.trim().split(" ");
  return bridge || `br-${id.slice(0, 12)}`;
}

/** Drops the cluster network's traffic to anything outside its subnet; warns (and goes on) without iptables. */
export async function ensureEgressDrop(plan: ClusterPlan, log: Log): Promise<void> {
  const bridge = await networkBridge(plan.network.name);
  if (!bridge) return;
  const rule = egressDropRule(bridge, plan.network.subnet, plan.instance);
  if ((await run(["iptables", "-w", "-C", ...rule], { timeoutMs: 20_000 })).code === 0) return;
  await removeEgressDrop(plan.instance, () => undefined); // a rule for an older bridge of this instance
  const added = await run(["iptables", "-w", "-I", ...rule], { timeoutMs: 20_000 });
  if (added.code !== 0) {
    log(`warning: cannot add the iptables rule that keeps ${plan.network.name} from reaching anything beyond ${plan.network.subnet} (${(added.stderr.trim() || `exit ${added.code}`).split("\n")[0]}); the hosts can still reach the machine's other networks`);
  }
}

/** Removes an instance's DOCKER-USER egress rules (by their comment). */
export async function removeEgressDrop(instance: SimInstance, log: Log): Promise<void> {
  const listed = await run(["iptables", "-w", "-S", "DOCKER-USER"], { timeoutMs: 20_000 });
  if (listed.code !== 0) return;
  for (const line of listed.stdout.split("\n")) {
    // `iptables -S` quotes comments: -A DOCKER-USER ! -d 172.31.251.0/24 -i rbsim1 -m comment --comment "reprobench-sim-egress:itest" -j DROP
    const args = line.trim().split(/\s+/).map((a) => a.replace(/^"(.*)"$/, "$1"));
    if (args[0] !== "-A" || args[1] !== "DOCKER-USER" || args[args.indexOf("--comment") + 1] !== egressComment(instance)) continue;
    const r = await run(["iptables", "-w", "-D", ...args.slice(1)], { timeoutMs: 20_000 });
    if (r.code !== 0) log(`warning: could not remove iptables rule '${line}': ${r.stderr.trim()}`);
  }
}

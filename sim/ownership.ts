// Whose a sim instance is (two checkouts on one machine share docker): its resources' owner labels, the judgement over them, and what to tell whoever it is not.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docker, existingHosts, tryDocker } from "./docker";
import { belongsTo, CHECKOUT_LABEL, DEFAULT_INSTANCE, INSTANCE_LABEL, instanceLayout, LEASE_LABEL, SIM_LABEL, type SimInstance } from "./layout";
import { publicKeyLine } from "./ssh";

/** One docker resource of an instance with the owner labels it carries ("" when it has none). */
export interface OwnedResource {
  kind: "container" | "volume" | "network";
  name: string;
  checkout: string;
  lease: string;
}

export type Ownership =
  /** Nothing of the instance exists. */
  | { state: "free" }
  /** Made by this checkout (test and bench instances: by this process). */
  | { state: "ours" }
  /** Nobody can still use it (its process exited, its checkout is gone): taken over without asking. */
  | { state: "stale"; reason: string }
  /** Someone else's: refused unless the caller asked to take it over. */
  | { state: "foreign"; owner?: string; reason: string };

export interface OwnershipFacts {
  /** This process's lease ("pid:starttime"). */
  ownLease: string;
  leaseAlive(lease: string): boolean;
  checkoutExists(path: string): boolean;
  /** Default instance, host containers without a checkout label: whether their host keys are this checkout's. */
  legacyHostKeysMatch?: boolean;
}

/** Decides whose an instance is from its resources' labels (pure; simUp acts on the answer). */
export function judgeOwnership(instance: SimInstance, root: string, resources: OwnedResource[], facts: OwnershipFacts): Ownership {
  if (resources.length === 0) return { state: "free" };
  const pidOf = (lease: string) => lease.split(":")[0];
  if (instance.name !== DEFAULT_INSTANCE.name) {
    const foreign = resources.filter((r) => r.lease !== facts.ownLease);
    if (foreign.length === 0) return { state: "ours" };
    const live = foreign.find((r) => r.lease && facts.leaseAlive(r.lease));
    if (live) {
      return {
        state: "foreign",
        owner: live.checkout || undefined,
        reason: `it is in use by process ${pidOf(live.lease)}${live.checkout ? ` (checkout ${live.checkout})` : ""}, which started it and still runs`,
      };
    }
    const leases = [...new Set(foreign.map((r) => r.lease).filter(Boolean))];
    const checkouts = [...new Set(foreign.map((r) => r.checkout).filter(Boolean))];
    return {
      state: "stale",
      reason: leases.length > 0
        ? `it was left by process ${leases.map(pidOf).join(", ")}${checkouts.length ? ` of ${checkouts.join(", ")}` : ""}, which has exited`
        : "it carries no owner lease (made before leases existed)",
    };
  }
  const other = resources.find((r) => r.checkout && r.checkout !== root);
  if (other) {
    if (!facts.checkoutExists(other.checkout)) return { state: "stale", reason: `it was started by the checkout ${other.checkout}, which no longer exists` };
    return { state: "foreign", owner: other.checkout, reason: `it was started by the checkout ${other.checkout}` };
  }
  if (facts.legacyHostKeysMatch === false) {
    return {
      state: "foreign",
      reason: "it was started by another checkout: its hosts' SSH host keys are not the ones in this checkout's .sim/hosts/ (its containers predate the owner label, so which checkout is unknown)",
    };
  }
  return { state: "ours" };
}

/** An instance someone else is using (another checkout's cluster, a running test's instance). */
export class ForeignInstanceError extends Error {
  constructor(
    message: string,
    readonly ownership: Extract<Ownership, { state: "foreign" }>,
  ) {
    super(message);
    this.name = "ForeignInstanceError";
  }
}

/** What to tell the user who cannot use a foreign instance. */
export function foreignInstanceMessage(instance: SimInstance, ownership: Extract<Ownership, { state: "foreign" }>, containers: string[]): string {
  const what = `${instance.name === DEFAULT_INSTANCE.name ? "the simulated cluster" : `sim instance '${instance.name}'`} (${containers.join(", ") || "its network and volumes"})`;
  if (instance.name !== DEFAULT_INSTANCE.name) {
    return `${what} cannot be used: ${ownership.reason}. Test and bench instances belong to the process that starts them; wait for that run to end or stop it (it is taken over once the process has exited).`;
  }
  const where = ownership.owner ? ` in ${ownership.owner}` : "";
  const keys = ownership.owner ? `${ownership.owner}/.sim` : "that checkout's .sim/";
  return [
    `${what} cannot be used from this checkout: ${ownership.reason}. The SSH keys that reach its hosts are in ${keys}, so here every connection would fail with "Host key verification failed".`,
    "Either:",
    `  - use it from that checkout${where};`,
    ownership.owner
      ? `  - remove it there: (cd ${ownership.owner} && ./bin/reprobench sim down)   # copies its job results to ${ownership.owner}/.sim/results/ first;`
      : "  - remove it from the checkout that started it: ./bin/reprobench sim down there;",
    "  - or take it over from here: ./bin/reprobench sim up --take-over   # copies its job results to .sim/results/ here, then recreates the hosts with this checkout's keys (the other checkout's local stack then points at hosts that are gone).",
  ].join("\n");
}

export async function instanceResources(instance: SimInstance): Promise<OwnedResource[]> {
  const format = (name: string) => `${name}\t{{.Label "${INSTANCE_LABEL}"}}\t{{.Label "${CHECKOUT_LABEL}"}}\t{{.Label "${LEASE_LABEL}"}}`;
  const filter = ["--filter", `label=${SIM_LABEL}`];
  const parse = (kind: OwnedResource["kind"], out: string) =>
    out
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => l.split("\t"))
      .filter(([name, label]) => name && belongsTo(instance, label ?? ""))
      .map(([name, , checkout, lease]): OwnedResource => ({ kind, name, checkout: checkout ?? "", lease: lease ?? "" }));
  return [
    ...parse("container", await docker(["ps", "-a", ...filter, "--format", format("{{.Names}}")])),
    ...parse("volume", await docker(["volume", "ls", ...filter, "--format", format("{{.Name}}")])),
    ...parse("network", await docker(["network", "ls", ...filter, "--format", format("{{.Name}}")])),
  ];
}

/** Whether every host container (without a checkout label) has this checkout's host key for its name. */
export async function legacyHostKeysMatch(root: string, instance: SimInstance, resources: OwnedResource[]): Promise<boolean> {
  const legacy = new Set(resources.filter((r) => r.kind === "container" && !r.checkout).map((r) => r.name));
  const hosts = [...(await existingHosts(instance))].filter(([container]) => legacy.has(container));
  const tmp = mkdtempSync(join(tmpdir(), "reprobench-hostkey-"));
  try {
    for (const [container, host] of hosts) {
      const ours = join(root, instanceLayout(instance).stateDir, "hosts", host, "ssh_host_ed25519_key.pub");
      if (!existsSync(ours)) return false;
      // `docker cp` works on stopped containers too.
      const theirs = join(tmp, host);
      if ((await tryDocker(["cp", `${container}:/etc/ssh/ssh_host_ed25519_key.pub`, theirs], 30_000)).code !== 0) return false;
      if (publicKeyLine(readFileSync(theirs, "utf8")) !== publicKeyLine(readFileSync(ours, "utf8"))) return false;
    }
    return true;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

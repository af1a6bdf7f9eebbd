// Two suites on one sim slot (all 11 have a suite): each waits, bounded, until no other instance's
// networks sit on the slot's subnets before it starts its own, so the two never overlap.
import { run, waitFor } from "../../sim/exec";
import { instanceLayout, type SimInstance } from "../../sim/layout";

/** The network of another instance on this slot's subnets (its suite still runs), if any. */
export async function slotTakenBy(instance: SimInstance): Promise<string | undefined> {
  const layout = instanceLayout(instance);
  const subnets = new Set([layout.network.subnet, layout.outside.network.subnet]);
  const ids = (await run(["docker", "network", "ls", "-q"], { timeoutMs: 60_000 })).stdout.split("\n").filter(Boolean);
  if (ids.length === 0) return undefined;
  const r = await run(["docker", "network", "inspect", "--format", "{{.Name}} {{range .IPAM.Config}}{{.Subnet}} {{end}}", ...ids], { timeoutMs: 60_000 });
  for (const line of r.stdout.split("\n")) {
    const [name, ...nets] = line.trim().split(/\s+/);
    if (name && name !== layout.network.name && name !== layout.outside.network.name && nets.some((n) => subnets.has(n))) return name;
  }
  return undefined;
}

/** Waits (at most `timeoutMs`) until the slot is free of other instances. */
export async function waitForSlot(instance: SimInstance, timeoutMs = 15 * 60_000): Promise<void> {
  let holder: string | undefined;
  await waitFor(`sim slot ${instance.slot} to be free`, async () => ((holder = await slotTakenBy(instance)) === undefined ? true : undefined), {
    timeoutMs,
    intervalMs: 5000,
    lastError: () => `network ${holder} of another sim instance is on its subnets`,
  });
}

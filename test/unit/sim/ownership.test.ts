// Whose sim instance is it: the pure decision simUp acts on, the message a second checkout gets, the
// owner labels, and process leases (against real processes: this one, its parent, a pid that exited).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CHECKOUT_LABEL, DEFAULT_INSTANCE, LEASE_LABEL, planCluster } from "../../../sim/layout";
import { currentLease, leaseAlive, processLease } from "../../../sim/lease";
import { foreignInstanceMessage, judgeOwnership, type OwnedResource, type OwnershipFacts } from "../../../sim/ownership";
import { hostCreateArgs } from "../../../sim/docker-args";
import { parseSimArgs } from "../../../cli/commands/sim";

const ME = "/work/a";
const OTHER = "/work/b";
const test = { name: "cluster", slot: 2 };
const res = (name: string, checkout: string, lease = "", kind: OwnedResource["kind"] = "container"): OwnedResource => ({ kind, name, checkout, lease });
const facts = (over: Partial<OwnershipFacts> = {}): OwnershipFacts => ({
  ownLease: "100:5",
  leaseAlive: (l) => l === "100:5" || l === "200:7",
  checkoutExists: (p) => p === ME || p === OTHER,
  ...over,
});

describe("judgeOwnership: the default cluster", () => {
  it("is free when nothing exists, ours when our checkout made it", () => {
    expect(judgeOwnership(DEFAULT_INSTANCE, ME, [], facts())).toEqual({ state: "free" });
    expect(judgeOwnership(DEFAULT_INSTANCE, ME, [res("reprobench-sim-worker-a", ME), res("reprobench-sim", ME, "", "network")], facts())).toEqual({ state: "ours" });
  });

  it("is foreign when another existing checkout made it, naming that checkout", () => {
    const o = judgeOwnership(DEFAULT_INSTANCE, ME, [res("reprobench-sim-worker-a", OTHER)], facts());
    expect(o).toEqual({ state: "foreign", owner: OTHER, reason: `it was started by the checkout ${OTHER}` });
  });

  it("is stale when the checkout that made it is gone", () => {
    const o = judgeOwnership(DEFAULT_INSTANCE, ME, [res("reprobench-sim-worker-a", "/gone")], facts());
    expect(o.state).toBe("stale");
    expect(o).toMatchObject({ reason: expect.stringContaining("/gone, which no longer exists") });
  });

  it("judges unlabelled (older) hosts by their host keys", () => {
    const legacy = [res("reprobench-sim-worker-a", "")];
    expect(judgeOwnership(DEFAULT_INSTANCE, ME, legacy, facts({ legacyHostKeysMatch: true }))).toEqual({ state: "ours" });
    const o = judgeOwnership(DEFAULT_INSTANCE, ME, legacy, facts({ legacyHostKeysMatch: false }));
    expect(o).toMatchObject({ state: "foreign", reason: expect.stringContaining("host keys are not the ones in this checkout's .sim/hosts/") });
    expect(o).not.toHaveProperty("owner");
  });
});

describe("judgeOwnership: test instances (leased by a process)", () => {
  it("is ours while this process holds the lease", () => {
    expect(judgeOwnership(test, ME, [res("reprobench-sim-cluster-worker-a", ME, "100:5")], facts())).toEqual({ state: "ours" });
  });

  it("is foreign while another live process holds it, in any checkout", () => {
    const o = judgeOwnership(test, ME, [res("reprobench-sim-cluster-worker-a", OTHER, "200:7")], facts());
    expect(o).toMatchObject({ state: "foreign", owner: OTHER, reason: `it is in use by process 200 (checkout ${OTHER}), which started it and still runs` });
  });

  it("is stale once that process has exited, or when it has no lease at all (this checkout's included)", () => {
    expect(judgeOwnership(test, ME, [res("reprobench-sim-cluster-worker-a", OTHER, "300:1")], facts())).toMatchObject({
      state: "stale",
      reason: `it was left by process 300 of ${OTHER}, which has exited`,
    });
    expect(judgeOwnership(test, ME, [res("reprobench-sim-cluster-worker-a", ME, "300:1")], facts()).state).toBe("stale");
    expect(judgeOwnership(test, ME, [res("reprobench-sim-cluster", "", "", "network")], facts())).toMatchObject({ state: "stale", reason: expect.stringContaining("no owner lease") });
  });
});

describe("foreignInstanceMessage", () => {
  it("says whose the default cluster is and the three ways out", () => {
    const m = foreignInstanceMessage(DEFAULT_INSTANCE, { state: "foreign", owner: OTHER, reason: `it was started by the checkout ${OTHER}` }, ["reprobench-sim-worker-a"]);
    expect(m).toContain(`the simulated cluster (reprobench-sim-worker-a) cannot be used from this checkout: it was started by the checkout ${OTHER}`);
    expect(m).toContain(`keys that reach its hosts are in ${OTHER}/.sim`);
    expect(m).toContain("Host key verification failed");
    expect(m).toContain(`(cd ${OTHER} && ./bin/reprobench sim down)`);
    expect(m).toContain("./bin/reprobench sim up --take-over");
  });

  it("tells a test to wait for the process that holds an instance", () => {
    const m = foreignInstanceMessage(test, { state: "foreign", owner: OTHER, reason: "it is in use by process 200" }, []);
    expect(m).toMatch(/^sim instance 'cluster' \(its network and volumes\) cannot be used: it is in use by process 200\./);
    expect(m).not.toContain("--take-over");
  });
});

describe("owner labels", () => {
  it("the default cluster's resources name their checkout; test instances also this process's lease", () => {
    const d = planCluster(ME, 2);
    const args = hostCreateArgs(d, d.hosts[0], "img").join(" ");
    expect(args).toContain(`--label ${CHECKOUT_LABEL}=${ME}`);
    expect(args).not.toContain(LEASE_LABEL);
    const t = planCluster(ME, 2, test);
    expect(hostCreateArgs(t, t.hosts[0], "img").join(" ")).toContain(`--label ${LEASE_LABEL}=${currentLease()}`);
  });

  it("sim up --take-over parses; other subcommands refuse it", () => {
    expect(parseSimArgs(["up", "--take-over"]).takeOver).toBe(true);
    expect(parseSimArgs(["up"]).takeOver).toBe(false);
    expect(() => parseSimArgs(["down", "--take-over"])).toThrow(/--take-over is not an option of 'sim down'/);
  });
});

describe("process leases", () => {
  it("this process and its parent are alive; a process that exited is not", () => {
    expect(currentLease()).toMatch(new RegExp(`^${process.pid}:\\d+$`));
    expect(leaseAlive(currentLease())).toBe(true);
    expect(leaseAlive(processLease(process.ppid)!)).toBe(true);
    const child = spawnSync("true");
    expect(child.pid).toBeGreaterThan(0);
    expect(processLease(child.pid!)).toBeUndefined();
    expect(leaseAlive(`${child.pid}:1`)).toBe(false);
  });

  it("a reused pid (same pid, other start time) does not hold the lease", () => {
    const [pid, start] = currentLease().split(":");
    expect(leaseAlive(`${pid}:${Number(start) + 1}`)).toBe(false);
    expect(leaseAlive("garbage")).toBe(false);
  });
});

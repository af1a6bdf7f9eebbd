// Sim instances against the real docker engine, whatever happens to the suite that starts one: a setup
// that fails midway removes what it started, an instance whose process has exited (a killed run, here
// or in another checkout) is taken over, and one a live process holds is refused — naming the process
// and its checkout — and left alone. Uses its own instance (slot 5); never the default cluster.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  CHECKOUT_LABEL,
  INSTANCE_LABEL,
  LEASE_LABEL,
  SIM_LABEL,
  type SimInstance,
} from "../../sim/layout";
import { claimInstance, simDown } from "../../sim/cluster";
import { ForeignInstanceError } from "../../sim/ownership";
import { listSimResources } from "../../sim/docker";
import { processLease } from "../../sim/lease";
import { mustRun, run } from "../../sim/exec";
import { repoRoot } from "../helpers/project";
import { simStack } from "../helpers/sim-stack";

const instance: SimInstance = { name: "setupfail", slot: 5 };
const NOTHING = { containers: [], volumes: [], networks: [] };
const VOLUME = "reprobench-sim-setupfail-worker-a-docker";
const NETWORK = "reprobench-sim-setupfail";
const OTHER_CHECKOUT = "/elsewhere/reprobench";
const log = (m: string) => console.log(`sim: ${m}`);

/** Labels as another process / checkout would have put them on the instance's resources. */
const ownerLabels = (lease: string) =>
  [`${SIM_LABEL}=1`, `${INSTANCE_LABEL}=${instance.name}`, `${CHECKOUT_LABEL}=${OTHER_CHECKOUT}`, `${LEASE_LABEL}=${lease}`].flatMap((l) => ["--label", l]);

/** A lease of a process that has certainly exited. */
function deadLease(): { pid: number; lease: string } {
  const child = spawnSync("true");
  if (!child.pid || processLease(child.pid) !== undefined) throw new Error("could not get the pid of an exited process");
  return { pid: child.pid, lease: `${child.pid}:1` };
}

/** Project copies (test/helpers/project.ts) made for this instance that still exist. */
const projectCopies = () =>
  readdirSync(tmpdir())
    .filter((d) => d.startsWith("reprobench-project-"))
    .filter((d) => existsSync(join(tmpdir(), d, ".sim/instances", instance.name)));

afterAll(async () => {
  // Belt and braces: whatever a failed assertion left.
  await simDown({ root: repoRoot, instance, discardResults: true, log });
});

describe("who owns a sim instance", () => {
  afterEach(async () => {
    await run(["docker", "volume", "rm", "-f", VOLUME], { timeoutMs: 30_000 });
    await run(["docker", "network", "rm", NETWORK], { timeoutMs: 30_000 });
  });

  it("one left by a process that has exited is taken over: nothing of it remains", async () => {
    const { pid, lease } = deadLease();
    await mustRun(["docker", "volume", "create", ...ownerLabels(lease), VOLUME], { timeoutMs: 30_000 });
    await mustRun(["docker", "network", "create", ...ownerLabels(lease), NETWORK], { timeoutMs: 30_000 });
    expect(await listSimResources(instance)).toEqual({ containers: [], volumes: [VOLUME], networks: [NETWORK] });

    const ownership = await claimInstance({ root: repoRoot, instance, log });
    expect(ownership).toEqual({ state: "stale", reason: `it was left by process ${pid} of ${OTHER_CHECKOUT}, which has exited` });
    expect(await listSimResources(instance)).toEqual(NOTHING);
  });

  it("one a live process holds is refused, naming the process and its checkout, and left alone", async () => {
    // The vitest main process: alive for as long as this test runs.
    const lease = processLease(process.ppid)!;
    await mustRun(["docker", "volume", "create", ...ownerLabels(lease), VOLUME], { timeoutMs: 30_000 });

    const refused = claimInstance({ root: repoRoot, instance, log });
    await expect(refused).rejects.toThrow(ForeignInstanceError);
    await expect(refused).rejects.toThrow(`sim instance 'setupfail' (its network and volumes) cannot be used: it is in use by process ${process.ppid} (checkout ${OTHER_CHECKOUT})`);
    expect(await listSimResources(instance)).toEqual({ containers: [], volumes: [VOLUME], networks: [] });

    // simStack must not tear down what is someone else's when its setup fails for that reason.
    await expect(simStack(instance, { hosts: 1, log })).rejects.toThrow(ForeignInstanceError);
    expect(await listSimResources(instance)).toEqual({ containers: [], volumes: [VOLUME], networks: [] });

    // Asked to (what `sim up --take-over` does), the caller takes it over.
    expect(await claimInstance({ root: repoRoot, instance, log, takeOver: true })).toMatchObject({ state: "foreign", owner: OTHER_CHECKOUT });
    expect(await listSimResources(instance)).toEqual(NOTHING);
  });
});

describe("a suite setup that fails midway leaves nothing behind", () => {
  it("failing inside sim up, after the host came up", async () => {
    let injected = false;
    const failing = (m: string) => {
      log(m);
      if (!injected && /^worker-a ready /.test(m)) {
        injected = true;
        throw new Error("injected: setup fails after worker-a came up");
      }
    };
    await expect(simStack(instance, { hosts: 1, log: failing })).rejects.toThrow("injected: setup fails after worker-a came up");
    expect(injected).toBe(true);
    expect(await listSimResources(instance)).toEqual(NOTHING);
  });

  it("failing after the project copy and its stack exist", async () => {
    let stackExisted = false;
    const failing = simStack(instance, {
      hosts: 1,
      log,
      baseline: () => {
        // Runs after the instance is up and the stack was created in the project copy.
        stackExisted = projectCopies().length > 0;
        throw new Error("injected: baseline fails");
      },
    });
    await expect(failing).rejects.toThrow("injected: baseline fails");
    expect(stackExisted).toBe(true);
    expect(await listSimResources(instance)).toEqual(NOTHING);
    expect(projectCopies()).toEqual([]);
  });
});

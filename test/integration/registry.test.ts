// Registries as they really are: the sim registry counts manifest GETs as Docker Hub does (anonymous per
// client address, the account apart, HEAD free, 429 TOOMANYREQUESTS over the limit), and the task-image
// pre-pull on a real sim host (skopeo, dockerd, curl, the authenticating proxy) spends at most one counted
// pull per image, stops with a message that says what to do when the anonymous quota runs out, waits for
// the window when its time budget allows, pulls everything with credentials, and through a mirror.
// Its own sim instance (slot 9): traffic only to 127.0.0.1 and that instance's networks.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPlan, HostPlan } from "../../sim/layout";
import { registryRequests, setRegistryQuota } from "../../sim/settings";
import { simDown, simUp } from "../../sim/cluster";
import { mustRun, run } from "../../sim/exec";
import { getsPerRepository, pushTinyImages, removeImages, runPrepull } from "../helpers/prepull";
import { waitForSlot } from "../helpers/shared-slot";

const root = resolve(__dirname, "..", "..");
const instance = { name: "registry", slot: 9 };
const log = (m: string) => console.log(`registry: ${m}`);
const PREFIX = "reprobench/quota";

let plan: ClusterPlan;
let host: HostPlan;
let images: string[];
const since = () => new Date().toISOString();
const requestsSince = (t: string) => registryRequests({ root, instance }).filter((r) => r.t >= t);

beforeAll(async () => {
  try {
    // The user-path suite shares the slot: never at the same time.
    await waitForSlot(instance);
    ({ plan } = await simUp({ root, instance, hosts: 1, log }));
    host = plan.hosts[0];
    images = await pushTinyImages(plan, "quota", 6);
  } catch (err) {
    await simDown({ root, instance, discardResults: true, log }).catch(() => undefined);
    throw err;
  }
}, 1_200_000);

afterAll(async () => {
  await simDown({ root, instance, discardResults: true, log });
}, 600_000);

describe("task images under a registry's pull limit", () => {
  it("anonymous quota smaller than the image count, no time to wait: pulls what the quota allows, then stops saying why and what to do", async () => {
    setRegistryQuota({ root, instance }, { anonymousPulls: 3, authenticatedPulls: 1000, windowSeconds: 600 }, { clearCounts: true });
    const t = since();
    const r = await runPrepull(plan, host, images, { budgetSeconds: 0 });
    log(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("task-images: progress: registry registry.sim:5000 allows 3 more pulls now (limit 3 per 600s, anonymous); 6 images to pull from it");
    expect(r.stderr).toMatch(/task-images: warning: the 6 images from registry\.sim:5000 need 1 more pull window\(s\) of 600s/);
    expect(r.stderr).toMatch(
      /task-images: registry registry\.sim:5000's pull limit is used up \(anonymous: 3 pulls per 600s\): 3 images left, the window reopens by \d\d:\d\d:\d\d UTC; that is after this step's time budget \(0s, .*\), so 3 of 6 images are not pulled\. Set credentials for the registry \(reprobench:registries\[\]\.username and the secret reprobench:registryPasswords\) or a pull-through mirror/,
    );
    expect(r.stderr).toContain("3/6 images ready");
    // The registry's own count: 3 counted GETs, one per pulled image, none refused; the HEADs were free.
    const records = requestsSince(t);
    const gets = getsPerRepository(records, PREFIX);
    expect([...gets.values()]).toEqual([1, 1, 1]);
    expect(records.filter((x) => x.status === 429)).toEqual([]);
    expect(records.filter((x) => x.method === "HEAD" && x.repo?.startsWith(PREFIX)).length).toBeGreaterThanOrEqual(6);
  }, 600_000);

  it("with credentials the account's limit applies: the rest is pulled, each image's manifest fetched once in all", async () => {
    const t = since();
    const r = await runPrepull(plan, host, images, { credentials: true, budgetSeconds: 0 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("allows 1000 more pulls now (limit 1000 per 600s, with this stack's credentials); 3 images to pull from it");
    expect(r.stderr).toContain("6/6 images ready");
    const records = requestsSince(t);
    expect(new Set(records.filter((x) => x.counted && x.repo?.startsWith(PREFIX)).map((x) => x.user))).toEqual(new Set(["reprobench-pull"]));
    const password = (await mustRun(["cat", `${plan.root}/${plan.registry.passwordFile}`])).trim();
    expect(r.stderr + r.stdout).not.toContain(password);
    // Over both runs: one counted GET per image.
    expect([...getsPerRepository(registryRequests({ root, instance }), PREFIX).values()]).toEqual([1, 1, 1, 1, 1, 1]);
  }, 600_000);

  it("anonymous, with time to wait: waits for the window instead of burning retries, and pulls everything", async () => {
    await removeImages(plan, host, images);
    setRegistryQuota({ root, instance }, { anonymousPulls: 4, windowSeconds: 20 }, { clearCounts: true });
    const t = since();
    const r = await runPrepull(plan, host, images, { budgetSeconds: 300 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/task-images: progress: registry registry\.sim:5000's pull limit is used up \(anonymous: 4 pulls per 20s\): 2 images left, the window reopens by \d\d:\d\d:\d\d UTC; waiting until then/);
    expect(r.stderr).toContain("6/6 images ready");
    const records = requestsSince(t);
    expect([...getsPerRepository(records, PREFIX).values()]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(records.filter((x) => x.status === 429)).toEqual([]);
    expect(r.seconds).toBeGreaterThanOrEqual(10);
  }, 600_000);

  it("through the mirror: the images come from mirror.sim (its log), which pulls upstream as the sim's account", async () => {
    await removeImages(plan, host, images);
    setRegistryQuota({ root, instance }, { anonymousPulls: 1, windowSeconds: 3600 }, { clearCounts: true });
    const t = since();
    const r = await runPrepull(plan, host, images, { mirror: true, budgetSeconds: 0 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("6/6 images ready");
    // docker-registry writes its access log to stderr.
    const mirrorLog = await run(["docker", "logs", "--since", t, plan.mirror.container], { timeoutMs: 60_000 });
    const logs = `${mirrorLog.stdout}${mirrorLog.stderr}`;
    log(`the mirror's access log:\n${logs.split("\n").filter((l) => /"GET \/v2\/reprobench\/quota-\d+\/manifests/.test(l)).join("\n")}`);
    for (let i = 1; i <= 6; i++) expect(logs).toMatch(new RegExp(`GET /v2/${PREFIX}-00${i}/manifests/sha256:[0-9a-f]{64}`));
    // Upstream, the mirror's own fetches (as reprobench-pull, not the hosts' anonymous quota of 1).
    const upstream = requestsSince(t).filter((x) => x.repo?.startsWith(PREFIX) && x.counted);
    expect(upstream.length).toBeGreaterThanOrEqual(6);
    expect(new Set(upstream.map((x) => x.user))).toEqual(new Set(["reprobench-pull"]));
  }, 600_000);
});

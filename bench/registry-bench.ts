// Benchmark (not a test): 89 task images (as many as Terminal-Bench 2.1 has) pre-pulled on a sim host under
// a Docker-Hub-shaped pull limit, anonymously and with the registry account, in one run. The limits are
// Docker Hub's (10 anonymous pulls per window, 100 for an account) with the window scaled from 3600 s down to
// WINDOW seconds, so the anonymous pull waits for windows as it would for hours. Prints the wall times, the
// windows waited, the counted pulls per image (the registry's own log), and the ratio.
//   node --import tsx bench/registry-bench.ts
import { registryRequests, setRegistryQuota } from "../sim/settings";
import { simDown, simUp } from "../sim/cluster";
import { getsPerRepository, pushTinyImages, removeImages, runPrepull } from "../test/helpers/prepull";
import { repoRoot } from "../test/helpers/project";

const instance = { name: "regbench", slot: 9 };
const IMAGES = 89;
const WINDOW = 15;
const SCALE = 3600 / WINDOW;

async function main(): Promise<void> {
  const { plan } = await simUp({ root: repoRoot, instance, hosts: 1, log: () => undefined });
  try {
    const host = plan.hosts[0];
    const pushStart = Date.now();
    const images = await pushTinyImages(plan, "tb", IMAGES);
    console.log(`pushed ${images.length} images in ${((Date.now() - pushStart) / 1000).toFixed(0)} s`);
    const runOnce = async (label: string, credentials: boolean) => {
      await removeImages(plan, host, images);
      setRegistryQuota({ root: repoRoot, instance }, { anonymousPulls: 10, authenticatedPulls: 100, windowSeconds: WINDOW }, { clearCounts: true });
      const since = new Date().toISOString();
      const r = await runPrepull(plan, host, images, { credentials, budgetSeconds: 3600, concurrency: 4 });
      const records = registryRequests({ root: repoRoot, instance }).filter((x) => x.t >= since);
      const gets = [...getsPerRepository(records, "reprobench/tb-").values()];
      const ready = /(\d+)\/(\d+) images ready$/m.exec(r.stderr)?.[0] ?? "?";
      const waited = r.stderr.split("\n").filter((l) => l.includes("waiting until then")).length;
      const tooMany = records.filter((x) => x.status === 429).length;
      console.log(
        `${label.padEnd(12)} exit ${r.code}  ${ready}  wall ${r.seconds.toFixed(1)} s  waits for the window ${waited}  counted GETs ${gets.reduce((a, b) => a + b, 0)} (max ${Math.max(0, ...gets)} per image)  429s ${tooMany}`,
      );
      if (r.code !== 0) console.log(r.stderr.split("\n").slice(-5).join("\n"));
      return r.seconds;
    };
    console.log(`limits: anonymous 10, account 100 pulls per ${WINDOW} s window (Docker Hub's per 3600 s, time scaled by ${SCALE})`);
    const anonymous = await runOnce("anonymous", false);
    const account = await runOnce("credentials", true);
    console.log(`ratio anonymous / credentials: ${(anonymous / account).toFixed(1)}×`);
  } finally {
    await simDown({ root: repoRoot, instance, discardResults: true, log: () => undefined });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

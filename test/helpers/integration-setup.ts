// Global setup of the integration project: the docker engine, every sim image and the wheelhouses, made once before the
// suites start side by side (each on its own sim instance), so that no two suites build the same image at
// the same time; their own `sim up` then finds every image up to date.
import { fillWheelhouses } from "../../sim/cluster";
import { ensureDockerEngine } from "../../sim/docker";
import { buildImages, datasetTaskDirs, imageSpecs, resolveImages } from "../../sim/images";
import { repoRoot } from "./project";

export default async function setup(): Promise<void> {
  const log = (m: string) => console.log(`integration setup: ${m}`);
  const started = Date.now();
  await ensureDockerEngine(repoRoot, log);
  const { built } = await buildImages(resolveImages(imageSpecs(repoRoot, datasetTaskDirs(repoRoot)), repoRoot), repoRoot, log);
  log(`${built.length} image(s) built in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  // Filled here once, not by the first suites' `sim up` at the same moment.
  await fillWheelhouses(repoRoot);
  log(`wheelhouses ready after ${((Date.now() - started) / 1000).toFixed(0)}s`);
}

// scripts/test.sh runs this file itself first (`node --import tsx …`), beside the toolchain build, so the
// images phase overlaps it; the global setup then finds every image up to date.
if (require.main === module) {
  setup().catch((err: unknown) => {
    console.error(`integration setup: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

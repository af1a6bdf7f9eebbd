// The task-image pre-pull (components/scripts/task-images.sh) run on a sim host exactly as the TaskImages
// component runs it: retry.sh, registry.sh and the script on `bash -s`, the proxy and registry settings in
// the secret environment (on stdin, never argv). Tiny generated images stand in for a dataset's. For the
// registry integration test and bench/registry-bench.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envPrelude, scriptWithEnv } from "../../components/host-script";
import { proxyEnvironment } from "../../components/host-proxy";
import { registryAuthEnv, registryMirrorEnv } from "../../components/registry-access";
import { taskImagesScriptEnv } from "../../components/task-images";
import type { ClusterPlan, HostPlan } from "../../sim/layout";
import type { RegistryRequest } from "../../sim/registry";
import { sshRun } from "../../sim/ssh";
import { mustRun, run } from "../../sim/exec";

/** Builds `count` one-file images (distinct content, FROM scratch) and pushes them to the instance's registry; returns the references the hosts use. */
export async function pushTinyImages(plan: ClusterPlan, name: string, count: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "rb-tiny-images-"));
  const refs: string[] = [];
  try {
    writeFileSync(join(dir, "Dockerfile"), "FROM scratch\nCOPY f /f\n");
    for (let i = 1; i <= count; i++) {
      const repo = `reprobench/${name}-${String(i).padStart(3, "0")}`;
      writeFileSync(join(dir, "f"), `${name} ${i}\n`);
      const local = `${plan.registry.pushHost}/${repo}:1`;
      await mustRun(["docker", "build", "-q", "-t", local, dir], { timeoutMs: 120_000 });
      await mustRun(["docker", "push", "-q", local], { timeoutMs: 120_000 });
      await run(["docker", "image", "rm", local], { timeoutMs: 60_000 });
      refs.push(`${plan.registry.hostname}:${plan.registry.port}/${repo}:1`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return refs;
}

export interface PrepullOptions {
  /** Pull as the sim's account (registries[] with its password). */
  credentials?: boolean;
  /** Pull through mirror.sim (registries[].mirror). */
  mirror?: boolean;
  /** How long the step may wait for a pull window (TIME_BUDGET_SECONDS). */
  budgetSeconds: number;
  concurrency?: number;
}

/** Runs the pre-pull of `images` on `host`; resolves with its exit code, output and wall time. */
export async function runPrepull(plan: ClusterPlan, host: HostPlan, images: string[], options: PrepullOptions): Promise<{ code: number; stdout: string; stderr: string; seconds: number }> {
  const registry = `${plan.registry.hostname}:${plan.registry.port}`;
  const password = readFileSync(join(plan.root, plan.registry.passwordFile), "utf8").trim();
  const logins = options.credentials ? [{ registry, username: plan.registry.username, password }] : [];
  const mirrors = options.mirror ? [{ registry, url: `http://${plan.mirror.hostname}:${plan.mirror.port}` }] : [];
  const noProxy = ["127.0.0.1", "localhost", ...(options.mirror ? [plan.mirror.hostname] : [])];
  // As TaskImages passes them: the proxy and the accounts secret (on stdin), the mirrors in the script's inputs.
  const secret = { ...proxyEnvironment(readFileSync(join(plan.root, plan.proxyUrlFile), "utf8").trim(), noProxy), ...registryAuthEnv(logins) };
  const settings = { imagePullConcurrency: options.concurrency ?? 4, imagePullAttempts: 3, insecureRegistries: [] };
  const script = scriptWithEnv(["retry", "registry", "task-images"], { ...taskImagesScriptEnv(settings, images, "/etc/docker/daemon.json", options.budgetSeconds), ...registryMirrorEnv(mirrors), BACKOFF_SECONDS: "1" });
  const started = Date.now();
  const r = await sshRun(plan, host, "bash -s", { input: `${envPrelude(secret)}\n${script}\n`, timeoutMs: (options.budgetSeconds + 600) * 1000 });
  return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr, seconds: (Date.now() - started) / 1000 };
}

/** Removes the images from the host's dockerd (and the digests the pre-pull recorded), so the next pull starts cold. */
export async function removeImages(plan: ClusterPlan, host: HostPlan, images: string[]): Promise<void> {
  const r = await sshRun(plan, host, `docker image rm -f ${images.join(" ")} >/dev/null 2>&1; rm -rf /var/lib/reprobench/task-image-digests; true`, { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`removing images on ${host.name}: ${r.stderr}`);
}

/** Counted manifest GETs per repository (all references: tag and digest) in `records`. */
export function getsPerRepository(records: RegistryRequest[], prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) {
    if (r.method !== "GET" || !r.counted || r.repo === null || !r.repo.startsWith(prefix)) continue;
    out.set(r.repo, (out.get(r.repo) ?? 0) + 1);
  }
  return out;
}

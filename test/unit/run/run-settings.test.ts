// components/config/job.ts runSettings: the run as BenchmarkRun takes it, rendered from the stack config. A
// Docker run carries the compose override and the tool bundle; an hf-sandbox run carries neither, so
// Harbor gets no --extra-docker-compose and the preflight writes no override.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { harborArgv, launchScriptEnv, preflightScriptEnv } from "../../../components/benchmark-run";
import { preflightChecks, runPaths } from "../../../components/run-config";
import { SECRET_PLACEHOLDER, apiBase, parseConfig, readStackFile } from "../../../components/config";
import { jobConfigObject, renderComposeOverride, renderJobConfig, runSettings, runSpec } from "../../../components/config/job";
import { FAKE_PEM } from "../config/helpers";
import { REPO, seedConfig } from "./helpers";

function stackFile(name: string) {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  const r = parseConfig({ sshPrivateKeys: { default: SECRET_PLACEHOLDER }, proxyUpstream: SECRET_PLACEHOLDER, hfToken: SECRET_PLACEHOLDER, ...raw }, { requireSecrets: true });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

describe("runSettings on Docker (seed 000)", () => {
  const c = seedConfig({ sshPrivateKeys: { default: FAKE_PEM }, proxyUpstream: "http://127.0.0.1:27890" });
  const run = runSettings(c, apiBase(c), "reprobench.a100");

  it("carries the rendered job config, the compose override and their preflight checks", () => {
    expect(run.jobConfigYaml).toBe(renderJobConfig(c, apiBase(c)));
    expect(run.composeOverrideYaml).toBe(renderComposeOverride(c));
    expect(run.preflight).toEqual(preflightChecks(jobConfigObject(c, apiBase(c))));
    expect(run.spec).toBe(runSpec(c, apiBase(c)));
  });

  it("carries the stack id, paths, timing and the tool bundle to check", () => {
    expect(run).toMatchObject({
      stackId: "reprobench.a100",
      jobNamePrefix: c.run.jobNamePrefix,
      venv: "/var/lib/reprobench/.venv-harbor-0.21.0",
      workDir: "/var/lib/reprobench",
      jobsDir: "/var/lib/reprobench/jobs",
      toolsDir: c.toolBundle.hostDir,
      stopTimeoutSecs: 900,
      waitForCompletion: false,
      daemonConfigPath: "/etc/docker/daemon.json",
    });
  });

  it("records the config without its secrets", () => {
    const text = JSON.stringify(run.publicConfig);
    expect(text).not.toContain("PRIVATE KEY");
    expect(text).not.toContain("27890");
    expect(run.publicConfig).not.toHaveProperty("sshPrivateKeys");
  });

  it("harbor gets the override; the preflight writes it", () => {
    const paths = runPaths(run, "j", run.stackId);
    expect(harborArgv(run, "j", paths)).toContain("--extra-docker-compose");
    expect(preflightScriptEnv(run, paths)).toMatchObject({ USE_OVERRIDE: "1", COMPOSE_OVERRIDE_YAML: run.composeOverrideYaml, TOOLS_DIR: c.toolBundle.hostDir });
  });

  it("no tool bundle: nothing to check before launch", () => {
    const off = seedConfig({ toolBundle: { enabled: false } });
    expect(runSettings(off, apiBase(off), "s").toolsDir).toBeNull();
  });

  it("the stack id keeps each stack's current job apart, and does not change the job", () => {
    const other = runSettings(c, apiBase(c), "reprobench.prod");
    expect(runPaths(run, "j", run.stackId).currentFile).toBe("/var/lib/reprobench/runs/current.d/reprobench.a100");
    expect(runPaths(other, "j", other.stackId).currentFile).toBe("/var/lib/reprobench/runs/current.d/reprobench.prod");
    expect({ ...other, stackId: run.stackId }).toEqual(run);
  });
});

describe("runSettings on hf-sandbox (Pulumi.hf-sandbox.yaml)", () => {
  const c = stackFile("hf-sandbox");
  const run = runSettings(c, apiBase(c), "reprobench.hf-sandbox");
  const paths = runPaths(run, "j", run.stackId);

  it("has no compose override and no tool bundle", () => {
    expect(c.run.environment).toBe("hf-sandbox");
    expect(run.composeOverrideYaml).toBeNull();
    expect(run.toolsDir).toBeNull();
  });

  it("harbor runs without --extra-docker-compose; launch and preflight know there is no override", () => {
    const argv = harborArgv(run, "j", paths);
    expect(argv).not.toContain("--extra-docker-compose");
    expect(argv).not.toContain(paths.composeOverride);
    expect(argv).toEqual([`${run.venv}/bin/harbor`, "run", "--config", paths.jobConfig, "--job-name", "j", "--jobs-dir", run.jobsDir, "--yes"]);
    expect(launchScriptEnv(run, "j", paths).USE_OVERRIDE).toBe("0");
    expect(preflightScriptEnv(run, paths)).toMatchObject({ USE_OVERRIDE: "0", COMPOSE_OVERRIDE_YAML: "", TOOLS_DIR: "" });
  });
});

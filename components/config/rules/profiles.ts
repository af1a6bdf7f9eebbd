// Rules of the run profiles (seeds 002/003): where the agent runs, reasoning effort, and what the hf-sandbox
// environment needs of Harbor and the run.
import type { ReprobenchConfig } from "../schema";
import { agentPlacement } from "../derive";
import { type ConfigProblem, problem } from "../problems";

/** Harbor version order for release and .devN versions (enough for Harbor's own version scheme). */
export function compareHarborVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^(\d+)\.(\d+)\.(\d+)(?:\.?(dev|rc|a|b)(\d+))?/.exec(v);
    if (!m) return [0, 0, 0, 0, 0];
    const stage = m[4] === undefined ? 4 : { dev: 0, a: 1, b: 2, rc: 3 }[m[4] as "dev" | "a" | "b" | "rc"];
    return [Number(m[1]), Number(m[2]), Number(m[3]), stage, Number(m[5] ?? 0)];
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/**
 * The first Harbor build whose hf-sandbox exec runs commands with bash (argv mode) instead of /bin/sh:
 * installed agents prefix `set -o pipefail;`, which dash rejects (seed 002 Run 3; harbor PR #3016;
 * harbor/environments/hf_sandbox.py in 0.22.1.dev202609020403 and 0.23.0 vs 0.22.0).
 */
export const HF_SANDBOX_PIPEFAIL_FIX = "0.22.1.dev202609020403";

/** Seconds of an hf-sandbox job_timeout ("2h", "90m", "7200"); Infinity for none/off. */
function durationSeconds(text: string): number {
  if (text === "none" || text === "off") return Infinity;
  const m = /^([0-9.]+)([smhd]?)$/.exec(text)!;
  return Number(m[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "" | "s" | "m" | "h" | "d"];
}

/** Agent placement, reasoning effort and the hf-sandbox environment (seeds 002/003). */
export function profileProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const run = config.run;
  const placement = agentPlacement(run.agent);
  if (run.reasoningEffort !== null && placement === "container" && run.modelName.startsWith("openai/")) {
    out.push(problem(["run", "reasoningEffort"], `got ${JSON.stringify(run.reasoningEffort)}; expected null for ${run.agent} with an openai/ model: Harbor then switches mini-swe-agent to the Responses API (/v1/responses), which the SGLang/vLLM endpoint is not set up for; use modelServer.enableThinking to bound thinking instead`));
  }
  if (run.reasoningEffort !== null && placement === "none") {
    out.push(problem(["run", "reasoningEffort"], `got ${JSON.stringify(run.reasoningEffort)}; expected null: agent ${run.agent} calls no model`));
  }
  if (run.containerApiBase !== null && placement !== "container") {
    out.push(problem(["run", "containerApiBase"], `got ${JSON.stringify(run.containerApiBase)}; expected null: ${run.agent} does not run inside the task container (${placement === "host" ? "it calls the model from the runner" : "it calls no model"})`));
  }
  if (run.agentVersion !== null && placement !== "container") {
    out.push(problem(["run", "agentVersion"], `got ${JSON.stringify(run.agentVersion)}; expected null: ${run.agent} is not installed into the task container (its version is Harbor's)`));
  }
  if (run.environment !== "hf-sandbox") return out;
  if (!config.harbor.extras.includes("hf-sandbox")) {
    out.push(problem(["harbor", "extras"], `got ${JSON.stringify(config.harbor.extras)}; expected it to include "hf-sandbox" for run.environment hf-sandbox (Harbor needs harbor[hf-sandbox], i.e. huggingface-hub ≥ 1.22, for that environment)`));
  }
  if (run.taskMounts.length > 0) {
    out.push(problem(["run", "taskMounts"], "got bind mounts; expected none for run.environment hf-sandbox (a sandbox runs on HF Jobs and cannot see the runner's directories)"));
  }
  if (placement === "container") {
    if (run.containerApiBase === null) {
      out.push(problem(["run", "containerApiBase"], `missing; expected the model endpoint's public URL for ${run.agent} on hf-sandbox (the agent runs in the sandbox on HF Jobs and cannot reach the cluster's private addresses)`));
    }
    if (compareHarborVersions(config.harbor.version, HF_SANDBOX_PIPEFAIL_FIX) < 0) {
      out.push(problem(["harbor", "version"], `got ${JSON.stringify(config.harbor.version)}; expected ${HF_SANDBOX_PIPEFAIL_FIX} or newer (first stable: 0.23.0) for ${run.agent} on hf-sandbox: older Harbor runs sandbox commands with /bin/sh (dash), which rejects the installed agent's 'set -o pipefail' ("Illegal option -o pipefail" on every trial, seed 002 Run 3)`));
    }
    if (run.hfSandbox.jobTimeout === null || durationSeconds(run.hfSandbox.jobTimeout) <= 600) {
      out.push(problem(["run", "hfSandbox", "jobTimeout"], `got ${JSON.stringify(run.hfSandbox.jobTimeout)}; expected more than the sandbox's 600 s idle default, e.g. "2h": ${run.agent} runs its whole loop as one exec, and an idle sandbox is shut down mid-task (seed 002 Run 3)`));
    }
  }
  return out;
}

// Rules of the dataset, Harbor and the run: a dataset's source (git URL and commit, or a project directory),
// Harbor's Python, and the run's agent, model name and token limits.
import { type Host, type ReprobenchConfig, isGitUrl } from "../schema";
import { HOST_SIDE_AGENTS, IN_CONTAINER_AGENTS, MODEL_FREE_AGENTS, agentPlacement, hostsWithRole, workerSettings } from "../derive";
import { type ConfigProblem, type PathPart, problem } from "../problems";

/** Where a dataset's source is configured: the key paths of its repo and commit, and how messages name the repo. */
export interface DatasetSourceKeys {
  repo: PathPart[];
  commit: PathPart[];
  repoLabel: string;
}

/**
 * The rules of a dataset's source, for harbor.datasetRepo/datasetCommit and a run stack's dataset.repo/commit
 * alike: a git URL needs its commit; a project directory is relative, inside the project, and has none.
 */
export function datasetSourceProblems(repo: string, commit: string | null, keys: DatasetSourceKeys): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  if (isGitUrl(repo)) {
    if (commit === null) out.push(problem(keys.commit, "missing; expected the 40-character commit to pin the git dataset to"));
  } else {
    if (repo.startsWith("/") || repo.startsWith("~") || repo.split("/").includes("..")) {
      out.push(problem(keys.repo, `got ${JSON.stringify(repo)}; expected a git URL or a directory inside this project (relative, no '..')`));
    }
    if (commit !== null) {
      out.push(problem(keys.commit, `got ${JSON.stringify(commit)}; expected null: ${keys.repoLabel} ${JSON.stringify(repo)} is a project directory, not a git URL`));
    }
  }
  return out;
}

export function harborProblems(config: ReprobenchConfig): ConfigProblem[] {
  const h = config.harbor;
  const out: ConfigProblem[] = datasetSourceProblems(h.datasetRepo, h.datasetCommit, { repo: ["harbor", "datasetRepo"], commit: ["harbor", "datasetCommit"], repoLabel: "datasetRepo" });
  if (Number(h.pythonVersion.split(".")[1]) < 12) {
    out.push(problem(["harbor", "pythonVersion"], `got ${JSON.stringify(h.pythonVersion)}; expected 3.12 or newer (Harbor requires Python ≥ 3.12)`));
  }
  return out;
}

export function runProblems(config: ReprobenchConfig): ConfigProblem[] {
  const run = config.run;
  const out: ConfigProblem[] = [];
  if (run.nConcurrentAgents !== null && run.nConcurrentAgents > run.nConcurrentTrials) {
    out.push(problem(["run", "nConcurrentAgents"], `got ${run.nConcurrentAgents}; expected ≤ run.nConcurrentTrials (${run.nConcurrentTrials}): Harbor rejects agents[].n_concurrent above n_concurrent_trials`));
  }
  const known = [...HOST_SIDE_AGENTS, ...IN_CONTAINER_AGENTS, ...MODEL_FREE_AGENTS] as string[];
  if (!known.includes(run.agent)) {
    out.push(problem(["run", "agent"], `got ${JSON.stringify(run.agent)}; expected one of ${known.join(", ")} (the agents reprobench knows how to wire to the model)`));
  }
  if (agentPlacement(run.agent) !== "none") {
    const served = config.modelServer.servedModelName;
    const slash = run.modelName.indexOf("/");
    if (slash <= 0 || run.modelName.slice(slash + 1) !== served) {
      out.push(problem(["run", "modelName"], `got ${JSON.stringify(run.modelName)}; expected <provider>/${served} (the router serves modelServer.servedModelName), e.g. "openai/${served}"`));
    }
  }
  const workers: Host[] = hostsWithRole(config, "worker");
  if (workers.length > 0) {
    const contexts = workers.map((w) => workerSettings(config, w.name).contextLength).filter((c): c is number => c !== null);
    const context = contexts.length > 0 ? Math.min(...contexts) : Infinity;
    if (run.modelInfo.maxInputTokens > context) {
      out.push(problem(["run", "modelInfo", "maxInputTokens"], `got ${run.modelInfo.maxInputTokens}; expected ≤ the workers' contextLength (${context})`));
    }
    if (run.modelInfo.maxOutputTokens > context) {
      out.push(problem(["run", "modelInfo", "maxOutputTokens"], `got ${run.modelInfo.maxOutputTokens}; expected ≤ the workers' contextLength (${context})`));
    }
  }
  return out;
}

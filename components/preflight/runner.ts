// What `reprobench check` asks of the outside for a stack's run, seen from its runner host: its proxy
// answers for the destinations the run reaches, the dataset's repository has the pinned commit, and the task
// images' registry has pull quota for the images still to pull. The plan, the host scripts' inputs
// (components/scripts/check-runner.sh, check-registry.sh), where the secrets they go out with come from, and
// the verdict: three rows of the runner's table. Pure: no SSH, no files.
import { soleHostWithRole, workerSettings } from "../config/derive";
import { type LocalFiles, proxyUrlFor } from "../config/loaded";
import { type ReprobenchConfig, SECRET_PLACEHOLDER } from "../config/schema";
import { proxyEnvironment } from "../host-proxy";
import { lastJsonLine } from "../host-script";
import { type RegistryLogin, registryAuthEnv, registryOf } from "../registry-access";
import { imageManifest, isGitUrl, tasksDir } from "../run-config";
import { type CheckResult, type Problem, listSome, result, skipped } from "./verdict";

/** check-runner.sh with the functions it uses before it. */
export const RUNNER_CHECK_SCRIPTS = ["retry", "registry", "check-runner"];
/** check-registry.sh with the functions it uses before it. */
export const REGISTRY_CHECK_SCRIPTS = ["retry", "registry", "check-registry"];
/** Bound of each request and git command the scripts make, seconds: the whole check stays in seconds. */
export const REQUEST_TIMEOUT_SECONDS = 15;

// ---------------------------------------------------------------------------------------------------------
// The secrets the runner's requests go out with

/** The runner's proxy variables and registry accounts, as the dataset step and the pre-pull get them. */
export interface RunnerSecrets {
  /** HTTP(S)_PROXY / NO_PROXY (and lower case) of the runner's hosts[].proxy; null: none, or not known here. */
  proxyEnv: Record<string, string> | null;
  /** Why the runner has a proxy whose URL is not known here, or null. */
  proxyUnknown: string | null;
  /** REGISTRY_AUTH_JSON (registry.sh), or {} (anonymous). */
  registryEnv: Record<string, string>;
  /** Registries with an account whose password is not known here: their HEAD goes anonymous. */
  anonymous: string[];
  /** Every secret value, for masking whatever comes back. */
  values: Record<string, string>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const strings = (v: Record<string, unknown>): Record<string, string> => Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === "string"));

function unknownProxy(stack: string, runner: string): string {
  return (
    `the runner ${runner} has hosts[].proxy, and its URL is the secret reprobench:proxyUrls.${runner} (or proxyUrls.default), which only the stack's outputs carry: ` +
    `bring the stack up once (reprobench up --stack ${stack}) or give hosts[].proxy.urlFile`
  );
}

/**
 * From the stack's (or its owner's) output `runnerPullEnv` ({proxy, registry}: what a run stack's own dataset
 * and pre-pull get); null when the outputs have none (no Harbor on the cluster, or never up).
 */
export function runnerSecretsFromOutputs(pullEnv: unknown, config: ReprobenchConfig, stack: string): RunnerSecrets | null {
  if (!isRecord(pullEnv) || !isRecord(pullEnv.proxy) || !isRecord(pullEnv.registry)) return null;
  const runner = soleHostWithRole(config, "runner");
  const proxy = strings(pullEnv.proxy);
  const registryEnv = strings(pullEnv.registry);
  const hasProxy = runner.proxy !== undefined;
  const known = Object.keys(proxy).length > 0;
  return {
    proxyEnv: hasProxy && known ? proxy : null,
    proxyUnknown: hasProxy && !known ? `the runner ${runner.name} has hosts[].proxy, and the stack's outputs carry no URL for it (brought up without one): set it (hosts[].proxy.url, proxy.urlFile or the secret reprobench:proxyUrls.${runner.name}) and run reprobench up --stack ${stack}` : null,
    registryEnv,
    anonymous: [],
    values: { ...proxy, ...registryEnv },
  };
}

/**
 * From the stack file and the files it names: the runner's proxy URL (proxy.urlFile, proxy.url, a plaintext
 * proxyUrls entry) and the registry passwords in passwordFile; an encrypted value is not known here.
 */
export function runnerSecretsFromStackFile(config: ReprobenchConfig, files: Pick<LocalFiles, "proxyUrlFiles" | "registryPasswordFiles">, stack: string): RunnerSecrets {
  const runner = soleHostWithRole(config, "runner");
  const url = proxyUrlFor(config, files, runner.name);
  const known = url !== undefined && url !== SECRET_PLACEHOLDER;
  const proxyEnv = runner.proxy !== undefined && known ? proxyEnvironment(url, runner.proxy.noProxy) : null;
  const logins: RegistryLogin[] = [];
  const anonymous: string[] = [];
  for (const r of config.registries) {
    if (r.username === null) continue;
    const password = files.registryPasswordFiles?.[r.host] ?? config.registryPasswords[r.host];
    if (password === undefined || password === SECRET_PLACEHOLDER) anonymous.push(r.host);
    else logins.push({ registry: r.host, username: r.username, password });
  }
  const registryEnv = registryAuthEnv(logins);
  return {
    proxyEnv,
    proxyUnknown: runner.proxy !== undefined && !known ? unknownProxy(stack, runner.name) : null,
    registryEnv,
    anonymous,
    values: { ...(proxyEnv ?? {}), ...registryEnv, ...Object.fromEntries(logins.map((l) => [`password:${l.registry}`, l.password])) },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The plan

export type DatasetPlan =
  | { kind: "git"; repo: string; commit: string; dir: string; tasksDir: string; expected: number; keys: { repo: string; commit: string } }
  | { kind: "directory"; repo: string; tasksSubdir: string; expected: number; keys: { repo: string; commit: string } };

/** What the check asks of the outside for a stack's run. */
export interface RunnerCheckPlan {
  stack: string;
  runner: string;
  /** The runner has hosts[].proxy. */
  proxy: boolean;
  /** Why this stack needs no dataset on the runner (no Harbor), or null. */
  noDataset: string | null;
  dataset: DatasetPlan | null;
  /** Why the runner pulls no task images (no dataset, or hf-sandbox), or null. */
  noImages: string | null;
  /** toolBundle.canaryImage when the tool bundle pulls it; the image whose registry stands for the task images' before the dataset is on the runner. */
  canary: string;
  canaryPulled: boolean;
  /** The registries the runner pulls the run's images from, as far as the config tells (the canary's, the runner's server image). */
  registries: string[];
  insecureRegistries: string[];
  daemonJson: string;
  mirrored: string[];
  credentialed: string[];
}

/** What the check asks of the outside for `config`'s run; `ownDataset`: a run stack's reprobench:dataset. */
export function runnerCheckPlan(config: ReprobenchConfig, o: { stack: string; ownDataset?: boolean }): RunnerCheckPlan {
  const runner = soleHostWithRole(config, "runner");
  const h = config.harbor;
  const keys = o.ownDataset ? { repo: "dataset.repo", commit: "dataset.commit" } : { repo: "harbor.datasetRepo", commit: "harbor.datasetCommit" };
  const noDataset = config.run.enabled || h.enabled ? null : "run.enabled and harbor.enabled are off: this stack puts no dataset and no task images on the runner";
  let dataset: DatasetPlan | null = null;
  if (noDataset === null) {
    dataset = isGitUrl(h.datasetRepo)
      ? { kind: "git", repo: h.datasetRepo, commit: h.datasetCommit ?? "", dir: h.datasetDir, tasksDir: tasksDir(h), expected: h.expectedTaskCount, keys }
      : { kind: "directory", repo: h.datasetRepo, tasksSubdir: h.datasetTasksSubdir, expected: h.expectedTaskCount, keys };
  }
  const noImages = noDataset ?? (config.run.environment !== "docker" ? `run.environment ${config.run.environment}: the task images are pulled where the tasks run, not on the runner` : null);
  const canaryPulled = noDataset === null && config.toolBundle.enabled;
  const images = [...(noImages === null || canaryPulled ? [config.toolBundle.canaryImage] : []), ...(runner.roles.includes("worker") ? [workerSettings(config, runner.name).image] : [])];
  return {
    stack: o.stack,
    runner: runner.name,
    proxy: runner.proxy !== undefined,
    noDataset,
    dataset,
    noImages,
    canary: config.toolBundle.canaryImage,
    canaryPulled,
    registries: [...new Set(images.map(registryOf))].sort(),
    insecureRegistries: h.insecureRegistries,
    daemonJson: config.docker.daemonConfigPath,
    mirrored: config.registries.filter((r) => r.mirror !== null).map((r) => r.host),
    credentialed: config.registries.filter((r) => r.username !== null).map((r) => r.host),
  };
}

/** scheme://host[:port]/ of an http(s) URL, without credentials; null for another kind of URL. */
export function originOf(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  return u.protocol === "http:" || u.protocol === "https:" ? `${u.protocol}//${u.host}/` : null;
}

/**
 * Inputs of check-runner.sh (no secret: the proxy variables are added by the caller). `registries`: the
 * registries whose /v2/ the proxy is tried with (default the plan's).
 */
export function runnerScriptEnv(plan: RunnerCheckPlan, datasetStateScript: string, registries: readonly string[] = plan.registries): Record<string, string> {
  const git = plan.dataset?.kind === "git" ? plan.dataset : null;
  const origin = git ? originOf(git.repo) : null;
  return {
    PROBE_URLS: plan.proxy && origin ? origin : "",
    PROBE_REGISTRIES: plan.proxy ? registries.filter((r) => !plan.mirrored.includes(r)).join("\n") : "",
    INSECURE_REGISTRIES: plan.insecureRegistries.join(","),
    DAEMON_JSON: plan.daemonJson,
    DATASET_REPO: git?.repo ?? "",
    DATASET_COMMIT: git?.commit ?? "",
    DATASET_DIR: git?.dir ?? "/nonexistent",
    TASKS_DIR: git?.tasksDir ?? "/nonexistent",
    DATASET_STATE_SCRIPT: datasetStateScript,
    TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS),
  };
}

/** The images the run pulls on the runner, and whether the list is the dataset's or an estimate. */
export interface ImageNeed {
  images: string[];
  /** null: the dataset's own list; else why it is estimated, and how many task images it assumes. */
  estimate: { why: string; count: number; registry: string } | null;
}

/**
 * The images to look at: the dataset's (its task.toml texts, from the runner's checkout at the pinned commit
 * or from the project directory `up` uploads) and the tool bundle's canary; before the dataset is on the
 * runner, an estimate: harbor.expectedTaskCount images from the canary's registry. Null: none on the runner.
 */
export function imageNeed(plan: RunnerCheckPlan, taskTomls: Record<string, string> | null): ImageNeed | null {
  if (plan.noImages !== null) return null;
  const canary = plan.canaryPulled ? [plan.canary] : [];
  if (taskTomls !== null) {
    const { images } = imageManifest(taskTomls);
    return { images: [...new Set([...images, ...canary])].sort(), estimate: null };
  }
  const count = plan.dataset?.expected ?? 0;
  const registry = registryOf(plan.canary);
  return {
    images: [plan.canary],
    estimate: { why: `the dataset is not on the runner at the pinned commit yet: ${count} task images (harbor.expectedTaskCount) assumed from ${registry}, the registry of toolBundle.canaryImage`, count, registry },
  };
}

/** Inputs of check-registry.sh (no secret: the proxy and registry variables are added by the caller). */
export function registryScriptEnv(plan: RunnerCheckPlan, need: ImageNeed): Record<string, string> {
  return {
    IMAGES: need.images.join("\n"),
    HEAD_PRESENT: need.estimate ? "1" : "0",
    INSECURE_REGISTRIES: plan.insecureRegistries.join(","),
    DAEMON_JSON: plan.daemonJson,
    MIRRORED_REGISTRIES: plan.mirrored.join(","),
  };
}

// ---------------------------------------------------------------------------------------------------------
// What the scripts found

/** One request through the proxy (check-runner.sh). */
export interface ProbeFact {
  url: string;
  /** host:port of the proxy it went through; "": direct (NO_PROXY, or no proxy). */
  proxy: string;
  /** HTTP status of the destination's answer ("000": none). */
  code: string;
  /** The proxy's answer to CONNECT ("000": no tunnel asked or none answered). */
  connect: string;
  /** curl's exit status. */
  exit: number;
  error: string;
}

/** The dataset's repository from the runner (check-runner.sh). */
export interface DatasetFact {
  repo: string;
  proxy: string;
  /** harbor-dataset-check.sh's line: "dataset=missing" or "dataset=<commit> tasks=N". */
  state: string;
  lsRemote: number;
  lsRemoteError: string;
  /** The ref whose tip the pinned commit is, or "". */
  tip: string;
  /** The repository's HEAD, or "". */
  head: string;
  /** Status of fetching the commit alone; -1: not tried. */
  fetch: number;
  fetchError: string;
}

export interface RunnerFacts {
  probes: ProbeFact[];
  dataset: DatasetFact | null;
  /** "<task>/task.toml" → text, when the runner's checkout is at the pinned commit. */
  taskTomls: Record<string, string> | null;
}

/** One registry's HEAD (check-registry.sh). */
export interface RegistryHeadFact {
  registry: string;
  image: string;
  status: string;
  limit: string;
  remaining: string;
  window: string;
  error: string;
  credentials: boolean;
}

export interface RegistryFacts {
  docker: boolean;
  /** The images the runner's Docker does not have. */
  missing: string[];
  registries: RegistryHeadFact[];
}

export function parseRunnerFacts(stdout: string): RunnerFacts {
  const v = lastJsonLine<unknown>(stdout, "check-runner.sh");
  if (!isRecord(v) || !Array.isArray(v.probes)) throw new Error("check-runner.sh: its JSON line has no probes");
  return { probes: v.probes as ProbeFact[], dataset: isRecord(v.dataset) ? (v.dataset as unknown as DatasetFact) : null, taskTomls: isRecord(v.taskTomls) ? strings(v.taskTomls) : null };
}

export function parseRegistryFacts(stdout: string): RegistryFacts {
  const v = lastJsonLine<unknown>(stdout, "check-registry.sh");
  if (!isRecord(v) || !Array.isArray(v.missing) || !Array.isArray(v.registries)) throw new Error("check-registry.sh: its JSON line has no missing/registries");
  return { docker: v.docker !== false, missing: v.missing.filter((m): m is string => typeof m === "string"), registries: v.registries as RegistryHeadFact[] };
}

// ---------------------------------------------------------------------------------------------------------
// The verdict

const short = (commit: string) => commit.slice(0, 12);
const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};
const PROXY_KEYS = (runner: string) => `the runner's proxy URL (hosts[].proxy of ${runner}: proxy.url, proxy.urlFile, or the secret reprobench:proxyUrls.${runner})`;

/** How one request through the proxy went: null when the destination answered, else what is wrong and its fix. */
export function probeProblem(p: ProbeFact, runner: string): { message: string; fix: string } | null {
  const via = p.proxy ? ` through proxy ${p.proxy}` : " directly (no proxy applies: NO_PROXY)";
  const allow = `let the proxy reach ${hostOf(p.url)} (or list it in hosts[].proxy.noProxy of ${runner} when the runner reaches it directly)`;
  if (p.proxy && (p.connect === "407" || p.code === "407")) {
    return { message: `proxy ${p.proxy} refused ${p.url}: 407 Proxy Authentication Required`, fix: `check the credentials in ${PROXY_KEYS(runner)}` };
  }
  if (p.proxy && p.connect !== "000" && p.connect !== "200") return { message: `proxy ${p.proxy} refused the tunnel (CONNECT) for ${p.url}: HTTP ${p.connect}`, fix: allow };
  if (p.proxy && p.code === "403") return { message: `proxy ${p.proxy} (or the server behind it) refused ${p.url}: HTTP 403`, fix: allow };
  if (p.code !== "000" || p.connect === "200") return null;
  const why = ({ 5: "cannot resolve the proxy's host name", 6: "cannot resolve the host name", 7: p.proxy ? "the proxy refused the connection or cannot be reached" : "the connection was refused or the host cannot be reached", 28: `no answer within ${REQUEST_TIMEOUT_SECONDS}s` } as Record<number, string>)[p.exit];
  const detail = [why, p.error].filter(Boolean).join(": ") || `curl exit status ${p.exit}`;
  return {
    message: `cannot reach ${p.url}${via}: ${detail}`,
    fix: p.proxy ? `check that proxy ${p.proxy} runs and the runner reaches it (${PROXY_KEYS(runner)})` : `check the runner's network (or give ${runner} a hosts[].proxy)`,
  };
}

/** The proxy row: each destination asked through the runner's proxy answered. */
export function judgeProxy(plan: RunnerCheckPlan, secrets: RunnerSecrets, probes: readonly ProbeFact[]): CheckResult {
  if (!plan.proxy) return skipped("proxy", `${plan.runner} has no hosts[].proxy: it reaches the outside directly`);
  if (secrets.proxyUnknown) return result("proxy", "not checked: its URL is not known here", [], [secrets.proxyUnknown]);
  const through = probes.filter((p) => p.proxy !== "");
  const direct = probes.filter((p) => p.proxy === "");
  const problems: Problem[] = [];
  const answered: string[] = [];
  for (const p of through) {
    const bad = probeProblem(p, plan.runner);
    if (bad) problems.push({ host: plan.runner, subject: `proxy ${p.proxy}`, ...bad });
    else answered.push(`${hostOf(p.url)} ${p.code !== "000" ? `HTTP ${p.code}` : "tunnel open"}`);
  }
  const proxies = [...new Set(through.map((p) => p.proxy))];
  const notes = direct.map((p) => `${hostOf(p.url)} is reached directly (hosts[].proxy.noProxy)`);
  if (through.length === 0) return result("proxy", "no destination of the run goes through it", [], notes.length ? notes : ["nothing to ask through the proxy"]);
  const detail = `via ${proxies.join(", ")}: ${answered.length ? `${answered.join(", ")} answered` : "no destination answered"}`;
  return result("proxy", detail, problems, notes);
}

const REPO_NOT_FOUND = /not found|does not appear to be a git repository|Repository not found|HTTP 404|returned error: 404/i;
const REPO_AUTH = /Authentication failed|could not read Username|returned error: 40[13]|terminal prompts disabled/i;
const COMMIT_NOT_THERE = /not our ref|couldn't find remote ref|no such remote ref|unadvertised object|not a valid object|bad object/i;

/**
 * The dataset row. A git dataset: the repository answers from the runner and has the pinned commit (the
 * runner's checkout, a ref's tip, or a fetch of that commit alone); a project directory: it holds the
 * expected number of task.toml files (`local`, read on this machine).
 */
export function judgeDataset(plan: RunnerCheckPlan, fact: DatasetFact | null, local?: { exists: boolean; taskTomls: number; path: string }): CheckResult {
  if (plan.noDataset !== null || plan.dataset === null) return skipped("dataset", plan.noDataset ?? "no dataset");
  const d = plan.dataset;
  const host = plan.runner;
  if (d.kind === "directory") {
    if (!local?.exists) return result("dataset", `project directory ${d.repo}`, [{ host, subject: `dataset ${d.repo}`, message: `is neither a git URL nor a directory of this project (${local?.path ?? d.repo})`, fix: `set ${d.keys.repo} to a git URL, or to a directory of this project` }]);
    const problems: Problem[] = local.taskTomls === d.expected ? [] : [{ host, subject: `dataset ${d.repo}`, message: `has ${local.taskTomls} task.toml files under ${local.path}, expected ${d.expected} (harbor.expectedTaskCount)`, fix: "add the missing tasks, or set harbor.expectedTaskCount" }];
    return result("dataset", `project directory ${d.repo}, uploaded by up: ${local.taskTomls} tasks`, problems);
  }
  if (fact === null) return skipped("dataset", "not checked");
  const subject = `dataset ${fact.repo}`;
  const via = fact.proxy ? ` through proxy ${fact.proxy}` : "";
  if (fact.lsRemote !== 0) {
    const err = fact.lsRemote === 124 ? `no answer within ${REQUEST_TIMEOUT_SECONDS}s` : fact.lsRemoteError || `exit status ${fact.lsRemote}`;
    const fix = /\b407\b/.test(err)
      ? `check the credentials in ${PROXY_KEYS(host)}`
      : REPO_AUTH.test(err)
        ? `the repository asks for credentials the runner does not have: set ${d.keys.repo} to a URL the runner can read`
        : REPO_NOT_FOUND.test(err)
          ? `check ${d.keys.repo}`
          : `check that the runner reaches ${hostOf(d.repo)} (hosts[].proxy of ${host} and its noProxy)`;
    return result("dataset", `${fact.repo}: does not answer`, [{ host, subject, message: `git ls-remote failed${via}: ${err}`, fix }]);
  }
  const count = /tasks=(\d+)/.exec(fact.state)?.[1];
  const onRunner = fact.state.startsWith(`dataset=${d.commit} `);
  const notes: string[] = [];
  const problems: Problem[] = [];
  let found: string;
  if (onRunner) {
    found = `checked out at ${short(d.commit)} on the runner (${count ?? "?"} tasks)`;
    if (count !== undefined && Number(count) !== d.expected) {
      problems.push({ host, subject, message: `the checkout at ${short(d.commit)} has ${count} task.toml files under ${d.tasksDir}, expected ${d.expected} (harbor.expectedTaskCount)`, fix: `set harbor.expectedTaskCount, or ${d.commit ? d.keys.commit : d.keys.repo} to the dataset it counts` });
    }
  } else if (fact.tip) {
    found = `${short(d.commit)} is the tip of ${fact.tip}`;
  } else if (fact.fetch === 0) {
    found = `has ${short(d.commit)}`;
  } else if (COMMIT_NOT_THERE.test(fact.fetchError)) {
    found = `no commit ${short(d.commit)}`;
    problems.push({ host, subject, message: `commit ${d.commit} is not in ${fact.repo} (its HEAD is ${fact.head || "unknown"}; ${d.keys.commit})`, fix: `set ${d.keys.commit} to a commit of ${fact.repo}` });
  } else {
    found = "answers";
    notes.push(`commit ${short(d.commit)} is no ref's tip and cannot be fetched alone here (${fact.fetch === 124 ? `no answer within ${REQUEST_TIMEOUT_SECONDS}s` : fact.fetchError || `exit status ${fact.fetch}`}): up clones the repository and checks it then`);
  }
  if (!onRunner) notes.push(fact.state.startsWith("dataset=missing") ? "not on the runner yet: up clones it" : `the runner's checkout is ${fact.state.replace(/^dataset=/, "")}: up checks out ${short(d.commit)}`);
  // Not on the runner yet is the normal state before up: only a note when nothing else is worth saying.
  const worth = notes.filter((n) => !n.startsWith("not on the runner yet"));
  return { ...result("dataset", `${fact.repo}${via}: ${found}`, problems, worth), notes };
}

const SET_CREDENTIALS = (registry: string) =>
  `set credentials for ${registry} (reprobench:registries[].username and the secret reprobench:registryPasswords) or a pull-through mirror (reprobench:registries[].mirror), then run up again`;

/**
 * The registry row: for each registry the images come from, how many are still to pull and whether its
 * announced quota (one HEAD, free) covers them within the pre-pull's wait (`budgetSeconds`, task-images.ts
 * TASK_IMAGES_TIME_BUDGET_SECONDS), with task-images.sh's words when it does not.
 */
export function judgeRegistry(plan: RunnerCheckPlan, secrets: RunnerSecrets, need: ImageNeed | null, facts: RegistryFacts | null, budgetSeconds: number): CheckResult {
  if (need === null) return skipped("registry", plan.noImages ?? "no task images");
  if (facts === null) return skipped("registry", "not checked");
  const host = plan.runner;
  const problems: Problem[] = [];
  const notes: string[] = [];
  const parts: string[] = [];
  if (!facts.docker) notes.push("docker is not installed on the runner: every image counts as still to pull");
  // Worth saying, not wrong: the estimate is the normal state before the first up.
  const info = need.estimate ? [need.estimate.why] : [];
  const registries = [...new Set(need.images.map(registryOf))].sort();
  for (const registry of registries) {
    const total = need.estimate?.registry === registry ? need.estimate.count + (plan.canaryPulled ? 1 : 0) : need.images.filter((i) => registryOf(i) === registry).length;
    const missing = need.estimate?.registry === registry ? total : facts.missing.filter((i) => registryOf(i) === registry).length;
    if (plan.mirrored.includes(registry)) {
      parts.push(`${registry}: ${missing} of ${total} to pull, through its mirror (the mirror's quota)`);
      continue;
    }
    const head = facts.registries.find((r) => r.registry === registry);
    if (!head) {
      parts.push(`${registry}: all ${total} images present`);
      continue;
    }
    const who = head.credentials ? "with this stack's credentials" : "anonymous";
    if (secrets.anonymous.includes(registry)) notes.push(`the password of ${registry}'s account cannot be read here (a secret only the stack's outputs carry, or a missing passwordFile): its quota was read anonymously`);
    const subject = `registry ${registry}`;
    if (head.status === "429") {
      problems.push({ host, subject, message: `its pull limit is used up now (${who}; ${head.image} answered 429 Too Many Requests): ${missing} images still to pull`, fix: `${SET_CREDENTIALS(registry)}, or wait for the window to reopen` });
      parts.push(`${registry}: no pulls left`);
      continue;
    }
    if (head.status !== "200") {
      const fix =
        head.status === "401" || head.status === "403"
          ? head.credentials
            ? `check reprobench:registries[].username and the secret registryPasswords["${registry}"]`
            : SET_CREDENTIALS(registry).replace(" or a pull-through mirror (reprobench:registries[].mirror)", "")
          : head.status === "404"
            ? `check the image name (${need.estimate ? "toolBundle.canaryImage" : "the task's [environment].docker_image in the dataset"})`
            : `check that the runner reaches ${registry} (hosts[].proxy of ${host} and its noProxy; harbor.insecureRegistries for a plain-HTTP registry)`;
      problems.push({ host, subject, message: `HEAD ${head.image}: ${head.error || `HTTP ${head.status}`}`, fix });
      parts.push(`${registry}: HTTP ${head.status}`);
      continue;
    }
    const remaining = head.remaining === "" ? null : Number(head.remaining);
    const limit = head.limit === "" ? null : Number(head.limit);
    const window = head.window === "" ? null : Number(head.window);
    if (remaining === null) {
      parts.push(`${registry}: ${missing} of ${total} to pull, no pull limit announced`);
      continue;
    }
    const quota = `${remaining} pulls left${limit !== null ? ` of ${limit}${window !== null ? ` per ${window}s` : ""}` : ""}, ${who}`;
    parts.push(`${registry}: ${missing} of ${total} to pull, ${quota}`);
    if (missing <= remaining) continue;
    if (limit === null || window === null || limit <= 0) {
      problems.push({ host, subject, message: `${missing} images still to pull, ${remaining} pulls left (${who})`, fix: SET_CREDENTIALS(registry) });
      continue;
    }
    const windows = Math.ceil((missing - remaining) / limit);
    const wait = windows * window;
    const text = `the ${missing} images still to pull from ${registry} need ${windows} more pull window(s) of ${window}s (${Math.round(wait / 60)} min) beyond the ${remaining} pulls left (${who}: ${limit} pulls per ${window}s)`;
    if (wait > budgetSeconds) problems.push({ host, subject, message: `${text}, more than the pre-pull may wait (${Math.round(budgetSeconds / 60)} min)`, fix: SET_CREDENTIALS(registry) });
    else notes.push(`${text}: up waits for them (or ${SET_CREDENTIALS(registry).replace(", then run up again", "")})`);
  }
  return { ...result("registry", listSome(parts, 4) || "no images", problems, notes), notes: [...info, ...notes] };
}

/** A report's text with every secret value masked (belt and braces: the scripts print none). */
export function maskAll<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === "string") return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskAll(v, mask)) as T;
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskAll(v, mask)])) as T;
  return value;
}

// `reprobench check --stack S`: the preflight of every host of a stack, as `sky check` does — the same host
// scripts (components/scripts/preflight-weights.sh + preflight-host.sh) and the same judging
// (components/preflight/plan.ts judgeHost) as the WorkerPreflight component that `up` runs before a model
// server starts — and, on the runner, what the run needs from the outside (components/preflight/runner.ts:
// the proxy answers, the dataset's repository has the pinned commit, the registry's pull quota covers the
// task images still to pull; check-runner.sh and check-registry.sh, over the same SSH connection). Changes
// nothing on any host. A table per host; exit 0 only when every host is ready.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import type { ReprobenchConfig } from "../components/config/schema";
import type { HostConnection } from "../components/transport";
import type { HostPlan, HostVerdict } from "../components/preflight/plan";
import type { RegistryFacts, RunnerFacts } from "../components/preflight/runner";
import type { CheckResult, Problem } from "../components/preflight/verdict";

/** What a stack resolves to for the check. */
export interface CheckTarget {
  config: ReprobenchConfig;
  connections: Map<string, HostConnection>;
  notes: string[];
  /** The (owner's) output runnerPullEnv ({proxy, registry}, secret); absent: the stack file's own. */
  pullEnv?: unknown;
  /** A run stack with its own reprobench:dataset. */
  ownDataset?: boolean;
}

export interface CheckOptions {
  stack: string;
  json?: boolean;
  /** The project (default: the checkout this file is in). */
  root?: string;
  /** Environment for pulumi (backend, passphrase). */
  env?: Record<string, string>;
  write?: (text: string) => void;
  writeErr?: (text: string) => void;
  /** Injected in tests: the stack's config and connections instead of the stack file and outputs. */
  resolve?: (stack: string) => Promise<CheckTarget>;
  /** Injected in tests: runs a script on a host, resolving to its stdout. */
  runScript?: (c: HostConnection, script: string, env: Record<string, string>) => Promise<string>;
  /** Upper bound per host, ms (default 300 s: two container runs and the headers). */
  timeoutMs?: number;
  /** Upper bound of each of the runner's two outside checks, ms (default 90 s; each request inside is bounded by 15 s). */
  outsideTimeoutMs?: number;
}

export interface CheckReport {
  stack: string;
  ready: boolean;
  hosts: { host: string; roles: string[]; ready: boolean; error: string | null; checks: CheckResult[]; problems: string[]; facts: HostVerdict["facts"] | null }[];
  notes: string[];
}

/**
 * The stack's public config (its stack file; a run stack's owner's), the hosts' connections (outputs, or key
 * files) and the runner's proxy and registry environment (the output runnerPullEnv, when the outputs have it).
 */
async function resolveStack(stack: string, root: string, env: Record<string, string>): Promise<CheckTarget> {
  const { checkStackFile, readStackFile } = await import("../components/config/stack-file");
  const file = path.join(root, `Pulumi.${stack}.yaml`);
  const check = checkStackFile(file);
  if (!check.config) throw new Error(`Pulumi.${stack}.yaml does not validate (reprobench config validate ${file})`);
  const raw = readStackFile(file);
  const { stackAccess } = await import("./stack-access");
  const { readStackOutputs } = await import("./pulumi-stack");
  // The outputs stackAccess reads (the stack's, a run stack's owner's), kept for runnerPullEnv: read once.
  const outputs: Record<string, unknown>[] = [];
  const readOutputs = async (s: string) => {
    const o = await readStackOutputs(root, s, env);
    outputs.push(o);
    return o;
  };
  const access = await stackAccess(stack, { root, env, readOutputs });
  const pullEnv = outputs.map((o) => o.runnerPullEnv).find((v) => v !== undefined);
  return { config: check.config, connections: access.connections, notes: access.notes, pullEnv, ownDataset: raw.cluster !== undefined && raw.dataset !== undefined };
}

/** The runner's rows: proxy, dataset, registry (components/preflight/runner.ts), from two short scripts. */
export async function outsideChecks(
  target: CheckTarget,
  o: { stack: string; root: string; run: (c: HostConnection, script: string, env: Record<string, string>, secret: string[]) => Promise<string> },
): Promise<{ runner: string; checks: CheckResult[]; error: string | null }> {
  const r = await import("../components/preflight/runner");
  const { readLocalFiles } = await import("../components/config/loaded");
  const { hostScript, scriptWithEnv } = await import("../components/host-script");
  const { secretMasker } = await import("../components/transport");
  const { TASK_IMAGES_TIME_BUDGET_SECONDS } = await import("../components/task-images");
  const { registryOf } = await import("../components/registry-access");
  const { config } = target;
  const plan = r.runnerCheckPlan(config, { stack: o.stack, ownDataset: target.ownDataset });
  const secrets =
    r.runnerSecretsFromOutputs(target.pullEnv, config, o.stack) ??
    r.runnerSecretsFromStackFile(config, readLocalFiles(config, o.root), o.stack);
  const mask = secretMasker(secrets.values);
  const c = target.connections.get(plan.runner);
  const checks: CheckResult[] = [];
  try {
    if (!c) throw new Error(`no SSH connection for host '${plan.runner}'`);
    const proxyEnv = secrets.proxyEnv ?? {};
    const secretNames = [...Object.keys(proxyEnv), ...Object.keys(secrets.registryEnv)];
    // A project directory's tasks are read here, where `up` uploads them from.
    let local: { exists: boolean; taskTomls: number; path: string } | undefined;
    let localTomls: Record<string, string> | null = null;
    if (plan.dataset?.kind === "directory") {
      const dir = path.resolve(o.root, plan.dataset.repo, plan.dataset.tasksSubdir);
      localTomls = localTaskTomls(dir);
      local = { exists: localTomls !== null, taskTomls: Object.keys(localTomls ?? {}).length, path: dir };
    }
    // Nothing leaves the runner while its proxy URL is unknown here: the answers would not be the run's.
    const blind = plan.proxy && secrets.proxyUnknown !== null;
    let facts: RunnerFacts = { probes: [], dataset: null, taskTomls: null };
    if (!blind && (plan.proxy || plan.dataset?.kind === "git")) {
      const registries = [...new Set([...plan.registries, ...(localTomls ? r.imageNeed(plan, localTomls)?.images ?? [] : []).map(registryOf)])].sort();
      const env = { ...r.runnerScriptEnv(plan, hostScript("harbor-dataset-check"), registries), ...proxyEnv };
      facts = r.parseRunnerFacts(await o.run(c, scriptWithEnv(r.RUNNER_CHECK_SCRIPTS, {}), env, secretNames));
    }
    checks.push(r.judgeProxy(plan, secrets, facts.probes));
    checks.push(blind && plan.dataset?.kind === "git" ? skippedRow("dataset") : r.judgeDataset(plan, facts.dataset, local));
    const need = r.imageNeed(plan, localTomls ?? facts.taskTomls);
    let registryFacts: RegistryFacts | null = null;
    if (need !== null && !blind) {
      const env = { ...r.registryScriptEnv(plan, need), ...proxyEnv, ...secrets.registryEnv };
      registryFacts = r.parseRegistryFacts(await o.run(c, scriptWithEnv(r.REGISTRY_CHECK_SCRIPTS, {}), env, secretNames));
    }
    checks.push(blind && need !== null ? skippedRow("registry") : r.judgeRegistry(plan, secrets, need, registryFacts, TASK_IMAGES_TIME_BUDGET_SECONDS));
    return { runner: plan.runner, checks: r.maskAll(checks, mask.all), error: null };
  } catch (err) {
    return { runner: plan.runner, checks: r.maskAll(checks, mask.all), error: mask.all((err as Error).message) };
  }
}

/** A row not checked because the runner's proxy URL is not known here (the proxy row says why). */
const skippedRow = (check: string): CheckResult => ({ check, status: "skip", detail: "not checked: the runner's proxy URL is not known here (see proxy)", problems: [], notes: [] });

/** "<task>/task.toml" → text for the task directories under `dir`; null when `dir` is no directory. */
export function localTaskTomls(dir: string): Record<string, string> | null {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) return null;
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const out: Record<string, string> = {};
  for (const name of names.sort()) {
    const file = path.join(dir, name, "task.toml");
    if (existsSync(file)) out[`${name}/task.toml`] = readFileSync(file, "utf8");
  }
  return out;
}

/** Every host's verdict (in parallel, one SSH session each; a host that cannot be read fails its row). */
export async function collectCheck(o: CheckOptions): Promise<CheckReport> {
  const root = o.root ?? path.resolve(__dirname, "..");
  const target = await (o.resolve ?? ((s) => resolveStack(s, root, o.env ?? {})))(o.stack);
  const { config, connections, notes } = target;
  const { hostPlan, judgeHost, preflightEnv, PREFLIGHT_SCRIPTS } = await import("../components/preflight/plan");
  const { parseHostReport } = await import("../components/preflight/facts");
  const { problemLine } = await import("../components/preflight/verdict");
  const { scriptWithEnv } = await import("../components/host-script");
  const remote = (timeoutMs: number) => async (c: HostConnection, script: string, env: Record<string, string>, secret: string[] = []) =>
    (await import("./stack-access")).runRemoteScript(c, script, env, { timeoutMs, secret });
  const run = o.runScript ?? remote(o.timeoutMs ?? 300_000);
  const runOutside = o.runScript ? (c: HostConnection, script: string, env: Record<string, string>) => o.runScript!(c, script, env) : remote(o.outsideTimeoutMs ?? 90_000);
  const plans: HostPlan[] = config.hosts.map((h) => hostPlan(config, h.name));
  // The runner's outside checks run beside the hosts' preflights (their own SSH sessions).
  const outside = outsideChecks(target, { stack: o.stack, root, run: runOutside });
  const hosts = await Promise.all(
    plans.map(async (plan) => {
      try {
        const c = connections.get(plan.host);
        if (!c) throw new Error(`no SSH connection for host '${plan.host}'`);
        // The script text with its inputs on stdin: nothing of it on a command line.
        const stdout = await run(c, scriptWithEnv(PREFLIGHT_SCRIPTS, {}), preflightEnv(plan, { full: true }));
        const v = judgeHost(plan, parseHostReport(stdout, plan.host));
        return { host: plan.host, roles: plan.roles, ready: v.ready, error: null as string | null, checks: v.checks, problems: v.problems.map(problemLine), facts: v.facts };
      } catch (err) {
        const message = (err as Error).message;
        return { host: plan.host, roles: plan.roles, ready: false, error: message as string | null, checks: [] as CheckResult[], problems: [`${plan.host}: ${message}`], facts: null };
      }
    }),
  );
  const extra = await outside;
  const runner = hosts.find((h) => h.host === extra.runner);
  if (runner) {
    const rows: CheckResult[] = [...extra.checks];
    // A runner that cannot be reached is named once, by its preflight.
    if (extra.error !== null && runner.error === null) {
      const problem: Problem = { host: runner.host, subject: "proxy, dataset, registry", message: `cannot be checked: ${extra.error}`, fix: "reach the runner over SSH, then check again" };
      rows.push({ check: "outside", status: "fail", detail: `cannot be checked: ${extra.error}`, problems: [problem], notes: [] });
    }
    if (runner.error === null || extra.error === null) {
      runner.checks = [...runner.checks, ...rows];
      runner.problems = [...runner.problems, ...rows.flatMap((c) => c.problems.map(problemLine))];
      runner.ready = runner.ready && rows.every((c) => c.status !== "fail");
    }
  }
  return { stack: o.stack, ready: hosts.every((h) => h.ready), hosts, notes };
}

const MARK: Record<CheckResult["status"], string> = { ok: "ok", fail: "FAIL", warn: "warn", skip: "-" };

/** The report as text: a table per host (check, status, what was found), then each problem on its own line. */
export function renderCheck(r: CheckReport): string {
  const out: string[] = [];
  for (const h of r.hosts) {
    out.push(`${h.host} (${h.roles.join(", ")}): ${h.ready ? "ready" : "NOT READY"}`);
    if (h.error) out.push(`  cannot be checked: ${h.error}`);
    const width = Math.max(5, ...h.checks.map((c) => c.check.length));
    for (const c of h.checks) {
      out.push(`  ${c.check.padEnd(width)}  ${MARK[c.status].padEnd(4)}  ${c.detail}`);
      for (const n of c.notes) out.push(`  ${"".padEnd(width)}        note: ${n}`);
    }
    for (const p of h.error ? [] : h.problems) out.push(`  ✗ ${p}`);
    out.push("");
  }
  for (const n of r.notes) out.push(`note: ${n}`);
  out.push(r.ready ? `stack ${r.stack}: every host is ready` : `stack ${r.stack}: ${r.hosts.filter((h) => !h.ready).length} of ${r.hosts.length} hosts not ready`);
  return `${out.join("\n")}\n`;
}

/** `reprobench check --stack S [--json]`: 0 when every host is ready, 1 otherwise. */
export async function runCheck(o: CheckOptions): Promise<number> {
  const write = o.write ?? ((t: string) => void process.stdout.write(t));
  const report = await collectCheck(o);
  write(o.json ? `${JSON.stringify(report, null, 2)}\n` : renderCheck(report));
  return report.ready ? 0 : 1;
}

// `reprobench check --stack S`: the preflight of every host of a stack, as `sky check` does — the same host
// scripts (components/scripts/preflight-weights.sh + preflight-host.sh) and the same judging
// (components/preflight/plan.ts judgeHost) as the WorkerPreflight component that `up` runs before a model
// server starts. Changes nothing on any host. A table per host; exit 0 only when every host is ready.
import * as path from "node:path";
import type { ReprobenchConfig } from "../components/config/schema";
import type { HostConnection } from "../components/transport";
import type { HostPlan, HostVerdict } from "../components/preflight/plan";
import type { CheckResult } from "../components/preflight/verdict";

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
  resolve?: (stack: string) => Promise<{ config: ReprobenchConfig; connections: Map<string, HostConnection>; notes: string[] }>;
  /** Injected in tests: runs a script on a host, resolving to its stdout. */
  runScript?: (c: HostConnection, script: string, env: Record<string, string>) => Promise<string>;
  /** Upper bound per host, ms (default 300 s: two container runs and the headers). */
  timeoutMs?: number;
}

export interface CheckReport {
  stack: string;
  ready: boolean;
  hosts: { host: string; roles: string[]; ready: boolean; error: string | null; checks: CheckResult[]; problems: string[]; facts: HostVerdict["facts"] | null }[];
  notes: string[];
}

/** The stack's public config (its stack file; a run stack's owner's) and the hosts' connections (outputs, or key files). */
async function resolveStack(stack: string, root: string, env: Record<string, string>): Promise<{ config: ReprobenchConfig; connections: Map<string, HostConnection>; notes: string[] }> {
  const { checkStackFile } = await import("../components/config/stack-file");
  const file = path.join(root, `Pulumi.${stack}.yaml`);
  const check = checkStackFile(file);
  if (!check.config) throw new Error(`Pulumi.${stack}.yaml does not validate (reprobench config validate ${file})`);
  const { stackAccess } = await import("./stack-access");
  const access = await stackAccess(stack, { root, env });
  return { config: check.config, connections: access.connections, notes: access.notes };
}

/** Every host's verdict (in parallel, one SSH session each; a host that cannot be read fails its row). */
export async function collectCheck(o: CheckOptions): Promise<CheckReport> {
  const root = o.root ?? path.resolve(__dirname, "..");
  const { config, connections, notes } = await (o.resolve ?? ((s) => resolveStack(s, root, o.env ?? {})))(o.stack);
  const { hostPlan, judgeHost, preflightEnv, PREFLIGHT_SCRIPTS } = await import("../components/preflight/plan");
  const { parseHostReport } = await import("../components/preflight/facts");
  const { problemLine } = await import("../components/preflight/verdict");
  const { scriptWithEnv } = await import("../components/host-script");
  const run = o.runScript ?? (async (c: HostConnection, script: string, env: Record<string, string>) => (await import("./stack-access")).runRemoteScript(c, script, env, { timeoutMs: o.timeoutMs ?? 300_000 }));
  const plans: HostPlan[] = config.hosts.map((h) => hostPlan(config, h.name));
  const hosts = await Promise.all(
    plans.map(async (plan) => {
      try {
        const c = connections.get(plan.host);
        if (!c) throw new Error(`no SSH connection for host '${plan.host}'`);
        // The script text with its inputs on stdin: nothing of it on a command line.
        const stdout = await run(c, scriptWithEnv(PREFLIGHT_SCRIPTS, {}), preflightEnv(plan, { full: true }));
        const v = judgeHost(plan, parseHostReport(stdout, plan.host));
        return { host: plan.host, roles: plan.roles, ready: v.ready, error: null, checks: v.checks, problems: v.problems.map(problemLine), facts: v.facts };
      } catch (err) {
        const message = (err as Error).message;
        return { host: plan.host, roles: plan.roles, ready: false, error: message, checks: [], problems: [`${plan.host}: ${message}`], facts: null };
      }
    }),
  );
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

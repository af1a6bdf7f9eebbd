// What an `up` or `down` would stop — the benchmark job, model servers — from the steps of its preview (or,
// for `down`, from the state: a destroy deletes everything), and whether to go on: ask on a terminal,
// proceed with --yes, refuse without one when nobody can answer. Pure but for `ask`.
import { createInterface } from "node:readline/promises";
import { isHostScriptType } from "../components/resource-types";

/** A step of `pulumi preview --json` (`steps[]`) or an engine event's step metadata (`resourcePreEvent.metadata`). */
export interface PreviewStep {
  op: string;
  urn: string;
  /** The resource type; taken from the URN when absent. */
  type?: string;
}

export interface Stopping {
  /** Job resources that would be deleted or replaced (the job is stopped, SIGTERM, and a new one may start). */
  jobs: StopItem[];
  /** Model server (and router) containers that would be deleted or replaced. */
  servers: StopItem[];
}

export interface StopItem {
  urn: string;
  /** The resource's name (e.g. run-harbor, worker-a-sglang-container). */
  name: string;
  op: string;
}

/** Steps that take the resource away: it is deleted, or replaced by a new one. */
export const STOPPING_OPS: ReadonlySet<string> = new Set(["delete", "replace", "create-replacement", "delete-replaced", "discard", "discard-replaced"]);

/** The job's CheckedCommand is `${run}-harbor` under the BenchmarkRun (components/benchmark-run.ts). */
const JOB_SUFFIX = "-harbor";
/** Its name is the JobName `${run}-job-name`: a new name means a new job. */
const JOB_NAME_SUFFIX = "-job-name";
/** Steps that give a resource new outputs (a JobName's: a new job name). */
const CHANGING_OPS: ReadonlySet<string> = new Set(["update", ...STOPPING_OPS]);
const CONTAINER = "docker:index/container:Container";
/** The components whose container is a model server (SglangWorker: ModelServer's former type). */
const SERVER_COMPONENTS = ["reprobench:cluster:ModelServer", "reprobench:cluster:SglangWorker", "reprobench:cluster:SglangRouter"];

/** urn:pulumi:STACK::PROJECT::[parent$…$]TYPE::NAME → the type chain and the name. */
export function parseUrn(urn: string): { types: string[]; name: string } {
  const parts = urn.split("::");
  const name = parts.length >= 4 ? parts.slice(3).join("::") : "";
  const types = parts.length >= 3 ? parts[2].split("$") : [];
  return { types, name };
}

/** The jobs and model servers the steps would stop (each resource once, in the steps' order). */
export function whatWouldStop(steps: readonly PreviewStep[]): Stopping {
  const out: Stopping = { jobs: [], servers: [] };
  const seen = new Set<string>();
  // An update of the job resource runs the launch again (components/scripts/harbor-launch.sh): under the
  // same job name it leaves a running job alone, under a new one it stops it and starts the new job. The
  // name changes when its JobName does, in the same run.
  const renamed = new Set(
    steps.filter((s) => CHANGING_OPS.has(s.op) && parseUrn(s.urn).name.endsWith(JOB_NAME_SUFFIX)).map((s) => parseUrn(s.urn).name.slice(0, -JOB_NAME_SUFFIX.length)),
  );
  for (const step of steps) {
    if (seen.has(step.urn)) continue;
    const { types, name } = parseUrn(step.urn);
    const type = step.type ?? types[types.length - 1];
    const item = { urn: step.urn, name, op: step.op };
    const relaunch = step.op === "update" && isHostScriptType(type) && name.endsWith(JOB_SUFFIX) && renamed.has(name.slice(0, -JOB_SUFFIX.length));
    if (!STOPPING_OPS.has(step.op) && !relaunch) continue;
    if (isHostScriptType(type) && name.endsWith(JOB_SUFFIX)) {
      out.jobs.push(item);
      seen.add(step.urn);
    } else if (type === CONTAINER && types.slice(0, -1).some((t) => SERVER_COMPONENTS.includes(t))) {
      out.servers.push(item);
      seen.add(step.urn);
    }
  }
  return out;
}

/** A `down`'s steps: every resource in the state is deleted. */
export function destroySteps(resources: readonly { urn?: string; type?: string }[]): PreviewStep[] {
  return resources.filter((r): r is { urn: string; type?: string } => typeof r.urn === "string").map((r) => ({ op: "delete", urn: r.urn, type: r.type }));
}

export const nothingStops = (s: Stopping): boolean => s.jobs.length === 0 && s.servers.length === 0;

const verb = (op: string) => (op === "delete" || op === "discard" ? "deleted" : op === "update" ? "updated under a new job name" : "replaced");

/** What the operation would stop, for the user. */
export function describeStopping(s: Stopping, o: { op: "up" | "down"; stack: string; jobName?: string }): string {
  const lines = [`reprobench ${o.op} on stack ${o.stack} would stop:`];
  for (const j of s.jobs) lines.push(`  job ${o.jobName ?? j.name}: its resource ${j.name} is ${verb(j.op)} — a running job is stopped (SIGTERM; its trials running now end as cancelled)${j.op === "delete" ? "" : " and a new job starts"}`);
  for (const srv of s.servers) lines.push(`  model server ${srv.name.replace(/-container$/, "")}: its container is ${verb(srv.op)} (requests in flight are cut off)`);
  return lines.join("\n");
}

export type Decision = "proceed" | "ask" | "refuse";

/** Go on, ask, or refuse: with --yes go on; with nobody to answer (stdin not a terminal) refuse. */
export function decide(s: Stopping, o: { yes: boolean; interactive: boolean }): Decision {
  if (nothingStops(s) || o.yes) return "proceed";
  return o.interactive ? "ask" : "refuse";
}

/** The refusal when stdin is not a terminal. */
export function refusal(op: "up" | "down", stack: string): string {
  return `reprobench ${op}: refusing: this would stop what is listed above, and stdin is not a terminal to ask; run again with --yes (-y) to proceed (reprobench ${op} --stack ${stack} --yes)`;
}

/** Asks on the terminal (stderr); true only for y/yes. */
export async function ask(question: string, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr): Promise<boolean> {
  const rl = createInterface({ input, output });
  try {
    return /^(y|yes)$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

// What a run cost: wall time, trial time and its phases, tokens by outcome, and GPU-hours of the model
// servers over the run's span. Pure: job records (every trial of every pass, superseded ones included —
// they ran, so they cost) and the run manifest in, a RunCost out.
import { outcomeOf, type JobInput, type TrialInput } from "./audit";
import { duration, int } from "./format";
import { asArray, asRecord, parseTime } from "./harbor";
import type { Outcome, Tokens } from "./schema";

export interface GpuHost {
  name: string;
  gpus: number;
}

export interface RunCost {
  trials: number;
  /** First trial start to last trial end over all passes, seconds; null without timestamps. */
  wallSec: number | null;
  /** Σ trial durations (start to end of each trial), seconds. */
  trialSecSum: number;
  /** Σ per phase; `other` is what no phase covers (teardown, waits between phases). */
  phaseSec: { environmentSetup: number; agentSetup: number; agentExecution: number; verifier: number; other: number };
  /** Tokens per outcome of the trial (passed: reward ≥ 1, failed: reward < 1, errored: no reward), and in total. */
  tokens: Record<Outcome | "total", Omit<Tokens, "costUsd">>;
  gpu: {
    /** The model-server hosts and their GPUs, from the manifest; null when unknown. */
    hosts: GpuHost[] | null;
    /** Σ hosts' GPUs × wall hours; null when the hosts or the span are unknown. */
    gpuHours: number | null;
    /** Why gpuHours is what it is (unknown, no GPUs, …); null when it is a plain product. */
    note: string | null;
  };
  /** Tokens (input + output; cache is part of input) per GPU-hour; null when GPU-hours are unknown or 0. */
  tokensPerGpuHour: { input: number; output: number } | null;
}

const zeroTokens = (): Omit<Tokens, "costUsd"> => ({ input: 0, cache: 0, output: 0 });

/**
 * The GPUs the run's model servers held, from the run manifest's public stack config (`config.hosts`:
 * name, roles, gpus). Worker hosts only: the router and the runner hold no model. Null when the
 * manifest names no hosts.
 */
export function manifestGpuHosts(manifest: Record<string, unknown> | null): GpuHost[] | null {
  if (!manifest) return null;
  const hosts = asArray(asRecord(manifest.config).hosts).map(asRecord);
  if (hosts.length === 0) return null;
  const workers = hosts.filter((h) => {
    const roles = asArray(h.roles);
    return roles.length === 0 || roles.includes("worker");
  });
  return workers.map((h) => ({ name: typeof h.name === "string" ? h.name : "?", gpus: typeof h.gpus === "number" && h.gpus >= 0 ? h.gpus : 0 }));
}

/** The cost of the trials of these jobs (all passes of one run). */
export function runCost(jobs: readonly JobInput[], manifest: Record<string, unknown> | null): RunCost {
  const trials: TrialInput[] = jobs.flatMap((j) => j.trials);
  const starts = trials.map((t) => parseTime(t.startedAt)).filter((x): x is number => x !== null);
  const ends = trials.map((t) => parseTime(t.finishedAt)).filter((x): x is number => x !== null);
  const wallSec = starts.length && ends.length ? Math.max(0, (Math.max(...ends) - Math.min(...starts)) / 1000) : null;

  const phaseSec = { environmentSetup: 0, agentSetup: 0, agentExecution: 0, verifier: 0, other: 0 };
  let trialSecSum = 0;
  const tokens: RunCost["tokens"] = { passed: zeroTokens(), failed: zeroTokens(), errored: zeroTokens(), total: zeroTokens() };
  for (const t of trials) {
    const d = t.durationSec ?? 0;
    trialSecSum += d;
    const p = t.phases;
    const inPhases = (p.environmentSetup ?? 0) + (p.agentSetup ?? 0) + (p.agentExecution ?? 0) + (p.verifier ?? 0);
    phaseSec.environmentSetup += p.environmentSetup ?? 0;
    phaseSec.agentSetup += p.agentSetup ?? 0;
    phaseSec.agentExecution += p.agentExecution ?? 0;
    phaseSec.verifier += p.verifier ?? 0;
    phaseSec.other += Math.max(0, d - inPhases);
    for (const bucket of [tokens[outcomeOf(t.reward)], tokens.total]) {
      bucket.input += t.tokens.input;
      bucket.cache += t.tokens.cache;
      bucket.output += t.tokens.output;
    }
  }

  const hosts = manifestGpuHosts(manifest);
  const gpus = hosts ? hosts.reduce((s, h) => s + h.gpus, 0) : null;
  let gpuHours: number | null = null;
  let note: string | null = null;
  if (hosts === null) note = manifest ? "unknown: the run manifest names no hosts" : "unknown: no run manifest (it names the hosts and their GPUs)";
  else if (wallSec === null) note = "unknown: no trial timestamps";
  else {
    gpuHours = (gpus! * wallSec) / 3600;
    if (gpus === 0) note = "the model-server hosts have no GPUs (a simulated cluster)";
  }
  const tokensPerGpuHour = gpuHours ? { input: tokens.total.input / gpuHours, output: tokens.total.output / gpuHours } : null;
  return { trials: trials.length, wallSec, trialSecSum, phaseSec, tokens, gpu: { hosts, gpuHours, note }, tokensPerGpuHour };
}

/** "2 hosts × 8 GPUs" style summary of the GPU hosts. */
export function gpuHostsLine(hosts: GpuHost[] | null): string {
  if (!hosts) return "unknown";
  const total = hosts.reduce((s, h) => s + h.gpus, 0);
  return `${hosts.length} host(s), ${total} GPU(s) (${hosts.map((h) => `${h.name}: ${h.gpus}`).join(", ")})`;
}

const hours = (sec: number): string => `${(sec / 3600).toFixed(2)} h`;

/** The cost as labelled rows (what, value) for a table; report and compare share them. */
export function costRows(c: RunCost): { what: string; value: string }[] {
  const p = c.phaseSec;
  const tok = (t: Omit<Tokens, "costUsd">) => `${int(t.input)} in (${int(t.cache)} cached) / ${int(t.output)} out`;
  const share = (x: number) => (c.trialSecSum > 0 ? ` (${Math.round((100 * x) / c.trialSecSum)}%)` : "");
  return [
    { what: "trials run (all passes)", value: int(c.trials) },
    { what: "wall time (first trial start → last trial end)", value: c.wallSec === null ? "n/a" : `${duration(c.wallSec)} (${hours(c.wallSec)})` },
    { what: "trial time, summed", value: `${duration(c.trialSecSum)} (${hours(c.trialSecSum)})` },
    { what: "· environment + agent setup", value: `${duration(p.environmentSetup + p.agentSetup)}${share(p.environmentSetup + p.agentSetup)}` },
    { what: "· agent execution", value: `${duration(p.agentExecution)}${share(p.agentExecution)}` },
    { what: "· verifier", value: `${duration(p.verifier)}${share(p.verifier)}` },
    { what: "· other (teardown, between phases)", value: `${duration(p.other)}${share(p.other)}` },
    { what: "tokens, passed trials", value: tok(c.tokens.passed) },
    { what: "tokens, failed trials", value: tok(c.tokens.failed) },
    { what: "tokens, errored trials", value: tok(c.tokens.errored) },
    { what: "tokens, all trials", value: tok(c.tokens.total) },
    { what: "model-server GPUs", value: gpuHostsLine(c.gpu.hosts) },
    { what: "GPU-hours (GPUs × wall hours)", value: c.gpu.gpuHours === null ? c.gpu.note ?? "unknown" : `${c.gpu.gpuHours.toFixed(2)}${c.gpu.note ? ` (${c.gpu.note})` : ""}` },
    { what: "tokens per GPU-hour", value: c.tokensPerGpuHour ? `${int(Math.round(c.tokensPerGpuHour.input))} in / ${int(Math.round(c.tokensPerGpuHour.output))} out` : "n/a" },
  ];
}

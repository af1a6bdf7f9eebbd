// A deterministic Terminal-Bench-shaped "rehearsal" dataset for the simulated cluster: seed 000's full run
// (89 tasks, 25 concurrent trials) in miniature. Every task is the same small job — sum the integers of
// /app/input.txt into /app/answer.txt — and carries a marker line naming its behaviour; the scripted model
// (sim/scenarios/sim-default.json, rules `terminus-rehearsal-<behaviour>`) acts on that marker, so one
// generic rule per behaviour reproduces seed 000's outcomes: timeouts, a killed tmux, slow and thinking
// replies, and verifiers that fetch a dependency through the proxy. Pure: no I/O here (dataset.ts writes
// the files, prepare.ts publishes them).
import { computeScore, outcomeOf } from "../../results/audit";
import { xorshiftUniform } from "../../results/random";
import type { Score } from "../../results/schema";
import { classifyTrial, isScored, type Category } from "../../results/taxonomy";
import { stringify as toYaml } from "yaml";
import { INDEX_HOSTNAME, REHEARSAL_DOWNLOADS_DIR } from "../outside";

export type RehearsalBehaviour = "solves" | "fails" | "agent-timeout" | "agent-timeout-solved" | "verifier-timeout" | "kills-tmux" | "overthinks" | "downloads";

/** Every behaviour, in the order the mix, the scenario rules and the reports list them. */
export const REHEARSAL_BEHAVIOURS: readonly RehearsalBehaviour[] = ["solves", "fails", "agent-timeout", "agent-timeout-solved", "verifier-timeout", "kills-tmux", "overthinks", "downloads"];

/**
 * Seed 000's 89-task mix. 8 + 4 trials end in AgentTimeoutError (seed 000 had 13: its 13th,
 * make-doom-for-mips, timed out without a reward after an infra failure, which no behaviour here models),
 * 2 in VerifierTimeoutError, 1 in RuntimeError (the agent ran `tmux kill-server`).
 */
export const SEED000_MIX: Readonly<Record<RehearsalBehaviour, number>> = {
  solves: 55,
  fails: 14,
  "agent-timeout": 8,
  "agent-timeout-solved": 4,
  "verifier-timeout": 2,
  "kills-tmux": 1,
  overthinks: 2,
  downloads: 3,
};
export const SEED000_TASK_COUNT = 89;
export const MAX_REHEARSAL_TASKS = 400;

/**
 * One factor for every Terminal-Bench 2.1-like timeout: real seconds × TIMEOUT_SCALE = the task.toml
 * value, so the most common agent timeout (900 s) becomes 15 s and a trial that times out ends in
 * minutes, not hours. A rehearsal runs with seed 000's multipliers (SEED000_MULTIPLIERS): agent timeout × 6
 * (the 15 s task times out after 90 s), agent setup × 5, verifier × 1.
 */
export const TIMEOUT_SCALE = 1 / 60;

/** The multipliers of seed 000's final run (Pulumi.prod.yaml); the verifier's is Harbor's default. */
export const SEED000_MULTIPLIERS = { agentTimeout: 6, agentSetupTimeout: 5, verifierTimeout: 1 } as const;

/**
 * Terminal-Bench 2.1's agent timeouts (the real histogram of its 89 task.toml files, in seconds): more
 * than half at 900 s, a tail to 12000 s.
 */
export const AGENT_TIMEOUT_TIERS: readonly { realSec: number; of89: number }[] = [
  { realSec: 600, of89: 1 },
  { realSec: 750, of89: 1 },
  { realSec: 900, of89: 48 },
  { realSec: 1200, of89: 5 },
  { realSec: 1800, of89: 17 },
  { realSec: 2400, of89: 2 },
  { realSec: 3600, of89: 13 },
  { realSec: 7200, of89: 1 },
  { realSec: 12000, of89: 1 },
];

/**
 * Terminal-Bench 2.1's verifier timeouts equal the task's agent timeout except in four tasks (named for
 * the record): each pair is an agent timeout and the verifier timeout one task of that tier gets instead.
 */
export const VERIFIER_TIMEOUT_EXCEPTIONS: readonly { like: string; agentSec: number; verifierSec: number }[] = [
  { like: "caffe-cifar-10", agentSec: 3600, verifierSec: 1200 },
  { like: "crack-7z-hash", agentSec: 1800, verifierSec: 900 },
  { like: "overfull-hbox", agentSec: 750, verifierSec: 360 },
  { like: "query-optimize", agentSec: 900, verifierSec: 1800 },
];

/** The agent timeout the timing-out behaviours sit on (Terminal-Bench 2.1's most common one). */
export const TIMING_OUT_TIER_SEC = 900;

/**
 * A verifier-timeout task's test.sh sleeps this many times its verifier timeout: longer than the budget
 * even under a verifier multiplier up to this factor; Harbor stops the container after the timeout.
 */
export const VERIFIER_SLEEP_FACTOR = 10;
/** The agent-timeout behaviours wait with `sleep N` of this many seconds per turn (and that duration). */
export const WAIT_COMMAND_SECONDS = 5;
/** The overthinking behaviour: every reply takes this long and thinks this many tokens. */
/**
 * The overthinking behaviour sits on the 1800 s tier (30 s scaled) and writes its answer with its second
 * reply, of three: at ×3 (90 s) the budget ends before that (2 × 50 s), at ×6 (180 s) all three fit
 * (150 s) — the timeout seed 000 saw at 3× and cured with 6× (issue 33's 3× vs 6× study).
 */
export const OVERTHINK_TIER_SEC = 1800;
export const OVERTHINK_DELAY_SECONDS = 50;
export const OVERTHINK_REASONING_TOKENS = 6000;

export type ExpectedException = null | "AgentTimeoutError" | "VerifierTimeoutError" | "RuntimeError";

/** A manual verdict as seed 000's corrected audit made it (an entry of an overrides file). */
export interface RehearsalVerdict {
  verdict: "passed" | "failed";
  reason: string;
  /** Trial-relative file the verdict rests on (overrides need evidence). */
  evidence: string;
}

export interface RehearsalTask {
  /** Directory name, and the task name Harbor reports (task.toml has no [task] section). */
  name: string;
  behaviour: RehearsalBehaviour;
  /** task.toml values (already scaled). */
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
  /** The Terminal-Bench 2.1-like values they were scaled from. */
  unscaled: { agentTimeoutSec: number; verifierTimeoutSec: number };
  cpus: 1;
  memory_mb: 512;
  /** instruction.md; ends with the behaviour's marker line. */
  instruction: string;
  /** The integers of /app/input.txt (all non-zero, so dropping one always changes the sum). */
  input: number[];
  /** Their sum: what tests/test.sh expects in /app/answer.txt. */
  answer: number;
  /** Only the downloads behaviour: what its verifier fetches through the proxy first. */
  downloadUrl?: string;
  /** Outcome when no injected fault hits the trial. */
  expected: { reward: 1 | 0 | null; exception: ExpectedException };
  /** The manual verdict seed 000's corrected audit made for such a trial. */
  verdict?: RehearsalVerdict;
  /** Downloads only: the verdict for a trial whose dependency download a proxy fault broke (reward 0). */
  infraVerdict?: RehearsalVerdict;
}

/** The line every rehearsal instruction ends with; the scenario's rules match it in the first prompt. */
export function rehearsalMarker(behaviour: RehearsalBehaviour): string {
  // The trailing period keeps "agent-timeout." from matching "agent-timeout-solved.".
  return `Rehearsal script: ${behaviour}.`;
}

/** Where a downloads task's verifier fetches its dependency (the sim's package index serves it). */
export function rehearsalDownloadUrl(task: string): string {
  return `http://${INDEX_HOSTNAME}/${REHEARSAL_DOWNLOADS_DIR}/${task}.txt`;
}

/** The text of that download; the verifier checks it arrived whole. */
export function rehearsalDownloadText(task: string): string {
  return `rehearsal dependency for ${task}\n`;
}

// ---------------------------------------------------------------------------------------------------
// Determinism: a small seeded generator (xorshift32), Fisher-Yates, largest-remainder apportionment.

/** Uniform floats in [0, 1) from a 32-bit seed; the same seed gives the same sequence everywhere. */
export function seededRandom(seed: number): () => number {
  // Mixing the seed first keeps seeds 0, 1, 2… from starting in nearly the same state.
  return xorshiftUniform(Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) ^ 0x9e3779b9);
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Splits `total` over `weights` proportionally (largest remainder; ties to the earlier key). */
export function apportion<K extends string | number>(total: number, weights: readonly (readonly [K, number])[]): Map<K, number> {
  const sum = weights.reduce((s, [, w]) => s + w, 0);
  const shares = weights.map(([key, w], index) => ({ key, index, exact: (total * w) / sum }));
  const out = new Map<K, number>(shares.map((s) => [s.key, Math.floor(s.exact)]));
  let left = total - [...out.values()].reduce((a, b) => a + b, 0);
  const byRemainder = [...shares].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)) || a.index - b.index);
  for (const s of byRemainder) {
    if (left <= 0) break;
    out.set(s.key, out.get(s.key)! + 1);
    left--;
  }
  return out;
}

/** How many tasks of each behaviour a dataset of `count` gets: seed 000's mix, scaled. */
export function behaviourCounts(count: number): Record<RehearsalBehaviour, number> {
  const counts = apportion(count, REHEARSAL_BEHAVIOURS.map((b) => [b, SEED000_MIX[b]] as const));
  // Every behaviour at least once when there is room: a small rehearsal still exercises each path.
  if (count >= REHEARSAL_BEHAVIOURS.length) {
    for (const b of REHEARSAL_BEHAVIOURS) {
      if (counts.get(b)! > 0) continue;
      const richest = [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
      counts.set(richest, counts.get(richest)! - 1);
      counts.set(b, 1);
    }
  }
  return Object.fromEntries(REHEARSAL_BEHAVIOURS.map((b) => [b, counts.get(b)!])) as Record<RehearsalBehaviour, number>;
}

// Task names in the style of Terminal-Bench directories ("fix-git", "tune-mjcf"): verb-noun pairs.
const VERBS = ["align", "build", "cache", "compile", "count", "decode", "encode", "extract", "filter", "merge", "parse", "patch", "query", "rank", "recover", "render", "schedule", "solve", "tune", "verify"];
const NOUNS = ["archive", "bitmap", "cipher", "config", "corpus", "graph", "kernel", "ledger", "lexer", "matrix", "mesh", "parser", "queue", "regex", "schema", "sensor", "shader", "solver", "tensor", "tree"];

/** The i-th name (0 ≤ i < 400): a fixed walk over all verb-noun pairs, so the first N spread over the alphabet. */
export function rehearsalTaskName(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_REHEARSAL_TASKS) throw new Error(`rehearsal task index ${index} out of range 0..${MAX_REHEARSAL_TASKS - 1}`);
  // 157 is coprime with 400, so i ↦ 157·i + 23 (mod 400) visits every pair exactly once.
  const k = (index * 157 + 23) % MAX_REHEARSAL_TASKS;
  return `${VERBS[k % VERBS.length]}-${NOUNS[Math.floor(k / VERBS.length)]}`;
}

/** Agent timeouts (real seconds) for `count` tasks, shortest first. */
function tierValues(count: number, tiers: readonly { realSec: number; of89: number }[]): number[] {
  const counts = apportion(count, tiers.map((t) => [t.realSec, t.of89] as const));
  return tiers.flatMap((t) => Array<number>(counts.get(t.realSec)!).fill(t.realSec));
}

const scaled = (realSec: number) => Math.round(realSec * TIMEOUT_SCALE * 1000) / 1000;

function expectedOutcome(behaviour: RehearsalBehaviour): RehearsalTask["expected"] {
  switch (behaviour) {
    case "fails":
      return { reward: 0, exception: null };
    case "agent-timeout":
      // Harbor still runs the verifier after an agent timeout: it finds no answer.
      return { reward: 0, exception: "AgentTimeoutError" };
    case "agent-timeout-solved":
      return { reward: 1, exception: "AgentTimeoutError" };
    case "verifier-timeout":
      return { reward: null, exception: "VerifierTimeoutError" };
    case "kills-tmux":
      // Terminus-2's next `tmux send-keys` fails; Harbor records the RuntimeError and skips the verifier.
      return { reward: null, exception: "RuntimeError" };
    default:
      return { reward: 1, exception: null };
  }
}

const VERIFIER_TIMEOUT_VERDICTS: readonly RehearsalVerdict[] = [
  {
    verdict: "passed",
    reason: "the answer is right (like seed 000's pytorch-model-recovery: the tests pass, but the verifier ran out of its budget)",
    evidence: "verifier/test-stdout.txt",
  },
  {
    verdict: "failed",
    reason: "judged failed (like seed 000's torch-tensor-parallelism: the verifier ran out of its budget and the work does not meet the task)",
    evidence: "agent/trajectory.json",
  },
];

const KILLS_TMUX_VERDICT: RehearsalVerdict = {
  verdict: "failed",
  reason: "the agent ran `tmux kill-server`, which ended its own terminal (RuntimeError); nothing was verified",
  evidence: "agent/trajectory.json",
};

const DOWNLOADS_INFRA_VERDICT: RehearsalVerdict = {
  verdict: "passed",
  reason: "the answer is right; the verifier could not install its dependency because the proxy failed (like seed 000's prove-plus-comm and tune-mjcf)",
  evidence: "verifier/test-stdout.txt",
};

function instructionText(name: string, behaviour: RehearsalBehaviour): string {
  return [
    `Rehearsal task \`${name}\`.`,
    "",
    "The file `/app/input.txt` holds one integer per line (some are negative).",
    "",
    "Write the sum of all of these integers to `/app/answer.txt` as a single decimal integer followed by a",
    "newline. Do not modify `/app/input.txt`.",
    "",
    rehearsalMarker(behaviour),
    "",
  ].join("\n");
}

/**
 * The rehearsal dataset: `count` tasks (default 89, seed 000's mix), deterministic by `seed`. Tasks are
 * listed by name; which name gets which behaviour, timeout and input is shuffled by the seed, with the
 * timeout behaviours on the 900 s agent timeout (each of those trials runs its whole multiplied timeout)
 * except one at twice it, as seed 000's dna-assembly.
 */
export function rehearsalTasks(opts: { count?: number; seed?: number } = {}): RehearsalTask[] {
  const count = opts.count ?? SEED000_TASK_COUNT;
  const seed = opts.seed ?? 0;
  if (!Number.isInteger(count) || count < 1 || count > MAX_REHEARSAL_TASKS) throw new Error(`rehearsal task count: got ${count}; expected an integer from 1 to ${MAX_REHEARSAL_TASKS}`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 31 - 1) throw new Error(`rehearsal seed: got ${seed}; expected an integer from 0 to ${2 ** 31 - 1}`);
  const random = seededRandom(seed);
  const names = Array.from({ length: count }, (_, i) => rehearsalTaskName(i)).sort();
  const counts = behaviourCounts(count);
  const behaviours = shuffled(REHEARSAL_BEHAVIOURS.flatMap((b) => Array<RehearsalBehaviour>(counts[b]).fill(b)), random);

  // Timeout behaviours (agent and verifier) take the most common agent timeout, 900 s (the last
  // agent-timeout one twice it, as seed 000's dna-assembly): every such trial runs its whole multiplied
  // budget, so a long tier would stretch the rehearsal by hours. Every other task draws from what is left.
  const agentPool = tierValues(count, AGENT_TIMEOUT_TIERS);
  const agentTimeouts = new Map<number, number>();
  const take = (want: number) => {
    const at = agentPool.indexOf(want);
    // A small dataset may lack the tier: the nearest shorter one, else the shortest left.
    const fallback = agentPool.reduce((best, v, j) => (v <= want && (best < 0 || v > agentPool[best]) ? j : best), -1);
    return agentPool.splice(at >= 0 ? at : fallback >= 0 ? fallback : 0, 1)[0];
  };
  // The overthinking tasks first, on their tier or the nearest longer one: a shorter budget would end them
  // at ×6 too (its answer would then count, its ground truth not).
  behaviours.forEach((b, i) => {
    if (b !== "overthinks") return;
    const at = agentPool.reduce((best, v, j) => (v >= OVERTHINK_TIER_SEC && (best < 0 || v < agentPool[best]) ? j : best), -1);
    agentTimeouts.set(i, at >= 0 ? agentPool.splice(at, 1)[0] : take(OVERTHINK_TIER_SEC));
  });
  const timingOut = behaviours.flatMap((b, i) => (b === "agent-timeout" || b === "agent-timeout-solved" ? [i] : []));
  timingOut.forEach((taskIndex, n) => agentTimeouts.set(taskIndex, take(n === timingOut.length - 1 && timingOut.length > 1 ? 2 * TIMING_OUT_TIER_SEC : TIMING_OUT_TIER_SEC)));
  behaviours.forEach((b, i) => {
    if (b === "verifier-timeout") agentTimeouts.set(i, take(TIMING_OUT_TIER_SEC));
  });
  const rest = shuffled(agentPool, random);
  behaviours.forEach((_, i) => {
    if (!agentTimeouts.has(i)) agentTimeouts.set(i, rest.pop()!);
  });
  // The verifier's timeout is the agent's, but for the four exceptions: the first task (in the shuffled
  // order) of each exception's agent tier that is not a timeout behaviour gets its verifier timeout.
  const verifierTimeouts = behaviours.map((_, i) => agentTimeouts.get(i)!);
  const special = new Set(behaviours.flatMap((b, i) => (b === "verifier-timeout" || b.startsWith("agent-timeout") ? [i] : [])));
  const order = shuffled(behaviours.map((_, i) => i), random);
  const excepted = new Set<number>();
  for (const e of VERIFIER_TIMEOUT_EXCEPTIONS) {
    const i = order.find((j) => !special.has(j) && !excepted.has(j) && agentTimeouts.get(j) === e.agentSec);
    if (i === undefined) continue;
    excepted.add(i);
    verifierTimeouts[i] = e.verifierSec;
  }

  const inputsSeen = new Set<string>();
  let verifierTimeoutsSoFar = 0;
  return names.map((name, i): RehearsalTask => {
    const behaviour = behaviours[i];
    let input: number[];
    do {
      input = Array.from({ length: 6 + Math.floor(random() * 7) }, () => {
        const magnitude = 1 + Math.floor(random() * 999);
        return random() < 0.3 ? -magnitude : magnitude;
      });
    } while (inputsSeen.has(input.join(",")));
    inputsSeen.add(input.join(","));
    const task: RehearsalTask = {
      name,
      behaviour,
      agentTimeoutSec: scaled(agentTimeouts.get(i)!),
      verifierTimeoutSec: scaled(verifierTimeouts[i]),
      unscaled: { agentTimeoutSec: agentTimeouts.get(i)!, verifierTimeoutSec: verifierTimeouts[i] },
      cpus: 1,
      memory_mb: 512,
      instruction: instructionText(name, behaviour),
      input,
      answer: input.reduce((a, b) => a + b, 0),
      expected: expectedOutcome(behaviour),
    };
    if (behaviour === "downloads") {
      task.downloadUrl = rehearsalDownloadUrl(name);
      task.infraVerdict = DOWNLOADS_INFRA_VERDICT;
    }
    if (behaviour === "kills-tmux") task.verdict = KILLS_TMUX_VERDICT;
    if (behaviour === "verifier-timeout") task.verdict = VERIFIER_TIMEOUT_VERDICTS[verifierTimeoutsSoFar++ % VERIFIER_TIMEOUT_VERDICTS.length];
    return task;
  });
}

// ---------------------------------------------------------------------------------------------------
// What a run of the dataset should report, in the audit's words.

export interface GroundTruthTask {
  task: string;
  behaviour: RehearsalBehaviour;
  reward: 1 | 0 | null;
  exception: ExpectedException;
  /** outcomeOf(reward) of results/audit.ts: passed, failed or errored. */
  outcome: "passed" | "failed" | "errored";
  /** classifyTrial's category without log evidence (null for a clean pass). */
  category: Category | null;
  scored: boolean;
  agentTimeoutSec: number;
  /** agentTimeoutSec × seed 000's agent multiplier: how long a timing-out trial runs. */
  agentBudgetSec: number;
  verifierTimeoutSec: number;
  verdict: RehearsalVerdict | null;
  /** Downloads: the outcome when a proxy fault breaks the verifier's download, and its verdict. */
  underProxyFault: { reward: 0; outcome: "failed"; category: Category | null; verdict: RehearsalVerdict } | null;
}

export interface GroundTruth {
  kind: "reprobench.rehearsal.ground-truth";
  version: 1;
  dataset: string;
  repoUrl: string | null;
  /** The dataset commit (filled by the caller, who made it). */
  commit: string | null;
  seed: number | null;
  taskCount: number;
  timeouts: { scale: number; multipliers: typeof SEED000_MULTIPLIERS };
  behaviours: Record<RehearsalBehaviour, number>;
  tasks: GroundTruthTask[];
  totals: {
    /** audit's scores.raw when no fault hits any trial. */
    raw: Score;
    /** audit's scores.corrected with the manual verdicts of verifier-timeout and kills-tmux applied. */
    corrected: Score;
    /** Trials per exception type (the audit's errors). */
    errors: Record<string, number>;
    taxonomy: { category: Category; count: number }[];
  };
}

/** The run's expected result as a JSON-able object (written to ground-truth.json by prepare.ts). */
export function groundTruth(tasks: readonly RehearsalTask[], meta: { dataset: string; commit?: string | null; repoUrl?: string | null; seed?: number | null }): GroundTruth {
  const rows = tasks.map((t): GroundTruthTask => {
    const { reward, exception } = t.expected;
    const category = classifyTrial(reward, exception, null, []).category;
    return {
      task: t.name,
      behaviour: t.behaviour,
      reward,
      exception,
      outcome: outcomeOf(reward),
      category,
      scored: isScored(reward, category),
      agentTimeoutSec: t.agentTimeoutSec,
      agentBudgetSec: t.agentTimeoutSec * SEED000_MULTIPLIERS.agentTimeout,
      verifierTimeoutSec: t.verifierTimeoutSec,
      verdict: t.verdict ?? null,
      underProxyFault: t.infraVerdict ? { reward: 0, outcome: "failed", category: classifyTrial(0, null, null, []).category, verdict: t.infraVerdict } : null,
    };
  });
  const raw = rows.map((r) => ({ task: r.task, reward: r.reward, outcome: r.outcome, scored: r.scored, excluded: false }));
  const corrected = rows.map((r) =>
    r.verdict ? { task: r.task, reward: r.verdict.verdict === "passed" ? 1 : 0, outcome: r.verdict.verdict, scored: true, excluded: false } : raw.find((x) => x.task === r.task)!,
  );
  const errors: Record<string, number> = {};
  for (const r of rows) if (r.exception) errors[r.exception] = (errors[r.exception] ?? 0) + 1;
  const byCategory = new Map<Category, number>();
  for (const r of rows) if (r.category) byCategory.set(r.category, (byCategory.get(r.category) ?? 0) + 1);
  const behaviours = Object.fromEntries(REHEARSAL_BEHAVIOURS.map((b) => [b, tasks.filter((t) => t.behaviour === b).length])) as Record<RehearsalBehaviour, number>;
  return {
    kind: "reprobench.rehearsal.ground-truth",
    version: 1,
    dataset: meta.dataset,
    repoUrl: meta.repoUrl ?? null,
    commit: meta.commit ?? null,
    seed: meta.seed ?? null,
    taskCount: tasks.length,
    timeouts: { scale: TIMEOUT_SCALE, multipliers: SEED000_MULTIPLIERS },
    behaviours,
    tasks: rows,
    totals: {
      raw: computeScore(raw),
      corrected: computeScore(corrected),
      errors,
      taxonomy: [...byCategory.entries()].map(([category, count]) => ({ category, count })).sort((a, b) => b.count - a.count || a.category.localeCompare(b.category)),
    },
  };
}

/**
 * The manual verdicts of a rehearsal run as an overrides file (results/overrides.ts): the static ones
 * (verifier-timeout, kills-tmux) always, a downloads task's only when `hitByFault` names it — the trials a
 * proxy fault actually broke, which only the run can tell. Throws for a name that is no task, or a task
 * that has no verdict for a fault.
 */
export function verdictsYaml(tasks: readonly RehearsalTask[], hitByFault: readonly string[]): string {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  for (const name of hitByFault) {
    const task = byName.get(name);
    if (!task) throw new Error(`verdicts: '${name}' is not a task of this rehearsal`);
    if (!task.infraVerdict) throw new Error(`verdicts: task '${name}' (behaviour ${task.behaviour}) has no verdict for a proxy fault; only downloads tasks fetch through the proxy`);
  }
  const hit = new Set(hitByFault);
  const overrides = tasks.flatMap((t) => {
    const v = t.verdict ?? (hit.has(t.name) ? t.infraVerdict : undefined);
    return v ? [{ task: t.name, verdict: v.verdict, reason: v.reason, evidence: v.evidence }] : [];
  });
  const header = `# Manual verdicts for a rehearsal run (sim/rehearsal/tasks.ts verdictsYaml), as seed 000's corrected audit made them.\n# Proxy faults hit: ${hit.size ? [...hit].sort().join(", ") : "none"}.\n`;
  return header + toYaml({ version: 1, overrides }, { lineWidth: 0 });
}

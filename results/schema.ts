// The `reprobench audit --json` document. Stable: fields are only ever added; a removal or a change of
// meaning bumps AUDIT_SCHEMA_VERSION. Human documentation: results/SCHEMA.md.
import { z } from "zod";
import { CATEGORIES } from "./taxonomy";

// 2: selection keeps genuine results over later infra/cancelled attempts, so superseded trials may be newer
// than counted ones; tasks[].superseded and overrides[].status/countedTrials/note added (issue 13).
export const AUDIT_SCHEMA_VERSION = 2;

const EvidenceSchema = z.object({
  signature: z.string(),
  category: z.enum(["infra", "setup"]),
  file: z.string(),
  line: z.number().int().positive(),
  text: z.string(),
});

const TokensSchema = z.object({ input: z.number(), cache: z.number(), output: z.number(), costUsd: z.number().nullable() });

const PhasesSchema = z.object({
  environmentSetup: z.number().nullable(),
  agentSetup: z.number().nullable(),
  agentExecution: z.number().nullable(),
  verifier: z.number().nullable(),
});

export const OutcomeSchema = z.enum(["passed", "failed", "errored"]);

const TrialSchema = z.object({
  task: z.string(),
  job: z.string(),
  trial: z.string(),
  path: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  reward: z.number().nullable(),
  outcome: OutcomeSchema,
  exceptionType: z.string().nullable(),
  exceptionMessage: z.string().nullable(),
  category: z.enum(CATEGORIES).nullable(),
  suspectedInfra: z.boolean(),
  scored: z.boolean(),
  durationSec: z.number().nullable(),
  phases: PhasesSchema,
  tokens: TokensSchema,
  evidence: z.array(EvidenceSchema),
});

const ScoreSchema = z.object({
  nTasks: z.number().int(),
  nTrials: z.number().int(),
  sumReward: z.number(),
  /** Harbor's mean: missing reward = 0, averaged over every counted trial. */
  mean: z.number().nullable(),
  passed: z.number().int(),
  failed: z.number().int(),
  errored: z.number().int(),
  /** Trials left out of passRate: errored with an infra/setup/cancelled category. */
  unscored: z.number().int(),
  /** Trials dropped by an "excluded" override (corrected score only). */
  excluded: z.number().int(),
  scored: z.number().int(),
  passRate: z.number().nullable(),
});

const SupersededSchema = z.object({
  trial: z.string(),
  path: z.string(),
  finishedAt: z.string().nullable(),
  outcome: OutcomeSchema,
  exceptionType: z.string().nullable(),
  /** Whether it would have been scored: false for the infra/setup/cancelled attempts. */
  scored: z.boolean(),
  /** replaced-by-newer: a newer trial took its slot; unscored-after-genuine: it never displaced a genuine result. */
  reason: z.enum(["replaced-by-newer", "unscored-after-genuine"]),
  /** Path of the trial that took its slot (replaced-by-newer), or that kept it (one attempt per task); else null. */
  by: z.string().nullable(),
});

const OverrideAppliedSchema = z.object({
  task: z.string(),
  trial: z.string().nullable(),
  verdict: z.enum(["passed", "failed", "excluded"]),
  reason: z.string(),
  evidence: z.array(z.string()),
  /** Raw outcomes of the trials the verdict was applied to; empty when it was not applied. */
  rawOutcomes: z.array(OutcomeSchema),
  /** applied; not-counted: the named trial is in the jobs but does not count; not-found: it is in none of them. */
  status: z.enum(["applied", "not-counted", "not-found"]),
  /** The task's counted trials, whatever the status. */
  countedTrials: z.array(z.object({ path: z.string(), outcome: OutcomeSchema })),
  /** Why the verdict was not applied and what counts instead; null when applied. */
  note: z.string().nullable(),
});

export const AuditReportSchema = z.object({
  kind: z.literal("reprobench.audit"),
  schemaVersion: z.literal(AUDIT_SCHEMA_VERSION),
  generatedAt: z.string(),
  selection: z.object({
    rule: z.string(),
    attemptsPerTask: z.number().int().positive(),
  }),
  jobs: z.array(
    z.object({
      name: z.string(),
      dir: z.string(),
      complete: z.boolean(),
      startedAt: z.string().nullable(),
      finishedAt: z.string().nullable(),
      nTrialDirs: z.number().int(),
      incompleteTrialDirs: z.array(z.string()),
      warnings: z.array(z.string()),
    }),
  ),
  runConditions: z.object({
    leaderboardComparable: z.boolean(),
    deviations: z.array(z.string()),
  }),
  tasks: z.array(
    z.object({
      task: z.string(),
      trials: z.array(TrialSchema),
      supersededTrials: z.array(z.string()),
      superseded: z.array(SupersededSchema),
    }),
  ),
  scores: z.object({ raw: ScoreSchema, corrected: ScoreSchema }),
  overrides: z.array(OverrideAppliedSchema),
  taxonomy: z.array(
    z.object({
      category: z.enum(CATEGORIES),
      count: z.number().int(),
      trials: z.array(z.string()),
    }),
  ),
  suspectedInfra: z.array(z.string()),
  tokens: z.object({ chosen: TokensSchema, allTrials: TokensSchema }),
  durations: z.object({
    wallClockSec: z.number().nullable(),
    trialSec: z.object({ median: z.number().nullable(), p90: z.number().nullable(), max: z.number().nullable(), sum: z.number() }),
    phaseSumSec: PhasesSchema,
  }),
  warnings: z.array(z.string()),
});

export type AuditReport = z.infer<typeof AuditReportSchema>;
export type AuditTrial = z.infer<typeof TrialSchema>;
export type Score = z.infer<typeof ScoreSchema>;
export type Tokens = z.infer<typeof TokensSchema>;
export type Phases = z.infer<typeof PhasesSchema>;
export type Outcome = z.infer<typeof OutcomeSchema>;

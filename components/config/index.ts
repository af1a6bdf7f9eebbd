// The stack settings: their schema and rules (schema.ts, parse.ts with problems.ts, secrets.ts and rules/),
// run stacks (run-stack.ts), what follows from them (derive.ts, job.ts), stack files (stack-file.ts), and the
// resolved config with its secrets (loaded.ts).
export * from "./schema";
export * from "./parse";
export { type ConfigProblem, NAMESPACE, configKey, formatProblems, renderValue, withStackInHints } from "./problems";
export { type RunStackParseResult, combineWithCluster, defaultRunDatasetDir, isRunStack, parseRunStackConfig, runDatasetDirProblem } from "./run-stack";
export { missingSecretProblems, plaintextSecretProblems } from "./secrets";
export { HF_SANDBOX_PIPEFAIL_FIX, compareHarborVersions } from "./rules/profiles";
export * from "./derive";
export * from "./loaded";
export { loginKeyFor, missingLoginKeyMessage } from "./login-keys";
export * from "./job";
export { type StackFileCheck, checkStackFile, maskSecureValues, readStackFile, stackConfigFromYaml, stackIdOfFile } from "./stack-file";

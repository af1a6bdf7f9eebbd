// The stack settings: their schema and rules (schema.ts, parse.ts), what follows from them (derive.ts,
// job.ts), stack files (stack-file.ts), and the resolved config with its secrets (loaded.ts).
export * from "./schema";
export * from "./parse";
export * from "./derive";
export * from "./loaded";
export * from "./job";
export { type StackFileCheck, checkStackFile, maskSecureValues, readStackFile, stackConfigFromYaml, stackIdOfFile } from "./stack-file";

// Shared bits for the run tests: a parsed seed-000 config (every default) with overrides.
import { readFileSync, readdirSync } from "node:fs";
import * as path from "node:path";
import { parseConfig } from "../../../components/config/parse";
import type { ReprobenchConfig } from "../../../components/config/schema";
import { minimalRealConfig } from "../config/helpers";

export const REPO = path.resolve(__dirname, "../../..");

/** The seed's cluster with every default, plus shallow overrides of top-level sections. */
export function seedConfig(overrides: Record<string, unknown> = {}): ReprobenchConfig {
  const r = parseConfig({ ...minimalRealConfig(), ...overrides }, { requireSecrets: false });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

/** The sim dataset's task.toml texts keyed "<task>/task.toml". */
export function simTaskTomls(): Record<string, string> {
  const root = path.join(REPO, "sim/dataset");
  const out: Record<string, string> = {};
  for (const d of readdirSync(root, { withFileTypes: true })) {
    if (d.isDirectory()) out[`${d.name}/task.toml`] = readFileSync(path.join(root, d.name, "task.toml"), "utf8");
  }
  return out;
}

// The run manifest (`reprobench-manifest.json`, written before launch by the BenchmarkRun component), shown
// folded at the end of the report. Its producer may add fields at any time, so it is read as free-form JSON.
import * as fs from "node:fs";
import * as path from "node:path";
import { asRecord, redactSecrets } from "./harbor";

export const MANIFEST_FILE = "reprobench-manifest.json";

/** Where a job's manifest may live: inside the job dir, or beside it in the jobs dir. */
export function manifestCandidates(jobDir: string): string[] {
  const abs = path.resolve(jobDir);
  const parent = path.dirname(abs);
  return [path.join(abs, MANIFEST_FILE), path.join(parent, `${path.basename(abs)}.${MANIFEST_FILE}`), path.join(parent, MANIFEST_FILE)];
}

export interface LoadedManifest {
  path: string;
  /**
   * Redacted (results/harbor.ts redactSecrets): values under known secret fields (api_key, admin_api_key,
   * hfToken, …; tokenizer_path stays), URL credentials, the servers' key arguments quoted in text, and any
   * of the caller's known secret values. A manifest written by an older release may still hold whatever
   * /server_info said, the API key included; it is never shown.
   */
  data: Record<string, unknown>;
}

/** Reads the first manifest found for any of the job dirs, or null ("no manifest"). `secrets`: values to mask wherever they appear. */
export function findManifest(jobDirs: readonly string[], opts: { secrets?: readonly string[] } = {}): LoadedManifest | null {
  for (const dir of jobDirs) {
    for (const file of manifestCandidates(dir)) {
      if (!fs.existsSync(file)) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch (err) {
        throw new Error(`${file}: run manifest is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      return { path: file, data: asRecord(redactSecrets(raw, opts)) };
    }
  }
  return null;
}

/**
 * Flattens a manifest to "a.b.c" → short value rows for a table. Long values are cut; arrays of
 * scalars are joined; deeper structures are summarised by size.
 */
export function manifestRows(data: Record<string, unknown>, maxDepth = 3, maxValue = 160): [string, string][] {
  const rows: [string, string][] = [];
  const visit = (value: unknown, key: string, depth: number): void => {
    if (value !== null && typeof value === "object" && !Array.isArray(value) && depth < maxDepth) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0) rows.push([key, "{}"]);
      for (const [k, v] of entries) visit(v, key ? `${key}.${k}` : k, depth + 1);
      return;
    }
    let text: string;
    if (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object")) text = value.join(", ");
    else if (typeof value === "string") text = value;
    else text = JSON.stringify(value);
    rows.push([key, text.length > maxValue ? `${text.slice(0, maxValue)}…` : text]);
  };
  visit(data, "", 0);
  return rows;
}

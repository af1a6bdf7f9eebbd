// The sim registry's Docker Hub-like pull limits (sim/images/registry/registry-gate.py in the registry
// container) and the pull-through mirror: the quota file the gate re-reads, the pull credentials, and
// the gate's JSON-lines request log with its summary. Pure functions and small file helpers only;
// sim/cluster.ts wires them into `sim up` / `sim down`, sim/settings.ts and cli/commands/sim.ts into `sim registry`.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scenarioSection, writeJsonAtomically } from "./outside";

/** The account the gate knows (authenticated pulls are counted per account, anonymous ones per client IP). */
export const REGISTRY_USER = "reprobench-pull";
/** The pull-through mirror on the cluster network (hosts reach it directly, not through the proxy). */
export const MIRROR_HOSTNAME = "mirror.sim";
export const MIRROR_PORT = 5000;
/** Where the registry container sees the password file and the state directory (quota + request log). */
export const REGISTRY_PASSWORD_MOUNT = "/etc/reprobench/registry-password";
export const REGISTRY_STATE_MOUNT = "/etc/reprobench/registry";
export const QUOTA_FILE_NAME = "quota.json";
export const REQUEST_LOG_NAME = "requests.jsonl";
/** The gate's challenge (Docker Hub's): a token from the registry's own /token, anonymous or the account's. */
export const TOKEN_SERVICE = "registry.sim";

// ---------------------------------------------------------------------------------------------------
// Quota

export interface RegistryQuota {
  /** Counted pulls (manifest GETs) per client IP and window without credentials. */
  anonymousPulls: number;
  /** Counted pulls per account and window with credentials. */
  authenticatedPulls: number;
  /** Length of the sliding window. */
  windowSeconds: number;
  /** ISO time: pulls before it are forgotten (`sim registry --clear-counts`); null or absent: none. */
  countsSince?: string | null;
}

/** Docker Hub's shape at numbers the local stack and every test stay well inside (see sim/README.md). */
export const DEFAULT_QUOTA: RegistryQuota = { anonymousPulls: 100, authenticatedPulls: 2000, windowSeconds: 3600 };
/** The gate's upper bound for every number (it keeps one timestamp per counted pull). */
export const QUOTA_MAX = 10_000_000;

const QUOTA_KEYS = ["anonymousPulls", "authenticatedPulls", "windowSeconds", "countsSince"] as const;

/** Checks and completes a (partial) quota; throws naming the bad field (`where` prefixes the message). */
export function normalizeQuota(input: Partial<RegistryQuota>, base: RegistryQuota = DEFAULT_QUOTA, where = "registry quota"): RegistryQuota {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new Error(`${where}: expected an object`);
  const out: RegistryQuota = { ...base };
  for (const key of Object.keys(input)) {
    if (key !== "comment" && !(QUOTA_KEYS as readonly string[]).includes(key)) throw new Error(`${where}: unknown key '${key}'; expected ${QUOTA_KEYS.join(", ")}`);
  }
  for (const key of ["anonymousPulls", "authenticatedPulls", "windowSeconds"] as const) {
    const v = input[key];
    if (v === undefined) continue;
    const min = key === "windowSeconds" ? 1 : 0;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > QUOTA_MAX) throw new Error(`${where}: ${key}: got ${JSON.stringify(v)}; expected an integer from ${min} to ${QUOTA_MAX}`);
    out[key] = v;
  }
  if (input.countsSince !== undefined) {
    const v = input.countsSince;
    if (v !== null && (typeof v !== "string" || Number.isNaN(Date.parse(v)))) throw new Error(`${where}: countsSince: got ${JSON.stringify(v)}; expected an ISO time or null`);
    out.countsSince = v;
  }
  if (out.countsSince === undefined || out.countsSince === null) delete out.countsSince;
  return out;
}

/** The `registry` section of sim/scenarios/sim-default.json (DEFAULT_QUOTA where it says nothing). */
export function scenarioQuota(root: string): RegistryQuota {
  const { section, file } = scenarioSection<RegistryQuota>(root, "registry");
  return normalizeQuota(section, DEFAULT_QUOTA, `${file}: registry`);
}

/** Writes the quota the gate applies (atomically: it re-reads the file when its mtime changes). */
export function writeQuotaFile(file: string, quota: RegistryQuota): void {
  writeJsonAtomically(file, quota);
}

export function readQuotaFile(file: string): RegistryQuota | undefined {
  if (!existsSync(file)) return undefined;
  return normalizeQuota(JSON.parse(readFileSync(file, "utf8")) as Partial<RegistryQuota>, DEFAULT_QUOTA, file);
}

/**
 * The next quota: `partial` over `current` (over `scenario` with `reset`); `clearCounts` makes the gate
 * forget the pulls counted so far (countsSince = now). Throws naming the bad field.
 */
export function nextQuota(current: RegistryQuota | undefined, scenario: RegistryQuota, partial: Partial<RegistryQuota>, opts: { reset?: boolean; clearCounts?: boolean; now?: Date } = {}): RegistryQuota {
  const base: RegistryQuota = opts.reset || !current ? { ...scenario } : { ...current };
  if (current?.countsSince) base.countsSince = current.countsSince;
  const next = normalizeQuota(partial, base);
  if (opts.clearCounts) next.countsSince = (opts.now ?? new Date()).toISOString();
  return next;
}

// ---------------------------------------------------------------------------------------------------
// Credentials

/** The pull password (32 hex), made once per instance (0600) and kept until `sim down`. */
export function ensureRegistryPassword(file: string): string {
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    const have = readFileSync(file, "utf8").trim();
    if (/^[0-9a-f]{16,}$/.test(have)) return have;
  }
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const password = randomBytes(16).toString("hex");
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${password}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return password;
}

/**
 * A curl config (`curl -K file`) with the pull credentials: keeps the password off the command line.
 * Double quotes and backslashes are escaped as curl's config syntax wants.
 */
export function curlAuthConfig(password: string, user = REGISTRY_USER): string {
  const q = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  return `user = ${q(`${user}:${password}`)}\n`;
}

/** A docker/skopeo auth file (`DOCKER_CONFIG/config.json`, `skopeo --authfile`) for the given registries. */
export function dockerAuthConfig(registries: string[], password: string, user = REGISTRY_USER): string {
  const auth = Buffer.from(`${user}:${password}`).toString("base64");
  return `${JSON.stringify({ auths: Object.fromEntries(registries.map((r) => [r, { auth }])) }, null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------------
// The request log

/** One line of <stateDir>/registry/requests.jsonl, as the gate writes it. */
export interface RegistryRequest {
  /** ISO time the request arrived. */
  t: string;
  /** The TCP peer: for the hosts the proxy's outside IP (one egress address, like a NAT). */
  client: string;
  /** The account when the request was authenticated, else null (anonymous). */
  user: string | null;
  method: string;
  /** Path without the query. */
  path: string;
  repo: string | null;
  ref: string | null;
  /** Whether it was a pull the window counted (a manifest GET that was served or forwarded). */
  counted: boolean;
  /** The status sent (429: over the limit; 499: the client went away). */
  status: number | null;
}

/** Parses the log's text; lines that are not request records are counted, not fatal (a line may be mid-write). */
export function parseRegistryRequests(text: string): { records: RegistryRequest[]; malformed: number } {
  const records: RegistryRequest[] = [];
  let malformed = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as Partial<RegistryRequest>;
      if (typeof r !== "object" || r === null || typeof r.t !== "string" || typeof r.method !== "string" || typeof r.path !== "string") {
        malformed++;
        continue;
      }
      records.push({
        t: r.t,
        client: String(r.client ?? ""),
        user: r.user ?? null,
        method: r.method,
        path: r.path,
        repo: r.repo ?? null,
        ref: r.ref ?? null,
        counted: r.counted === true,
        status: typeof r.status === "number" ? r.status : null,
      });
    } catch {
      malformed++;
    }
  }
  return { records, malformed };
}

/** The gate's request log (empty when the file does not exist yet). */
export function readRegistryRequests(file: string): RegistryRequest[] {
  if (!existsSync(file)) return [];
  return parseRegistryRequests(readFileSync(file, "utf8")).records;
}

/** Whether a log line is a request for a manifest (`/v2/<name>/manifests/<ref>`). */
export function isManifestRequest(r: RegistryRequest): boolean {
  return /^\/v2\/.+\/manifests\/[^/]+$/.test(r.path);
}

/** Manifest requests of one repository:reference by one client/account. */
export interface ManifestCount {
  repo: string;
  ref: string;
  client: string;
  user: string | null;
  /** Counted pulls (GETs served). */
  gets: number;
  /** HEADs (free). */
  heads: number;
  /** GETs refused with 429. */
  tooMany: number;
}

/**
 * Per repository:reference and client/account: counted GETs, HEADs and 429s, from the request log
 * (only requests at or after `since`, an ISO time, when given). Sorted by repository, reference, client.
 */
export function manifestGetCounts(records: RegistryRequest[], opts: { since?: string | null } = {}): ManifestCount[] {
  const since = opts.since ? Date.parse(opts.since) : undefined;
  const rows = new Map<string, ManifestCount>();
  for (const r of records) {
    // Pushes (PUT) and deletes are no pulls: only GET (counted or refused) and HEAD (free) are shown.
    if (!isManifestRequest(r) || (r.method !== "GET" && r.method !== "HEAD")) continue;
    if (since !== undefined && !(Date.parse(r.t) >= since)) continue;
    const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(r.path)!;
    const repo = r.repo ?? m[1];
    const ref = r.ref ?? m[2];
    const key = JSON.stringify([repo, ref, r.client, r.user]);
    const row = rows.get(key) ?? { repo, ref, client: r.client, user: r.user, gets: 0, heads: 0, tooMany: 0 };
    if (r.method === "GET" && r.counted) row.gets++;
    else if (r.method === "HEAD") row.heads++;
    if (r.method === "GET" && r.status === 429) row.tooMany++;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo) || a.ref.localeCompare(b.ref) || a.client.localeCompare(b.client) || (a.user ?? "").localeCompare(b.user ?? ""));
}

/** Counted pulls per principal ("user:<name>" or "ip:<address>", as the gate keys its windows) inside the window ending at `now`. */
export function pullsInWindow(records: RegistryRequest[], quota: RegistryQuota, now: Date = new Date()): Record<string, number> {
  const floor = now.getTime() - quota.windowSeconds * 1000;
  const since = quota.countsSince ? Date.parse(quota.countsSince) : -Infinity;
  const out: Record<string, number> = {};
  for (const r of records) {
    if (!r.counted) continue;
    const t = Date.parse(r.t);
    if (!(t > floor && t >= since && t <= now.getTime())) continue;
    const key = r.user ? `user:${r.user}` : `ip:${r.client}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** The `sim registry --counts` table. */
export function formatManifestCounts(rows: ManifestCount[], inWindow: Record<string, number> = {}, quota?: RegistryQuota): string {
  if (rows.length === 0) return "no manifest requests logged";
  const header = ["REPOSITORY:REFERENCE", "CLIENT", "USER", "GET", "HEAD", "429"];
  // A digest reference is shortened as docker shortens image ids (the JSON output has it whole).
  const short = (ref: string) => (/^sha256:[0-9a-f]{64}$/.test(ref) ? `${ref.slice(0, 19)}…` : ref);
  const table = rows.map((r) => [`${r.repo}:${short(r.ref)}`, r.client, r.user ?? "-", String(r.gets), String(r.heads), String(r.tooMany)]);
  const sum = (f: (r: ManifestCount) => number) => String(rows.reduce((n, r) => n + f(r), 0));
  table.push(["total", "", "", sum((r) => r.gets), sum((r) => r.heads), sum((r) => r.tooMany)]);
  const widths = header.map((_, i) => Math.max(header[i].length, ...table.map((r) => r[i].length)));
  const lines = [header, ...table].map((row) => row.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd());
  if (quota) {
    for (const [principal, n] of Object.entries(inWindow).sort()) {
      const limit = principal.startsWith("user:") ? quota.authenticatedPulls : quota.anonymousPulls;
      lines.push(`${principal}: ${n} of ${limit} pulls used in the last ${quota.windowSeconds}s`);
    }
  }
  return lines.join("\n");
}

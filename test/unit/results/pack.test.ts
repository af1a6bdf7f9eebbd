// reprobench pack: Harbor 0.21.0-shaped jobs (test/helpers/harbor-tree.ts) into a submission folder.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSubmission, readSubmissionTree, TreeEntry } from "../../../results/leaderboard";
import {
  buildMetadata,
  changeLines,
  datasetTomlVersion,
  jobIdentity,
  jobVersionEvidence,
  packSubmission,
  planJobCopy,
  resolveTbVersion,
  submissionFolderName,
  tbVersionFromName,
} from "../../../results/pack";
import { METADATA_YAML, tempRoot, trialDirs, writeHarborJob } from "../../helpers/harbor-tree";

const MINI = { tasks: 6, dataset: { path: "/data/tb-mini/tasks" } };
let root: string;
let metadataFile: string;
beforeAll(() => {
  root = tempRoot("reprobench-pack-");
  metadataFile = path.join(root, "metadata.yaml");
  fs.writeFileSync(metadataFile, METADATA_YAML);
});
// Thousands of trial files: removed without blocking the worker (Vitest answers its RPCs meanwhile), with room for a loaded disk.
afterAll(() => fs.promises.rm(root, { recursive: true, force: true }), 300_000);

const packOpts = (jobDirs: string[], out: string) => ({ jobDirs, out, agent: "Terminus-2", model: "Qwen3.8-27B", metadataFile });
/** Everything under a folder, relative, sorted. */
const listing = (dir: string): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).sort();

describe("pack: refusals write nothing", () => {
  it("an API key in the agent kwargs is refused, naming file and field", () => {
    const job = writeHarborJob(path.join(root, "jobs-secret"), { ...MINI, kwargs: { api_base: "http://127.0.0.1:30000/v1", llm_kwargs: { api_key: "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234" } } });
    const out = path.join(root, "out-secret");
    expect(() => packSubmission(packOpts([job], out))).toThrow(/^refusing to pack: \d+ secret\(s\) or system prompt\(s\) in files that would be submitted:\n {2}tb2-k5\/config\.json: secret — a value under 'api_key' \(sk-p…\(36 chars\)\) at agents\[0\]\.kwargs\.llm_kwargs\.api_key\n/);
    let message = "";
    try {
      packSubmission(packOpts([job], out));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/tb2-k5\/task-000__\w{7}\/result\.json: secret — .* at config\.agent\.kwargs\.llm_kwargs\.api_key \(and 29 more like it\)\n/);
    expect(message).toMatch(/tb2-k5\/lock\.json: secret — .* at trials\[0\]\.agent\.kwargs\.llm_kwargs\.api_key \(and 29 more like it\)\n/);
    expect(message).not.toContain("AbCdEfGhIjKlMnOpQrStUvWx1234");
    expect(fs.existsSync(out)).toBe(false);
  });

  it("a non-empty system prompt is refused", () => {
    const job = writeHarborJob(path.join(root, "jobs-prompt"), { ...MINI, kwargs: { system_prompt: "You are WecodeBot. Secret sauce…" } });
    expect(() => packSubmission(packOpts([job], path.join(root, "out-prompt")))).toThrow(/tb2-k5\/config\.json: system prompt — a 32-character system prompt at agents\[0\]\.kwargs\.system_prompt/);
  });

  it("metadata it cannot fill is named, with the filled part to complete", () => {
    const job = writeHarborJob(path.join(root, "jobs-meta"), MINI);
    const out = path.join(root, "out-meta");
    expect(() => packSubmission({ ...packOpts([job], out), metadataFile: undefined })).toThrow(
      /^metadata\.yaml: agent_url, agent_org_display_name, models\[0\]\.model_org_display_name missing \(not in the jobs' configs\); fill them in and pass the file with --metadata:\nagent_url: ""\nagent_display_name: Terminus-2\n/,
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it("bad input: a jobs folder, two models, a bad name, a duplicate job name", () => {
    const jobs = path.join(root, "jobs-mixed");
    const a = writeHarborJob(jobs, { ...MINI, name: "qwen" });
    const b = writeHarborJob(jobs, { ...MINI, name: "oss", model: "openai/openai/gpt-oss-20b" });
    const out = path.join(root, "out-bad");
    expect(() => packSubmission(packOpts([jobs], out))).toThrow(`${jobs}: not a Harbor job folder (no config.json and result.json); it holds job folders — pass them instead: ${b} ${a}`);
    expect(() => packSubmission(packOpts([a, b], out))).toThrow("job oss ran terminus-2 with openai/openai/gpt-oss-20b, job qwen ran terminus-2 with openai/Qwen/Qwen3.8-27B: one submission is one agent and one model");
    expect(() => submissionFolderName("Terminus__2", "Qwen")).toThrow(/^--agent 'Terminus__2': use letters/);
    const twin = writeHarborJob(path.join(root, "jobs-twin"), { ...MINI, name: "qwen" });
    expect(() => packSubmission(packOpts([a, twin], out))).toThrow(/^two job folders are named qwen/);
  });
});

describe("pack: through the allowlist", () => {
  it("leaves out leftovers at every level, keeps Harbor's files, and the result validates", () => {
    const job = writeHarborJob(path.join(root, "jobs-left"), MINI);
    const [t0, t1] = trialDirs(job).map((t) => path.basename(t));
    fs.writeFileSync(path.join(job, "wecode-run-status.json"), "{}\n");
    fs.writeFileSync(path.join(job, "job-log-index.txt"), "x\n");
    fs.mkdirSync(path.join(job, t0, "wecode-home", ".cache"), { recursive: true });
    // A token in a left-out file never leaves the machine, so it does not stop the pack.
    fs.writeFileSync(path.join(job, t0, "wecode-home", ".cache", "token"), "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH\n");
    fs.writeFileSync(path.join(job, t1, "wecode.stderr.txt"), "warn\n");
    fs.symlinkSync("/etc/hostname", path.join(job, t1, "agent", "host-link"));
    fs.mkdirSync(path.join(job, "hard-killed__XXXXXXX"));
    fs.writeFileSync(path.join(job, "hard-killed__XXXXXXX", "config.json"), "{}\n");

    const r = packSubmission({ ...packOpts([job], path.join(root, "out-left")), tbVersion: "2.0" });
    expect(r.dest).toBe(path.join(root, "out-left", "submissions", "terminal-bench", "2.0", "Terminus-2__Qwen3.8-27B"));
    expect(r.leftOut["tb2-k5"].sort()).toEqual(
      ["hard-killed__XXXXXXX/", "job-log-index.txt", `${t0}/wecode-home/`, `${t1}/agent/host-link (symlink)`, `${t1}/wecode.stderr.txt`, "wecode-run-status.json"].sort(),
    );
    expect(r.notes.filter((n) => /Terminal-Bench|version/.test(n))).toEqual([]);
    expect(r.verdict.violations).toEqual([]);
    expect(r.verdict.label).toBe("submission");
    const packed = listing(path.join(r.dest, "tb2-k5"));
    expect(packed.filter((p) => !p.includes("/"))).toEqual(["config.json", "job.log", "lock.json", "result.json", ...trialDirs(job).map((t) => path.basename(t)).filter((t) => t !== "hard-killed__XXXXXXX")].sort());
    expect(packed.filter((p) => p.startsWith(`${t0}/`)).sort()).toEqual(
      ["agent", "agent/terminus_2.pane", "agent/trajectory.json", "config.json", "lock.json", "result.json", "trial.log", ...listing(path.join(job, t0)).filter((p) => p.startsWith("verifier") || p === "exception.txt")].map((p) => `${t0}/${p}`).sort(),
    );
    expect(fs.readFileSync(path.join(r.dest, "metadata.yaml"), "utf8")).toBe(METADATA_YAML);
    // No temporary folder is left beside the submissions tree.
    expect(fs.readdirSync(path.join(root, "out-left"))).toEqual(["submissions"]);
  });

  it("packs the 89 × 5 run as a valid terminal-bench 2.0 submission", () => {
    const job = writeHarborJob(path.join(root, "jobs-89"));
    const r = packSubmission(packOpts([job], path.join(root, "out-89")));
    expect(r.verdict.label).toBe("submission");
    expect(r.verdict.counts).toMatchObject({ jobs: 1, trials: 445, tasks: 89 });
    expect(r.leftOut["tb2-k5"]).toEqual([]);
    expect(checkSubmission(readSubmissionTree(r.dest)).label).toBe("submission");
  });

  it("with --previous: the change, and the folder replaced whole by the new job", () => {
    const out = path.join(root, "out-prev");
    const old = writeHarborJob(path.join(root, "jobs-prev"), { ...MINI, name: "tb2-4-26", salt: "older" });
    const first = packSubmission({ ...packOpts([old], out), tbVersion: "2.0" });
    const kept = path.join(root, "previous-copy");
    fs.cpSync(first.dest, kept, { recursive: true });
    const next = writeHarborJob(path.join(root, "jobs-prev"), { ...MINI, name: "tb2-4-30", salt: "newer" });
    const r = packSubmission({ ...packOpts([next], out), previous: kept, tbVersion: "2.0" });
    expect(fs.readdirSync(r.dest).sort()).toEqual(["metadata.yaml", "tb2-4-30"]);
    expect(r.notes).toContain("replaced the existing submissions/terminal-bench/2.0/Terminus-2__Qwen3.8-27B");
    const lines = changeLines(r.previous!, r.verdict);
    const p = r.previous!.score;
    const n = r.verdict.score;
    const sign = n.passed - p.passed >= 0 ? "+" : "";
    expect(lines[0]).toBe(`previous: tb2-4-26 — ${p.passed}/30 passing, score ${(p.score! * 100).toFixed(1)}%`);
    expect(lines[1]).toMatch(new RegExp(`^change: \\${sign}${n.passed - p.passed} passing trials, [+-]?\\d+\\.\\d points`));
    expect(lines[2]).toMatch(/^95% CI half-width change \(pp\): binomial ±\d+\.\d → ±\d+\.\d, clustered by task ±\d+\.\d → ±\d+\.\d, over attempt-runs ±\d+\.\d → ±\d+\.\d$/);
    expect(lines[3]).toBe("replaces job folder(s): tb2-4-26 (by tb2-4-30)");
  });
});

describe("planJobCopy / buildMetadata", () => {
  it("keeps allowlisted trial entries and steps outputs only", () => {
    const entries: TreeEntry[] = [
      { rel: "config.json", kind: "file", size: 1 },
      { rel: "notes.txt", kind: "file", size: 1 },
      { rel: "t__1", kind: "dir", size: 0 },
      { rel: "t__1/result.json", kind: "file", size: 1 },
      { rel: "t__1/steps", kind: "dir", size: 0 },
      { rel: "t__1/steps/s1", kind: "dir", size: 0 },
      { rel: "t__1/steps/s1/agent", kind: "dir", size: 0 },
      { rel: "t__1/steps/s1/agent/log.txt", kind: "file", size: 1 },
      { rel: "t__1/steps/s1/tests", kind: "dir", size: 0 },
      { rel: "t__1/steps/s1/tests/test.sh", kind: "file", size: 1 },
      { rel: "stray", kind: "dir", size: 0 },
      { rel: "stray/config.json", kind: "file", size: 1 },
    ];
    expect(planJobCopy(entries)).toEqual({ keep: ["config.json", "t__1/result.json", "t__1/steps/s1/agent/log.txt"], leftOut: ["notes.txt", "t__1/steps/s1/tests/", "stray/"] });
  });

  it("fills metadata from the job and names what it cannot", () => {
    const id = jobIdentity("j", { agents: [{ name: "terminus-2", model_name: "openai/Qwen/Qwen3.8-27B" }] }, { agent_info: { name: "terminus-2", model_info: { name: "Qwen/Qwen3.8-27B", provider: "openai" } } });
    const m = buildMetadata(id, "Terminus-2", "Qwen3.8-27B");
    expect(m.missing).toEqual(["agent_url", "agent_org_display_name", "models[0].model_org_display_name"]);
    expect(m.yaml).toContain("model_name: Qwen/Qwen3.8-27B\n    model_provider: openai\n    model_display_name: Qwen3.8-27B\n");
    expect(buildMetadata(id, "A", "M", METADATA_YAML).missing).toEqual([]);
  });
});

describe("pack: the Terminal-Bench version comes from the job, never a guess", () => {
  const TB21 = "https://github.com/harbor-framework/terminal-bench-2-1.git";
  const SEED_COMMIT = "7131e4375048a0e408a8fb404b5f499d726b695b";
  /** The run manifest as reprobench pull leaves it: beside the job, <job>.reprobench-manifest.json. */
  const writeManifest = (job: string, harbor: Record<string, unknown>, identity?: string): void =>
    fs.writeFileSync(`${job}.reprobench-manifest.json`, JSON.stringify({ schema: "reprobench-manifest/v1", dataset: identity ? { identity } : {}, config: { harbor } }));
  const versionFolder = (dest: string): string => path.basename(path.dirname(dest));

  it("a registry dataset names it: terminal-bench@2.0 packs under 2.0", () => {
    const job = writeHarborJob(path.join(root, "v-registry"), { tasks: 6 });
    const r = packSubmission(packOpts([job], path.join(root, "out-v-registry")));
    expect(versionFolder(r.dest)).toBe("2.0");
  });

  it("a plain dataset path with nothing else to go by is refused, naming --tb-version, and nothing is written", () => {
    const job = writeHarborJob(path.join(root, "v-plain"), MINI);
    const out = path.join(root, "out-v-plain");
    expect(() => packSubmission(packOpts([job], out))).toThrow(/^cannot tell which Terminal-Bench version job tb2-k5 ran: .* Pass it with --tb-version <major\.minor> \(e\.g\. --tb-version 2\.1\)/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("the run manifest's dataset repository names it: a TB 2.1 job run from a path packs under 2.1", () => {
    const job = writeHarborJob(path.join(root, "v-manifest"), { tasks: 6, dataset: { path: "/var/lib/reprobench/terminal-bench-2-1/tasks" } });
    writeManifest(job, { datasetRepo: TB21, datasetCommit: SEED_COMMIT }, SEED_COMMIT);
    const r = packSubmission(packOpts([job], path.join(root, "out-v-manifest")));
    expect(versionFolder(r.dest)).toBe("2.1");
    expect(r.notes.filter((n) => /Terminal-Bench/.test(n))).toEqual([]);
  });

  it("a mirror of any name at seed 000's commit is 2.1; the sim's repository names nothing", () => {
    const dataset = { path: "/data/tasks" };
    const config = { datasets: [dataset] };
    const mirror = { name: "j", config, trialConfig: null, manifest: { config: { harbor: { datasetRepo: "http://git.internal/tb.git" } }, dataset: { identity: SEED_COMMIT } } };
    expect(jobVersionEvidence(mirror)).toEqual([{ version: "2.1", source: `run manifest dataset commit ${SEED_COMMIT}` }]);
    const sim = { ...mirror, manifest: { config: { harbor: { datasetRepo: "http://git.sim/terminal-bench-sim.git" } }, dataset: { identity: "e01346e6201d5bf9fb1d418892be1fe886d14d62" } } };
    expect(jobVersionEvidence(sim)).toEqual([]);
  });

  it("a readable dataset folder names it through its dataset.toml or its git origin", () => {
    const tomlDir = path.join(root, "ds-toml", "tasks");
    fs.mkdirSync(tomlDir, { recursive: true });
    fs.writeFileSync(path.join(root, "ds-toml", "dataset.toml"), '[dataset]\nname = "terminal-bench/terminal-bench-2-1"\ndescription = "x"\n\n[[tasks]]\nname = "terminal-bench/regex-chess"\n');
    const gitRepo = path.join(root, "ds-git");
    fs.mkdirSync(path.join(gitRepo, ".git"), { recursive: true });
    fs.mkdirSync(path.join(gitRepo, "tasks"));
    fs.writeFileSync(path.join(gitRepo, ".git", "config"), `[core]\n\tbare = false\n[remote "origin"]\n\turl = ${TB21}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`);
    fs.writeFileSync(path.join(gitRepo, ".git", "HEAD"), `${SEED_COMMIT}\n`);
    const evidence = (p: string) => jobVersionEvidence({ name: "j", config: { datasets: [{ path: p }] }, trialConfig: null, manifest: null });
    expect(evidence(tomlDir)).toEqual([{ version: "2.1", source: `config.json datasets[0].path: ${path.join(root, "ds-toml", "dataset.toml")}` }]);
    expect(evidence(path.join(gitRepo, "tasks")).map((e) => e.version)).toEqual(["2.1", "2.1"]);
    const job = writeHarborJob(path.join(root, "v-local"), { tasks: 6, dataset: { path: path.join(gitRepo, "tasks") } });
    expect(versionFolder(packSubmission(packOpts([job], path.join(root, "out-v-local"))).dest)).toBe("2.1");
  });

  it("--tb-version wins, with a note when the jobs name another; a malformed one is refused", () => {
    const job = writeHarborJob(path.join(root, "v-explicit"), { tasks: 6 });
    const r = packSubmission({ ...packOpts([job], path.join(root, "out-v-explicit")), tbVersion: "2.1" });
    expect(versionFolder(r.dest)).toBe("2.1");
    expect(r.notes).toContain("the jobs name Terminal-Bench 2.0 (2.0 (config.json datasets[0].name/version terminal-bench@2.0)); packed under 2.1 as --tb-version says");
    expect(() => resolveTbVersion([], "2")).toThrow("--tb-version '2': expected <major>.<minor>, e.g. 2.1");
  });

  it("jobs of two versions, or one job naming two, are refused", () => {
    const v20 = { version: "2.0", source: "a" };
    const v21 = { version: "2.1", source: "b" };
    expect(() => resolveTbVersion([{ name: "old", evidence: [v20] }, { name: "new", evidence: [v21] }], undefined)).toThrow(/^the jobs ran different Terminal-Bench versions \(old: 2\.0, new: 2\.1\)/);
    expect(() => resolveTbVersion([{ name: "j", evidence: [v20, v21] }], undefined)).toThrow(/^job j names more than one Terminal-Bench version: 2\.0 \(a\); 2\.1 \(b\); pass the right one with --tb-version$/);
    expect(resolveTbVersion([{ name: "a", evidence: [v21] }, { name: "b", evidence: [] }], undefined)).toEqual({ version: "2.1", notes: ["job(s) b name no version; packed under 2.1, which the other jobs name"] });
  });

  it("reads versions from names, URLs and dataset.toml, and nothing from look-alikes", () => {
    expect(tbVersionFromName(TB21)).toBe("2.1");
    expect(tbVersionFromName("git@github.com:harbor-framework/terminal-bench-2-1.git")).toBe("2.1");
    expect(tbVersionFromName("https://huggingface.co/datasets/harborframework/terminal-bench-2.1")).toBe("2.1");
    expect(tbVersionFromName("laude-institute/terminal-bench-2@main")).toBe("2.0");
    for (const other of ["http://git.sim/terminal-bench-sim.git", "harborframework/terminal-bench-2-leaderboard", "/var/lib/reprobench/tasks", "terminal-bench-pro"]) expect(tbVersionFromName(other)).toBeNull();
    expect(datasetTomlVersion('[dataset]\nname = "terminal-bench"\nversion = "2.0"\n')).toBe("2.0");
    expect(datasetTomlVersion('[dataset]\nname = "org/fontbench-2"\n')).toBeNull();
    expect(datasetTomlVersion('[metadata]\nname = "terminal-bench-2-1"\n')).toBeNull();
  });
});

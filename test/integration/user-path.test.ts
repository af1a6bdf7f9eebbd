// The README's real-host quick start as a user types it, through `bin/reprobench` as a subprocess (no
// in-process call), on a sim instance of its own treated as if it were two real hosts. The checkout is a
// throw-away copy (test/helpers/user-checkout.ts: the launcher takes its own checkout as the project, so the
// stack files and the state it writes are the copy's), in which the README's stacks are written for the
// instance: `a100` (the cluster: Pulumi.local.yaml's hosts pointed at the instance, no job of its own, the
// proxy secret set by hand as step 3 says) and `lb` (the run at leaderboard conditions: the sim's 3 tasks × 5
// attempts at 1.0, Pulumi.local-lb.yaml on the `a100` cluster). Then, in the README's order:
// config validate → preview → secrets → check → up a100 → status → up lb → status while it runs → an `up`
// that would stop the job, refused without --yes on a non-terminal stdin → down lb --yes (the interruption:
// SIGTERM, trials cancelled) → status of the stopped job → resume --stack lb --job J --wait (the mop-up pass
// re-runs the cancelled trials and the ones never started) → rerun --stack lb --job J <task> --wait → pull
// --stack → audit → report → pack → validate --leaderboard → down a100 --yes. Exit codes and the lines a
// user reads are asserted. Slot 9 is the registry suite's (60 s, which runs near the end of the longest-first
// order, long after this one): every slot 1..11 has a suite, and the two must not overlap; beforeAll waits
// for the slot's networks to be gone before it starts, bounded.
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simDown, simUp } from "../../sim/cluster";
import { mustRun, run } from "../../sim/exec";
import { parseBusy, simGpus } from "../../sim/gpus";
import { ensureModelDirs, SIM_MODEL_DIR } from "../../sim/model-dir";
import { type ClusterPlan, type SimInstance } from "../../sim/layout";
import { ForeignInstanceError } from "../../sim/ownership";
import { sshRun } from "../../sim/ssh";
import { pointAtSimInstance, repoRoot } from "../helpers/project";
import { waitForSlot } from "../helpers/shared-slot";
import { type Ran, type UserCheckout, userCheckout } from "../helpers/user-checkout";

const instance: SimInstance = { name: "userpath", slot: 9 };
const log = (m: string) => console.log(`[user-path] ${m}`);

let plan: ClusterPlan | undefined;
let user: UserCheckout | undefined;
/** The instance is someone else's (a live run): not ours to remove. */
let foreign = false;
/** Stacks that may hold resources: an `up` ran and no `down` succeeded since. */
const upStacks = new Set<string>();

const tail = (text: string, n = 40) => text.trimEnd().split("\n").slice(-n).join("\n");

/** `bin/reprobench ARGS` in the copy; logs the last lines of what it printed. */
async function rb(args: string[], timeoutMs = 600_000): Promise<Ran> {
  const r = await user!.reprobench(args, { timeoutMs });
  if (r.stdout.trim()) log(`  stdout:\n${tail(r.stdout).replace(/^/gm, "    ")}`);
  if (r.stderr.trim()) log(`  stderr:\n${tail(r.stderr, 20).replace(/^/gm, "    ")}`);
  return r;
}

/** Asserts the exit code, showing the command and its output when it differs. */
function expectExit(r: Ran, code: number): void {
  expect(r.code, `${r.line} exited ${r.code}\n--- stdout\n${tail(r.stdout, 60)}\n--- stderr\n${tail(r.stderr, 60)}`).toBe(code);
}

/** Runs a command on a host of the instance; its stdout. */
async function onHost(name: string, command: string): Promise<string> {
  const host = plan!.hosts.find((h) => h.name === name)!;
  const r = await sshRun(plan!, host, command, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`ssh ${name} '${command}' exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** Every reply of both SGLang doubles this many seconds later (0: as fast as they are). */
async function replyDelay(seconds: number): Promise<void> {
  for (const h of plan!.hosts) await onHost(h.name, `curl -fsS -X POST -H 'Content-Type: application/json' -d '{"extra_delay_seconds": ${seconds}}' http://${h.ip}:30001/_double/state >/dev/null`);
}

/**
 * Waits (bounded, 300 s) until `status --json` shows a trial of the job running: a user stops a job that runs
 * trials, and only a running trial is cancelled (and so left for the mop-up pass).
 */
async function untilATrialRuns(job: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const s = await rb(["status", "--stack", "lb", "--json"]);
    expectExit(s, 0);
    const report = JSON.parse(s.stdout) as { job: { name: string } | null; trials: { running: number; finished: number } };
    const seen = `job ${report.job?.name} running ${report.trials.running} finished ${report.trials.finished}`;
    if (report.job?.name === job && report.trials.running > 0) return;
    if (Date.now() > deadline) throw new Error(`no trial of ${job} ran within 300 s (last status: ${seen})`);
  }
}

async function teardown(): Promise<void> {
  // Whatever happened: stop what is up (the run first, then its cluster), then the instance and the copy.
  for (const stack of ["lb", "a100"]) {
    if (upStacks.has(stack) && user) await user.reprobench(["down", "--stack", stack, "--yes"], { timeoutMs: 900_000 }).catch(() => undefined);
  }
  user?.cleanup();
  user = undefined;
  if (!foreign) await simDown({ root: repoRoot, instance, discardResults: true, log });
}

beforeAll(async () => {
  try {
    // The registry suite shares the slot: never at the same time (it takes about a minute).
    await waitForSlot(instance);
    try {
      ({ plan } = await simUp({ root: repoRoot, instance, log }));
    } catch (err) {
      if (err instanceof ForeignInstanceError) foreign = true;
      throw err;
    }
    user = await userCheckout({ extraFiles: { [plan.stateDir]: path.join(repoRoot, plan.stateDir) }, log });

    // The cluster stack `a100`, as the README's step 0 writes it from Pulumi.a100.yaml: here the sim's
    // stack file with this instance's addresses and host keys, no job of its own (the runs are their own
    // stacks), and the proxy secret left out of the file (step 3 sets it).
    const cluster = YAML.parse(fs.readFileSync(path.join(repoRoot, "Pulumi.local.yaml"), "utf8")) as { config: Record<string, unknown> };
    pointAtSimInstance(cluster, plan);
    delete cluster.config["reprobench:proxyUpstream"];
    // As Pulumi.a100.yaml: no job of its own, but Harbor, the dataset and the task images for the run stacks.
    cluster.config["reprobench:run"] = { enabled: false };
    cluster.config["reprobench:harbor"] = { ...(cluster.config["reprobench:harbor"] as Record<string, unknown>), enabled: true };
    fs.writeFileSync(path.join(user.dir, "Pulumi.a100.yaml"), `# Stack "a100" of the user-path suite: the sim instance ${instance.name}'s two hosts as the cluster.\n${YAML.stringify(cluster)}`);
    // The run stack `lb`: local-lb's job (3 tasks × 5 attempts, every multiplier 1.0) on that cluster;
    // `up` returns once the job runs.
    const lb = YAML.parse(fs.readFileSync(path.join(repoRoot, "Pulumi.local-lb.yaml"), "utf8")) as { config: Record<string, Record<string, unknown> | string> };
    lb.config["reprobench:cluster"] = "a100";
    lb.config["reprobench:run"] = { ...(lb.config["reprobench:run"] as Record<string, unknown>), waitForCompletion: false };
    fs.writeFileSync(path.join(user.dir, "Pulumi.lb.yaml"), `# Stack "lb" of the user-path suite: a run at leaderboard conditions on the cluster a100.\n${YAML.stringify(lb)}`);
  } catch (err) {
    await teardown().catch((cleanupErr: Error) => log(`removing what the failed setup started also failed: ${cleanupErr.message}`));
    throw err;
  }
});

afterAll(() => teardown());

describe("the README's real-host path through bin/reprobench (sim hosts as real ones)", () => {
  let job = "";
  let rerunJob = "";

  it("1. config validate: ok, and the proxy secret noted as still to set", async () => {
    const r = await rb(["config", "validate", "Pulumi.a100.yaml"]);
    expectExit(r, 0);
    expect(r.stdout.trim()).toBe("ok");
    expect(r.stderr).toMatch(/secrets not set yet/);
    expect(r.stderr).toContain("proxyUpstream");
    const run = await rb(["config", "validate", "Pulumi.lb.yaml"]);
    expectExit(run, 0);
    expect(run.stdout.trim()).toBe("ok");
  });

  it("2. preview --stack a100: the plan (servers, router, Harbor), contacting no host; it creates the stack", async () => {
    const r = await rb(["preview", "--stack", "a100"]);
    expectExit(r, 0);
    expect(r.stderr).toContain("stack: a100");
    expect(r.stdout).toMatch(/reprobench:[a-z]+:BenchCluster/);
    expect(r.stdout).toMatch(/reprobench:[a-z]+:ModelServer/);
    expect(r.stdout).toMatch(/\+ .*create/);
  });

  it("3. secrets: pulumi config set --secret after sourcing env.sh, then config validate --require-secrets passes", async () => {
    const set = await user!.bash("source scripts/env.sh && pulumi config set --stack a100 --secret reprobench:proxyUpstream http://127.0.0.1:27890");
    expectExit(set, 0);
    const text = fs.readFileSync(path.join(user!.dir, "Pulumi.a100.yaml"), "utf8");
    expect(text).toMatch(/reprobench:proxyUpstream:\s+secure: v1:/);
    expect(text).not.toMatch(/proxyUpstream: http/);
    const r = await rb(["config", "validate", "Pulumi.a100.yaml", "--require-secrets"]);
    expectExit(r, 0);
    expect(r.stdout.trim()).toBe("ok");
  });

  it("4. check --stack a100: every host ready, before any model loads", async () => {
    const r = await rb(["check", "--stack", "a100"]);
    expectExit(r, 0);
    expect(r.stdout).toMatch(/^worker-a \(worker\): ready$/m);
    expect(r.stdout).toMatch(/^worker-b \(worker, router, runner\): ready$/m);
    expect(r.stdout).toContain("stack a100: every host is ready");
  });

  it("4b. check names what the hosts get wrong — a foreign process on a GPU, a truncated shard — in seconds, and passes once it is gone", async () => {
    // The faults as the hardware would have them (the sim's own tools, not the user's path), then `check` as typed.
    await simGpus({ root: repoRoot, instance, host: "worker-a", changes: { busy: [parseBusy("3:10240:python3")] } });
    try {
      const r = await rb(["check", "--stack", "a100"]);
      expectExit(r, 1);
      expect(r.stdout).toMatch(/^worker-a \(worker\): NOT READY$/m);
      expect(r.stdout).toMatch(/GPU 3 \(GPU-[0-9a-f-]+\): pid \d+ \(python3\) holds 10240 MiB; it is not this stack's server/);
      expect(r.stdout).toMatch(/^worker-b \(worker, router, runner\): ready$/m);
    } finally {
      await simGpus({ root: repoRoot, instance, host: "worker-a", changes: { reset: true } });
    }
    const host = plan!.hosts.find((h) => h.name === "worker-b")!;
    const generator = fs.readFileSync(path.join(repoRoot, "sim", "models", "hf_model.py"));
    await mustRun(["docker", "exec", "-i", host.container, "python3", "-", "fault", "--dir", SIM_MODEL_DIR, "truncate-shard"], { input: generator, timeoutMs: 60_000 });
    try {
      const r = await rb(["check", "--stack", "a100"]);
      expectExit(r, 1);
      expect(r.stdout).toMatch(/^worker-b \(worker, router, runner\): NOT READY$/m);
      expect(r.stdout).toMatch(/model-00001-of-00017\.safetensors: is \d+ bytes, its header implies \d+ .*MetadataIncompleteBuffer/);
    } finally {
      await mustRun(["docker", "exec", host.container, "rm", "-rf", SIM_MODEL_DIR], { timeoutMs: 60_000 });
      await ensureModelDirs(repoRoot, host);
    }
    const again = await rb(["check", "--stack", "a100"]);
    expectExit(again, 0);
    expect(again.stdout).toContain("stack a100: every host is ready");
  });

  it("5. up --stack a100: the cluster converges; status shows both servers and the router", async () => {
    upStacks.add("a100");
    const r = await rb(["up", "--stack", "a100"], 1_800_000);
    expectExit(r, 0);
    expect(r.stdout).toMatch(/Outputs:/);
    expect(r.stdout).toMatch(/Resources:\n\s+\+ \d+ created/);
    const s = await rb(["status", "--stack", "a100"]);
    expectExit(s, 0);
    expect(s.stdout).toMatch(/^stack a100$/m);
    expect(s.stdout).toMatch(/^job: none yet/m);
    expect(s.stdout).toMatch(/^ {2}worker-a +rank 0: /m);
    expect(s.stdout).toMatch(/^ {2}worker-b +rank 0: /m);
    expect(s.stdout).toMatch(/^router +worker-b: /m);
  });

  it("6. up --stack lb starts the job; status --stack lb shows it running", async () => {
    // Replies 30 s later: a trial makes three or more requests, so each runs at least 90 s and the first three
    // still run when 7b stops the job about 40 s in (at 6 s they had all finished once, and the next three
    // not yet started: nothing was cancelled). The mop-up pass runs at full speed again.
    await replyDelay(30);
    upStacks.add("lb");
    const r = await rb(["up", "--stack", "lb"], 1_200_000);
    expectExit(r, 0);
    const m = /^ {2}job: (sim-lb5-\S+)$/m.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    job = m![1];
    expect(r.stdout).toMatch(/^ {2}state: running$/m);
    const s = await rb(["status", "--stack", "lb"]);
    expectExit(s, 0);
    expect(s.stdout).toContain(`stack lb (on the cluster of stack a100) · job ${job}`);
    expect(s.stdout).toMatch(/^state +RUNNING \(harbor pid \d+/m);
    expect(s.stdout).toMatch(/^trials .* \d+\/15 finished/m);
  });

  it("7. an up that would stop the running job asks; with stdin no terminal and no --yes it refuses (exit 2, naming --yes)", async () => {
    const file = path.join(user!.dir, "Pulumi.lb.yaml");
    const before = fs.readFileSync(file, "utf8");
    // Two trials at a time instead of three: a new job (the run's settings are the job's).
    const edited = before.replace(/nConcurrentTrials: 3/, "nConcurrentTrials: 2").replace(/nConcurrentAgents: 3/, "nConcurrentAgents: 2");
    expect(edited).not.toBe(before);
    fs.writeFileSync(file, edited);
    let r: Ran;
    try {
      r = await rb(["up", "--stack", "lb"]);
    } finally {
      fs.writeFileSync(file, before);
    }
    expectExit(r, 2);
    expect(r.stderr).toContain("reprobench up on stack lb would stop:");
    expect(r.stderr).toContain(`job ${job}:`);
    expect(r.stderr).toMatch(/refusing: .*stdin is not a terminal.*--yes/);
    // Nothing was applied: the job runs on.
    expect((await onHost("worker-b", `test -f /var/lib/reprobench/jobs/${job}/result.json && jq -r 'if .finished_at then "finished" else "running" end' /var/lib/reprobench/jobs/${job}/result.json || echo running`)).trim()).toBe("running");
  });

  it("7b. the same up on a terminal asks, and the answer no applies nothing; with --yes it proceeds: the old job stops, a new one starts", async () => {
    const file = path.join(user!.dir, "Pulumi.lb.yaml");
    const before = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, before.replace(/nConcurrentTrials: 3/, "nConcurrentTrials: 2").replace(/nConcurrentAgents: 3/, "nConcurrentAgents: 2"));
    try {
      // script(1) gives the command a terminal (a pty); "n" answers the question.
      const typed = `${path.join(user!.dir, "bin", "reprobench")} up --stack lb`;
      const asked = await run(["script", "-qec", typed, "/dev/null"], { cwd: user!.dir, env: user!.env, input: "n\n", timeoutMs: 600_000 });
      log(`  on a terminal: exit ${asked.code}\n${tail(asked.stdout, 20)}`);
      expect(asked.code, asked.stdout).toBe(2);
      expect(asked.stdout).toContain("reprobench up on stack lb would stop:");
      expect(asked.stdout).toContain("Apply the change on stack lb? [y/N]");
      expect((await onHost("worker-b", `jq -r 'if .finished_at then "finished" else "running" end' /var/lib/reprobench/jobs/${job}/result.json 2>/dev/null || echo running`)).trim()).toBe("running");
      await untilATrialRuns(job);
      const r = await rb(["up", "--stack", "lb", "--yes"], 1_200_000);
      expectExit(r, 0);
      const m = /^ {2}job: (sim-lb5-\S+)$/m.exec(r.stdout);
      expect(m, r.stdout).not.toBeNull();
      expect(m![1]).not.toBe(job);
      // The old job was stopped (its running trials cancelled) and its directory kept; the new one carries on.
      expect(Number((await onHost("worker-b", `grep -l CancelledError /var/lib/reprobench/jobs/${job}/*/result.json 2>/dev/null | wc -l`)).trim())).toBeGreaterThan(0);
      job = m![1];
      expect(r.stdout).toMatch(/^ {2}state: running$/m);
    } finally {
      fs.writeFileSync(file, before);
    }
  });

  it("8. down --stack lb --yes stops the job gracefully: trials cancelled, the job dir kept; status shows the stopped job", async () => {
    // The job of 7b has just been started; Harbor may still be setting up.
    await untilATrialRuns(job);
    const r = await rb(["down", "--stack", "lb", "--yes"], 900_000);
    expectExit(r, 0);
    upStacks.delete("lb");
    expect(r.stdout).toMatch(/Resources:\n\s+- \d+ deleted/);
    const s = await rb(["status", "--stack", "lb"]);
    expectExit(s, 0);
    expect(s.stdout).toContain(`job ${job}`);
    expect(s.stdout).toMatch(/^state +STOPPED/m);
    expect(s.stdout).toMatch(/ \d+ cancelled/);
  });

  it("9. resume --stack lb --job J --wait: the mop-up pass re-runs the cancelled trials and finishes the job", async () => {
    await replyDelay(0);
    const r = await rb(["resume", "--stack", "lb", "--job", job, "--wait"], 1_800_000);
    expectExit(r, 0);
    expect(r.stderr).toContain("stack: lb");
    expect(r.stdout).toMatch(/^trials Harbor will delete and re-run: [1-9]\d* \(CancelledError [1-9]\d*\)$/m);
    expect(r.stdout).toMatch(new RegExp(`^reprobench-resume-${job}\\.service exited with status 0; log \\S+$`, "m"));
    const s = await rb(["status", "--stack", "lb", "--json"]);
    expectExit(s, 0);
    const report = JSON.parse(s.stdout) as { job: { name: string; state: string } | null; trials: { finished: number; total: number; cancelled: number } };
    expect(report.job).toMatchObject({ name: job, state: "finished" });
    expect(report.trials).toMatchObject({ finished: 15, total: 15, cancelled: 0 });
  });

  it("10. rerun --stack lb --job J hello-file --wait: a new job of that task finishes a pass", async () => {
    const r = await rb(["rerun", "--stack", "lb", "--job", job, "hello-file", "--wait"], 1_800_000);
    expectExit(r, 0);
    const m = /^new job: \S+\/(\S+) \(1 task\(s\)\)$/m.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    rerunJob = m![1];
    expect(r.stdout).toMatch(new RegExp(`^reprobench-rerun-${rerunJob}\\.service exited with status 0; log \\S+$`, "m"));
    expect(r.stdout).toContain(`now: reprobench pull --stack lb --job ${rerunJob}`);
  });

  it("11. pull --stack lb, audit and report of both jobs", async () => {
    for (const name of [job, rerunJob]) expectExit(await rb(["pull", "--stack", "lb", "--job", name, "reprobench-jobs"]), 0);
    const dirs = [job, rerunJob].map((n) => `reprobench-jobs/${n}`);
    for (const d of dirs) expect(fs.existsSync(path.join(user!.dir, d, "result.json")), d).toBe(true);
    const a = await rb(["audit", ...dirs]);
    expectExit(a, 0);
    expect(a.stdout).toContain(`jobs: ${job}, ${rerunJob}`);
    // The rerun's 5 hello-file trials are the newest genuine ones: they count, the first 5 are superseded.
    expect(a.stdout).toMatch(/^tasks: 3, counted trials: 15 \(5 per task, newest genuine trial wins\); 5 superseded trial\(s\)/m);
    // The scripted model solves hello-file and sum-numbers, never sha-preimage.
    expect(a.stdout).toMatch(/^outcomes: 10 passed, 5 failed, 0 errored/m);
    expect(a.stdout).toMatch(/^raw score: +10\/15 passed, mean 0\.6667/m);
    expect(a.stdout).toMatch(/^run conditions: leaderboard defaults$/m);
    expect(a.stdout.match(/^ {2}reprobench-sim\/sha-preimage: failed \(reward 0\)/gm)).toHaveLength(5);
    const rep = await rb(["report", ...dirs, "--out", "report"]);
    expectExit(rep, 0);
    expect(rep.stdout).toContain(`wrote ${path.join(user!.dir, "report", "report.md")}`);
    expect(rep.stdout).not.toContain("no manifest found");
    const md = fs.readFileSync(path.join(user!.dir, "report", "report.md"), "utf8");
    expect(md).toContain(job);
    expect(fs.readFileSync(path.join(user!.dir, "report", "report.html"), "utf8")).toMatch(/<html/i);
  });

  it("12. pack the job as a leaderboard submission, and validate it", async () => {
    fs.writeFileSync(
      path.join(user!.dir, "metadata.yaml"),
      YAML.stringify({
        agent_url: "https://github.com/laude-institute/harbor",
        agent_display_name: "Terminus-2",
        agent_org_display_name: "Laude Institute",
        models: [{ model_name: "Qwen3.8-27B", model_provider: "openai", model_display_name: "Qwen3.8-27B", model_org_display_name: "Qwen" }],
      }),
    );
    const p = await rb(["pack", `reprobench-jobs/${job}`, "--out", "lb", "--agent", "Terminus-2", "--model", "Qwen3.8-27B", "--metadata", "metadata.yaml", "--dataset", "sim/dataset", "--tb-version", "2.0"]);
    expectExit(p, 0);
    const dest = "lb/submissions/terminal-bench/2.0/Terminus-2__Qwen3.8-27B";
    expect(p.stdout).toContain(`packed 1 job folder(s) → ${path.join(user!.dir, dest)}`);
    expect(p.stdout).toMatch(/^SUBMISSION: passes every leaderboard rule checked here/m);
    expect(p.stdout).toMatch(/^ {2}trials: 15$/m);
    expect(p.stdout).toMatch(/^ {2}tasks: 3$/m);
    expect(p.stdout).toMatch(/^ {2}passed: 10$/m);
    const v = await rb(["validate", "--leaderboard", dest, "--dataset", "sim/dataset"]);
    expectExit(v, 0);
    expect(v.stdout).toMatch(/^SUBMISSION: passes every leaderboard rule checked here/m);
    expect(v.stdout).toMatch(/^ {2}official_like_errors: 0$/m);
  });

  it("13. down --stack a100 --yes tears the cluster down", async () => {
    const r = await rb(["down", "--stack", "a100", "--yes"], 900_000);
    expectExit(r, 0);
    upStacks.delete("a100");
    expect(r.stdout).toMatch(/Resources:\n\s+- \d+ deleted/);
    // Job directories are never deleted.
    for (const name of [job, rerunJob]) expect(await onHost("worker-b", `test -f /var/lib/reprobench/jobs/${name}/result.json && echo kept`)).toBe("kept\n");
    // The checkout the tests run from is untouched: every file the commands wrote is in the copy.
    expect((await run(["git", "-C", repoRoot, "status", "--porcelain", "--", "Pulumi.a100.yaml", "Pulumi.lb.yaml"], { timeoutMs: 30_000 })).stdout).toBe("");
  });
});

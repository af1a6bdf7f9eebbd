// Non-root SSH on the simulated cluster with the REAL engine: the local stack logs in to worker-a as the
// unprivileged `bench` (NOPASSWD sudo, docker group), and `up` converges and scores the job with root's
// SSH login refused on worker-a; logins that lack a right (no sudo, a sudo that wants a password, no
// Docker socket) are refused with one message naming the host and the right, before anything changes on
// any host — on fresh hosts and on a converged cluster; destroy as bench restores daemon.json. A sim
// instance of its own (slot 8); host state is read with `docker exec`, not over SSH.
import { appendFileSync } from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPlan } from "../../sim/layout";
import { sshRun } from "../../sim/ssh";
import { run } from "../../sim/exec";
import { repoRoot } from "../helpers/project";
import { type LooseConfig, type SimStack, simStack, trialOutcomes } from "../helpers/sim-stack";

let sim: SimStack;
let plan: ClusterPlan;
let stack: Stack;

/** Runs a command in a host container (as root, no SSH); rejects on a non-zero exit. */
async function inHost(name: string, command: string): Promise<string> {
  const host = plan.hosts.find((h) => h.name === name);
  if (!host) throw new Error(`no host ${name}`);
  const r = await run(["docker", "exec", host.container, "bash", "-c", command], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`${name}: '${command}' exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** What must not change when a login is refused: daemon.json, the containers, the networks, the claim. */
async function hostState(): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  for (const h of plan.hosts) {
    state[h.name] = await inHost(
      h.name,
      [
        "sha256sum /etc/docker/daemon.json",
        "docker ps -a --no-trunc --format '{{.ID}} {{.Names}} {{.State}} {{.Image}}' | sort",
        "docker network ls --format '{{.ID}} {{.Name}}' | sort",
        "sha256sum /var/lib/reprobench/owner.json 2>/dev/null || echo 'owner.json absent'",
        "systemctl list-units --all --no-legend --plain 'reprobench-*' | sort",
      ].join("; "),
    );
  }
  return state;
}

/** Logins by host (with sudo), everything else as in Pulumi.local.yaml plus `edit`. */
function logins(users: Record<string, string>, edit: (c: LooseConfig) => void = () => undefined): void {
  sim.editConfig((c: LooseConfig) => {
    c.hosts = (c.hosts as { name: string; ssh: Record<string, unknown> }[]).map((h) => (users[h.name] ? { ...h, ssh: { ...h.ssh, user: users[h.name], sudo: true } } : h));
    edit(c);
  });
}
const loginOnWorkerA = (user: string) => logins({ "worker-a": user });

/** Runs `up`, expecting it to fail; returns everything it printed and the error. */
async function refusedUp(): Promise<string> {
  const out: string[] = [];
  const started = Date.now();
  const outcome = await stack.up({ onOutput: (o) => out.push(o) }).then(
    () => "succeeded",
    (err: Error) => err.message,
  );
  expect(outcome, "up must be refused").not.toBe("succeeded");
  const printed = out.join("");
  console.log(`refused up (${Date.now() - started} ms), what it said:\n${printed.split("\n").filter((l) => /lacks what|^\s+- (root's rights|Docker):|^\s+error:/.test(l)).join("\n")}`);
  return `${printed}\n${outcome}`;
}

// Users without one right or another, made on worker-a for the test. bench is the image's own.
const USERS = [
  { user: "nosudo", setup: "useradd -m -s /bin/bash -G docker nosudo", right: /- root's rights: nosudo has no sudo rule that needs no password .*NOPASSWD sudo/ },
  { user: "pwsudo", setup: "useradd -m -s /bin/bash -G docker,sudo pwsudo", right: /- root's rights: sudo asks pwsudo for a password \(it is in the sudo group, whose rule wants one\).*NOPASSWD sudo/ },
  {
    user: "nodocker",
    setup: "useradd -m -s /bin/bash nodocker && printf 'nodocker ALL=(ALL:ALL) NOPASSWD: ALL\\n' >/etc/sudoers.d/nodocker && chmod 0440 /etc/sudoers.d/nodocker",
    right: /- Docker: nodocker may not use the Docker socket \/var\/run\/docker\.sock \(owned by group docker; nodocker is in: nodocker\).*usermod -aG docker nodocker/,
  },
] as const;

beforeAll(async () => {
  // This suite also keeps the air-gapped path covered: Harbor and the asciinema wheel from the wheelhouse the
  // sim copies to the runner (no index), the dataset uploaded from the project (no git server).
  sim = await simStack(
    { name: "nonroot", slot: 8 },
    {
      extraFiles: { "sim/dataset": path.join(repoRoot, "sim/dataset") },
      baseline: (c) => {
        const harbor = { ...c["reprobench:harbor"], datasetRepo: "sim/dataset", datasetCommit: null, pipFindLinks: "/var/cache/reprobench/wheels" };
        delete harbor.indexUrl;
        c["reprobench:harbor"] = harbor;
        c["reprobench:toolBundle"] = { ...c["reprobench:toolBundle"], asciinemaWheelUrl: "file:///var/cache/reprobench/wheels/asciinema-2.4.0-py3-none-any.whl" };
      },
    },
  );
  ({ plan, stack } = sim);
  for (const { user, setup } of USERS) {
    await inHost("worker-a", `${setup} && install -d -m 0700 -o ${user} -g ${user} /home/${user}/.ssh && cp /home/bench/.ssh/authorized_keys /home/${user}/.ssh/`);
  }
});

afterAll(() => sim?.cleanup());

describe("non-root SSH with sudo (real engine, simulated hosts)", () => {
  let pristine: Record<string, string> = {};

  it("the local stack logs in to worker-a as bench with sudo", async () => {
    const hosts = (await stack.getAllConfig())["reprobench:hosts"].value;
    expect(JSON.parse(hosts)[0]).toMatchObject({ name: "worker-a", ssh: { user: "bench", sudo: true } });
  });

  it.each(USERS)("on fresh hosts, $user is refused naming worker-a and the missing right; nothing changes on any host", async ({ user, right }) => {
    pristine = await hostState();
    loginOnWorkerA(user);
    const output = await refusedUp();
    expect(output).toMatch(new RegExp(`host worker-a \\(${user}@127\\.0\\.0\\.1:${plan.hosts[0].sshPort}\\)`));
    expect(output).toContain(`the SSH login ${user} lacks what reprobench needs there, so nothing was changed on any host:`);
    expect(output).toMatch(right);
    // One message for the one host: worker-b's root login has every right.
    expect(output).not.toContain("host worker-b (");
    expect(await hostState()).toEqual(pristine);
  });

  it("up as bench converges and scores the job, with root's SSH login refused on worker-a", async () => {
    // Root may not log in to worker-a from here on: whatever the program does there, it does as bench.
    await inHost("worker-a", "printf 'PermitRootLogin no\\n' >/etc/ssh/sshd_config.d/00-no-root.conf && systemctl reload ssh");
    const rootTry = await sshRun(plan, plan.hosts[0], "true", { timeoutMs: 30_000 });
    expect(rootTry.code).not.toBe(0);
    const cursor = /-- cursor: (\S+)/.exec(await inHost("worker-a", "journalctl -n 0 --show-cursor --no-pager"))?.[1];
    expect(cursor).toBeDefined();

    sim.editConfig(() => undefined); // the stack file as it is: worker-a as bench
    const up = await stack.up({ onOutput: (o) => process.stdout.write(o) });
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.jobSummary.value).toMatchObject({ trials: 3, passed: 2, finished: true });
    const outcomes = await trialOutcomes(sim, `${up.outputs.jobsDir.value}/${up.outputs.jobName.value}`);
    console.log("rewards per task:", JSON.stringify(outcomes));
    expect([outcomes["hello-file"].reward, outcomes["sum-numbers"].reward, outcomes["sha-preimage"].reward]).toEqual([1, 1, 0]);

    // "ssh-user" still means the login: worker-a's model server runs as bench's uid:gid.
    expect((await inHost("worker-a", "docker inspect -f '{{.Config.User}}' qwen38-worker-a")).trim()).toBe(`${(await inHost("worker-a", "id -u bench")).trim()}:${(await inHost("worker-a", "id -g bench")).trim()}`);
    // sshd saw bench (the scripts and the Docker provider) and no root login; sudo ran only `bash -s`,
    // so neither a script nor the API key ever reached sudo's command line or the journal.
    const journal = await inHost("worker-a", `journalctl --after-cursor '${cursor}' --no-pager -o cat`);
    expect(journal).toMatch(/Accepted publickey for bench from/);
    expect(journal).not.toMatch(/for root from|ROOT LOGIN REFUSED/);
    const sudoCommands = [...journal.matchAll(/COMMAND=(.*)$/gm)].map((m) => m[1]);
    expect(sudoCommands.length).toBeGreaterThan(5);
    expect(new Set(sudoCommands)).toEqual(new Set(["/usr/bin/bash -s"]));
    const key = (await stack.outputs()).sglangApiKey.value as string;
    expect(journal).not.toContain(key);
  });

  it("on the converged cluster, a login without the Docker socket is refused and nothing is stopped or changed", async () => {
    const before = await hostState();
    expect(before["worker-a"]).toMatch(/qwen38-worker-a running/);
    loginOnWorkerA("nodocker");
    const output = await refusedUp();
    expect(output).toMatch(USERS[2].right);
    expect(await hostState()).toEqual(before);
  });

  it("the runner as bench too: Harbor, the dataset upload, the preflight and a new job run through sudo and score", async () => {
    // A new job (new prefix): the runner's login changes, which re-runs in place what depends on the login
    // (the Harbor install makes the uploads dir the login's; the hosts' facts re-read its uid:gid). A
    // changed dataset (a line in its README) makes a new upload, so the upload itself is bench's.
    appendFileSync(path.join(sim.project.dir, "sim/dataset/README.md"), "\nUploaded by a sudo login.\n");
    logins({ "worker-a": "bench", "worker-b": "bench" }, (c) => (c.run = { ...c.run, jobNamePrefix: "sim-bench" }));
    const up = await stack.up({ onOutput: (o) => process.stdout.write(o) });
    expect(up.summary.result).toBe("succeeded");
    expect(String(up.outputs.jobName.value)).toMatch(/^sim-bench-/);
    expect(up.outputs.jobSummary.value).toMatchObject({ trials: 3, passed: 2, finished: true });
    // CopyToRemote wrote as bench into bench's own 0700 directory; harbor-dataset.sh copied it in as root.
    expect((await inHost("worker-b", "stat -c '%U %a' /var/lib/reprobench/uploads")).trim()).toBe("bench 700");
    expect((await inHost("worker-b", "find /var/lib/reprobench/sim-dataset ! -user root | wc -l")).trim()).toBe("0");
    const uploads = (await inHost("worker-b", "find /var/lib/reprobench/uploads -mindepth 2 -maxdepth 2 -name hello-file -printf '%u\\n' | sort | uniq -c")).trim();
    expect(uploads).toMatch(/^1 bench\n\s*1 root$/); // bench's upload of this job, root's of the first one
  });

  it("destroy (as bench on both hosts) restores daemon.json, stops everything and releases the hosts", async () => {
    const destroy = await stack.destroy({ runProgram: true, onOutput: () => undefined });
    expect(destroy.summary.result).toBe("succeeded");
    for (const h of plan.hosts) {
      expect((await inHost(h.name, "sha256sum /etc/docker/daemon.json")).trim()).toBe(pristine[h.name].split("\n")[0]);
      expect(await inHost(h.name, "docker ps -a --format '{{.Names}}' | grep -E '^qwen38-' || true")).toBe("");
      expect((await inHost(h.name, "test -e /var/lib/reprobench/owner.json && echo claimed || echo released")).trim()).toBe("released");
    }
  });
});

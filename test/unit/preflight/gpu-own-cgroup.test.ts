// Whose a GPU compute process is: own.pids (one `docker top` snapshot) misses a server child started after
// it, every process of a container not running at the inspect, and all of them on a host without ps. The
// process's cgroup naming our container settles it, as for the port listeners. The script part runs
// preflight-host.sh against this machine's real /proc (a cgroup cannot be faked without privileges); the
// judging part gives judgeHost that report with the cgroups and the container id a GPU host would show.
import { readFileSync } from "node:fs";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkStackFile } from "../../../components/config/stack-file";
import { type HostFactsReport, parseHostReport } from "../../../components/preflight/facts";
import { type HostPlan, hostPlan, judgeHost, preflightEnv } from "../../../components/preflight/plan";
import { problemLine } from "../../../components/preflight/verdict";
import { HostDouble, isRoot } from "./host-double";

const REPO = path.resolve(__dirname, "../../..");
const a100 = checkStackFile(path.join(REPO, "Pulumi.a100.yaml")).config!;
const OURS = "4f1c2a9e8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e";
const THEIRS = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b";
const scope = (id: string) => `0::/system.slice/docker-${id}.scope`;
// SGLang tp 4 × dp 2: the init (docker top saw it) holds no GPU; one scheduler per GPU holds the memory.
const INIT = 70000;
const schedulers = [...Array(8).keys()].map((i) => ({ gpu: i, mib: 34000, pid: 70101 + i, name: "sglang::scheduler" }));

let host: HostDouble;
let plan: HostPlan;
const children: ChildProcess[] = [];
beforeEach(() => {
  host = new HostDouble();
  const base = hostPlan(a100, "worker-a");
  plan = { ...base, worker: { ...base.worker!, modelPath: host.model(), user: isRoot ? "65534:65534" : "ssh-user" } };
});
afterEach(() => {
  children.splice(0).forEach((c) => c.kill("SIGKILL"));
  host.cleanup();
});

/** The script's report for the double's GPUs, then our container as docker and /proc on a GPU host show it. */
function report(o: { pids: number[]; running: boolean; cgroups?: Record<string, string> }): HostFactsReport {
  const r = parseHostReport(host.run(preflightEnv(plan)), plan.host);
  r.own = { containers: [{ name: plan.worker!.containerName, id: OURS, running: o.running }], pids: o.pids };
  if (o.cgroups) r.gpus!.cgroups = o.cgroups;
  else delete r.gpus!.cgroups;
  return r;
}
const ofAll = (pids: number[], cg: string): Record<string, string> => Object.fromEntries(pids.map((p) => [String(p), cg]));

describe("preflight-host.sh reads each compute app's cgroup", () => {
  it("the live pid's /proc/<pid>/cgroup, once however many GPUs it is on; a pid already gone has no entry", () => {
    const live = spawn("sleep", ["600"], { stdio: "ignore" });
    children.push(live);
    const gone = spawnSync("true").pid;
    host.gpus.busy = [
      { gpu: 0, mib: 100, pid: live.pid!, name: "python3" },
      { gpu: 1, mib: 100, pid: live.pid!, name: "python3" },
      { gpu: 2, mib: 100, pid: gone, name: "python3" },
    ];
    const r = parseHostReport(host.run(preflightEnv(plan)), plan.host);
    // $(…) drops the file's trailing newline.
    expect(r.gpus!.cgroups).toEqual({ [String(live.pid)]: readFileSync(`/proc/${live.pid}/cgroup`, "utf8").replace(/\n+$/, "") });
  });

  it("no compute app: an empty map", () => {
    expect(parseHostReport(host.run(preflightEnv(plan)), plan.host).gpus!.cgroups).toEqual({});
  });
});

describe("a GPU app is ours by its pid or by its cgroup", () => {
  beforeEach(() => (host.gpus.busy = schedulers));

  it("server children docker top missed, in our container's cgroup: ours, nothing refused, their memory free", () => {
    const v = judgeHost(plan, report({ pids: [INIT], running: true, cgroups: ofAll(schedulers.map((s) => s.pid), scope(OURS)) }));
    expect(v.problems.map(problemLine)).toEqual([]);
    expect(v.checks.find((c) => c.check === "gpu processes")!.detail).toBe("none besides this stack's (8 of its own)");
    expect(v.facts.gpus!.foreignProcesses).toEqual([]);
    // 40960 total, 4 + 34000 used, the 34000 of our server free once it is replaced.
    expect(v.facts.gpus!.freeMiB).toEqual(Array(8).fill(40956));
  });

  it("our container not running at the inspect (no pid listed): its processes are still ours by cgroup", () => {
    const v = judgeHost(plan, report({ pids: [], running: false, cgroups: ofAll(schedulers.map((s) => s.pid), scope(OURS)) }));
    expect(v.problems.map(problemLine)).toEqual([]);
    expect(v.facts.gpus!.freeMiB).toEqual(Array(8).fill(40956));
  });

  it("a process in another container's cgroup is foreign, named with its pid and process, and its memory used", () => {
    host.gpus.busy = [...schedulers.slice(0, 2), { gpu: 2, mib: 34000, pid: 80002, name: "/usr/bin/python3" }, ...schedulers.slice(3)];
    const cgroups = { ...ofAll(schedulers.map((s) => s.pid), scope(OURS)), 80002: scope(THEIRS) };
    const v = judgeHost(plan, report({ pids: [INIT], running: true, cgroups }));
    const l = v.problems.map(problemLine);
    expect(l).toContain("worker-a: GPU 2 (GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b02): pid 80002 (/usr/bin/python3) holds 34000 MiB; it is not this stack's server; fix: stop it (`kill 80002`; a leftover server: `docker ps`), or allow it with modelServer.preflight.allowedGpuProcesses: [\"python3\"]");
    expect(l.some((x) => x.startsWith("worker-a: GPU 2 (GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b02): 6956 of 40960 MiB free, 34004 MiB used by others (by pid 80002 /usr/bin/python3 34000 MiB)"))).toBe(true);
    // The memory fit then follows the least free GPU of the group.
    expect(l[2]).toMatch(/^worker-a: model at tp 4: does not fit: .*6\.3 GiB free per GPU/);
    expect(l).toHaveLength(3);
    expect(v.facts.gpus!.foreignProcesses).toEqual([{ gpu: 2, pid: 80002, name: "/usr/bin/python3", usedMiB: 34000, allowed: false }]);
  });

  it("a report without gpus.cgroups (an older script): own.pids alone decides, as before", () => {
    host.gpus.busy = [{ gpu: 0, mib: 34000, pid: INIT, name: "python3" }, ...schedulers.slice(1)];
    const v = judgeHost(plan, report({ pids: [INIT], running: true }));
    expect(v.facts.gpus!.foreignProcesses.map((p) => p.pid)).toEqual(schedulers.slice(1).map((s) => s.pid));
    // GPU 0's holder is in own.pids: free; the others' are not.
    expect(v.facts.gpus!.freeMiB).toEqual([40956, ...Array(7).fill(6956)]);
    expect(v.ready).toBe(false);
  });
});

describe("ps on a worker", () => {
  it("is a required tool (docker top runs the host's ps); missing, it is named with its package", () => {
    expect(plan.tools.find((t) => t.tool === "ps")).toMatchObject({ pkg: "procps" });
    expect(preflightEnv(plan).TOOLS.split(" ")).toContain("ps");
    const r = parseHostReport(host.run(preflightEnv(plan)), plan.host);
    expect(r.tools.ps).toMatch(/\/ps$/);
    r.tools.ps = null;
    expect(judgeHost(plan, r).problems.map(problemLine)).toEqual([
      "worker-a: tool ps: is not installed; the preflight (docker top lists the model server's processes) runs it; fix: install it (Debian/Ubuntu: `apt-get install procps`)",
    ]);
  });
});

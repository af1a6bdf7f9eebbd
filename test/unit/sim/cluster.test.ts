import { describe, expect, it } from "vitest";
import { belongsTo, instanceLayout, hostName, planCluster } from "../../../sim/layout";
import { bridgeNames, egressDropRule } from "../../../sim/networks";
import { clusterJson, type ClusterImages } from "../../../sim/cluster-json";
import { formatStatus } from "../../../sim/cluster";
import { hostCreateArgs, outsideRunArgs, proxyCreateArgs, registryRunArgs } from "../../../sim/docker-args";
import { knownHostsText, publicKeyLine, sshArgs } from "../../../sim/ssh";
import { parseSimArgs } from "../../../cli/commands/sim";

const root = "/repo";
// A real ed25519 public key line (generated once for this test; no private key anywhere).
const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOUv4WlC0f3m6b+8m0sLhQp0r6cbx3o2C2Q9a2vZf6bT";

describe("planCluster", () => {
  it("names, addresses and ports hosts as the local stack expects", () => {
    const plan = planCluster(root, 2);
    expect(plan.hosts.map((h) => [h.name, h.ip, h.sshPort, h.container, h.volume])).toEqual([
      ["worker-a", "172.31.250.11", 2201, "reprobench-sim-worker-a", "reprobench-sim-worker-a-docker"],
      ["worker-b", "172.31.250.12", 2202, "reprobench-sim-worker-b", "reprobench-sim-worker-b-docker"],
    ]);
    // The exact paths Pulumi.local.yaml references.
    expect(plan.hosts[1].hostKeyFile).toBe(".sim/hosts/worker-b/ssh_host_ed25519_key.pub");
    expect(plan.privateKeyFile).toBe(".sim/id_ed25519");
  });

  it("keeps every host on a distinct IP and port", () => {
    const plan = planCluster(root, 20);
    expect(new Set(plan.hosts.map((h) => h.ip)).size).toBe(20);
    expect(new Set(plan.hosts.map((h) => h.sshPort)).size).toBe(20);
    expect(plan.hosts.every((h) => h.ip !== "172.31.250.10")).toBe(true); // the registry's
    expect(plan.hosts[19].name).toBe("worker-t");
  });

  it("rejects host counts outside 1..20 with the flag name", () => {
    expect(() => planCluster(root, 0)).toThrow(/--hosts: got 0; expected an integer from 1 to 20/);
    expect(() => planCluster(root, 21)).toThrow(/--hosts/);
    expect(() => planCluster(root, 1.5)).toThrow(/--hosts/);
    expect(() => hostName(20)).toThrow(/out of range/);
  });
});

describe("instances", () => {
  it("keeps the default cluster on the values Pulumi.local.yaml is written for", () => {
    const d = instanceLayout();
    expect(d.stateDir).toBe(".sim");
    expect(d.network).toMatchObject({ name: "reprobench-sim", subnet: "172.31.250.0/24" });
    expect(d.registry).toMatchObject({ container: "reprobench-sim-registry", ip: "172.29.240.10", pushHost: "127.0.0.1:5000" });
    expect(d.proxy).toMatchObject({ container: "reprobench-sim-proxy", ip: "172.31.250.3", hostname: "proxy.sim", port: 3128 });
    expect(d.proxyUrlFile).toBe(".sim/proxy-url");
  });

  it("gives a test instance its own network, subnet, ports, names and state dir", () => {
    const plan = planCluster(root, 2, { name: "itest", slot: 1 });
    expect(plan.stateDir).toBe(".sim/instances/itest");
    expect(plan.network).toMatchObject({ name: "reprobench-sim-itest", subnet: "172.31.251.0/24" });
    expect(plan.registry).toMatchObject({ container: "reprobench-sim-itest-registry", ip: "172.29.241.10", pushHost: "127.0.0.1:5001" });
    expect(plan.outside).toMatchObject({ network: { name: "reprobench-sim-itest-outside", subnet: "172.29.241.0/24" }, container: "reprobench-sim-itest-outside", ip: "172.29.241.20" });
    expect(plan.proxy).toMatchObject({ container: "reprobench-sim-itest-proxy", ip: "172.31.251.3", outsideIp: "172.29.241.3" });
    expect(plan.hosts.map((h) => [h.name, h.container, h.ip, h.sshPort, h.hostKeyFile])).toEqual([
      ["worker-a", "reprobench-sim-itest-worker-a", "172.31.251.11", 2301, ".sim/instances/itest/hosts/worker-a/ssh_host_ed25519_key.pub"],
      ["worker-b", "reprobench-sim-itest-worker-b", "172.31.251.12", 2302, ".sim/instances/itest/hosts/worker-b/ssh_host_ed25519_key.pub"],
    ]);
    const args = hostCreateArgs(plan, plan.hosts[0], "img").join(" ");
    expect(args).toContain("--add-host proxy.sim:172.31.251.3 --add-host registry.sim:172.29.241.10 --add-host pypi.sim:172.29.241.20 --add-host git.sim:172.29.241.20");
    expect(args).toContain("--label io.reprobench.sim.instance=itest");
  });

  it("slots 6..11 get subnets of their own, clear of the first five and of docker's pools", () => {
    const slots = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    const layouts = slots.map((slot) => instanceLayout({ name: `s${slot}`, slot }));
    for (const key of ["subnet", "outside", "ssh", "push"] as const) {
      const values = layouts.map((l) => (key === "subnet" ? l.network.subnet : key === "outside" ? l.outside.network.subnet : key === "ssh" ? l.firstSshPort : l.registry.pushHost));
      expect(new Set(values).size, key).toBe(slots.length);
    }
    expect(instanceLayout({ name: "s11", slot: 11 }).network.subnet).toBe("172.30.255.0/24");
    expect(instanceLayout({ name: "s6", slot: 6 }).network.subnet).toBe("172.30.250.0/24");
    expect(instanceLayout({ name: "s9", slot: 9 }).network.subnet).toBe("172.30.253.0/24");
    expect(instanceLayout({ name: "s9", slot: 9 }).firstSshPort).toBe(3101);
  });

  it("rejects a slot the default cluster owns and bad names", () => {
    expect(() => instanceLayout({ name: "itest", slot: 0 })).toThrow(/got slot 0; expected an integer from 1 to 11/);
    expect(() => instanceLayout({ name: "itest", slot: 12 })).toThrow(/got slot 12; expected an integer from 1 to 11/);
    expect(() => instanceLayout({ name: "default", slot: 2 })).toThrow(/expected 0 for the default instance/);
    expect(() => instanceLayout({ name: "Bad_Name", slot: 1 })).toThrow(/sim instance name: got 'Bad_Name'/);
  });

  it("counts unlabelled (older) resources as the default cluster's only", () => {
    expect(belongsTo({ name: "default", slot: 0 }, "")).toBe(true);
    expect(belongsTo({ name: "default", slot: 0 }, "itest")).toBe(false);
    expect(belongsTo({ name: "itest", slot: 1 }, "")).toBe(false);
    expect(belongsTo({ name: "itest", slot: 1 }, "itest")).toBe(true);
  });
});

describe("docker argv", () => {
  const plan = planCluster(root, 2);
  const host = plan.hosts[0];
  const args = hostCreateArgs(plan, host, "reprobench/sim-host:abc");

  it("uses the flags that work without --privileged and gives the host its own /var/lib/docker", () => {
    expect(args).not.toContain("--privileged");
    expect(args).toEqual(expect.arrayContaining(["--cap-add=ALL", "--cap-drop=SYS_RESOURCE", "--cgroupns=host"]));
    expect(args.join(" ")).toContain("-v reprobench-sim-worker-a-docker:/var/lib/docker");
    expect(args.join(" ")).toContain("--security-opt systempaths=unconfined");
    expect(args.at(-1)).toBe("reprobench/sim-host:abc");
  });

  it("publishes SSH on loopback only, pins the IP and resolves proxy.sim and the outside names", () => {
    const joined = args.join(" ");
    expect(joined).toContain("-p 127.0.0.1:2201:22");
    expect(joined).toContain("--ip 172.31.250.11");
    expect(joined).toContain("--add-host proxy.sim:172.31.250.3");
    expect(joined).toContain("--add-host registry.sim:172.29.240.10");
    expect(joined).toContain("--add-host pypi.sim:172.29.240.20");
    expect(joined).toContain("--add-host git.sim:172.29.240.20");
    expect(joined).toContain("--label io.reprobench.sim=1");
    expect(joined).toContain("--label io.reprobench.sim.instance=default");
    expect(joined).toContain("--network reprobench-sim ");
  });

  it("publishes the registry on 127.0.0.1:5000 at its fixed IP on the outside network, labelled", () => {
    const r = registryRunArgs(plan, "reprobench/sim-registry:x").join(" ");
    expect(r).toContain("-p 127.0.0.1:5000:5000");
    expect(r).toContain("--network reprobench-sim-outside --ip 172.29.240.10");
    expect(r).toContain("--label io.reprobench.sim=1");
    // Storage in the cache dir (outside the repo) so a warm `sim up` after `down` pushes nothing.
    expect(r).toMatch(/-v \S+\/reprobench\/sim-registry\/default:\/var\/lib\/docker-registry/);
  });

  it("runs the index/git server and the proxy on the outside network; the proxy's secrets are read-only mounts", () => {
    const o = outsideRunArgs(plan, "reprobench/sim-outside:x").join(" ");
    expect(o).toContain("--network reprobench-sim-outside --ip 172.29.240.20");
    expect(o).toMatch(/-v \S+\/reprobench\/sim-outside\/default:\/srv:ro/);
    expect(o).toContain("python3 -m http.server 80 --bind 0.0.0.0 --directory /srv");
    const p = proxyCreateArgs(plan, "reprobench/sim-outside:x").join(" ");
    expect(p).toContain("--network reprobench-sim-outside --ip 172.29.240.3");
    expect(p).toContain("--add-host registry.sim:172.29.240.10 --add-host pypi.sim:172.29.240.20 --add-host git.sim:172.29.240.20");
    expect(p).toContain("-v /repo/.sim/proxy-url:/etc/reprobench/proxy-url:ro");
    expect(p).toContain("-v /repo/.sim/network:/etc/reprobench/network:ro");
    expect(p).toContain("--mode egress --listen 0.0.0.0 --port 3128 --credentials-file /etc/reprobench/proxy-url --conditions /etc/reprobench/network/conditions.json");
  });

  it("names the bridges and tags the egress DROP rule per instance", () => {
    expect(bridgeNames({ name: "itest", slot: 1 })).toEqual({ cluster: "rbsim1", outside: "rbsim1-out" });
    expect(bridgeNames({ name: "default", slot: 0 }).outside.length).toBeLessThanOrEqual(15);
    expect(egressDropRule("rbsim1", "172.31.251.0/24", { name: "itest", slot: 1 })).toEqual([
      "DOCKER-USER", "-i", "rbsim1", "!", "-d", "172.31.251.0/24", "-m", "comment", "--comment", "reprobench-sim-egress:itest", "-j", "DROP",
    ]);
  });

  it("ssh trusts only the pinned known_hosts and our key", () => {
    const plan = planCluster(root, 2);
    const s = sshArgs(plan, plan.hosts[1], "docker info");
    expect(s.join(" ")).toContain("StrictHostKeyChecking=yes");
    expect(s.join(" ")).toContain("UserKnownHostsFile=/repo/.sim/known_hosts");
    expect(s.join(" ")).toContain("IdentitiesOnly=yes");
    expect(s.slice(-3)).toEqual(["2202", "root@127.0.0.1", "docker info"]);
  });
});

describe("keys", () => {
  it("strips the comment from a .pub file", () => {
    expect(publicKeyLine(`${KEY} root@worker-a\n`)).toBe(KEY);
    expect(publicKeyLine(`${KEY}\n`)).toBe(KEY);
  });

  it("refuses something that is not a public key", () => {
    expect(() => publicKeyLine("-----BEGIN OPENSSH PRIVATE KEY-----")).toThrow(/not an OpenSSH public key line/);
  });

  it("writes known_hosts entries with [host]:port", () => {
    const plan = planCluster(root, 2);
    expect(knownHostsText(plan.hosts, { "worker-a": KEY, "worker-b": KEY })).toBe(`[127.0.0.1]:2201 ${KEY}\n[127.0.0.1]:2202 ${KEY}\n`);
  });
});

describe("parseSimArgs", () => {
  it("parses each subcommand and its options", () => {
    expect(parseSimArgs(["up"])).toMatchObject({ action: "up" });
    expect(parseSimArgs(["up"]).hosts).toBeUndefined();
    expect(parseSimArgs(["up", "--hosts", "3"]).hosts).toBe(3);
    expect(parseSimArgs(["up", "--hosts=4"]).hosts).toBe(4);
    expect(parseSimArgs(["down", "--discard-results", "--purge-images"])).toMatchObject({ discardResults: true, purgeImages: true });
    expect(parseSimArgs(["status", "--json"]).json).toBe(true);
    expect(parseSimArgs(["network", "--latency-ms", "150", "--bandwidth-kbps=4096", "--fail-fraction", "0.1", "--fail-with", "reset", "--seed", "7"])).toMatchObject({
      action: "network",
      conditions: { latencyMs: 150, bandwidthKBps: 4096, failFraction: 0.1, failWith: "reset", seed: 7 },
    });
    expect(parseSimArgs(["network", "--reset"])).toMatchObject({ action: "network", reset: true });
    expect(parseSimArgs(["network"]).conditions).toBeUndefined();
    expect(parseSimArgs(["network", "--fail-targets", "http://pypi.sim/rehearsal/, pypi.sim:80"]).conditions).toEqual({ failTargets: ["http://pypi.sim/rehearsal/", "pypi.sim:80"] });
    expect(parseSimArgs(["network", "--fail-targets", ""]).conditions).toEqual({ failTargets: [] });
    expect(parseSimArgs(["network", "--fail-targets="]).conditions).toEqual({ failTargets: [] });
    expect(parseSimArgs(["rehearsal"])).toMatchObject({ action: "rehearsal" });
    expect(parseSimArgs(["rehearsal"]).rehearsal).toBeUndefined();
    expect(parseSimArgs(["rehearsal", "--tasks", "12", "--seed=3", "--instance", "itest"]).rehearsal).toEqual({ tasks: 12, seed: 3, instance: "itest" });
    // --seed of `network` is still the proxy's.
    expect(parseSimArgs(["network", "--seed", "4"])).toMatchObject({ conditions: { seed: 4 } });
    expect(parseSimArgs(["network", "--seed", "4"]).rehearsal).toBeUndefined();
  });

  it("names the bad argument", () => {
    expect(() => parseSimArgs([])).toThrow(/missing subcommand/);
    expect(() => parseSimArgs(["start"])).toThrow(/unknown subcommand 'start'; expected up, down, status, network, registry, gpus or rehearsal/);
    expect(() => parseSimArgs(["rehearsal", "--tasks", "0"])).toThrow(/--tasks: got '0'; expected an integer from 1 to 400/);
    expect(() => parseSimArgs(["rehearsal", "--tasks", "abc"])).toThrow(/--tasks: got 'abc'; expected an integer from 1 to 400/);
    expect(() => parseSimArgs(["rehearsal", "--tasks", "401"])).toThrow(/--tasks: got '401'/);
    expect(() => parseSimArgs(["rehearsal", "--tasks"])).toThrow(/--tasks: missing value/);
    expect(() => parseSimArgs(["rehearsal", "--seed", "-1"])).toThrow(/--seed: got '-1'; expected an integer from 0 to 2147483647/);
    expect(() => parseSimArgs(["rehearsal", "--instance", "Bad_Name"])).toThrow(/--instance: got 'Bad_Name'/);
    expect(() => parseSimArgs(["rehearsal", "--fail-fraction", "0.1"])).toThrow(/--fail-fraction is not an option of 'sim rehearsal'/);
    expect(() => parseSimArgs(["up", "--tasks", "3"])).toThrow(/unknown argument '--tasks' for 'sim up'/);
    expect(() => parseSimArgs(["up", "--fail-targets", "a:1"])).toThrow(/--fail-targets is not an option of 'sim up'/);
    expect(() => parseSimArgs(["network", "--fail-targets", "https://pypi.sim/"])).toThrow(/--fail-targets: failTargets: got "https:\/\/pypi.sim\/"/);
    expect(() => parseSimArgs(["network", "--fail-targets"])).toThrow(/--fail-targets: missing value/);
    expect(() => parseSimArgs(["network", "--fail-fraction", "2"])).toThrow(/--fail-fraction: failFraction: got 2; expected a number from 0 to 1/);
    expect(() => parseSimArgs(["network", "--fail-with", "timeout"])).toThrow(/--fail-with: failWith: got "timeout"; expected one of "502", "503", "429", "reset"/);
    expect(() => parseSimArgs(["network", "--latency-ms", "-5"])).toThrow(/--latency-ms: latencyMs: got -5/);
    expect(() => parseSimArgs(["network", "--seed"])).toThrow(/--seed: missing value/);
    expect(() => parseSimArgs(["up", "--latency-ms", "5"])).toThrow(/--latency-ms is not an option of 'sim up'/);
    expect(() => parseSimArgs(["status", "--reset"])).toThrow(/--reset is not an option of 'sim status'/);
    expect(() => parseSimArgs(["up", "--hosts", "two"])).toThrow(/--hosts: got 'two'/);
    expect(() => parseSimArgs(["up", "--hosts"])).toThrow(/--hosts: missing value/);
    expect(() => parseSimArgs(["up", "--hosts", "0"])).toThrow(/--hosts: got '0'/);
    expect(() => parseSimArgs(["down", "--hosts", "2"])).toThrow(/--hosts is not an option of 'sim down'/);
    expect(() => parseSimArgs(["up", "--force"])).toThrow(/unknown argument '--force'/);
  });

  it("sim gpus: a host, the inventory changes (repeatable --busy and --mig), --reset and --json; the others' flags refused", () => {
    expect(parseSimArgs(["gpus"])).toMatchObject({ action: "gpus", gpus: { host: undefined, changes: {} }, json: false });
    const one = parseSimArgs(["gpus", "worker-a", "--busy", "3:10240:python3", "--busy=5:0", "--mig", "1", "--toolkit", "absent", "--driver", "570.172.08", "--json"]);
    expect(one.gpus?.host).toBe("worker-a");
    expect(one.json).toBe(true);
    expect(one.gpus?.changes).toMatchObject({
      busy: [
        { gpu: 3, mib: 10240, process: "python3" },
        { gpu: 5, mib: 0 },
      ],
      mig: [{ gpu: 1, enabled: true }],
      toolkit: false,
      driver: { version: "570.172.08" },
    });
    expect(parseSimArgs(["gpus", "--count", "4", "--fabric-manager", "stopped", "--reset"]).gpus?.changes).toEqual({ reset: true, count: 4, fabricManager: "stopped" });
    expect(() => parseSimArgs(["gpus", "--busy", "3"])).toThrow(/--busy: got '3'; expected GPU:MIB\[:PROCESS\]/);
    expect(() => parseSimArgs(["gpus", "--toolkit", "gone"])).toThrow(/--toolkit: got 'gone'; expected present or absent/);
    expect(() => parseSimArgs(["gpus", "--count"])).toThrow(/--count: missing value/);
    expect(() => parseSimArgs(["gpus", "worker-a", "worker-b"])).toThrow(/unknown argument 'worker-b' for 'sim gpus'/);
    expect(() => parseSimArgs(["gpus", "--hosts", "2"])).toThrow(/unknown argument '--hosts' for 'sim gpus'/);
    expect(() => parseSimArgs(["up", "worker-a"])).toThrow(/unknown argument 'worker-a' for 'sim up'/);
  });
});

describe("cluster.json and status", () => {
  const images: ClusterImages = {
    hostImage: "reprobench/sim-host:1",
    registryImage: "reprobench/sim-registry:1",
    outsideImage: "reprobench/sim-outside:1",
    sglangDouble: "registry.sim:5000/reprobench/sglang-double:latest",
    taskBase: "registry.sim:5000/reprobench/task-base:latest",
    tasks: { "hello-file": "registry.sim:5000/reprobench/task-hello-file:latest" },
    prepull: [],
    probe: "registry.sim:5000/reprobench/sim-probe:latest",
  };

  it("records hosts with project-relative key paths", () => {
    const json = clusterJson(planCluster(root, 2), images) as { hosts: { name: string; hostKeyFile: string; sshPort: number }[]; privateKeyFile: string };
    expect(json.privateKeyFile).toBe(".sim/id_ed25519");
    expect(json.hosts.map((h) => [h.name, h.sshPort, h.hostKeyFile])).toEqual([
      ["worker-a", 2201, ".sim/hosts/worker-a/ssh_host_ed25519_key.pub"],
      ["worker-b", 2202, ".sim/hosts/worker-b/ssh_host_ed25519_key.pub"],
    ]);
    expect(JSON.stringify(json)).not.toContain("/repo");
  });

  it("records the outside: index, git URL and pinned commit, proxy and its files", () => {
    const commits = { pinned: "a".repeat(40), head: "b".repeat(40) };
    const json = clusterJson(planCluster(root, 2, { name: "itest", slot: 1 }), images, { commits, wheels: 3, harborSha256: "c".repeat(64) }) as { outside: Record<string, unknown> };
    expect(json.outside).toMatchObject({
      network: { name: "reprobench-sim-itest-outside", subnet: "172.29.241.0/24" },
      indexUrl: "http://pypi.sim/simple/",
      gitUrl: "http://git.sim/terminal-bench-sim.git",
      datasetPinnedCommit: commits.pinned,
      datasetHeadCommit: commits.head,
      harborWheelSha256: "c".repeat(64),
      proxy: { host: "proxy.sim", ip: "172.31.251.3", port: 3128, container: "reprobench-sim-itest-proxy" },
      proxyUrlFile: ".sim/instances/itest/proxy-url",
      networkConditionsFile: ".sim/instances/itest/network/conditions.json",
    });
  });

  it("prints one row per host", () => {
    const text = formatStatus({
      registry: { name: "registry.sim (172.31.250.10)", state: "running", repositories: 25 },
      hosts: [{ name: "worker-a", container: "c", ip: "172.31.250.11", sshPort: 2201, container_state: "running", systemd: "running", ssh: true, docker: "26.1.5" }],
    });
    expect(text).toContain("running, 25 repositories");
    expect(text.split("\n")[2]).toMatch(/^worker-a\s+172\.31\.250\.11\s+127\.0\.0\.1:2201\s+running\s+running\s+yes\s+26\.1\.5$/);
    expect(formatStatus({ registry: { name: "registry.sim (172.31.250.10)", state: "absent", repositories: undefined }, hosts: [] })).toContain("no hosts");
    const withOutside = formatStatus({
      registry: { name: "registry.sim (172.29.240.10)", state: "running", repositories: 25 },
      proxy: { name: "proxy.sim:3128 (172.31.250.3)", state: "running" },
      outside: { name: "pypi.sim + git.sim (172.29.240.20)", state: "exited" },
      hosts: [],
    });
    expect(withOutside).toContain("proxy proxy.sim:3128 (172.31.250.3): running\nindex/git pypi.sim + git.sim (172.29.240.20): exited");
  });
});

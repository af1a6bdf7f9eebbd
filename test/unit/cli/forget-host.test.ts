// forget-host's state surgery on a deployment shaped as `pulumi stack export` writes it: exactly the gone
// host's engine, what that engine manages and the host scripts on its address leave; references to them
// leave with them; the other host's resources stay untouched.
import { describe, expect, it } from "vitest";
import { type StateResource, forgetHost } from "../../../cli/forget-host";

const U = (type: string, name: string) => `urn:pulumi:local::reprobench::${type}::${name}`;
const engineA = U("pulumi:providers:docker", "worker-a-engine");
const engineB = U("pulumi:providers:docker", "worker-b-engine");
const stateWith = (HS: string): StateResource[] => [
  { urn: U("reprobench:cluster:HostAccess", "worker-a"), type: "reprobench:cluster:HostAccess" },
  // The provider's host is a secret in state (ciphertext); the facts' id carries the address.
  { urn: engineA, type: "pulumi:providers:docker", custom: true, id: "pa", inputs: { host: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:abc" } } },
  { urn: engineB, type: "pulumi:providers:docker", custom: true, id: "pb", inputs: { host: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:def" } } },
  { urn: U(HS, "worker-a-facts"), type: HS, custom: true, id: "127.0.0.1:2201/abc" },
  { urn: U(HS, "worker-b-facts"), type: HS, custom: true, id: "127.0.0.1:2202/abd" },
  { urn: U("docker:index/container:Container", "worker-a-sglang-container"), type: "docker:index/container:Container", custom: true, id: "c1", provider: `${engineA}::pa` },
  { urn: U("docker:index/container:Container", "worker-b-sglang-container"), type: "docker:index/container:Container", custom: true, id: "c2", provider: `${engineB}::pb` },
  {
    urn: U("docker:index/container:Container", "router-container"), type: "docker:index/container:Container", custom: true, id: "c3", provider: `${engineB}::pb`,
    dependencies: [U(HS, "worker-a-facts"), U(HS, "worker-b-facts")],
    propertyDependencies: { command: [U(HS, "worker-a-facts")] },
    deletedWith: U("docker:index/container:Container", "worker-a-sglang-container"),
  },
];

// The host scripts as the provider plugin registers them, and as state written before it holds them.
describe.each(["reprobench:index:HostScript", "pulumi-nodejs:dynamic:Resource"])("forgetHost (host scripts of type %s)", (HS) => {
  const resources = stateWith(HS);
  it("removes the gone host's engine, what it manages and the scripts on its address, nothing else", () => {
    const { deployment, removed } = forgetHost({ resources }, "worker-a");
    expect(removed.sort()).toEqual([engineA, U("docker:index/container:Container", "worker-a-sglang-container"), U(HS, "worker-a-facts")].sort());
    const left = deployment.resources!;
    expect(left.map((r) => r.urn)).toEqual(resources.map((r) => r.urn).filter((u) => !removed.includes(u)));
    const router = left.find((r) => r.urn.endsWith("router-container"))!;
    expect(router.dependencies).toEqual([U(HS, "worker-b-facts")]);
    expect(router.propertyDependencies).toEqual({ command: [] });
    expect(router.deletedWith).toBeUndefined();
    // The input is not changed in place (the backup is written from it).
    expect(resources.find((r) => r.urn.endsWith("router-container"))!.dependencies).toHaveLength(2);
  });

  it("a host the state does not have is an error naming the hosts it has", () => {
    expect(() => forgetHost({ resources }, "worker-c")).toThrow("no host 'worker-c' in this stack's state (hosts with a Docker engine there: worker-a, worker-b)");
  });
});

describe("forgetHost on state whose parts are named after their cluster (`cluster-<host>-…`)", () => {
  const HS = "reprobench:index:HostScript";
  // The same cluster renamed: every part's name carries the cluster's ("cluster-"), the cluster's own does not.
  const renamed = stateWith(HS).map((r) => ({ ...r, urn: r.urn.replace(/::([^:]+)$/, "::cluster-$1"), ...(r.provider ? { provider: r.provider.replace("::worker-", "::cluster-worker-") } : {}) }));
  const resources = [{ urn: U("reprobench:cluster:BenchCluster", "cluster"), type: "reprobench:cluster:BenchCluster" }, ...renamed];

  it("finds the host by its name in the stack file and removes the same resources", () => {
    const { removed } = forgetHost({ resources }, "worker-a");
    expect(removed.map((u) => u.slice(u.lastIndexOf("::") + 2)).sort()).toEqual(["cluster-worker-a-engine", "cluster-worker-a-facts", "cluster-worker-a-sglang-container"]);
  });

  it("names the hosts it has as the stack file does, without the cluster's name", () => {
    expect(() => forgetHost({ resources }, "worker-c")).toThrow("(hosts with a Docker engine there: worker-a, worker-b)");
  });
});

describe("unreachableHosts (down's hint)", () => {
  it("names the hosts our scripts and the Docker provider could not reach, by the stack file's names", async () => {
    const { unreachableHosts } = await import("../../../cli/commands/stack");
    const output = [
      "error: host worker-b (root@127.0.0.1:2202) cannot be reached over SSH (the connection or the login failed)",
      "failed to create Docker client: Error pinging Docker server, please make sure that ssh://bench@127.0.0.1:2201 is reachable and has a  '_ping' endpoint.",
      "failed to create Docker client: Error pinging Docker server, please make sure that ssh://ops@10.9.9.9:22 is reachable and has a '_ping' endpoint.",
    ].join("\n");
    expect(unreachableHosts(output, { "worker-a": "127.0.0.1:2201", "worker-b": "127.0.0.1:2202" })).toEqual(["10.9.9.9:22", "worker-a", "worker-b"]);
    expect(unreachableHosts("Resources: 3 deleted", {})).toEqual([]);
  });
});

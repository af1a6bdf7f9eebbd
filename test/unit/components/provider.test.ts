// The provider plugin's resource methods (components/provider.ts): dispatch by the URN's type, secrets in
// and out as the engine marks them, and what only the dynamic provider kept (its code) left out.
import { describe, expect, it } from "vitest";
import { outputsOf, resourceProvider, revealSecrets, secretKeys, urnType, withCustomResources } from "../../../components/provider";

const SIG = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";
const secret = (value: unknown) => ({ [SIG]: SECRET, value });
const JOB_NAME_URN = "urn:pulumi:prod::reprobench::reprobench:run:BenchmarkRun$reprobench:index:JobName::run-job-name";

describe("urnType", () => {
  it("is the last type of the URN's chain", () => {
    expect(urnType(JOB_NAME_URN)).toBe("reprobench:index:JobName");
    expect(urnType("urn:pulumi:s::p::reprobench:index:HostScript::x")).toBe("reprobench:index:HostScript");
    expect(urnType("garbage")).toBe("");
  });
});

describe("secrets", () => {
  it("are revealed for the implementation, at any depth", () => {
    expect(revealSecrets({ connection: secret({ host: "h", privateKey: secret("k") }), list: [secret(1)], plain: "x" })).toEqual({ connection: { host: "h", privateKey: "k" }, list: [1], plain: "x" });
  });

  it("mark as secret again every top-level property that held one, and only those", () => {
    const inputs = { connection: secret({ host: "h" }), environment: { A: secret("v"), B: "w" }, spec: "s" };
    expect([...secretKeys(inputs)].sort()).toEqual(["connection", "environment"]);
    expect(outputsOf({ connection: { host: "h" }, environment: { A: "v", B: "w" }, spec: "s" }, secretKeys(inputs))).toEqual({
      connection: secret({ host: "h" }),
      environment: secret({ A: "v", B: "w" }),
      spec: "s",
    });
  });

  it("outputs leave out the dynamic provider's code, the URN input it had, and undefined values", () => {
    expect(outputsOf({ __provider: "exports.handler = …", progressUrn: "urn:…", info: undefined, observed: "ok" }, new Set())).toEqual({ observed: "ok" });
  });
});

describe("resourceProvider", () => {
  it("creates a JobName from its prefix, keeping the inputs; a new spec replaces it, the same does not change it", async () => {
    const created = await resourceProvider.create(JOB_NAME_URN, { prefix: "sim-terminus2", spec: "abc" });
    expect(created.id).toMatch(/^sim-terminus2-\d{8}-\d{6}$/);
    expect(created.outs).toEqual({ prefix: "sim-terminus2", spec: "abc", name: created.id });
    const olds = { ...created.outs, __provider: "exports.handler = …" };
    expect(await resourceProvider.diff(created.id, JOB_NAME_URN, olds, { prefix: "sim-terminus2", spec: "abc" })).toEqual({ changes: false, replaces: [], deleteBeforeReplace: false });
    expect(await resourceProvider.diff(created.id, JOB_NAME_URN, olds, { prefix: "sim-terminus2", spec: "def" })).toMatchObject({ changes: true, replaces: ["spec"] });
  });

  it("a read of a resource without a read of its own gives back its state, secrets still marked, the old code gone", async () => {
    const props = { prefix: "p", spec: secret("s"), name: "p-1", __provider: "exports.handler = …" };
    expect(await resourceProvider.read("p-1", JOB_NAME_URN, props)).toEqual({ id: "p-1", props: { prefix: "p", spec: secret("s"), name: "p-1" } });
  });

  it("refuses a type it does not serve, naming it and what it serves", async () => {
    await expect(resourceProvider.create("urn:pulumi:s::p::reprobench:index:Other::x", {})).rejects.toThrow(
      "reprobench provider: unknown resource type reprobench:index:Other (urn:pulumi:s::p::reprobench:index:Other::x); this plugin serves reprobench:index:HostScript, reprobench:index:JobName",
    );
  });
});

describe("withCustomResources", () => {
  it("adds HostScript, JobName and the connection type to the components' schema, the connection and its key secret", () => {
    const schema = JSON.parse(withCustomResources(JSON.stringify({ name: "reprobench", resources: { "reprobench:index:BenchCluster": { isComponent: true } } })));
    expect(Object.keys(schema.resources).sort()).toEqual(["reprobench:index:BenchCluster", "reprobench:index:HostScript", "reprobench:index:JobName"]);
    expect(schema.resources["reprobench:index:HostScript"].inputProperties.connection).toMatchObject({ $ref: "#/types/reprobench:index:HostConnection", secret: true });
    expect(schema.resources["reprobench:index:HostScript"].inputProperties.environment.secret).toBe(true);
    expect(schema.types["reprobench:index:HostConnection"].properties.privateKey.secret).toBe(true);
    expect(schema.name).toBe("reprobench");
  });
});

// What an `up`/`down` would stop, decided from recorded preview steps (the shapes of `pulumi preview --json`
// steps and of engine events' step metadata), and when to ask, proceed or refuse.
import { describe, expect, it } from "vitest";
import { decide, describeStopping, destroySteps, parseUrn, refusal, whatWouldStop } from "../../../cli/confirm";

const P = "urn:pulumi:prod::reprobench::";
const RUN = "reprobench:run:BenchmarkRun";
const CLUSTER = "reprobench:cluster:BenchCluster";
const DYN = "reprobench:index:HostScript";
/** What the job resource was before the provider plugin: state from that release still reads so. */
const LEGACY = "pulumi-nodejs:dynamic:Resource";
const CONTAINER = "docker:index/container:Container";
const jobUrn = `${P}${RUN}$${DYN}::run-harbor`;
const jobNameUrn = `${P}${RUN}$${DYN}::run-job-name`;
const workerUrn = `${P}${CLUSTER}$reprobench:cluster:ModelServer$${CONTAINER}::worker-a-sglang-container`;
const workerImageUrn = `${P}${CLUSTER}$reprobench:cluster:ModelServer$docker:index/remoteImage:RemoteImage::worker-a-sglang-image`;
const routerUrn = `${P}${CLUSTER}$reprobench:cluster:SglangRouter$${CONTAINER}::router-container`;
const gateUrn = `${P}${CLUSTER}$reprobench:cluster:ModelServer$${DYN}::worker-a-sglang-ready`;
const installUrn = `${P}reprobench:runner:HarborRunner$${DYN}::runner-install`;

// `pulumi preview --json` after a change of the run's settings: a new job name, so the job is replaced.
const newJobPreview = {
  steps: [
    { op: "same", urn: workerUrn },
    { op: "replace", urn: jobNameUrn, oldState: { type: DYN }, newState: { type: DYN } },
    { op: "create-replacement", urn: jobUrn, newState: { type: DYN } },
    { op: "replace", urn: jobUrn, oldState: { type: DYN }, newState: { type: DYN } },
    { op: "delete-replaced", urn: jobUrn, oldState: { type: DYN } },
  ],
};

describe("parseUrn", () => {
  it("splits the type chain and the name", () => {
    expect(parseUrn(workerUrn)).toEqual({ types: [CLUSTER, "reprobench:cluster:ModelServer", CONTAINER], name: "worker-a-sglang-container" });
    expect(parseUrn("garbage")).toEqual({ types: [], name: "" });
  });
});

describe("whatWouldStop", () => {
  it("a replaced job resource stops the job, once however many steps name it; the job-name resource is not the job", () => {
    const s = whatWouldStop(newJobPreview.steps);
    expect(s.jobs).toEqual([{ urn: jobUrn, name: "run-harbor", op: "create-replacement" }]);
    expect(s.servers).toEqual([]);
  });

  it("a job resource of the type state written before the provider plugin holds is the job too", () => {
    const legacyJob = jobUrn.replace(DYN, LEGACY);
    expect(whatWouldStop([{ op: "delete", urn: legacyJob, type: LEGACY }]).jobs).toEqual([{ urn: legacyJob, name: "run-harbor", op: "delete" }]);
    expect(whatWouldStop([{ op: "delete", urn: legacyJob, type: "reprobench:index:JobName" }]).jobs).toEqual([]);
  });

  it("a replaced or deleted model-server or router container stops a server; its image, gate or an update do not", () => {
    const s = whatWouldStop([
      { op: "replace", urn: workerUrn, type: CONTAINER },
      { op: "replace", urn: workerImageUrn },
      { op: "update", urn: gateUrn },
      { op: "delete", urn: routerUrn },
    ]);
    expect(s.servers.map((x) => [x.name, x.op])).toEqual([["worker-a-sglang-container", "replace"], ["router-container", "delete"]]);
    expect(s.jobs).toEqual([]);
  });

  it("an update of the job resource stops the job when its JobName changes in the same run (a new job); alone it does not", () => {
    const jobNameUrn = jobUrn.replace(/::run-harbor$/, "::run-job-name");
    const renamed = whatWouldStop([
      { op: "replace", urn: jobNameUrn },
      { op: "update", urn: jobUrn },
    ]);
    expect(renamed.jobs).toEqual([{ urn: jobUrn, name: "run-harbor", op: "update" }]);
    expect(whatWouldStop([{ op: "update", urn: jobNameUrn }, { op: "update", urn: jobUrn }]).jobs.map((j) => j.op)).toEqual(["update"]);
    // Another run's name changing says nothing about this job.
    expect(whatWouldStop([{ op: "replace", urn: jobNameUrn.replace("::run-job-name", "::other-job-name") }, { op: "update", urn: jobUrn }]).jobs).toEqual([]);
  });

  it("updates, creates and unchanged resources stop nothing; a CheckedCommand of another role is no job", () => {
    const s = whatWouldStop([
      { op: "update", urn: jobUrn },
      { op: "create", urn: workerUrn },
      { op: "same", urn: routerUrn },
      { op: "replace", urn: installUrn },
      { op: "refresh", urn: jobUrn },
    ]);
    expect(s).toEqual({ jobs: [], servers: [] });
  });

  it("a container outside a model server (a task image's, the proxy's) is no server", () => {
    expect(whatWouldStop([{ op: "delete", urn: `${P}${CLUSTER}$reprobench:cluster:ProxyBridge$${CONTAINER}::proxy-container` }]).servers).toEqual([]);
  });

  it("a destroy deletes everything in the state", () => {
    const state = [{ urn: jobUrn, type: DYN }, { urn: workerUrn, type: CONTAINER }, { urn: installUrn, type: DYN }, { type: "pulumi:pulumi:Stack" }];
    const s = whatWouldStop(destroySteps(state));
    expect(s.jobs.map((j) => j.op)).toEqual(["delete"]);
    expect(s.servers.map((j) => j.name)).toEqual(["worker-a-sglang-container"]);
  });
});

describe("decide", () => {
  const stopping = whatWouldStop(newJobPreview.steps);
  const nothing = { jobs: [], servers: [] };
  it("asks on a terminal, proceeds with --yes, refuses with nobody to answer; nothing to stop never asks", () => {
    expect(decide(stopping, { yes: false, interactive: true })).toBe("ask");
    expect(decide(stopping, { yes: true, interactive: false })).toBe("proceed");
    expect(decide(stopping, { yes: false, interactive: false })).toBe("refuse");
    expect(decide(nothing, { yes: false, interactive: false })).toBe("proceed");
  });

  it("says what stops and names --yes when it refuses", () => {
    const text = describeStopping({ ...stopping, servers: whatWouldStop([{ op: "replace", urn: workerUrn }]).servers }, { op: "up", stack: "prod", jobName: "prod-tb21-7" });
    expect(text).toContain("reprobench up on stack prod would stop:");
    expect(text).toContain("job prod-tb21-7: its resource run-harbor is replaced");
    expect(text).toContain("a new job starts");
    expect(text).toContain("model server worker-a-sglang: its container is replaced");
    expect(refusal("down", "prod")).toMatch(/stdin is not a terminal.*--yes \(-y\).*reprobench down --stack prod --yes/);
  });
});

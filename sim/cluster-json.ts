// What `sim up` records in .sim/cluster.json for tests and the lead: the plan's names, addresses and paths, and the images by role.
import { pullRef, REGISTRY_HOST, type ResolvedImage } from "./images";
import { FORWARDER_PORT, JOBS_DIR, MODEL_DIR, RUNNER_HOST, type ClusterPlan } from "./layout";
import { HUB_ENDPOINT, HUB_REPO } from "./hub-repo";
import { DATASET_GIT_URL, GIT_HOSTNAME, INDEX_HOSTNAME, INDEX_URL, type DatasetCommits } from "./outside";

export interface ClusterImages {
  hostImage: string;
  registryImage: string;
  /** Runs the index/git server and the egress proxy. */
  outsideImage: string;
  /** Registry references (registry.sim:5000/…:latest) by role. */
  sglangDouble?: string;
  taskBase: string;
  tasks: Record<string, string>;
  prepull: string[];
  probe: string;
}

export function clusterImages(images: ResolvedImage[]): ClusterImages {
  const get = (name: string) => images.find((i) => i.name === name);
  const must = (name: string) => {
    const i = get(name);
    if (!i) throw new Error(`internal: image ${name} is not planned`);
    return i;
  };
  const ref = (name: string) => pullRef(must(name).push ?? `reprobench/${name}`);
  const tasks: Record<string, string> = {};
  for (const i of images) if (i.name.startsWith("task-") && i.name !== "task-base") tasks[i.name.slice("task-".length)] = pullRef(i.push ?? i.name);
  const double = get("sglang-double");
  return {
    hostImage: must("sim-host").tag,
    registryImage: must("sim-registry").tag,
    outsideImage: must("sim-outside").tag,
    sglangDouble: double ? pullRef(double.push ?? "reprobench/sglang-double") : undefined,
    taskBase: ref("task-base"),
    tasks,
    prepull: images.filter((i) => i.name.startsWith("prepull-")).map((i) => pullRef(i.push ?? i.name)),
    probe: ref("sim-probe"),
  };
}

/** What tests and the lead read: .sim/cluster.json. Paths are project-relative. */
export function clusterJson(plan: ClusterPlan, images: ClusterImages, outside?: { commits: DatasetCommits; harborSha256?: string; wheels: number; hub?: { repo: string; revision: string } }): object {
  return {
    instance: plan.instance.name,
    network: { name: plan.network.name, subnet: plan.network.subnet, gateway: plan.network.gateway },
    outside: {
      network: { name: plan.outside.network.name, subnet: plan.outside.network.subnet },
      indexUrl: INDEX_URL,
      wheelsUrl: `http://${INDEX_HOSTNAME}/files/`,
      asciinemaWheelUrl: `http://${INDEX_HOSTNAME}/files/asciinema-2.4.0-py3-none-any.whl`,
      harborWheelSha256: outside?.harborSha256,
      wheels: outside?.wheels,
      gitUrl: DATASET_GIT_URL,
      datasetPinnedCommit: outside?.commits.pinned,
      datasetHeadCommit: outside?.commits.head,
      server: { container: plan.outside.container, ip: plan.outside.ip, hostnames: [INDEX_HOSTNAME, GIT_HOSTNAME] },
      proxy: { host: plan.proxy.hostname, ip: plan.proxy.ip, port: plan.proxy.port, container: plan.proxy.container, forwarder: `${RUNNER_HOST} 127.0.0.1:${FORWARDER_PORT}` },
      proxyUrlFile: plan.proxyUrlFile,
      networkConditionsFile: plan.networkConditionsFile,
      // modelServer.download against the sim: endpoint, repo and revision as served, indexUrl the index above.
      hub: {
        endpoint: HUB_ENDPOINT,
        repo: outside?.hub?.repo ?? HUB_REPO,
        revision: outside?.hub?.revision,
        container: plan.hub.container,
        ip: plan.hub.ip,
        faultsFile: plan.hub.faultsFile,
        requestLog: plan.hub.requestLog,
      },
    },
    registry: {
      host: REGISTRY_HOST,
      pushHost: plan.registry.pushHost,
      ip: plan.registry.ip,
      container: plan.registry.container,
      username: plan.registry.username,
      passwordFile: plan.registry.passwordFile,
      quotaFile: plan.registry.quotaFile,
      requestLog: plan.registry.requestLog,
      mirror: {
        host: `${plan.mirror.hostname}:${plan.mirror.port}`,
        ip: plan.mirror.ip,
        outsideIp: plan.mirror.outsideIp,
        container: plan.mirror.container,
      },
    },
    privateKeyFile: plan.privateKeyFile,
    knownHostsFile: plan.knownHostsFile,
    resultsDir: plan.resultsDir,
    modelDir: MODEL_DIR,
    jobsDir: JOBS_DIR,
    hosts: plan.hosts.map((h) => ({
      name: h.name,
      container: h.container,
      ip: h.ip,
      sshHost: h.sshHost,
      sshPort: h.sshPort,
      user: "root",
      hostKeyFile: h.hostKeyFile,
      dockerVolume: h.volume,
    })),
    images,
  };
}

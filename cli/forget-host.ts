// `reprobench forget-host`: when a host is gone for good, what a stack placed on it can never be deleted
// there, and every destroy fails on it. This removes exactly that host's resources from the stack's state
// (nothing is contacted or deleted anywhere), so that `down` then tears down the rest normally.
import { isHostScriptType } from "../components/resource-types";

/** One resource of an exported deployment (`pulumi stack export`, apitype.DeploymentV3), loosely. */
export interface StateResource {
  urn: string;
  type: string;
  custom?: boolean;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  provider?: string;
  parent?: string;
  dependencies?: string[];
  propertyDependencies?: Record<string, string[]>;
  deletedWith?: string;
  [key: string]: unknown;
}

export interface Deployment {
  resources?: StateResource[];
  [key: string]: unknown;
}

/** The last URN segment: the resource's name. */
function urnName(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/** The clusters' names in the state: their parts are named `<cluster>-<part>` (older state: `<part>`). */
function clusterNames(resources: StateResource[]): string[] {
  return resources.filter((r) => r.type === "reprobench:cluster:BenchCluster").map((r) => urnName(r.urn));
}

/** A part's name without its cluster's prefix (`cluster-worker-a-engine` → `worker-a-engine`). */
function partName(name: string, clusters: string[]): string {
  const cluster = clusters.filter((c) => name.startsWith(`${c}-`)).sort((a, b) => b.length - a.length)[0];
  return cluster === undefined ? name : name.slice(cluster.length + 1);
}

/**
 * The host's address and its docker provider: HostAccess makes `<host>-engine` and `<host>-facts` (named
 * after their cluster, `<cluster>-<host>-…`), whose id starts with the address ("addr:port/…", not secret,
 * unlike the provider's ssh:// URL).
 */
export function hostAddress(resources: StateResource[], hostName: string): { host: string; port: number; providerUrn: string } | undefined {
  const clusters = clusterNames(resources);
  const named = (r: StateResource, part: string) => partName(urnName(r.urn), clusters) === part;
  const providers = resources.filter((r) => r.type === "pulumi:providers:docker" && named(r, `${hostName}-engine`));
  if (providers.length > 1) {
    throw new Error(`host '${hostName}' is in ${providers.length} clusters of this stack (${providers.map((r) => urnName(r.urn)).join(", ")}); forget-host takes a host of one cluster`);
  }
  const provider = providers[0];
  const facts = resources.find((r) => isHostScriptType(r.type) && named(r, `${hostName}-facts`));
  const m = typeof facts?.id === "string" ? /^(.+):(\d+)\/[^/]+$/.exec(facts.id) : null;
  if (!provider || !m) return undefined;
  return { host: m[1], port: Number(m[2]), providerUrn: provider.urn };
}

/**
 * The deployment without the resources that live on one host — its docker provider and everything that
 * provider manages, and every CheckedCommand whose id names the host's address (`addr:port/…`) — and
 * without any reference to them in what stays (dependencies, property dependencies, deletedWith). Other
 * hosts' resources and the components are kept: a destroy deletes them as usual.
 */
export function forgetHost(deployment: Deployment, hostName: string): { deployment: Deployment; removed: string[] } {
  const resources = deployment.resources ?? [];
  const address = hostAddress(resources, hostName);
  if (!address) {
    const clusters = clusterNames(resources);
    const hosts = resources.filter((r) => r.type === "pulumi:providers:docker").map((r) => partName(urnName(r.urn), clusters).replace(/-engine$/, ""));
    throw new Error(`no host '${hostName}' in this stack's state (hosts with a Docker engine there: ${hosts.join(", ") || "none"})`);
  }
  const providerRef = (p: string | undefined) => p !== undefined && p.startsWith(`${address.providerUrn}::`);
  const onHost = (r: StateResource) =>
    r.urn === address.providerUrn ||
    providerRef(r.provider) ||
    (isHostScriptType(r.type) && typeof r.id === "string" && r.id.startsWith(`${address.host}:${address.port}/`));
  const removed = new Set(resources.filter(onHost).map((r) => r.urn));
  const keep = (urns: string[] | undefined) => urns?.filter((u) => !removed.has(u));
  const kept = resources
    .filter((r) => !removed.has(r.urn))
    .map((r) => {
      const next: StateResource = { ...r };
      if (r.dependencies) next.dependencies = keep(r.dependencies);
      if (r.propertyDependencies) next.propertyDependencies = Object.fromEntries(Object.entries(r.propertyDependencies).map(([k, v]) => [k, keep(v) ?? []]));
      if (r.deletedWith && removed.has(r.deletedWith)) delete next.deletedWith;
      return next;
    });
  return { deployment: { ...deployment, resources: kept }, removed: [...removed] };
}

// The settings `sim network` and `sim registry` change on a live instance: the proxy's network conditions, the registry's pull limits and its request counts.
import { join } from "node:path";
import { instanceLayout, type SimInstance } from "./layout";
import { normalizeConditions, readConditionsFile, scenarioConditions, writeConditionsFile, type NetworkConditions } from "./outside";
import { manifestGetCounts, nextQuota, pullsInWindow, readQuotaFile, readRegistryRequests, scenarioQuota, writeQuotaFile, type RegistryQuota, type RegistryRequest } from "./registry";

/** The proxy's current network conditions (undefined when `sim up` has not made the file yet). */
export function readNetworkConditions(options: { root: string; instance?: SimInstance }): NetworkConditions | undefined {
  return readConditionsFile(join(options.root, instanceLayout(options.instance).networkConditionsFile));
}

/**
 * Changes the proxy's network conditions: `partial` over the current ones (or over the scenario's
 * `network` section with `reset`). The proxy applies them to every new connection; returns the result.
 */
export function setNetworkConditions(options: { root: string; instance?: SimInstance }, partial: Partial<NetworkConditions>, opts: { reset?: boolean } = {}): NetworkConditions {
  const base = opts.reset ? scenarioConditions(options.root) : (readNetworkConditions(options) ?? scenarioConditions(options.root));
  const next = normalizeConditions(partial, base);
  writeConditionsFile(join(options.root, instanceLayout(options.instance).networkConditionsFile), next);
  return next;
}

/** The registry's current pull limits (undefined when `sim up` has not made the file yet). */
export function readRegistryQuota(options: { root: string; instance?: SimInstance }): RegistryQuota | undefined {
  return readQuotaFile(join(options.root, instanceLayout(options.instance).registry.quotaFile));
}

/**
 * Changes the registry's pull limits: `partial` over the current ones (over the scenario's `registry`
 * section with `reset`); `clearCounts` makes the gate forget the pulls counted so far. The gate applies
 * them to the next request; returns the result.
 */
export function setRegistryQuota(options: { root: string; instance?: SimInstance }, partial: Partial<RegistryQuota>, opts: { reset?: boolean; clearCounts?: boolean } = {}): RegistryQuota {
  const next = nextQuota(readRegistryQuota(options), scenarioQuota(options.root), partial, opts);
  writeQuotaFile(join(options.root, instanceLayout(options.instance).registry.quotaFile), next);
  return next;
}

/** The gate's request log of an instance (empty before the first request). */
export function registryRequests(options: { root: string; instance?: SimInstance }): RegistryRequest[] {
  return readRegistryRequests(join(options.root, instanceLayout(options.instance).registry.requestLog));
}

/**
 * `sim registry --counts`: manifest GETs/HEADs/429s per repository:reference and client/account since the
 * last `--clear-counts`, and the pulls each principal has used in the current window.
 */
export function registryCounts(options: { root: string; instance?: SimInstance }, now = new Date()) {
  const quota = readRegistryQuota(options) ?? scenarioQuota(options.root);
  const records = registryRequests(options);
  return { quota, since: quota.countsSince ?? null, rows: manifestGetCounts(records, { since: quota.countsSince }), inWindow: pullsInWindow(records, quota, now) };
}

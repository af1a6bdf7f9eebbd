// The settings' zod schema as Pulumi schema types (components/config/pulumi-schema.ts), which the plugin's
// schema gives BenchCluster's `settings`: every stack file of the repo conforms to the types, every field
// the zod schema has is typed (nothing `any` but the free-form kwargs), and what zod requires is required.
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type PulumiObjectTypeSpec, type PulumiPropertySpec, pulumiSchemaOf } from "../../../components/config/pulumi-schema";
import { SECRET_KEYS, isRunStack, stackConfigFromYaml } from "../../../components/config";
import { BENCHMARK_RUN_TYPE, BENCH_CLUSTER_TYPE, settingsSchema, withCustomResources } from "../../../components/provider";

const REPO = path.resolve(__dirname, "../../..");
const { property, types } = settingsSchema();

/** Problems of `value` against a Pulumi type: unknown keys, missing required ones, wrong primitive types. */
function conform(value: unknown, spec: PulumiPropertySpec, where: string): string[] {
  if (spec.$ref === "pulumi.json#/Any") return [];
  if (spec.$ref) {
    const type: PulumiObjectTypeSpec = types[spec.$ref.replace("#/types/", "")];
    if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: expected an object`];
    const obj = value as Record<string, unknown>;
    return [
      ...type.required.filter((k) => obj[k] === undefined).map((k) => `${where}.${k}: required`),
      ...Object.entries(obj).flatMap(([k, v]) => (type.properties[k] ? (v === null ? [] : conform(v, type.properties[k], `${where}.${k}`)) : [`${where}.${k}: not in the type`])),
    ];
  }
  if (spec.oneOf) return spec.oneOf.some((o) => conform(value, o, where).length === 0) ? [] : [`${where}: matches no option`];
  switch (spec.type) {
    case "array":
      return Array.isArray(value) ? value.flatMap((v, i) => conform(v, spec.items!, `${where}[${i}]`)) : [`${where}: expected an array`];
    case "object":
      return typeof value === "object" && value !== null ? Object.entries(value).flatMap(([k, v]) => conform(v, spec.additionalProperties!, `${where}.${k}`)) : [`${where}: expected a map`];
    case "integer":
      return Number.isInteger(value) ? [] : [`${where}: expected an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${where}: expected a number`];
    default:
      return typeof value === spec.type ? [] : [`${where}: expected a ${spec.type}`];
  }
}

/** Every leaf of the types that is `Any`, by path. */
function anyLeaves(spec: PulumiPropertySpec, where: string, seen = new Set<string>()): string[] {
  if (spec.$ref === "pulumi.json#/Any") return [where];
  if (spec.$ref) {
    const token = spec.$ref.replace("#/types/", "");
    if (seen.has(token)) return [];
    seen.add(token);
    return Object.entries(types[token].properties).flatMap(([k, p]) => anyLeaves(p, `${where}.${k}`, seen));
  }
  return [...(spec.items ? anyLeaves(spec.items, `${where}[]`, seen) : []), ...(spec.additionalProperties ? anyLeaves(spec.additionalProperties, `${where}{}`, seen) : []), ...(spec.oneOf ?? []).flatMap((o) => anyLeaves(o, where, seen))];
}

describe("the settings as Pulumi schema types", () => {
  it("hold every stack file of the repo that owns a cluster, its secrets left out", () => {
    const files = readdirSync(REPO).filter((f) => /^Pulumi\..+\.yaml$/.test(f));
    const owners = files.map((f) => [f, stackConfigFromYaml(readFileSync(path.join(REPO, f), "utf8"), f)] as const).filter(([, raw]) => !isRunStack(raw));
    expect(owners.length).toBeGreaterThan(5);
    for (const [file, raw] of owners) {
      const settings = Object.fromEntries(Object.entries(raw).filter(([k]) => !(SECRET_KEYS as readonly string[]).includes(k)));
      expect(conform(settings, property, "settings"), file).toEqual([]);
    }
  });

  it("catch what the zod schema refuses by type: an unknown key, a missing host list, a string for a number", () => {
    expect(conform({ hosts: [], modelServr: {} }, property, "settings")).toEqual(["settings.modelServr: not in the type"]);
    expect(conform({}, property, "settings")).toEqual(["settings.hosts: required"]);
    expect(conform({ hosts: [], modelServer: { tp: "4" } }, property, "settings")).toEqual(["settings.modelServer.tp: expected an integer"]);
  });

  it("type every field: only the free-form kwargs are `Any`", () => {
    expect(anyLeaves(property, "settings").sort()).toEqual(["settings.run.extraAgentKwargs{}", "settings.run.sampling.extraCallKwargs{}"]);
  });

  it("leave the secrets out (each is an argument of its own) and require what zod requires", () => {
    const root = types["reprobench:index:ClusterSettings"];
    for (const key of SECRET_KEYS) expect(root.properties).not.toHaveProperty(key);
    expect(root.required).toEqual(["hosts"]);
    expect(types["reprobench:index:ClusterHostsSshSettings"].required).toEqual(["host"]);
    expect(types["reprobench:index:ClusterHostsSettings"].properties.roles).toEqual({ type: "array", items: { type: "string", description: 'One of: "worker", "router", "runner".' } });
  });

  it("say either-or as oneOf: a ulimit is an integer or { soft, hard }", () => {
    expect(types["reprobench:index:ClusterModelServerSettings"].properties.ulimits).toEqual({
      type: "object",
      additionalProperties: { oneOf: [{ type: "integer" }, { $ref: "#/types/reprobench:index:ClusterModelServerUlimitsOption2Settings" }] },
    });
  });

  it("name a zod type they cannot say, by its path, rather than typing it `any`", () => {
    expect(() => pulumiSchemaOf(z.object({ a: z.object({ when: z.date() }) }), { pkg: "p", root: "R" })).toThrow("settings schema: a.when is a ZodDate, which the plugin's schema cannot type");
  });
});

describe("withCustomResources", () => {
  it("types BenchmarkRun's run and dataset from the run stack's schema, and marks the facades' secrets", () => {
    const any = { type: "object", additionalProperties: { $ref: "pulumi.json#/Any" } };
    const components = {
      name: "reprobench",
      resources: {
        [BENCH_CLUSTER_TYPE]: { isComponent: true, inputProperties: { settings: any, proxyUpstream: { type: "string" } }, properties: { apiKey: { type: "string" }, runner: { type: "string" } } },
        [BENCHMARK_RUN_TYPE]: { isComponent: true, inputProperties: { cluster: { type: "string" }, run: any, dataset: any, sshPrivateKeys: { type: "object", additionalProperties: { type: "string" } }, hfToken: { type: "string" } } },
      },
    };
    const schema = JSON.parse(withCustomResources(JSON.stringify(components)));
    const run = schema.resources[BENCHMARK_RUN_TYPE];
    expect(run.inputProperties.run).toEqual({ $ref: "#/types/reprobench:index:RunSettings" });
    expect(run.inputProperties.dataset).toEqual({ $ref: "#/types/reprobench:index:RunDatasetSettings" });
    expect(schema.types["reprobench:index:RunDatasetSettings"].required).toEqual(["repo", "expectedTaskCount"]);
    expect(schema.types["reprobench:index:RunSettings"].properties.agentTimeoutMultiplier).toEqual({ type: "number" });
    expect(run.inputProperties.sshPrivateKeys.secret).toBe(true);
    expect(run.inputProperties.hfToken.secret).toBe(true);
    expect(run.inputProperties.cluster.secret).toBeUndefined();
    expect(schema.resources[BENCH_CLUSTER_TYPE].inputProperties.proxyUpstream.secret).toBe(true);
    expect(schema.resources[BENCH_CLUSTER_TYPE].properties.apiKey.secret).toBe(true);
    expect(schema.resources[BENCH_CLUSTER_TYPE].properties.runner.secret).toBeUndefined();
  });

  it("types BenchCluster's settings from the zod schema, keeping the analyzer's description", () => {
    const components = { name: "reprobench", resources: { [BENCH_CLUSTER_TYPE]: { isComponent: true, inputProperties: { settings: { type: "object", additionalProperties: { $ref: "pulumi.json#/Any" }, description: "The settings." } } } } };
    const schema = JSON.parse(withCustomResources(JSON.stringify(components)));
    expect(schema.resources[BENCH_CLUSTER_TYPE].inputProperties.settings).toEqual({ $ref: "#/types/reprobench:index:ClusterSettings", description: "The settings." });
    expect(Object.keys(schema.types)).toEqual(expect.arrayContaining(Object.keys(types)));
    expect(schema.types["reprobench:index:HostConnection"]).toBeDefined();
  });
});

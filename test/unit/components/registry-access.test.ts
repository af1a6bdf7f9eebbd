// What the pulling steps get from registries[]: the auth file docker and skopeo both read, skopeo's
// registries.conf, daemon.json's Docker Hub mirrors, and the warning when a dataset needs more pull windows
// than the pre-pull may wait.
import { describe, expect, it } from "vitest";
import { daemonRegistryMirrors, pullQuotaWarnings, registriesConf, registryAuthJson, registryOf, registryScriptEnv } from "../../../components/registry-access";

describe("registry access", () => {
  it("names the registry of a reference as docker and skopeo do", () => {
    expect(registryOf("ubuntu")).toBe("docker.io");
    expect(registryOf("alexgshaw/regex-chess:20251031")).toBe("docker.io");
    expect(registryOf("registry.sim:5000/reprobench/task-base:latest")).toBe("registry.sim:5000");
    expect(registryOf("localhost/x")).toBe("localhost");
    expect(registryOf("index.docker.io/library/ubuntu:2")).toBe("docker.io");
    expect(registryOf("ghcr.io/org/img@sha256:" + "a".repeat(64))).toBe("ghcr.io");
  });

  it("one auth file for both tools, Docker Hub under its two names", () => {
    const json = JSON.parse(registryAuthJson([{ registry: "docker.io", username: "u", password: "p:w" }, { registry: "registry.sim:5000", username: "r", password: "s" }]));
    expect(json.auths["docker.io"].auth).toBe(Buffer.from("u:p:w").toString("base64"));
    expect(json.auths["https://index.docker.io/v1/"].auth).toBe(json.auths["docker.io"].auth);
    expect(Buffer.from(json.auths["registry.sim:5000"].auth, "base64").toString()).toBe("r:s");
  });

  it("mirrors: registries.conf for skopeo, daemon.json only for Docker Hub's", () => {
    const mirrors = [{ registry: "docker.io", url: "https://hub-cache.internal/" }, { registry: "registry.sim:5000", url: "http://mirror.sim:5000" }];
    expect(registriesConf(mirrors)).toBe(
      ['[[registry]]', 'location = "docker.io"', "[[registry.mirror]]", 'location = "hub-cache.internal"', "insecure = false", 'pull-from-mirror = "all"', "", "[[registry]]", 'location = "registry.sim:5000"', "[[registry.mirror]]", 'location = "mirror.sim:5000"', "insecure = true", 'pull-from-mirror = "all"'].join("\n"),
    );
    expect(daemonRegistryMirrors(mirrors)).toEqual(["https://hub-cache.internal"]);
  });

  it("the environment names only what is configured", () => {
    expect(registryScriptEnv([], [])).toEqual({});
    expect(Object.keys(registryScriptEnv([{ registry: "a.io", username: "u", password: "p" }], []))).toEqual(["REGISTRY_AUTH_JSON"]);
    expect(registryScriptEnv([], [{ registry: "a.io", url: "http://m:5000" }]).MIRRORED_REGISTRIES).toBe("a.io");
  });

  it("warns when the images need more pull windows than the step may wait, unless mirrored or within the limit", () => {
    const images = Array.from({ length: 89 }, (_, i) => `alexgshaw/task-${i}:20251031`).concat(["registry.sim:5000/x:1"]);
    const hub = { "docker.io": { pulls: 10, windowSeconds: 3600 } };
    const [warning, ...rest] = pullQuotaWarnings(images, hub, [], 12_600, []);
    expect(rest).toEqual([]);
    expect(warning).toBe(
      "89 task images come from docker.io, which allows 10 pulls per 3600s anonymously: a pre-pull of the images not yet on the runner needs up to 480 min of pull windows, more than its 210 min; set credentials (reprobench:registries[].username and the secret registryPasswords[\"docker.io\"]) or a pull-through mirror (registries[].mirror)",
    );
    expect(pullQuotaWarnings(images, { "docker.io": { pulls: 100, windowSeconds: 3600 } }, [], 12_600, ["docker.io"])).toEqual([]);
    expect(pullQuotaWarnings(images, hub, ["docker.io"], 12_600, [])).toEqual([]);
    expect(pullQuotaWarnings(images.slice(0, 10), hub, [], 0, [])).toEqual([]);
  });
});

// How the hosts reach image registries (reprobench:registries): the credentials and mirrors handed to the
// host scripts that pull (registry.sh writes them into a private directory for one step), daemon.json's
// registry-mirrors, the Docker provider's registry auth, and how many counted pulls a list of images needs.
// Pure functions, plus the one Pulumi helper that merges a step's secret environments.
import * as pulumi from "@pulumi/pulumi";

/** An account on a registry (the password a secret wherever it goes). */
export interface RegistryLogin {
  /** "docker.io" or host[:port], as image references name it. */
  registry: string;
  username: string;
  password: string;
}

/** A pull-through cache for a registry. */
export interface RegistryMirror {
  registry: string;
  /** http(s)://HOST[:PORT] */
  url: string;
}

/** The keys docker and skopeo look a registry's credentials up by (Docker Hub has two names). */
export function authKeys(registry: string): string[] {
  return registry === "docker.io" ? ["docker.io", "https://index.docker.io/v1/"] : [registry];
}

/** The registry an image reference pulls from ("docker.io" for Docker Hub names such as alexgshaw/x:tag). */
export function registryOf(image: string): string {
  const slash = image.indexOf("/");
  if (slash === -1) return "docker.io";
  const first = image.slice(0, slash);
  if (first === "index.docker.io" || first === "registry-1.docker.io") return "docker.io";
  return first.includes(".") || first.includes(":") || first === "localhost" ? first : "docker.io";
}

/** {"auths":{…}}: what docker's config.json and skopeo's auth file both read. */
export function registryAuthJson(logins: readonly RegistryLogin[]): string {
  const auths: Record<string, { auth: string }> = {};
  for (const login of logins) {
    const auth = Buffer.from(`${login.username}:${login.password}`).toString("base64");
    for (const key of authKeys(login.registry)) auths[key] = { auth };
  }
  return JSON.stringify({ auths });
}

/** registries.conf (containers-registries.conf(5)) naming each registry's mirror, for skopeo. */
export function registriesConf(mirrors: readonly RegistryMirror[]): string {
  return mirrors
    .map((m) => {
      const url = new URL(m.url);
      const location = m.registry === "docker.io" ? "docker.io" : m.registry;
      // Tags too, not only digests: the pre-pull copies digests, the tool bundle's canary is a tag.
      return [`[[registry]]`, `location = ${JSON.stringify(location)}`, `[[registry.mirror]]`, `location = ${JSON.stringify(url.host)}`, `insecure = ${url.protocol === "http:"}`, `pull-from-mirror = "all"`].join("\n");
    })
    .join("\n\n");
}

/** daemon.json "registry-mirrors": dockerd mirrors Docker Hub only, so only docker.io's mirror goes there. */
export function daemonRegistryMirrors(mirrors: readonly RegistryMirror[]): string[] {
  return mirrors.filter((m) => m.registry === "docker.io").map((m) => m.url.replace(/\/$/, ""));
}

/** The secret part of a pulling step's environment (registry.sh): REGISTRY_AUTH_JSON, only when there are accounts. */
export function registryAuthEnv(logins: readonly RegistryLogin[]): Record<string, string> {
  return logins.length > 0 ? { REGISTRY_AUTH_JSON: registryAuthJson(logins) } : {};
}

/**
 * The plain part, for the pre-pull only (skopeo is the one client that takes a mirror for any registry):
 * REGISTRIES_CONF and MIRRORED_REGISTRIES, only when there are mirrors. Plain on purpose: a secret value is
 * masked wherever it appears in the step's output, and registry names appear in every line of it.
 */
export function registryMirrorEnv(mirrors: readonly RegistryMirror[]): Record<string, string> {
  return mirrors.length > 0 ? { REGISTRIES_CONF: registriesConf(mirrors), MIRRORED_REGISTRIES: mirrors.map((m) => m.registry).join(",") } : {};
}

/** Both parts, as a script sees them. */
export function registryScriptEnv(logins: readonly RegistryLogin[], mirrors: readonly RegistryMirror[]): Record<string, string> {
  return { ...registryAuthEnv(logins), ...registryMirrorEnv(mirrors) };
}

/** A registry's pull limit for one login. */
export interface PullLimit {
  pulls: number;
  windowSeconds: number;
}

/**
 * What a pre-pull of `images` needs from each registry that has a known limit and neither a mirror nor
 * enough quota: the windows it must wait, and a warning when that is more than `budgetSeconds`. One
 * counted pull per image (the pre-pull reads digests with free HEADs).
 */
export function pullQuotaWarnings(images: readonly string[], limits: Record<string, PullLimit | undefined>, mirrored: readonly string[], budgetSeconds: number, credentialed: readonly string[]): string[] {
  const perRegistry = new Map<string, number>();
  for (const image of new Set(images)) perRegistry.set(registryOf(image), (perRegistry.get(registryOf(image)) ?? 0) + 1);
  const out: string[] = [];
  for (const [registry, count] of [...perRegistry].sort()) {
    const limit = limits[registry];
    if (limit === undefined || mirrored.includes(registry) || count <= limit.pulls) continue;
    const seconds = Math.ceil((count - limit.pulls) / limit.pulls) * limit.windowSeconds;
    if (seconds <= budgetSeconds) continue;
    const who = credentialed.includes(registry) ? "with the stack's credentials" : "anonymously";
    out.push(
      `${count} task images come from ${registry}, which allows ${limit.pulls} pulls per ${limit.windowSeconds}s ${who}: a pre-pull of the images not yet on the runner needs up to ${Math.round(seconds / 60)} min of pull windows, more than its ${Math.round(budgetSeconds / 60)} min; ` +
        `set credentials (reprobench:registries[].username and the secret registryPasswords["${registry}"]) or a pull-through mirror (registries[].mirror)`,
    );
  }
  return out;
}

/** Merges the secret environments of a step (proxy, registries); undefined when none is given. */
export function mergedEnvironment(...parts: (pulumi.Input<Record<string, string>> | undefined)[]): pulumi.Output<Record<string, string>> | undefined {
  const given = parts.filter((p): p is pulumi.Input<Record<string, string>> => p !== undefined);
  if (given.length === 0) return undefined;
  return pulumi.secret(pulumi.all(given).apply((envs) => Object.assign({}, ...envs) as Record<string, string>));
}

// Rules of registries[] and the secret registryPasswords: one entry per registry, a password only for an
// account and from one source, mirrors as plain http(s) URLs.
import type { ReprobenchConfig } from "../schema";
import { type ConfigProblem, duplicates, problem } from "../problems";

/**
 * registries[] and the secret registryPasswords: one entry per registry, a password only for an account and
 * from one source, mirrors as plain http(s)://HOST[:PORT] URLs (credentials belong in the mirror's own
 * config, not in a URL the hosts' files show).
 */
export function registryProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = duplicates(config.registries, (r) => r.host, (i, first) => problem(["registries", i, "host"], `got ${config.registries[i].host} again (also registries[${first}]); expected one entry per registry`));
  config.registries.forEach((registry, i) => {
    const secret = config.registryPasswords[registry.host] !== undefined;
    if (registry.username === null && (registry.passwordFile !== undefined || secret)) {
      out.push(problem(["registries", i, "username"], `missing; registries[${i}] (${registry.host}) has a password (${secret ? `registryPasswords.${registry.host}` : "passwordFile"}) but no account; expected the user name the password belongs to`));
    }
    if (registry.passwordFile !== undefined && secret) {
      out.push(problem(["registryPasswords", registry.host], `set, but registries[${i}] takes its password from passwordFile; expected one source per registry`));
    }
    if (registry.mirror !== null) {
      const url = new URL(registry.mirror);
      if (!["http:", "https:"].includes(url.protocol)) out.push(problem(["registries", i, "mirror"], `got scheme ${url.protocol.replace(/:$/, "")}; expected http or https`));
      else if (url.username !== "" || url.password !== "") out.push(problem(["registries", i, "mirror"], "got a URL with credentials (not shown); expected http(s)://HOST[:PORT] (a pull-through cache takes its upstream credentials in its own config)"));
      else if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "") out.push(problem(["registries", i, "mirror"], `got ${JSON.stringify(registry.mirror)}; expected http(s)://HOST[:PORT] with nothing after it`));
    }
  });
  const hosts = config.registries.map((r) => r.host);
  for (const name of Object.keys(config.registryPasswords)) {
    if (!hosts.includes(name)) out.push(problem(["registryPasswords", name], `names no registry; expected one of registries[].host (${hosts.length > 0 ? hosts.join(", ") : "none configured"})`));
  }
  return out;
}

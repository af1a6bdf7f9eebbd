// The secret keys' rules: none stored in plaintext, each one well-formed and naming a host, and the secrets
// a `pulumi up` cannot do without.
import { type ReprobenchConfig, SECRET_PLACEHOLDER } from "./schema";
import { type ConfigProblem, configKey, problem } from "./problems";
import { proxyCredentials } from "../host-proxy";

const PEM_HEADER = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PEM_PRIVATE_KEY = /^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----\r?\n[\s\S]+\n-----END [A-Z0-9 ]*PRIVATE KEY-----\s*$/;

/**
 * Secret keys whose value is stored in plaintext. `isEncrypted(topKey)` says whether Pulumi holds the
 * top-level key encrypted; placeholders ("[secret]") always count as encrypted. Proxy URLs only count
 * when they carry credentials.
 */
export function plaintextSecretProblems(raw: Record<string, unknown>, isEncrypted: (topKey: string) => boolean): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const keys = raw.sshPrivateKeys;
  if (!isEncrypted("sshPrivateKeys") && keys !== null && typeof keys === "object" && !Array.isArray(keys)) {
    for (const [name, value] of Object.entries(keys)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && PEM_HEADER.test(value)) {
        out.push({ key: configKey(["sshPrivateKeys", name]), message: `stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:sshPrivateKeys.${name}' < KEYFILE` });
      }
    }
  }
  const upstream = raw.proxyUpstream;
  if (!isEncrypted("proxyUpstream") && typeof upstream === "string" && upstream !== SECRET_PLACEHOLDER && /:\/\/[^/@\s]+@/.test(upstream)) {
    out.push({ key: configKey(["proxyUpstream"]), message: "stored in plaintext with credentials (not shown); expected an encrypted value: pulumi config set --secret reprobench:proxyUpstream URL" });
  }
  const urls = raw.proxyUrls;
  if (!isEncrypted("proxyUrls") && urls !== null && typeof urls === "object" && !Array.isArray(urls)) {
    for (const [name, value] of Object.entries(urls)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && proxyCredentials(value) !== "") {
        out.push({ key: configKey(["proxyUrls", name]), message: `stored in plaintext with credentials (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:proxyUrls.${name}' URL` });
      }
    }
  }
  const passwords = raw.registryPasswords;
  if (!isEncrypted("registryPasswords") && passwords !== null && typeof passwords === "object" && !Array.isArray(passwords)) {
    for (const [name, value] of Object.entries(passwords)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && value !== "") {
        out.push({ key: configKey(["registryPasswords", name]), message: `stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:registryPasswords["${name}"]' TOKEN` });
      }
    }
  }
  const token = raw.hfToken;
  if (!isEncrypted("hfToken") && typeof token === "string" && token !== SECRET_PLACEHOLDER && token !== "") {
    out.push({ key: configKey(["hfToken"]), message: "stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret reprobench:hfToken TOKEN" });
  }
  return out;
}

export function secretProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const names = config.hosts.map((h) => h.name);
  for (const [name, value] of Object.entries(config.sshPrivateKeys)) {
    if (name !== "default" && !names.includes(name)) {
      out.push(problem(["sshPrivateKeys", name], `names no host; expected a host name (${names.join(", ")}) or "default"`));
    }
    if (value !== SECRET_PLACEHOLDER && !PEM_PRIVATE_KEY.test(value)) {
      out.push(problem(["sshPrivateKeys", name], "got a value that is not a PEM private key (not shown); expected -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----"));
    }
  }
  if (config.proxyUpstream !== undefined && config.proxyUpstream !== SECRET_PLACEHOLDER && !isProxyUrl(config.proxyUpstream)) {
    out.push(problem(["proxyUpstream"], "got a value that is not a proxy URL (not shown); expected an HTTP proxy URL (http or https, a host and a port, no credentials: the bridge forwards TCP and cannot add them, so run a local proxy on the runner that holds them, as the seed's 127.0.0.1:27890)"));
  }
  return out;
}

/** Secrets a `pulumi up` needs: an SSH key for every host, the proxy URL when the proxy is on. */
export function missingSecretProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  config.hosts.forEach((host, i) => {
    if (host.ssh.privateKeyFile !== undefined || config.sshPrivateKeys[host.name] !== undefined || config.sshPrivateKeys.default !== undefined) return;
    out.push(problem(["sshPrivateKeys", host.name], `missing; host ${host.name} needs an SSH private key: pulumi config set --secret --path 'reprobench:sshPrivateKeys.${host.name}' < KEYFILE (or sshPrivateKeys.default, or hosts[${i}].ssh.privateKeyFile)`));
  });
  if (config.proxy.enabled && config.proxyUpstream === undefined) {
    out.push(problem(["proxyUpstream"], "missing; expected the upstream proxy URL because proxy.enabled is true: pulumi config set --secret reprobench:proxyUpstream 'http://HOST:PORT' (or set proxy.enabled: false)"));
  }
  config.hosts.forEach((host, i) => {
    if (host.proxy === undefined || host.proxy.url !== undefined || host.proxy.urlFile !== undefined) return;
    if (config.proxyUrls[host.name] !== undefined || config.proxyUrls.default !== undefined) return;
    out.push(problem(["proxyUrls", host.name], `missing; host ${host.name} has hosts[${i}].proxy but no proxy URL: pulumi config set --secret --path 'reprobench:proxyUrls.${host.name}' 'http://USER:PASSWORD@HOST:PORT' (or proxyUrls.default, hosts[${i}].proxy.urlFile, or hosts[${i}].proxy.url for a URL without credentials)`));
  });
  config.registries.forEach((registry, i) => {
    if (registry.username === null || registry.passwordFile !== undefined || config.registryPasswords[registry.host] !== undefined) return;
    out.push(problem(["registryPasswords", registry.host], `missing; registries[${i}] (${registry.host}) pulls as ${registry.username} but has no password: pulumi config set --secret --path 'reprobench:registryPasswords["${registry.host}"]' TOKEN (or registries[${i}].passwordFile)`));
  });
  if (config.run.enabled && config.run.environment === "hf-sandbox" && config.hfToken === undefined) {
    out.push(problem(["hfToken"], "missing; expected a Hugging Face token because run.environment is hf-sandbox (each task runs as an HF Jobs sandbox): pulumi config set --secret reprobench:hfToken TOKEN"));
  }
  return out;
}

function isProxyUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return ["http:", "https:"].includes(url.protocol) && url.hostname !== "" && !url.username && !url.password && (url.pathname === "" || url.pathname === "/");
  } catch {
    return false;
  }
}

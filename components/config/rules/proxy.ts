// Rules of hosts[].proxy and the secret proxyUrls: one URL source per host, proxy URLs only, credentials only
// in a secret.
import { type ReprobenchConfig, SECRET_PLACEHOLDER } from "../schema";
import { type ConfigProblem, problem } from "../problems";
import { proxyCredentials, proxyUrlProblem, redactProxyUrl } from "../../host-proxy";

/**
 * hosts[].proxy and the secret proxyUrls: one source of URL per host, every URL a proxy URL (http(s), host,
 * port), credentials only in a secret (proxyUrls or a urlFile). Secret values are never quoted; a
 * credential-free url is.
 */
export function hostProxyProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const names = config.hosts.map((h) => h.name);
  config.hosts.forEach((host, i) => {
    const proxy = host.proxy;
    if (proxy === undefined) return;
    if (proxy.url !== undefined && proxy.urlFile !== undefined) {
      out.push(problem(["hosts", i, "proxy", "urlFile"], `got both proxy.url and proxy.urlFile for host ${host.name}; expected one of them`));
    }
    if (proxy.url !== undefined) {
      const bad = proxyUrlProblem(proxy.url, false);
      if (bad !== null && proxyCredentials(proxy.url) !== "") {
        out.push(problem(["hosts", i, "proxy", "url"], `got a URL with credentials for host ${host.name} (not shown: ${redactProxyUrl(proxy.url)}); expected credentials only in a secret: pulumi config set --secret --path 'reprobench:proxyUrls.${host.name}' URL (and drop hosts[${i}].proxy.url), or hosts[${i}].proxy.urlFile`));
      } else if (bad !== null) {
        out.push(problem(["hosts", i, "proxy", "url"], `got ${JSON.stringify(proxy.url)} for host ${host.name}: ${bad}`));
      }
    }
    const own = config.proxyUrls[host.name];
    if (own !== undefined && (proxy.url !== undefined || proxy.urlFile !== undefined)) {
      out.push(problem(["proxyUrls", host.name], `set, but host ${host.name} takes its proxy URL from hosts[${i}].proxy.${proxy.url !== undefined ? "url" : "urlFile"}; expected one source per host`));
    }
  });
  for (const [name, value] of Object.entries(config.proxyUrls)) {
    if (name !== "default") {
      const index = names.indexOf(name);
      if (index === -1) {
        out.push(problem(["proxyUrls", name], `names no host; expected a host name (${names.join(", ")}) or "default"`));
        continue;
      }
      if (config.hosts[index].proxy === undefined) {
        out.push(problem(["proxyUrls", name], `set, but host ${name} has no hosts[${index}].proxy; expected proxy: { noProxy: [...] } on that host (or remove proxyUrls.${name})`));
      }
    }
    if (value === SECRET_PLACEHOLDER) continue;
    const bad = proxyUrlProblem(value, true);
    if (bad !== null) out.push(problem(["proxyUrls", name], `got a value that is not a proxy URL (not shown): ${bad}`));
  }
  return out;
}

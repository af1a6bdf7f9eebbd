// A host's outbound HTTP proxy (hosts[].proxy of the stack): the standard variables host scripts read,
// the daemon.json "proxies" dockerd pulls through, and how a proxy URL is shown (never its credentials).
// Pure: no Pulumi, so the config rules and the tests use the same functions.
import { createHash } from "node:crypto";

/** The variables every outbound host script gets (curl, git, uv, pip and skopeo read them). */
export const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"] as const;

/** The standard proxy variables for a URL and its NO_PROXY list (upper- and lower-case, as tools differ). */
export function proxyEnvironment(url: string, noProxy: readonly string[]): Record<(typeof PROXY_VARIABLES)[number], string> {
  const none = noProxy.join(",");
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: none, no_proxy: none };
}

/** Where a URL's authority (userinfo@host:port) starts and ends, or null for text that is no URL. */
function authority(url: string): { start: number; end: number } | null {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url);
  if (!m) return null;
  const start = m[0].length;
  const rest = url.slice(start);
  const stop = rest.search(/[/?#]/);
  return { start, end: stop === -1 ? url.length : start + stop };
}

/** The userinfo of a URL ("user:password"), or "" when it has none. */
export function proxyCredentials(url: string): string {
  const a = authority(url);
  if (!a) return "";
  const at = url.slice(a.start, a.end).lastIndexOf("@");
  return at === -1 ? "" : url.slice(a.start, a.start + at);
}

/** The URL as it may be shown: credentials replaced by "***" ("http://***@proxy.sim:3128"). */
export function redactProxyUrl(url: string): string {
  const a = authority(url);
  if (!a) return url.includes("@") ? "[proxy URL not shown]" : url;
  const at = url.slice(a.start, a.end).lastIndexOf("@");
  return at === -1 ? url : `${url.slice(0, a.start)}***${url.slice(a.start + at)}`;
}

/**
 * What is wrong with a proxy URL, or null: http(s), a host, an explicit port, nothing after the authority.
 * With `allowCredentials` false a URL with userinfo is refused (it belongs in a secret). The message never
 * quotes the URL (it may carry credentials).
 */
export function proxyUrlProblem(url: string, allowCredentials: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL; expected http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT in a secret)";
  }
  if (!["http:", "https:"].includes(parsed.protocol)) return `scheme ${parsed.protocol.replace(/:$/, "")}; expected http or https`;
  if (parsed.hostname === "") return "no host; expected http://HOST:PORT";
  if (!/:\d+$/.test(url.slice(0, (authority(url) ?? { end: url.length }).end))) return "no port; expected an explicit port, e.g. http://proxy.example:3128";
  if ((parsed.pathname !== "" && parsed.pathname !== "/") || parsed.search !== "" || parsed.hash !== "") return "a path, query or fragment; expected nothing after HOST:PORT";
  if (!allowCredentials && (parsed.username !== "" || parsed.password !== "")) return "credentials in a key that is not secret";
  return null;
}

/** One NO_PROXY entry: "*", a host or domain (".example.com", "*.example.com"), an IP or CIDR, optionally ":port". */
export const NO_PROXY_ENTRY =
  /^(\*|(\*?\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?|\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?(:\d{1,5})?|\[?[0-9A-Fa-f:]+\]?(\/\d{1,3})?)$/;

/** daemon.json "proxies" (Docker ≥ 23): what dockerd pulls images through. */
export interface DaemonProxies {
  "http-proxy": string;
  "https-proxy": string;
  "no-proxy": string;
}

/** daemon.json "proxies" for a URL and its NO_PROXY list. */
export function daemonProxies(url: string, noProxy: readonly string[]): DaemonProxies {
  return { "http-proxy": url, "https-proxy": url, "no-proxy": noProxy.join(",") };
}

/**
 * sha256 of the canonical (keys sorted, compact) JSON of daemon.json "proxies": what the drift check
 * reports instead of the URL. Equal to docker-daemon-check.sh's `jq -cS .proxies | sha256sum`.
 */
export function proxiesDigest(proxies: DaemonProxies): string {
  const sorted = Object.fromEntries(Object.entries(proxies).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash("sha256").update(`${JSON.stringify(sorted)}\n`).digest("hex");
}

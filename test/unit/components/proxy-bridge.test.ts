// proxy-bridge.ts: the upstream proxy URL is a secret (it may carry credentials); only its host and port
// may reach the bridge script's inputs, and a bad URL must be refused without echoing it.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, formatProblems, parseConfig, readStackFile } from "../../../components/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { type BridgeSettings, PROXY_BRIDGE_UNIT, bridgeScriptEnv, upstreamEndpoint } from "../../../components/proxy-bridge";

const REPO = resolve(__dirname, "../../..");

function stack(name: "a100" | "local", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

/** The bridge's settings from a stack config, as infra/cluster-program.ts passes them to ProxyBridge. */
function bridgeSettings(c: ReprobenchConfig): BridgeSettings {
  return { bridgePort: c.proxy.bridgePort, containerHost: c.proxy.containerHost, checkImage: c.toolBundle.canaryImage, checkUrl: c.proxy.checkUrl };
}
const a100 = () => bridgeSettings(stack("a100"));

const USER = "alice-proxy-user";
const PASSWORD = "s3cr3t-P@ss:word/with?odd#chars";
const CREDENTIALED = `http://${USER}:${encodeURIComponent(PASSWORD)}@proxy.internal:3128`;

describe("upstreamEndpoint", () => {
  it.each([
    ["http://127.0.0.1:27890", "127.0.0.1", 27890], // seed 000 line 421
    ["http://[::1]:8080", "[::1]", 8080], // socat's TCP:[::1]:8080 form
    ["http://proxy.internal", "proxy.internal", 80],
    ["http://proxy.internal/", "proxy.internal", 80],
    ["https://proxy.internal", "proxy.internal", 443],
    ["http://proxy.internal:80", "proxy.internal", 80],
    ["https://proxy.internal:443", "proxy.internal", 443],
    ["http://proxy.internal:443", "proxy.internal", 443],
    ["https://proxy.internal:8443", "proxy.internal", 8443],
    ["HTTP://Proxy.Internal:3128", "proxy.internal", 3128],
  ])("%s → %s port %d", (url, host, port) => {
    expect(upstreamEndpoint(url)).toEqual({ host, port });
  });

  it.each(["not a url", "", "127.0.0.1:27890x", "http://"])(
    "refuses %j with a message naming the key, without echoing the value",
    (url) => {
      let message = "";
      try {
        upstreamEndpoint(url);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe("reprobench:proxyUpstream: expected a URL such as http://127.0.0.1:27890");
      expect(message).not.toContain(USER);
      expect(message).not.toContain("s3cr3t");
    },
  );

  it.each([CREDENTIALED, `http://${USER}:${PASSWORD}@proxy.internal:99999`])("refuses credentials (a TCP bridge cannot add them) without echoing them", (url) => {
    expect(() => upstreamEndpoint(url)).toThrow(/carries credentials|expected a URL/);
    try {
      upstreamEndpoint(url);
    } catch (err) {
      expect((err as Error).message).not.toContain(USER);
      expect((err as Error).message).not.toContain("s3cr3t");
    }
  });

  it.each(["socks5://proxy.internal", "socks5h://proxy.internal:1080"])("refuses %s: the bridge forwards an HTTP proxy", (url) => {
    expect(() => upstreamEndpoint(url)).toThrow(/forwards an HTTP proxy; socks5h? is not supported/);
  });
});

describe("bridgeScriptEnv", () => {
  it("a100 (upstream set with --secret): the seed's ports and check", () => {
    const env = bridgeScriptEnv(a100(), "http://proxy.internal:3128");
    expect(env).toEqual({
      UNIT: PROXY_BRIDGE_UNIT,
      BRIDGE_PORT: "27891", // seed PROXY_BRIDGE_PORT (line 415)
      UPSTREAM_HOST: "proxy.internal",
      UPSTREAM_PORT: "3128",
      CONTAINER_HOST: "host.docker.internal",
      CHECK_IMAGE: "alexgshaw/regex-chess:20251031", // seed CANARY_IMAGE (line 389)
      CHECK_URL: "https://example.com/",
    });
  });

  it("a credentialed upstream never reaches the env or a rendered script", () => {
    expect(() => bridgeScriptEnv(a100(), CREDENTIALED)).toThrow(/carries credentials/);
  });

  it("a query or path on the upstream URL does not leak either", () => {
    const env = bridgeScriptEnv(a100(), "http://proxy.internal:3128/?token=tok-123456");
    expect(JSON.stringify(env)).not.toContain("tok-123456");
    expect(env.UPSTREAM_HOST).toBe("proxy.internal");
  });

  it("local: the committed loopback proxy (127.0.0.1:27890, seed line 421)", () => {
    const c = stack("local");
    const env = bridgeScriptEnv(bridgeSettings(c), c.proxyUpstream!);
    expect(env.UPSTREAM_HOST).toBe("127.0.0.1");
    expect(env.UPSTREAM_PORT).toBe("27890");
  });

  it("follows its settings: bridge port, container host, check URL and check image", () => {
    const settings: BridgeSettings = { bridgePort: 28000, containerHost: "gateway.local", checkUrl: "https://example.org/ok", checkImage: "registry.local/canary:1" };
    expect(bridgeScriptEnv(settings, "http://127.0.0.1:27890")).toEqual({
      UNIT: PROXY_BRIDGE_UNIT,
      BRIDGE_PORT: "28000",
      UPSTREAM_HOST: "127.0.0.1",
      UPSTREAM_PORT: "27890",
      CONTAINER_HOST: "gateway.local",
      CHECK_URL: "https://example.org/ok",
      CHECK_IMAGE: "registry.local/canary:1",
    });
  });

  it("every input is exportable by the host-script prelude", () => {
    expect(() => envPrelude(bridgeScriptEnv(a100(), "http://proxy.internal:3128"))).not.toThrow();
  });

  it("a bad upstream URL fails with the proxyUpstream message", () => {
    expect(() => bridgeScriptEnv(a100(), "::::")).toThrow("reprobench:proxyUpstream: expected a URL");
  });
});

/** Names a host script refuses to run without (`: "${NAME:?}"`). */
function requiredInputs(script: string): string[] {
  return [...hostScript(script).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
}

describe("bridgeScriptEnv against proxy-bridge.sh", () => {
  it("supplies every input the script insists on (no secret needed at all)", () => {
    const env = bridgeScriptEnv(a100(), "http://proxy.internal:3128");
    const required = requiredInputs("proxy-bridge");
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !(name in env))).toEqual([]);
  });
});

import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import { guardHooks } from "./restart-guard";

export const PROXY_BRIDGE_UNIT = "reprobench-proxy-bridge";

/**
 * Host and port of the upstream HTTP proxy, in socat's address form (IPv6 in brackets). The bridge
 * forwards plain TCP, so it cannot add credentials or speak SOCKS: such upstreams are refused with
 * what to do instead.
 */
export function upstreamEndpoint(url: string): { host: string; port: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("reprobench:proxyUpstream: expected a URL such as http://127.0.0.1:27890");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`reprobench:proxyUpstream: the bridge forwards an HTTP proxy; ${parsed.protocol.replace(":", "")} is not supported (run an HTTP proxy on the runner that uses it, and point proxyUpstream there)`);
  }
  if (parsed.username || parsed.password) {
    throw new Error("reprobench:proxyUpstream: carries credentials, which a TCP bridge cannot add to the containers' requests; run a local proxy on the runner that holds them (the seed's 127.0.0.1:27890) and point proxyUpstream at it");
  }
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  return { host: parsed.hostname, port };
}

/** Where the bridge listens and how it is proved from a container. */
export interface BridgeSettings {
  /** Port on the docker bridge gateway (seed: 27890). */
  bridgePort: number;
  /** The name containers use for the gateway (host.docker.internal). */
  containerHost: string;
  /** Image the check runs in (a task image). */
  checkImage: string;
  /** URL fetched from the check container through the bridge. */
  checkUrl: string;
}

/** Inputs of proxy-bridge.sh (no secrets: the upstream's host and port only). */
export function bridgeScriptEnv(settings: BridgeSettings, upstreamUrl: string): Record<string, string> {
  const { host, port } = upstreamEndpoint(upstreamUrl);
  return {
    UNIT: PROXY_BRIDGE_UNIT,
    BRIDGE_PORT: String(settings.bridgePort),
    UPSTREAM_HOST: host,
    UPSTREAM_PORT: String(port),
    CONTAINER_HOST: settings.containerHost,
    CHECK_IMAGE: settings.checkImage,
    CHECK_URL: settings.checkUrl,
  };
}

export interface ProxyBridgeArgs {
  /** The runner host (its connection, proxy and restart guard). */
  readonly host: ClusterHost;
  readonly settings: BridgeSettings;
  /** reprobench:proxyUpstream (secret: it may carry credentials). */
  readonly upstream: pulumi.Input<string>;
}

/**
 * socat from the docker bridge gateway to the runner's proxy, as a systemd unit (restarts on failure
 * and survives reboots, unlike the seed's tmux session); verified from a container.
 */
export class ProxyBridge extends pulumi.ComponentResource {
  /** gateway:port task containers use (via host.docker.internal). */
  public readonly listen: pulumi.Output<string>;

  constructor(name: string, args: ProxyBridgeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:ProxyBridge", name, {}, opts);
    const create = pulumi.secret(pulumi.output(args.upstream).apply((u) => scriptWithEnv(["retry", "proxy-bridge"], bridgeScriptEnv(args.settings, u))));
    const unit = new CheckedCommand(
      `${name}-unit`,
      {
        connection: args.host.connection,
        create,
        check: scriptWithEnv("proxy-bridge-check", { UNIT: PROXY_BRIDGE_UNIT }),
        delete: scriptWithEnv("proxy-bridge-remove", { UNIT: PROXY_BRIDGE_UNIT }),
        // Rewriting the unit and restarting socat repairs drift in place.
        onDrift: "update",
        timeoutSeconds: 600,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on: e.g. no container starts before daemon.json is settled.
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-unit`, args.host.restartGuard, "the proxy bridge") },
    );
    this.listen = unit.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ listen: this.listen });
  }
}

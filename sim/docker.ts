// The docker CLI as the sim's steps use it: commands with timeouts, container state, and an instance's resources by label.
import { join } from "node:path";
import { mustRun, run, type RunResult } from "./exec";
import { HASH_LABEL } from "./images";
import { belongsTo, DEFAULT_INSTANCE, HOST_LABEL, INSTANCE_LABEL, ROLE_LABEL, SIM_LABEL, type SimInstance } from "./layout";
import type { Log } from "./log";

export async function docker(args: string[], timeoutMs = 60_000): Promise<string> {
  return mustRun(["docker", ...args], { timeoutMs });
}

export async function tryDocker(args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return run(["docker", ...args], { timeoutMs });
}

/** Names of an instance's containers / volumes / networks (everything with the sim label). */
export async function listSimResources(instance: SimInstance = DEFAULT_INSTANCE): Promise<{ containers: string[]; volumes: string[]; networks: string[] }> {
  const filter = `label=${SIM_LABEL}`;
  const format = `{{.Name}} {{.Label "${INSTANCE_LABEL}"}}`;
  const mine = (out: string) =>
    out
      .split("\n")
      .map((l) => l.trim().split(" "))
      .filter(([name, label]) => name && belongsTo(instance, label ?? ""))
      .map(([name]) => name)
      .sort();
  return {
    containers: mine(await docker(["ps", "-a", "--filter", filter, "--format", format.replace(".Name", ".Names")])),
    volumes: mine(await docker(["volume", "ls", "--filter", filter, "--format", format])),
    networks: mine(await docker(["network", "ls", "--filter", filter, "--format", format])),
  };
}

/** Starts dockerd via scripts/dockerd.sh when no engine answers (fresh machines, CI). */
export async function ensureDockerEngine(root: string, log: Log): Promise<void> {
  if ((await run(["docker", "info"], { timeoutMs: 20_000 })).code === 0) return;
  log("no docker engine answers; running scripts/dockerd.sh");
  await mustRun(["bash", join(root, "scripts", "dockerd.sh")], { timeoutMs: 10 * 60_000, inheritStderr: true });
}

export async function containerState(name: string): Promise<string | undefined> {
  const r = await tryDocker(["inspect", "--type", "container", "--format", "{{.State.Status}}", name], 20_000);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** Networks a container is attached to (empty when it does not exist). */
export async function containerNetworks(name: string): Promise<string[]> {
  const r = await tryDocker(["inspect", "--type", "container", "--format", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", name], 20_000);
  return r.code === 0 ? r.stdout.trim().split(/\s+/).filter(Boolean) : [];
}

export async function containerHash(name: string): Promise<string> {
  return (await docker(["inspect", "--type", "container", "--format", `{{index .Config.Labels "${HASH_LABEL}"}}`, name])).trim();
}

/** Existing host containers of an instance: container name → host name. */
export async function existingHosts(instance: SimInstance): Promise<Map<string, string>> {
  const out = await docker(["ps", "-a", "--filter", `label=${ROLE_LABEL}=host`, "--format", `{{.Names}} {{.Label "${HOST_LABEL}"}} {{.Label "${INSTANCE_LABEL}"}}`]);
  const hosts = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [container, host, label] = line.trim().split(" ");
    if (container && host && belongsTo(instance, label ?? "")) hosts.set(container, host);
  }
  return hosts;
}

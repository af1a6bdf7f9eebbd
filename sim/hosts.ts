// The host containers: created with their keys, provisioned once running, and waited for until they answer over SSH and reach the outside only through the proxy.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { docker, tryDocker } from "./docker";
import { hostCreateArgs, simLabels } from "./docker-args";
import { mustRun, waitFor } from "./exec";
import { simCacheDir } from "./images";
import { AGENT_WHEELS_DIR, FORWARDER_PORT, FORWARDER_UPSTREAM_FILE, MODEL_DIR, RUNNER_HOST, SUDO_USER, WHEELS_DIR, type ClusterPlan, type HostPlan } from "./layout";
import { ensureHostGpus } from "./gpus";
import type { Log } from "./log";
import { ensureModelDirs } from "./model-dir";
import { sshRun } from "./ssh";

export async function createHost(plan: ClusterPlan, host: HostPlan, image: string): Promise<void> {
  const abs = (p: string) => join(plan.root, p);
  await docker(["volume", "create", ...simLabels(plan), host.volume]);
  await docker(hostCreateArgs(plan, host, image).slice(1));
  // Keys go in before first boot, so sshd starts with the pinned host key and our client key.
  await docker(["cp", abs(host.hostPrivateKeyFile), `${host.container}:/etc/ssh/ssh_host_ed25519_key`]);
  await docker(["cp", abs(host.hostKeyFile), `${host.container}:/etc/ssh/ssh_host_ed25519_key.pub`]);
  await docker(["cp", abs(`${plan.privateKeyFile}.pub`), `${host.container}:/root/.ssh/authorized_keys`]);
  // Owned by root (docker cp), in bench's own 0700 .ssh: sshd's StrictModes accepts that.
  await docker(["cp", abs(`${plan.privateKeyFile}.pub`), `${host.container}:/home/${SUDO_USER}/.ssh/authorized_keys`]);
}

/**
 * Host setup that needs a running container (idempotent): the placeholder model directory, the GPU
 * inventory and the sparse model directories (sim/gpus.ts, sim/model-dir.ts), and on the runner host the simulated upstream proxy (sim/proxy/) that
 * stands in for the user's proxy on 127.0.0.1:27890 in seed 000.
 */
export async function provisionHost(plan: ClusterPlan, host: HostPlan, proxyUrl: string, log: Log = () => undefined): Promise<void> {
  const model = join(plan.root, "sim", "sglang-double", "tiny-model");
  if (existsSync(model)) {
    await docker(["exec", host.container, "mkdir", "-p", MODEL_DIR]);
    await docker(["cp", `${model}/.`, `${host.container}:${MODEL_DIR}`]);
  }
  // Simulated GPUs (a fresh host gets the default inventory; `sim gpus` changes survive) and the model
  // directories (sparse shards, written on the host; the tokenizer comes from the placeholder above).
  await ensureHostGpus(host, log);
  if (existsSync(join(plan.root, "sim", "models", "hf_model.py"))) {
    const made = await ensureModelDirs(plan.root, host);
    if (made.model.changed || made.cache.changed) log(`${host.name}: model ${made.model.dir} (${made.model.shards} sparse shards, ${made.model.total_size} bytes) and its HF cache copy ${made.cache.snapshot}`);
  }
  const proxy = join(plan.root, "sim", "proxy");
  if (host.name === runnerOf(plan).name && existsSync(join(proxy, "sim-proxy.py")) && existsSync(join(proxy, "reprobench-sim-proxy.service"))) {
    await docker(["exec", host.container, "mkdir", "-p", "/usr/local/lib/reprobench"]);
    await docker(["cp", join(proxy, "sim-proxy.py"), `${host.container}:/usr/local/lib/reprobench/sim-proxy.py`]);
    await docker(["cp", join(proxy, "reprobench-sim-proxy.service"), `${host.container}:/etc/systemd/system/reprobench-sim-proxy.service`]);
    // The upstream URL (credentials) goes through stdin into a root-only file, never onto a command line.
    await mustRun(["docker", "exec", "-i", host.container, "sh", "-c", `install -d -m 0700 -o root -g root ${FORWARDER_UPSTREAM_FILE.replace(/\/[^/]+$/, "")} && umask 077 && cat > ${FORWARDER_UPSTREAM_FILE}.new && mv ${FORWARDER_UPSTREAM_FILE}.new ${FORWARDER_UPSTREAM_FILE}`], { input: `${proxyUrl}\n`, timeoutMs: 30_000 });
    await docker(["exec", host.container, "systemctl", "daemon-reload"]);
    await docker(["exec", host.container, "systemctl", "enable", "reprobench-sim-proxy.service"]);
    await docker(["exec", host.container, "systemctl", "restart", "reprobench-sim-proxy.service"]);
    // Harbor and the asciinema wheel install from here (harbor.pipFindLinks, toolBundle.asciinemaWheelUrl),
    // and task containers install mini-swe-agent from the agent wheelhouse: the sim hosts cannot be
    // assumed to reach PyPI. Each is copied once per content.
    for (const [cache, target] of [["wheelhouse", WHEELS_DIR], ["agent-wheelhouse", AGENT_WHEELS_DIR]] as const) {
      const wheels = simCacheDir(cache);
      if (!existsSync(wheels)) continue;
      const stamp = readdirSync(wheels).filter((f) => f.endsWith(".whl")).sort().join("\n");
      const have = (await tryDocker(["exec", host.container, "cat", `${target}/.reprobench-stamp`])).stdout;
      if (have !== stamp) {
        await docker(["exec", host.container, "mkdir", "-p", target]);
        await docker(["cp", `${wheels}/.`, `${host.container}:${target}`], 600_000);
        await mustRun(["docker", "exec", "-i", host.container, "sh", "-c", `cat > ${target}/.reprobench-stamp`], { input: stamp });
      }
    }
  }
}

export async function waitSystemd(host: HostPlan, log: Log): Promise<void> {
  let last = "";
  const systemd = await waitFor(
    `systemd on ${host.name}`,
    async () => {
      const r = await tryDocker(["exec", host.container, "systemctl", "is-system-running"], 15_000);
      last = (r.stdout + r.stderr).trim();
      return last === "running" || last === "degraded" ? last : undefined;
    },
    { timeoutMs: 120_000, lastError: () => last },
  );
  if (systemd === "degraded") {
    const failed = await tryDocker(["exec", host.container, "systemctl", "--failed", "--no-legend", "--plain"], 15_000);
    log(`warning: ${host.name}: systemd is degraded; failed units: ${failed.stdout.trim().replace(/\s+/g, " ")}`);
  }
}

/** The host that runs the router, Harbor and the loopback forwarder. */
function runnerOf(plan: ClusterPlan): HostPlan {
  return plan.hosts.find((h) => h.name === RUNNER_HOST) ?? plan.hosts[plan.hosts.length - 1];
}

export async function waitHostReady(plan: ClusterPlan, host: HostPlan, proxyUrl: string, log: Log, currentImage: boolean): Promise<void> {
  const started = Date.now();
  let last = "";
  const ssh = (command: string, timeoutMs = 30_000) => sshRun(plan, host, command, { timeoutMs });
  await waitFor(
    `sshd on ${host.name} (127.0.0.1:${host.sshPort})`,
    async () => {
      const r = await ssh("true", 15_000);
      last = r.stderr.trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  await waitFor(
    `docker info over SSH on ${host.name}`,
    async () => {
      const r = await ssh("docker info --format '{{.ServerVersion}}'", 20_000);
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 90_000, lastError: () => last },
  );
  // The local stack logs in to worker-a as the sudo user: it must log in, sudo without a password and
  // use the Docker socket (a host from an older image has no such user: simUp notes it).
  if (currentImage) {
    const login = await sshRun(plan, host, "sudo -n true && docker version --format '{{.Server.Version}}'", { user: SUDO_USER, timeoutMs: 30_000 });
    if (login.code !== 0) {
      throw new Error(`${host.name}: the user ${SUDO_USER} (NOPASSWD sudo, docker group; Pulumi.local.yaml logs in to worker-a as it) cannot log in, sudo or use docker there: ${(login.stderr || login.stdout).trim().split("\n").slice(-2).join(" ")}`);
    }
  }
  // The outside is reachable only through the proxy: through it the registry answers, directly it must
  // not (a sim friendlier than a real cluster would hide missing proxy settings). The URL with the
  // credentials travels on stdin and into curl's environment, never onto a command line.
  // HEAD /v2/: GET would get the gate's 401 challenge; HEAD is served anonymously, by the registry behind it.
  const registryUrl = `http://${plan.registry.hostname}:${plan.registry.port}/v2/`;
  const viaProxy = `IFS= read -r u; export http_proxy="$u"; curl -fsS -I -o /dev/null --max-time 20 ${registryUrl}`;
  await waitFor(
    `${registryUrl} through ${plan.proxy.hostname}:${plan.proxy.port} from ${host.name}`,
    async () => {
      const r = await sshRun(plan, host, viaProxy, { input: `${proxyUrl}\n`, timeoutMs: 40_000 });
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  const direct = await ssh(`curl --noproxy '*' --connect-timeout 3 --max-time 6 -sS -o /dev/null ${registryUrl}`, 30_000);
  if (direct.code === 0) {
    throw new Error(`${host.name}: a direct request to ${registryUrl} succeeded; the sim hosts must reach the outside network (${plan.outside.network.subnet}) only through ${plan.proxy.hostname}:${plan.proxy.port}`);
  }
  const why = (direct.stderr.trim().split("\n")[0] || `exit ${direct.code}`).slice(0, 120);
  let forwarder = "";
  if (host.name === runnerOf(plan).name) {
    await waitFor(
      `the forwarder 127.0.0.1:${FORWARDER_PORT} on ${host.name}`,
      async () => {
        const r = await ssh(`curl -fsS -I -o /dev/null --max-time 20 -x http://127.0.0.1:${FORWARDER_PORT} ${registryUrl}`, 40_000);
        last = (r.stderr || r.stdout).trim();
        return r.code === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, lastError: () => last },
    );
    forwarder = `; through the forwarder 127.0.0.1:${FORWARDER_PORT} OK`;
  }
  // The mirror is on the cluster network: reached directly, never through the proxy.
  const mirrorUrl = `http://${plan.mirror.hostname}:${plan.mirror.port}/v2/`;
  await waitFor(
    `${mirrorUrl} (direct) from ${host.name}`,
    async () => {
      const r = await ssh(`curl --noproxy '*' -fsS -o /dev/null --max-time 10 ${mirrorUrl}`, 30_000);
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  log(`${host.name}: direct ${registryUrl} refused (${why}); through ${plan.proxy.hostname}:${plan.proxy.port} OK${forwarder}; ${mirrorUrl} direct OK`);
  log(`${host.name} ready (${host.ip}, ssh 127.0.0.1:${host.sshPort}) in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

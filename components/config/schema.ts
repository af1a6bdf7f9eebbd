// The typed stack configuration (Pulumi namespace `reprobench`). Pure: no Pulumi, no filesystem, so the CLI
// and the tests can validate a stack file without the engine. Every default reproduces the final run of
// seed 000 (2 × 8×A100, Qwen3.8-27B, SGLang TP4×DP2 per host, Harbor 0.21.0 + Terminus-2, 89 tasks, c25/a20,
// agent timeout 6×, agent setup timeout 5×). Cross-field rules live in rules/ (parse.ts runs them).
import { z } from "zod";
import { parseCidr, parseIpv4 } from "../cidr";
import { NO_PROXY_ENTRY } from "../host-proxy";

export { cidrContains, parseCidr, parseIpv4 } from "../cidr";
export { isGitUrl } from "../run-config";

export const HOST_ROLES = ["worker", "router", "runner"] as const;
export type HostRole = (typeof HOST_ROLES)[number];

/** What readStackFile puts in place of an encrypted (`secure:`) value. */
export const SECRET_PLACEHOLDER = "[secret]";

/** Top-level keys whose values are secrets: never printed, wrapped in pulumi.secret at run time. */
export const SECRET_KEYS = ["sshPrivateKeys", "proxyUpstream", "hfToken", "proxyUrls", "registryPasswords"] as const;

/**
 * Top-level keys under their old name, old → new. A stack file may still use the old name (parseConfig
 * warns, and names its problems as the file does); never both.
 */
export const RENAMED_KEYS: Readonly<Record<string, string>> = { sglang: "modelServer" };

/** Model server engines: SGLang (seed 000/003) or vLLM (seed 002 Run 2). */
export const ENGINES = ["sglang", "vllm"] as const;
export type Engine = (typeof ENGINES)[number];
/** Entry points per engine; the first is the default. */
export const LAUNCHERS: Record<Engine, readonly string[]> = {
  sglang: ["sglang serve", "python3 -m sglang.launch_server"],
  vllm: ["vllm serve"],
};

// ---------------------------------------------------------------------------------------------------------
// Small value checks, exported because the cross-field rules and the Pulumi loader reuse them.

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const GIT_SHA1 = /^[0-9a-f]{40}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CONTAINER_USER = /^(ssh-user|[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?)$/;
// Docker reference: [registry[:port]/]path[:tag][@sha256:digest] (lower-case path components).
const IMAGE_REF =
  /^(?:[A-Za-z0-9.-]+(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/;
const SSH_KEY_TYPES = [
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
];

/**
 * Checks an OpenSSH public key line ("ssh-ed25519 AAAA… [comment]", the authorized_keys / .pub format):
 * known type, base64 blob whose embedded type name matches. Returns what is wrong, or null.
 */
export function checkPublicKeyLine(line: string): string | null {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2) return "expected '<type> <base64>' as in a .pub file";
  const [type, blob] = parts;
  if (!SSH_KEY_TYPES.includes(type)) return `unknown key type '${type}' (expected ${SSH_KEY_TYPES.join(", ")})`;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return "the key blob is not base64";
  const bytes = Buffer.from(blob, "base64");
  if (bytes.length < 4) return "the key blob is too short";
  const nameLength = bytes.readUInt32BE(0);
  if (nameLength + 4 > bytes.length || bytes.subarray(4, 4 + nameLength).toString("latin1") !== type) {
    return `the key blob does not encode a ${type} key`;
  }
  return null;
}


// ---------------------------------------------------------------------------------------------------------
// Field schemas. Messages are the "expected …" half of a problem; problems.ts adds the key and bad value.

const port = z
  .number()
  .int({ message: "expected a TCP port (integer 1–65535)" })
  .min(1, { message: "expected a TCP port (integer 1–65535)" })
  .max(65535, { message: "expected a TCP port (integer 1–65535)" });
const positiveInt = z.number().int().min(1);
const nonNegativeInt = z.number().int().min(0);
const sha256 = z
  .string()
  .regex(SHA256_HEX, { message: "expected a sha256 digest (64 hex characters)" })
  .transform((s) => s.toLowerCase());
/**
 * Absolute path on a cluster host. No '.' or '..' component: host scripts create, replace and remove
 * these directories (components/scripts/owned-dir.sh refuses such paths too), so a path must say plainly
 * where it is. Scripts get paths as inputs, never spliced into shell text, so any other character is fine.
 */
const hostPath = z
  .string()
  .regex(/^\/[^\0\n]*$/, { message: "expected an absolute path on the host (starting with '/', no newline)" })
  .refine((p) => !p.split("/").some((c) => c === "." || c === ".."), { message: "expected a path without '.' or '..' components" });
/**
 * A directory reprobench replaces and removes as a whole (the tool bundle, the venv, the dataset): no
 * top-level directory such as /opt, and no trailing '/' (owned-dir.sh refuses both on the host as well).
 */
const ownedDir = hostPath.refine((p) => /^\/[^/]+\/[^/]+(\/[^/]+)*$/.test(p), {
  message: "expected a directory of its own at least two levels deep, such as /var/lib/reprobench/NAME, without a trailing '/' (reprobench replaces and removes it)",
});
/** Path on the machine running Pulumi: relative to the project directory, absolute, or ~/… */
const localPath = z.string().regex(/^[^\0\n]+$/, { message: "expected a file path" });
const imageRef = z
  .string()
  .regex(IMAGE_REF, { message: "expected a docker image reference such as lmsysorg/sglang:v0.5.23-runtime" })
  .refine((s) => s.includes("@sha256:") || /:[^/]+$/.test(s), {
    message: "expected an image pinned by tag or @sha256 digest (name:tag or name@sha256:…)",
  });
const ipv4 = z.string().refine((s) => parseIpv4(s) !== null, { message: "expected an IPv4 address (a.b.c.d)" });
const envMap = z.record(
  z.string().regex(ENV_NAME, { message: "expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*)" }),
  z.string(),
);
const containerUser = z.string().regex(CONTAINER_USER, {
  message: "expected 'ssh-user' (the SSH login's uid:gid, as the manual's $(id -u):$(id -g)) or uid[:gid]",
});
const containerName = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, { message: "expected a docker container name ([a-zA-Z0-9][a-zA-Z0-9_.-]*)" });
const ULIMIT_NAMES = [
  "core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice",
  "nofile", "nproc", "rss", "rtprio", "rttime", "sigpending", "stack",
] as const;
/** docker --ulimit: a single integer sets soft = hard (-1 = unlimited). */
const ulimits = z.record(
  z.enum(ULIMIT_NAMES),
  z.union([z.number().int().min(-1), z.object({ soft: z.number().int().min(-1), hard: z.number().int().min(-1) }).strict()], {
    errorMap: () => ({ message: "expected an integer (-1 = unlimited) or { soft, hard }" }),
  }),
);
const multiplier = z.number().positive({ message: "expected a number > 0" });
/** A full git commit id (a dataset's pin). */
const gitCommit = z.string().regex(GIT_SHA1, { message: "expected a full 40-character lower-case git commit id" });
/** Directory of task directories inside a dataset; "" when the tasks sit at the top. */
const tasksSubdir = z.string().regex(/^$|^[^/\0\n][^\0\n]*$/, { message: "expected a relative directory (or empty)" });

// ---------------------------------------------------------------------------------------------------------
// Hosts

const sshSchema = z
  .object({
    /** Address the control machine SSHes to (DNS name or IP). */
    host: z.string().refine((s) => HOSTNAME.test(s) || parseIpv4(s) !== null || /^[0-9a-fA-F:]+:[0-9a-fA-F:]*$/.test(s), {
      message: "expected a DNS name or IP address",
    }),
    port: port.default(22),
    /**
     * The login. Every host script needs root's rights (daemon.json, systemd units, /var/lib/reprobench):
     * either log in as root, or as a user with `sudo: true`.
     */
    user: z.string().regex(/^[a-z_][a-z0-9_-]*\$?$/, { message: "expected a unix user name" }).default("root"),
    /**
     * The (non-root) login runs every host script through `sudo -n` (NOPASSWD sudo, no terminal). Required
     * for a user other than root, refused for root (which needs none). The user must also be able to use the
     * Docker socket itself (the docker group): the Docker provider dials `docker system dial-stdio` as the
     * login, where sudo cannot help. Checked on every host before anything on any host changes.
     */
    sudo: z.boolean().default(false),
    /** Pinned host key, authorized_keys format ("ssh-ed25519 AAAA…"). Exactly one of hostKey/hostKeyFile. */
    hostKey: z
      .string()
      .superRefine((s, ctx) => {
        const problem = checkPublicKeyLine(s);
        if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected an OpenSSH public key line: ${problem}` });
      })
      .optional(),
    /** File holding the pinned host key (.pub format), relative to the project directory. */
    hostKeyFile: localPath.optional(),
    /** Private key file read at run time and treated as a secret (else sshPrivateKeys supplies the key). */
    privateKeyFile: localPath.optional(),
  })
  .strict();

export const hostSchema = z
  .object({
    /** DNS label; also names the host's containers and its entry in modelServer.overrides / sshPrivateKeys. */
    name: z.string().regex(DNS_LABEL, { message: "expected a DNS label (a-z, 0-9, '-', at most 63 characters)" }),
    ssh: sshSchema,
    /** IPv4 the other hosts use to reach this one (workers listen here; the router dials it). */
    privateIp: ipv4,
    /** worker = runs SGLang; router = runs sglang-router; runner = runs Harbor and the task containers. */
    roles: z
      .array(z.enum(HOST_ROLES))
      .min(1, { message: "expected at least one role of worker, router, runner" })
      .refine((r) => new Set(r).size === r.length, { message: "expected each role at most once" }),
    /** GPUs on the host (0 on simulated hosts). */
    gpus: nonNegativeInt,
    /**
     * The HTTP proxy this host reaches the outside through (registries, package index, git): dockerd's
     * daemon.json "proxies", and HTTP(S)_PROXY/NO_PROXY for skopeo, uv/pip, git and curl in the host
     * scripts. The URL is, in this order: urlFile, url, the secret proxyUrls.<host name>, proxyUrls.default.
     */
    proxy: z
      .object({
        /** A proxy URL without credentials, e.g. http://127.0.0.1:27890 (credentials go in proxyUrls or urlFile). */
        url: z.string().optional(),
        /** File (relative to the project directory) holding the URL, read at run time and treated as a secret. */
        urlFile: localPath.optional(),
        /** Destinations reached directly (NO_PROXY): hosts, .domains, IPs, CIDRs. */
        noProxy: z
          .array(z.string().regex(NO_PROXY_ENTRY, { message: "expected a NO_PROXY entry: a host, .domain, IP or CIDR (optionally :port), or *" }))
          .default(["127.0.0.1", "localhost"]),
      })
      .strict()
      .optional(),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Model server workers (SGLang or vLLM). Flag names follow `sglang serve --help` (reference sglang.md §1.2).

/** Settings one worker may override (modelServer.overrides.<host>). */
const modelServerWorkerShape = {
  /** Image with tag or digest. Seed: SGLANG_IMAGE=lmsysorg/sglang:latest-runtime (pin a tag for real runs). */
  image: imageRef.default("lmsysorg/sglang:latest-runtime"),
  /**
   * Entry point: "sglang serve" (seed) or the older "python3 -m sglang.launch_server" (same flags) for
   * SGLang, "vllm serve" for vLLM; null = the engine's first.
   */
  launcher: z.enum(["sglang serve", "python3 -m sglang.launch_server", "vllm serve"]).nullable().default(null),
  /** Container name = prefix + host name (seed: qwen38-worker-a). */
  containerNamePrefix: z
    .string()
    .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$|^$/, { message: "expected a docker container name prefix" })
    .default("qwen38-"),
  /** Checkpoint directory on the host, mounted read-only (seed: $WORKSPACE/models/Qwen3.8-27B). */
  modelPath: hostPath.default("/var/lib/reprobench/models/Qwen3.8-27B"),
  /** Where the checkpoint appears in the container; passed as --model-path. */
  modelMountPath: hostPath.default("/models/Qwen3.8-27B"),
  /** --host: "privateIp" binds the host's privateIp (seed: --host $WORKER_IP); "0.0.0.0" binds all. */
  bindAddress: z.enum(["privateIp", "0.0.0.0"]).default("privateIp"),
  /** --port (seed: WORKER_PORT=30001). */
  port: port.default(30001),
  /** --tp-size (seed: 4). */
  tp: positiveInt.default(4),
  /** --dp-size (seed: 2 → two replicas per host). */
  dp: positiveInt.default(2),
  /** --context-length / vLLM --max-model-len (seed: 262144); null leaves the model's own. */
  contextLength: positiveInt.nullable().default(262144),
  /** --max-running-requests per replica / vLLM --max-num-seqs (seed: 5, 20 over four replicas); null = the server decides. */
  maxRunningRequests: positiveInt.nullable().default(5),
  /**
   * --max-mamba-cache-size per replica (seed: 25); null = SGLang decides. Unset: 25 for SGLang, null for vLLM
   * (an SGLang flag).
   */
  maxMambaCacheSize: positiveInt.nullable().optional(),
  /** --mem-fraction-static / vLLM --gpu-memory-utilization (seed: 0.90; seed 003: 0.85). */
  memFractionStatic: z
    .number()
    .gt(0, { message: "expected a fraction in (0, 1]" })
    .lte(1, { message: "expected a fraction in (0, 1]" })
    .default(0.9),
  /** --reasoning-parser (seed: qwen3); null omits the flag. */
  reasoningParser: z.string().min(1).nullable().default("qwen3"),
  /** --tool-call-parser (seed: qwen3_coder; vLLM also gets --enable-auto-tool-choice); null omits the flag. */
  toolCallParser: z.string().min(1).nullable().default("qwen3_coder"),
  /** --trust-remote-code (seed 003: on for the FP8 checkpoint). */
  trustRemoteCode: z.boolean().default(false),
  /** --kv-cache-dtype, e.g. fp8_e4m3 (seed 003); null = auto. */
  kvCacheDtype: z.string().regex(/^[a-z0-9_]+$/, { message: "expected a dtype name such as fp8_e4m3" }).nullable().default(null),
  /** SGLang --attention-backend, e.g. flashinfer (seed 003); null = SGLang picks. */
  attentionBackend: z.string().regex(/^[a-z0-9_]+$/, { message: "expected a backend name such as flashinfer" }).nullable().default(null),
  /** SGLang --chunked-prefill-size (seed 003: 32768); null = SGLang's default. */
  chunkedPrefillSize: positiveInt.nullable().default(null),
  /** SGLang --max-prefill-tokens (seed 003: 32768); null = SGLang's default. */
  maxPrefillTokens: positiveInt.nullable().default(null),
  /** SGLang hybrid (Mamba) model memory flags (seed 003); null fields are not passed. */
  mamba: z
    .object({
      /** --mamba-full-memory-ratio (seed 003: 3.67). */
      fullMemoryRatio: z.number().positive({ message: "expected a ratio > 0" }).nullable().default(null),
      /** --mamba-radix-cache-strategy (seed 003: extra_buffer_lazy). */
      radixCacheStrategy: z.enum(["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"]).nullable().default(null),
      /** --mamba-ssm-dtype (seed 003: float32). */
      ssmDtype: z.enum(["float32", "bfloat16", "float16"]).nullable().default(null),
    })
    .strict()
    .default({}),
  /**
   * Server-side thinking switch: false passes --default-chat-template-kwargs '{"enable_thinking": false}'
   * (seed 002 Run 3: thinking caused runaway generation and AgentTimeoutErrors); null leaves the chat
   * template's default. SGLang only.
   */
  enableThinking: z.boolean().nullable().default(null),
  /** Further `sglang serve` arguments, appended verbatim (flags set by the keys above are refused). */
  extraArgs: z.array(z.string()).default([]),
  /** docker --gpus: "all" on real hosts (seed), "none" on simulated hosts. */
  gpus: z.enum(["all", "none"]).default("all"),
  /** docker --user (seed: $(id -u):$(id -g) of the SSH user). */
  user: containerUser.default("ssh-user"),
  /** docker --ipc (seed: host). */
  ipc: z.enum(["host", "private", "shareable"]).default("host"),
  /** docker --ulimit (seed: memlock=-1, stack=67108864). */
  ulimits: ulimits.default({ memlock: -1, stack: 67108864 }),
  /** docker --shm-size in MiB; null leaves docker's default (the seed relies on --ipc host). */
  shmSizeMb: positiveInt.nullable().default(null),
  /** docker --env (seed: HOME=/tmp, HF_HOME=/tmp/huggingface). */
  env: envMap.default({ HOME: "/tmp", HF_HOME: "/tmp/huggingface" }),
  /** docker --stop-timeout in seconds (seed: 30). */
  stopTimeoutSecs: nonNegativeInt.default(30),
  /** How long to wait for /health = 200 after start (weights + CUDA graphs take a while). */
  readyTimeoutMinutes: positiveInt.default(45),
};

/** A file of the model directory, relative to modelServer.modelPath (no '..', not absolute). */
const modelFile = z
  .string()
  .regex(/^[^/\0\n][^\0\n]*$/, { message: "expected a file relative to modelServer.modelPath" })
  .refine((p) => !p.split("/").some((c) => c === ".." || c === "."), { message: "expected a path without '.' or '..' components" });

/** What the preflight before a model server accepts (components/preflight/). */
export const preflightSchema = z
  .object({
    /**
     * Compute processes allowed on a worker's GPUs besides the stack's own server, by nvidia-smi's
     * process_name (the full name or its last path component), e.g. ["nv-hostengine"]. The memory they hold
     * still counts as used. Any other process on a GPU is named and refused.
     */
    allowedGpuProcesses: z.array(z.string().min(1)).default([]),
    /**
     * What modelServer.modelPath must hold: "safetensors" (config.json, the index or model.safetensors, every
     * shard complete), "placeholder" (any readable directory: a tokenizer-only test model for the SGLang
     * double), or "auto" (the default): safetensors when the server gets GPUs, and with gpus none a
     * directory without weights passes as a placeholder (one with weights is still checked).
     */
    weights: z.enum(["auto", "safetensors", "placeholder"]).default("auto"),
    /**
     * sha256 of files of the model directory (file relative to modelPath → digest), e.g. the Hub tree's
     * lfs.oid of each shard. Optional and slow: each listed file is read whole, on every preflight run.
     */
    weightsSha256: z.record(modelFile, sha256).default({}),
    /** Also run python3 + torch in the server image with --gpus (first CUDA call: fabric manager, driver); skipped when the image has no torch. */
    cudaProbe: z.boolean().default(true),
  })
  .strict();

/** A repo id on a Hugging Face hub: org/name. */
const HUB_REPO = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;
/** A git revision as the hub resolves it: a commit, a branch or a tag (no '..', no leading '-' or '/'). */
const HUB_REVISION = /^(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;
const httpUrl = (example: string) =>
  z
    .string()
    .url({ message: `expected a URL such as ${example}` })
    .refine((u) => /^https?:\/\/[^/@\s]+(\/|$)/.test(u), { message: `expected an http(s) URL without credentials, such as ${example}` });

/**
 * Weights from a hub (modelServer.download): each worker downloads them into its modelServer.modelPath with
 * the real huggingface_hub client (pinned and hash-checked, components/weights/requirements.txt), through
 * its hosts[].proxy, with the secret reprobench:hfToken when set, before its preflight; then every file is
 * checked against the hub's listing (LFS sha256, git blob id). Absent: the weights are put there by hand.
 */
export const downloadSchema = z
  .object({
    /** The model repo on the hub, org/name (e.g. Qwen/Qwen3-32B). */
    repo: z.string().regex(HUB_REPO, { message: "expected a Hugging Face model repo id org/name, such as Qwen/Qwen3-32B" }),
    /**
     * A commit (40 hex, repeatable) or a branch or tag; a branch is resolved once, and the commit it named
     * is kept until the revision in the config changes. A new commit restarts the server on it.
     */
    revision: z.string().regex(HUB_REVISION, { message: "expected a commit (40 hex characters) or a branch or tag name such as main" }),
    /** The hub (HF_ENDPOINT): huggingface.co, or a mirror serving the Hub's HTTP API. */
    endpoint: httpUrl("https://huggingface.co").default("https://huggingface.co"),
    /** PEP 503 simple index the pinned huggingface_hub wheels are installed from (through the worker's proxy). */
    indexUrl: httpUrl("https://pypi.org/simple/").default("https://pypi.org/simple/"),
    /** The client's venv on each worker (replaced when the pins change). */
    venv: ownedDir.default("/var/lib/reprobench/.venv-hf-hub"),
    /** Attempts per network step; a cut download resumes where it stopped on the next attempt. */
    attempts: positiveInt.default(5),
    /** Upper bound of one download run (the next `up` resumes a download cut by it). */
    timeoutMinutes: positiveInt.default(240),
  })
  .strict();

const modelServerWorkerSchema = z.object(modelServerWorkerShape).strict();
/** A partial set of worker settings for one host; shallow merge (a given env/ulimits replaces the whole map). */
export const modelServerOverrideSchema = modelServerWorkerSchema.partial().strict();

export const modelServerSchema = z
  .object({
    /**
     * Model server engine (this section configures it whichever it is): "sglang" (seeds 000/003) or
     * "vllm" (seed 002 Run 2: `vllm serve openai/gpt-oss-20b`). vLLM has no /server_info, so the worker
     * gate asserts through /v1/models and the router cannot be DP-aware.
     */
    engine: z.enum(ENGINES).default("sglang"),
    ...modelServerWorkerShape,
    /** --served-model-name; the router and Harbor address the model by this name (seed: Qwen/Qwen3.8-27B). */
    servedModelName: z.string().min(1).default("Qwen/Qwen3.8-27B"),
    /** Per-host partial settings, e.g. { worker-b: { maxRunningRequests: 4 } }. Keys must be worker hosts. */
    overrides: z.record(z.string(), modelServerOverrideSchema).default({}),
    /** The preflight every worker passes before its server starts or is replaced (components/preflight.ts; `reprobench check`). */
    preflight: preflightSchema.default({}),
    /** Download the weights from a hub on every worker before its preflight (absent: they are put there by hand). */
    download: downloadSchema.optional(),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Router (sglang-router 0.3.2 flags, reference sglang.md §3.2).

export const routerSchema = z
  .object({
    /**
     * Run sglang-router in front of the workers (seed 000). false: Harbor uses the single worker's
     * endpoint directly (seeds 002/003 ran one server without a router); no host needs the router role.
     */
    enabled: z.boolean().default(true),
    /** Image to run the router in; null = modelServer.image (the seed runs it in the SGLang image). */
    image: imageRef.nullable().default(null),
    /** Entry point (seed: python3 -m sglang_router.launch_router). */
    launcher: z
      .enum(["python3 -m sglang_router.launch_router", "sglang-router launch", "python3 -m smg.launch_router", "smg launch"])
      .default("python3 -m sglang_router.launch_router"),
    /** Container name (seed: qwen38-global-router). */
    containerName: containerName.default("qwen38-global-router"),
    /** --host bind address (seed: 127.0.0.1: only Harbor on the same host talks to it). */
    host: ipv4.default("127.0.0.1"),
    /** --port (seed: ROUTER_PORT=30000). */
    port: port.default(30000),
    /** --policy (seed: cache_aware). */
    policy: z.enum(["random", "round_robin", "cache_aware", "power_of_two", "manual"]).default("cache_aware"),
    /**
     * --dp-aware (seed: on): route to each worker's DP ranks individually. It discovers the ranks through
     * SGLang's /server_info, so unset means true for SGLang and false for vLLM.
     */
    dpAware: z.boolean().optional(),
    /** --balance-abs-threshold (seed: 1). */
    balanceAbsThreshold: nonNegativeInt.default(1),
    /** --balance-rel-threshold (seed: 1.2). */
    balanceRelThreshold: z.number().min(1, { message: "expected a ratio ≥ 1" }).default(1.2),
    /** --worker-startup-timeout-secs (router default 1800; the seed starts the router after all workers are healthy). */
    workerStartupTimeoutSecs: positiveInt.default(1800),
    /** --request-timeout-secs (router default 1800 caps one generation; 65536-token answers can be long). */
    requestTimeoutSecs: positiveInt.default(1800),
    /** --prometheus-port: the 0.3.2 CLI always binds 0.0.0.0:<this> (default 29000). */
    prometheusPort: port.default(29000),
    /** docker --user (seed: $(id -u):$(id -g)). */
    user: containerUser.default("ssh-user"),
    /** docker --env (seed: HOME=/tmp). */
    env: envMap.default({ HOME: "/tmp" }),
    /** docker --ulimit (seed: nofile=65536:65536). */
    ulimits: ulimits.default({ nofile: { soft: 65536, hard: 65536 } }),
    /** Mount modelServer.modelPath read-only at modelServer.modelMountPath so the router loads the tokenizer (seed does). */
    mountModel: z.boolean().default(true),
    /** docker stop --time for the router (seed: 180). */
    stopTimeoutSecs: nonNegativeInt.default(180),
    /** Further router arguments, appended verbatim (flags set by the keys above are refused). */
    extraArgs: z.array(z.string()).default([]),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Docker daemon (seed: "为高并发任务准备 Docker network pools").

export const addressPoolSchema = z
  .object({
    /** Base network, e.g. 172.18.0.0/15 (seed). */
    base: z.string().refine((s) => parseCidr(s) !== null, {
      message: "expected an IPv4 CIDR with no host bits set, e.g. 172.18.0.0/15",
    }),
    /** Prefix length of each network carved from base (seed: 24). */
    size: z
      .number()
      .int()
      .min(1, { message: "expected a prefix length 1–30" })
      .max(30, { message: "expected a prefix length 1–30 (smaller networks have no room for containers)" }),
  })
  .strict();

export const dockerSchema = z
  .object({
    /** daemon.json "default-address-pools" (seed: [{ base: 172.18.0.0/15, size: 24 }]). */
    addressPools: z.array(addressPoolSchema).min(1).default([{ base: "172.18.0.0/15", size: 24 }]),
    /** The daemon configuration file that gets the pools merged in (other keys are preserved). */
    daemonConfigPath: hostPath.default("/etc/docker/daemon.json"),
    /** When dockerd is restarted after daemon.json changes: "when-idle" refuses while containers run; "never" only writes the file. */
    restartPolicy: z.enum(["when-idle", "never"]).default("when-idle"),
    /** Restart dockerd even when containers are running (the seed: only with everything stopped). */
    forceRestart: z.boolean().default(false),
    /** On destroy, put the backed-up daemon.json back (and restart under the same policy). */
    restoreOnDestroy: z.boolean().default(true),
    /** Networks created and removed after a restart to prove the pools work (the seed created 64). */
    verifyNetworks: z.number().int().min(0).max(4096).default(8),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Proxy bridge (seed: socat from the docker bridge gateway to a loopback proxy on the runner host).

export const proxySchema = z
  .object({
    /** Expose the upstream proxy (secret key proxyUpstream) to task containers. */
    enabled: z.boolean().default(true),
    /** Port on the docker bridge gateway that task containers use (seed: PROXY_BRIDGE_PORT=27891). */
    bridgePort: port.default(27891),
    /** Name task containers use for the host (seed: host.docker.internal via extra_hosts host-gateway). */
    containerHost: z.string().regex(HOSTNAME, { message: "expected a host name" }).default("host.docker.internal"),
    /** URL fetched through the bridge from a container to prove it works (seed: https://example.com/). */
    checkUrl: z.string().url({ message: "expected a URL" }).default("https://example.com/"),
    /** NO_PROXY / no_proxy inside task containers (seed: 127.0.0.1,localhost). */
    noProxy: z.array(z.string().min(1)).default(["127.0.0.1", "localhost"]),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Tool bundle (seed: "为 task containers 准备 tmux 和 asciinema").

export const toolBundleSchema = z
  .object({
    /** Build the bundle on the runner and mount it into every task container. */
    enabled: z.boolean().default(true),
    /** Bundle directory on the runner host (seed: $WORKSPACE/harbor-tools-amd64). */
    hostDir: ownedDir.default("/var/lib/reprobench/harbor-tools-amd64"),
    /** Mount point in task containers (seed: /opt/harbor-tools; wrappers also bind over /usr/bin/{tmux,asciinema}). */
    mountPath: hostPath.default("/opt/harbor-tools"),
    /** asciinema wheel version (seed: 2.4.0). */
    asciinemaVersion: z.string().regex(/^\d+(\.\d+)*$/, { message: "expected a version such as 2.4.0" }).default("2.4.0"),
    /** sha256 of the asciinema wheel (seed: ASCIINEMA_SHA256). */
    asciinemaSha256: sha256.default("249ccf108509d643ddaf38979dac48c99e9e251f597173d8553a30d7a6423104"),
    /** Where the wheel comes from (seed: files.pythonhosted.org). */
    asciinemaWheelUrl: z
      .string()
      .url({ message: "expected a URL" })
      .default(
        "https://files.pythonhosted.org/packages/55/72/d79812aa210d411f7659fde4bbb1d5ef0e80950ff70f98bfdc57e12787dc/asciinema-2.4.0-py3-none-any.whl",
      ),
    /** A task image without tmux/asciinema, used to prove the bundle (and the proxy bridge) from inside a container (seed: CANARY_IMAGE). */
    canaryImage: imageRef.default("alexgshaw/regex-chess:20251031"),
    /** tmux comes from the runner host with its shared libraries (the seed copies $(command -v tmux)). */
    tmux: z.enum(["host"]).default("host"),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Harbor (installed on the runner host).

export const harborSchema = z
  .object({
    /**
     * Install Harbor, the dataset and the task images even when this stack runs no job itself (a cluster
     * that only run stacks use, reprobench:cluster). They are always installed when run.enabled.
     */
    enabled: z.boolean().default(false),
    /** Harbor release (seed: 0.21.0). */
    version: z.string().regex(/^\d+\.\d+\.\d+([a-z0-9.+-]*)$/, { message: "expected a version such as 0.21.0" }).default("0.21.0"),
    /** sha256 of harbor-<version>-py3-none-any.whl (seed: HARBOR_WHEEL_SHA256). */
    wheelSha256: sha256.default("c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21"),
    /** Virtualenv on the runner (seed: $WORKSPACE/.venv-harbor-0.21.0). */
    venv: ownedDir.default("/var/lib/reprobench/.venv-harbor-0.21.0"),
    /** Optional extras installed with Harbor, e.g. ["hf-sandbox"] (harbor[hf-sandbox], for run.environment hf-sandbox). */
    extras: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, { message: "expected an extra name such as hf-sandbox" })).default([]),
    /** Python for the venv (seed: uv python install 3.13; Harbor needs ≥ 3.12). */
    pythonVersion: z.string().regex(/^3\.\d+$/, { message: "expected a Python minor version such as 3.13" }).default("3.13"),
    /** Task repository: a git URL (pinned by datasetCommit), or a directory in this project copied to the runner (the sim dataset). */
    datasetRepo: z.string().min(1).default("https://github.com/harbor-framework/terminal-bench-2-1.git"),
    /** Commit to check out (seed: 7131e437…); null for a project directory. */
    datasetCommit: gitCommit.nullable().default("7131e4375048a0e408a8fb404b5f499d726b695b"),
    /** Where the dataset lives on the runner (seed: $TB21_ROOT). */
    datasetDir: ownedDir.default("/var/lib/reprobench/terminal-bench-2-1"),
    /** Directory of task directories inside datasetDir (seed: tasks); "" when the tasks sit at the top. */
    datasetTasksSubdir: tasksSubdir.default("tasks"),
    /** Number of task.toml files the dataset must contain (Terminal-Bench 2.1: 89). */
    expectedTaskCount: positiveInt.default(89),
    /** --jobs-dir, absolute so resume does not depend on the working directory (seed: $WORKSPACE/results). */
    jobsDir: hostPath.default("/var/lib/reprobench/jobs"),
    /** Directory for the rendered job config, compose override and logs (seed: $WORKSPACE). */
    workDir: hostPath.default("/var/lib/reprobench"),
    /**
     * Directory of wheels on the runner (harbor, its dependencies, asciinema; see sim/wheelhouse.sh). When set,
     * Harbor is installed offline (`python3.X -m venv` + `pip install --no-index --find-links`, no uv, no PyPI);
     * null = the seed's online install (uv venv + the wheel from PyPI).
     */
    pipFindLinks: hostPath.nullable().default(null),
    /**
     * PEP 503 simple index of the online install (pipFindLinks null): Harbor's wheel (its sha256 checked
     * against wheelSha256 on the index and again after download), its dependencies, and uv when the host
     * has none. Reached through the runner's hosts[].proxy when it has one.
     */
    indexUrl: z.string().url({ message: "expected an index URL such as https://pypi.org/simple/" }).default("https://pypi.org/simple/"),
    /** uv installed from indexUrl into workDir when the runner has no uv of its own (online install only). */
    uvVersion: z.string().regex(/^\d+\.\d+\.\d+$/, { message: "expected a version such as 0.13.9" }).default("0.13.9"),
    /** Task images pulled at once (xargs -P); the seed pulled one at a time. */
    imagePullConcurrency: positiveInt.default(4),
    /** Attempts per task image, with exponential backoff between them (seed: 5). */
    imagePullAttempts: positiveInt.default(5),
    /**
     * Registries reached over plain HTTP (skopeo --src-tls-verify=false), in addition to the runner's
     * daemon.json "insecure-registries", e.g. registry.sim:5000.
     */
    insecureRegistries: z.array(z.string().regex(/^[A-Za-z0-9.-]+(:[0-9]+)?$/, { message: "expected host[:port]" })).default([]),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// The benchmark run (rendered into Harbor's job config; field names in harbor.md §2).

export const runSchema = z
  .object({
    /** Launch `harbor run` on `pulumi up`; off by default so standing the cluster up never starts a 7-hour job. */
    enabled: z.boolean().default(false),
    /** Keep `pulumi up` open until the job's result.json has finished_at. */
    waitForCompletion: z.boolean().default(false),
    /** Upper bound for waitForCompletion; past it `up` fails (the job keeps running). */
    waitTimeoutMinutes: positiveInt.default(720),
    /** On destroy (or a new job), how long Harbor gets after SIGTERM to cancel trials and write results before SIGKILL. */
    stopTimeoutSecs: positiveInt.default(900),
    /**
     * Where task environments run: "docker" on the runner (seed 000), or "hf-sandbox" (seeds 002/003: one
     * HF Jobs sandbox per task; needs the harbor[hf-sandbox] extra and the hfToken secret). hf-sandbox
     * cannot be exercised on the simulated cluster: it is rendered and validated only.
     */
    environment: z.enum(["docker", "hf-sandbox"]).default("docker"),
    /** environment.kwargs for hf-sandbox (harbor environments/hf_sandbox.py). */
    hfSandbox: z
      .object({
        /** --ek flavor (seeds 002/003: cpu-upgrade; Harbor's default cpu-basic). */
        flavor: z.string().regex(/^[a-z0-9-]+$/, { message: "expected an HF Jobs flavor such as cpu-upgrade" }).default("cpu-upgrade"),
        /**
         * --ek job_timeout, the sandbox's idle timeout (Harbor's default 600 s). Seed 002 Run 3: "2h", because
         * mini-swe-agent runs its whole loop as one exec and a 600 s idle timeout killed sandboxes mid-task.
         */
        jobTimeout: z.string().regex(/^([0-9]+(\.[0-9]+)?[smhd]?|none|off)$/, { message: "expected a duration such as 2h, 90m or 7200" }).nullable().default(null),
        /** --ek forward_hf_token: expose HF_TOKEN inside the sandbox (off: tasks should not see it). */
        forwardHfToken: z.boolean().default(false),
      })
      .strict()
      .default({}),
    /** Harbor agent name (seed: terminus-2; "oracle" and "nop" need no model; "mini-swe-agent" runs inside the task container). */
    agent: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, { message: "expected a Harbor agent name such as terminus-2" }).default("terminus-2"),
    /** agents[].model_name, LiteLLM style provider/model (seed: openai/Qwen/Qwen3.8-27B). */
    modelName: z.string().min(1).default("openai/Qwen/Qwen3.8-27B"),
    /** n_concurrent_trials (seed: 25, the "c25"). */
    nConcurrentTrials: positiveInt.default(25),
    /** agents[].n_concurrent, concurrent agent phases (seed: 20, the "a20"); null = no cap. */
    nConcurrentAgents: positiveInt.nullable().default(20),
    /** n_attempts per task. */
    nAttempts: positiveInt.default(1),
    /** retry.max_retries (Harbor default 0). */
    maxRetries: nonNegativeInt.default(0),
    /** timeout_multiplier, the fallback for the unset multipliers below (Harbor default 1.0). */
    timeoutMultiplier: multiplier.default(1.0),
    /** agent_timeout_multiplier (seed: 6.0, the "6×"). */
    agentTimeoutMultiplier: multiplier.nullable().default(6.0),
    /** agent_setup_timeout_multiplier (seed: 5.0). */
    agentSetupTimeoutMultiplier: multiplier.nullable().default(5.0),
    /** verifier_timeout_multiplier (seed: unset → timeoutMultiplier). */
    verifierTimeoutMultiplier: multiplier.nullable().default(null),
    /** environment_build_timeout_multiplier (seed: unset). */
    environmentBuildTimeoutMultiplier: multiplier.nullable().default(null),
    /** environment.cpu_enforcement_policy / memory_enforcement_policy (seed: auto = docker limits). */
    cpuEnforcementPolicy: z.enum(["auto", "limit", "request", "guarantee", "ignore"]).default("auto"),
    memoryEnforcementPolicy: z.enum(["auto", "limit", "request", "guarantee", "ignore"]).default("auto"),
    /**
     * Agent version for agents Harbor installs into the task container (kwargs.version, e.g. mini-swe-agent
     * 2.4.6); null = whatever the index serves at run time, which makes runs unrepeatable.
     */
    agentVersion: z.string().regex(/^[0-9][0-9A-Za-z.+-]*$/, { message: "expected a version such as 2.4.6" }).nullable().default(null),
    /**
     * kwargs.reasoning_effort (seeds 002/003: low for terminus-2, keeping a heavy reasoner within its timeout);
     * null leaves it unset.
     */
    reasoningEffort: z.enum(["minimal", "low", "medium", "high"]).nullable().default(null),
    /**
     * OpenAI base URL for agents that run INSIDE the task container (mini-swe-agent), which cannot reach the
     * runner's loopback. null = through the model bridge on the docker gateway
     * (http://<proxy.containerHost>:<modelBridgePort>/v1); required for hf-sandbox (a URL the sandbox reaches).
     */
    containerApiBase: z.string().url({ message: "expected a URL such as https://host/v1" }).nullable().default(null),
    /** Port on the runner's docker bridge gateway that forwards to the model endpoint for in-container agents. */
    modelBridgePort: port.default(30080),
    /** Environment for every command in the task containers (rendered into the compose override), e.g. an offline package index. */
    taskEnv: envMap.default({}),
    /** Extra bind mounts into the task containers (compose override), e.g. a wheelhouse for offline agent installs. */
    taskMounts: z
      .array(
        z
          .object({
            /** Directory or file on the runner host. */
            source: hostPath,
            /** Where it appears in the task container. */
            target: hostPath,
            readOnly: z.boolean().default(true),
          })
          .strict(),
      )
      .default([]),
    /** Terminus-2 record_terminal_session (seed: true; needs asciinema in the container). */
    recordTerminalSession: z.boolean().default(true),
    sampling: z
      .object({
        /** kwargs.temperature (seed: 1.0); null leaves it unset. */
        temperature: z.number().min(0).max(2).nullable().default(1.0),
        /** kwargs.llm_call_kwargs.top_p (seed: 0.95). */
        topP: z.number().gt(0, { message: "expected a probability in (0, 1]" }).lte(1, { message: "expected a probability in (0, 1]" }).nullable().default(0.95),
        /** llm_call_kwargs.top_k (seed: not set). */
        topK: positiveInt.nullable().default(null),
        /** More llm_call_kwargs, passed through verbatim. */
        extraCallKwargs: z.record(z.string(), z.unknown()).default({}),
      })
      .strict()
      .default({}),
    /** kwargs.model_info, registered with LiteLLM by Terminus-2. */
    modelInfo: z
      .object({
        maxInputTokens: positiveInt.default(262144),
        maxOutputTokens: positiveInt.default(65536),
        inputCostPerToken: z.number().min(0).default(0),
        outputCostPerToken: z.number().min(0).default(0),
      })
      .strict()
      .default({}),
    /** Which tasks run: include/exclude are task directory names or globs (-i / -x); nTasks caps the count (-l). */
    taskFilter: z
      .object({
        include: z.array(z.string().min(1)).default([]),
        exclude: z.array(z.string().min(1)).default([]),
        nTasks: positiveInt.nullable().default(null),
      })
      .strict()
      .default({}),
    /** Job name = prefix + "-" + UTC timestamp (seed: qwen38-terminus2-tb21-full89-c25-a20-agent6x-YYYYmmdd-HHMMSS). */
    jobNamePrefix: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: "expected letters, digits, '.', '_' or '-'" })
      .default("qwen38-terminus2-tb21-full89-c25-a20-agent6x"),
    /** More agent kwargs, passed through verbatim (no secrets: Harbor writes kwargs to config.json). */
    extraAgentKwargs: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// Image registries: credentials, mirrors, pull limits.

const REGISTRY_HOST = /^(docker\.io|localhost(:[0-9]+)?|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]+)?)$/;

/** Docker Hub's documented hourly pull limits (docs.docker.com, usage and limits). */
export const DOCKER_HUB_PULL_LIMITS = { anonymous: 10, authenticated: 100, windowSeconds: 3600 } as const;

export const registrySchema = z
  .object({
    /**
     * The registry as image references name it: "docker.io" for Docker Hub (alexgshaw/…, lmsysorg/sglang),
     * else host[:port] (registry.sim:5000, ghcr.io).
     */
    host: z.string().regex(REGISTRY_HOST, { message: "expected docker.io or a registry host[:port] such as ghcr.io or registry.example:5000" }),
    /**
     * The account to pull as (null: anonymous). Its password or access token is a secret: pulumi config set
     * --secret --path 'reprobench:registryPasswords["<host>"]' TOKEN (brackets: a host name has dots), or a file (passwordFile).
     */
    username: z.string().min(1).nullable().default(null),
    /** A local file holding the password or token (one line, kept out of the stack file), instead of registryPasswords. */
    passwordFile: localPath.optional(),
    /**
     * A pull-through cache serving this registry's images, as a URL (http://mirror.internal:5000). skopeo
     * (task images) pulls through it; for docker.io it is also daemon.json's registry-mirrors (dockerd mirrors
     * Docker Hub only). Its quota is its own: the pre-pull does not count this registry's limit for it.
     */
    mirror: z.string().url({ message: "expected a mirror URL such as http://mirror.internal:5000" }).nullable().default(null),
    /**
     * Counted pulls this registry allows per window for this login, for the warning when a dataset needs
     * more than the pre-pull's time allows. Default: Docker Hub's documented limits for docker.io, none
     * known elsewhere. The pre-pull itself goes by the ratelimit-* headers the registry sends.
     */
    pullLimit: z.object({ pulls: positiveInt, windowSeconds: positiveInt }).strict().nullable().optional(),
  })
  .strict();

// ---------------------------------------------------------------------------------------------------------
// The whole environment.

export const configSchema = z
  .object({
    /** "real": GPU hosts run SGLang. "sim": the simulated hosts (sim/) run the SGLang test double, with their simulated GPUs or without any (modelServer.gpus: none). */
    environment: z.enum(["real", "sim"]).default("real"),
    /** Every machine of the cluster, any number ≥ 1. */
    hosts: z.array(hostSchema).min(1, { message: "expected at least one host" }),
    /** SECRET. Host name (or "default") → private key PEM; set with `pulumi config set --secret --path`. */
    sshPrivateKeys: z.record(z.string(), z.string()).default({}),
    /**
     * The model server on every worker host, SGLang or vLLM (engine); formerly reprobench:sglang, a name
     * still read (RENAMED_KEYS).
     */
    modelServer: modelServerSchema.default({}),
    router: routerSchema.default({}),
    docker: dockerSchema.default({}),
    proxy: proxySchema.default({}),
    /** SECRET. Upstream HTTP proxy URL as seen from the runner host (may carry credentials). */
    proxyUpstream: z.string().optional(),
    /**
     * SECRET. Hugging Face token for run.environment hf-sandbox (Harbor reads HF_TOKEN) and, in the stack
     * that owns the cluster, for modelServer.download (a gated or private repo; never printed).
     */
    hfToken: z.string().optional(),
    /**
     * SECRET. Host name (or "default") → the URL of that host's proxy (hosts[].proxy), which may carry
     * credentials: pulumi config set --secret --path 'reprobench:proxyUrls.<host>' URL.
     */
    proxyUrls: z.record(z.string(), z.string()).default({}),
    /** Image registries the hosts pull from with credentials, through a mirror, or with a known pull limit. */
    registries: z.array(registrySchema).default([]),
    /** SECRET. Registry host → password or access token of registries[].username. */
    registryPasswords: z.record(z.string(), z.string()).default({}),
    toolBundle: toolBundleSchema.default({}),
    harbor: harborSchema.default({}),
    run: runSchema.default({}),
    /**
     * Let `up` restart a model server, the router, dockerd or a bridge while a Harbor job runs on the
     * cluster (its running trials lose their model server; `up` names them). Off: such a change is refused,
     * naming the job, and nothing restarts.
     */
    allowRestartsDuringJobs: z.boolean().default(false),
    /**
     * Follow image tags: a server or router image named by a tag is resolved again on every refresh, and a
     * build the tag names later is pulled by the next `up` (replacing the container, behind the restart
     * guard). Off (the default): the digest resolved first is kept, a moved tag is only a warning naming
     * both digests, and pinning the new digest (name@sha256:…) is how a stack upgrades.
     */
    followImageTags: z.boolean().default(false),
  })
  .strict()
  // Resolve "same as …" defaults so consumers never see null where a value is implied.
  // Engine-dependent defaults. The router image is not defaulted for vLLM: its image has no sglang-router,
  // so the config rules ask for router.image instead.
  .transform((c) => {
    const sglang = c.modelServer.engine === "sglang";
    return {
      ...c,
      modelServer: { ...c.modelServer, maxMambaCacheSize: c.modelServer.maxMambaCacheSize === undefined ? (sglang ? 25 : null) : c.modelServer.maxMambaCacheSize },
      router: { ...c.router, image: c.router.image ?? (sglang ? c.modelServer.image : null), dpAware: c.router.dpAware ?? sglang },
    };
  });

/** The fully defaulted configuration. */
export type ReprobenchConfig = z.infer<typeof configSchema>;
/** What a stack file may contain (everything with a default is optional). */
export type ReprobenchConfigInput = z.input<typeof configSchema>;
export type Host = ReprobenchConfig["hosts"][number];
export type ModelServerConfig = ReprobenchConfig["modelServer"];
export type ModelServerOverride = z.infer<typeof modelServerOverrideSchema>;
/** modelServer.download as parsed (defaults filled). */
export type DownloadConfig = z.infer<typeof downloadSchema>;
export type RouterConfig = ReprobenchConfig["router"];
export type RunConfig = ReprobenchConfig["run"];
export type RegistryConfig = ReprobenchConfig["registries"][number];

// ---------------------------------------------------------------------------------------------------------
// A run stack: a job on a cluster another stack of this project owns.

/** The keys a run stack may set; everything else belongs to the cluster's owner. */
export const RUN_STACK_KEYS = ["cluster", "run", "hfToken", "dataset", "sshPrivateKeys"] as const;

/**
 * A run stack's own task dataset (reprobench:dataset), in place of the owner's harbor.dataset*: checked out
 * on the runner into a directory of this stack's own, its images pre-pulled by this stack; the owner's
 * dataset and images are not touched. The same rules as harbor.datasetRepo / datasetCommit apply.
 */
export const runDatasetSchema = z
  .object({
    /** Task repository: a git URL pinned by `commit`, or a directory of this project uploaded as is. */
    repo: z.string().min(1),
    /** The commit to check out; required for a git URL, null (or absent) for a project directory. */
    commit: gitCommit.nullable().default(null),
    /** Directory of task directories inside the dataset; "" (the default) when the tasks sit at the top. */
    tasksSubdir: tasksSubdir.default(""),
    /** Number of task.toml files the dataset must contain (Terminal-Bench 2.1: 89). */
    expectedTaskCount: positiveInt,
    /**
     * Where the dataset lives on the runner. Default: <parent of the owner's harbor.datasetDir>/datasets/<project>.<stack>
     * (/var/lib/reprobench/datasets/reprobench.<stack> with the defaults). Never the owner's datasetDir, inside
     * it, or around it, nor its venv, jobs dir or tool bundle.
     */
    dir: ownedDir.optional(),
  })
  .strict();
export type RunDatasetConfig = z.infer<typeof runDatasetSchema>;

export const runStackSchema = z
  .object({
    /**
     * The stack that owns the cluster (its hosts, servers, router, Harbor install). This stack then creates
     * only its own job there, reading the cluster through a StackReference; it never changes the cluster.
     */
    cluster: z.string().regex(/^([A-Za-z0-9_.-]+\/){0,2}[A-Za-z0-9_.-]+$/, { message: "expected a stack name such as local or organization/reprobench/local" }),
    run: runSchema.default({}),
    /** SECRET. Hugging Face token for run.environment hf-sandbox. */
    hfToken: z.string().optional(),
    /** This stack's own dataset instead of the owner's (omitted: the owner's dataset and task images). */
    dataset: runDatasetSchema.optional(),
    /**
     * SECRET. Host name (or "default") → private key PEM this stack logs in with: the owner exports no keys.
     * Not needed for a host whose owner's stack file names ssh.privateKeyFile (read from this project).
     */
    sshPrivateKeys: z.record(z.string(), z.string()).default({}),
  })
  .strict();
export type RunStackConfig = z.infer<typeof runStackSchema>;

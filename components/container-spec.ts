// What the model server and router containers have in common, as plain data for `docker.Container`.

/** The parts of a docker.Container's args reprobench sets from config (no Outputs: previews show them as is). */
export interface ContainerSpec {
  name: string;
  command: string[];
  networkMode: string;
  ipcMode?: string;
  gpus?: string;
  shmSize?: number;
  ulimits: { name: string; soft: number; hard: number }[];
  envs: string[];
  /** Bind mounts; a missing source makes docker refuse to start (a `volumes` bind would create it empty). */
  mounts: { type: "bind"; source: string; target: string; readOnly: boolean }[];
  labels: { label: string; value: string }[];
  stopTimeout: number;
}

/** The label every container reprobench creates carries, and its role. */
export const MANAGED_LABEL = "io.reprobench.managed";
export const ROLE_LABEL = "io.reprobench.role";
/** A worker's label with the commit of the weights it loaded (modelServer.download). */
export const WEIGHTS_COMMIT_LABEL = "io.reprobench.weights-commit";

export function containerLabels(role: "worker" | "router"): { label: string; value: string }[] {
  return [
    { label: MANAGED_LABEL, value: "1" },
    { label: ROLE_LABEL, value: role },
  ];
}

/** docker --ulimit entries; a single number means soft = hard (-1 = unlimited). */
export function ulimitList(ulimits: Record<string, number | { soft: number; hard: number }>): ContainerSpec["ulimits"] {
  return Object.entries(ulimits).map(([name, v]) => (typeof v === "number" ? { name, soft: v, hard: v } : { name, soft: v.soft, hard: v.hard }));
}

/** The variable the entrypoint reads the API key from. */
export const API_KEY_ENV = "REPROBENCH_API_KEY";

/**
 * An entrypoint that runs the command with `--api-key "$REPROBENCH_API_KEY"` appended. The key reaches the
 * container as an environment variable (a secret in Pulumi's state), so the argv, which previews show
 * flag by flag, holds no secret. SGLang's, vLLM's and the router's images all have /bin/sh.
 */
export function apiKeyEntrypoint(): string[] {
  return ["/bin/sh", "-c", `exec "$@" --api-key "$${API_KEY_ENV}"`, "reprobench-api-key"];
}

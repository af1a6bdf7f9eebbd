// The API key through the doubles and the worker gates, run for real (bash + curl + jq) on loopback. Like
// real SGLang (sgl-project/sglang#30166, #37457) the double echoes api_key/admin_api_key in /server_info and
// prints them in its start-up `server_args=ServerArgs(...)` line; like real vLLM the vLLM double prints
// --api-key in `non-default args:`. What the gates record (their stdout: serverInfo, the stack outputs, the
// run manifest) and the error of a failed gate (it carries the container's log tail) must not hold the key.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretMasker } from "../../../components/transport";
import { scriptWithEnv } from "../../../components/host-script";
import { freePort, repoRoot, scenariosDir, seed000WorkerFlags, startDouble, startVllmDouble, waitReady, type RunningDouble } from "./harness";

// 40 characters, like the stack's RandomPassword key.
const KEY = "sk-SENTINEL-4f1d2c9b8a7e6d5c4b3a2f1e0d9c";
const ADMIN_KEY = "sk-ADMIN-SENTINEL-77e1c0ffee5eed1234abcd";
const scenario = path.join(scenariosDir, "sim-default.json");
const script = (name: string) => path.join(repoRoot, "components/scripts", name);

function run(args: string[], env: Record<string, string>, pathPrefix?: string) {
  const PATH = [pathPrefix, process.env.PATH ?? "/usr/bin:/bin"].filter(Boolean).join(":");
  const r = spawnSync("bash", args, { env: { PATH, ...env }, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const started: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.process.stop()));
});

describe("SGLang: the double echoes the key, the gate records none of it", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startDouble({ flags: [...seed000WorkerFlags, "--api-key", KEY, "--admin-api-key", ADMIN_KEY], scenario });
    started.push(double);
    await waitReady(double);
  });

  it("the double: /server_info has api_key and admin_api_key as given, the start-up log prints both", async () => {
    const info = (await (await fetch(`${double.url}/server_info`, { headers: { Authorization: `Bearer ${KEY}` } })).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ api_key: KEY, admin_api_key: ADMIN_KEY, tp_size: 4 });
    expect(double.process.logs).toMatch(new RegExp(`server_args=ServerArgs\\(model_path='[^']+'.*, api_key='${KEY}', admin_api_key='${ADMIN_KEY}'`));
  });

  it("sglang-worker.sh prints /server_info without the secret fields and without the key anywhere", () => {
    const r = run([script("sglang-worker.sh")], {
      CONTAINER_NAME: "worker-a",
      BASE_URL: double.url,
      API_KEY: KEY,
      EXPECTED_JSON: JSON.stringify({ tp_size: 4, dp_size: 2 }),
      SERVED_MODEL_NAME: "Qwen/Qwen3.8-27B",
    });
    expect(r.stderr).toContain("/server_info matches the config (2 DP ranks)");
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    expect(r.stdout + r.stderr).not.toContain(ADMIN_KEY);
    const recorded = JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as Record<string, unknown>;
    expect(["api_key", "admin_api_key", "ssl_keyfile_password", "internal_states"].filter((k) => k in recorded)).toEqual([]);
    // Nothing else is lost: a field named like a secret word is no secret.
    expect(recorded).toMatchObject({ tp_size: 4, dp_size: 2, tokenizer_path: expect.any(String), tokenizer_mode: "auto" });
  });

  it("a gate error quoting what the server reports masks the key by value", () => {
    const r = run([script("sglang-worker.sh")], {
      CONTAINER_NAME: "worker-a",
      BASE_URL: double.url,
      API_KEY: KEY,
      // A config that disagrees with the key the server echoes: the message quotes the server's value.
      EXPECTED_JSON: JSON.stringify({ api_key: "other", dp_size: 2 }),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('api_key: expected "other", server reports "[secret not shown]"');
    expect(r.stderr).not.toContain(KEY);
  });

  it("a failed gate's error (server-health.sh + sglang-worker.sh, the container's log tail) carries no key once CheckedCommand masks it", async () => {
    // The container died while loading: server-health.sh prints `docker logs --tail 40` (here the double's
    // real log, start-up line with the key included) and fails. A stand-in docker answers for the container.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "fake-docker-"));
    try {
      fs.writeFileSync(path.join(bin, "container.log"), double.process.logs);
      fs.writeFileSync(
        path.join(bin, "docker"),
        `#!/usr/bin/env bash\ncase "$1" in inspect) echo false ;; logs) cat ${JSON.stringify(path.join(bin, "container.log"))} ;; *) exit 1 ;; esac\n`,
        { mode: 0o755 },
      );
      const closed = `http://127.0.0.1:${await freePort()}`;
      const gate = scriptWithEnv(["server-health", "sglang-worker"], { CONTAINER_NAME: "worker-a", BASE_URL: closed, READY_TIMEOUT_SECONDS: "30", EXPECTED_JSON: "{}" });
      const r = run(["-c", gate], { API_KEY: KEY }, bin);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("container exited before /health answered 200");
      // The leak is real: the log tail holds the start-up line with the key...
      expect(r.stderr).toContain(`api_key='${KEY}'`);
      // ...and the text CheckedCommand puts in the error (its secret environment masked by value) does not.
      const error = secretMasker({ API_KEY: KEY }).all(r.stderr);
      expect(error).toContain("server_args=ServerArgs(");
      expect(error).not.toContain(KEY);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe("vLLM: the double logs --api-key like vLLM, the gate records none of it", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startVllmDouble({ flags: ["--served-model-name", "openai/gpt-oss-20b", "--api-key", KEY], scenario });
    started.push(double);
  });

  it("the double's start-up log has `non-default args: {...}` with the key in plain text", () => {
    const line = double.process.logs.split("\n").find((l) => l.includes("non-default args: "));
    expect(line).toMatch(/non-default args: \{'model_tag': '[^']+', 'model': '[^']+', /);
    expect(line).toContain(`'api_key': ['${KEY}']`);
  });

  it("vllm-worker.sh prints {engine, version, model} and not the key", () => {
    const r = run([script("vllm-worker.sh")], {
      CONTAINER_NAME: "l40s",
      BASE_URL: double.url,
      API_KEY: KEY,
      EXPECTED_JSON: JSON.stringify({ id: "openai/gpt-oss-20b", owned_by: "vllm" }),
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ engine: "vllm", model: { id: "openai/gpt-oss-20b" } });
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });
});

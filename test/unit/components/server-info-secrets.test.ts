// /server_info on its way into the stack outputs (ModelServer.serverInfo) and the run manifest: real SGLang
// echoes api_key, admin_api_key and ssl_keyfile_password (sgl-project/sglang#30166, #37499); none of them,
// nor the key's value anywhere else, may be recorded.
import { describe, expect, it } from "vitest";
import { recordedServerInfo } from "../../../components/model-server-spec";
import { runManifest } from "../../../components/run-config";

const KEY = "sk-SENTINEL-4f1d2c9b8a7e6d5c4b3a2f1e0d9c";
const leaky = JSON.stringify({
  model_path: "/models/Qwen3.8-27B",
  tokenizer_path: "/models/Qwen3.8-27B",
  tokenizer_mode: "auto",
  tp_size: 4,
  api_key: KEY,
  admin_api_key: "sk-admin-0123456789",
  ssl_keyfile_password: null,
  launch_command: `sglang serve --tp-size 4 --api-key ${KEY}`,
  internal_states: [{ dp_rank: 0, api_key: KEY }],
});

describe("recordedServerInfo", () => {
  it("drops the secret fields at any depth and masks the key by value elsewhere", () => {
    const out = recordedServerInfo(leaky, [KEY]);
    expect(out).not.toContain(KEY);
    expect(out).not.toContain("sk-admin-0123456789");
    expect(JSON.parse(out)).toEqual({
      model_path: "/models/Qwen3.8-27B",
      tokenizer_path: "/models/Qwen3.8-27B",
      tokenizer_mode: "auto",
      tp_size: 4,
      launch_command: "sglang serve --tp-size 4 --api-key [secret not shown]",
      internal_states: [{ dp_rank: 0 }],
    });
  });

  it("gives clean text back byte for byte (no needless change of the stack outputs), and masks text that is not JSON", () => {
    const clean = '{"tp_size":4,"mem_fraction_static":0.90,"tokenizer_path":"/m"}';
    expect(recordedServerInfo(clean, [KEY])).toBe(clean);
    expect(recordedServerInfo(`oops ${KEY}`, [KEY])).toBe("oops [secret not shown]");
  });
});

describe("runManifest", () => {
  it("records the workers' /server_info without secret fields, whatever it is given", () => {
    const m = runManifest({
      toolkitVersion: "0",
      jobName: "j",
      paths: { jobDir: "/j", log: "/l", unit: "u", jobConfig: "/c", composeOverride: "/o", manifest: "/m" } as never,
      publicConfig: {},
      jobConfig: "",
      composeOverride: "",
      harbor: {},
      dataset: {},
      images: {},
      serverInfo: { "worker-a": leaky },
      daemonJsonSha256: {},
      serverImages: {},
      preflight: {},
    });
    const text = JSON.stringify(m);
    expect(text).not.toMatch(/"(api_key|admin_api_key|ssl_keyfile_password)"/);
    expect((m.workers as Record<string, Record<string, unknown>>)["worker-a"]).toMatchObject({ tokenizer_path: "/models/Qwen3.8-27B", tokenizer_mode: "auto", tp_size: 4 });
  });
});

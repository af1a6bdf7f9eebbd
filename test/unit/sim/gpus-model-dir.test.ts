// The sim hosts' model directories (sim/models/hf_model.py): Hugging Face layout with sparse shards whose
// safetensors headers declare Qwen3-32B's tensors, and the same model in HF cache layout.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, lstatSync, mkdtempSync, openSync, readFileSync, readlinkSync, readSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { modelDirArgv, SIM_HF_CACHE, SIM_MODEL_DIR } from "../../../sim/model-dir";

const root = resolve(__dirname, "../../..");
const generator = join(root, "sim/models/hf_model.py");
const tokenizer = join(root, "sim/sglang-double/tiny-model");
const work = mkdtempSync(join(tmpdir(), "rb-model-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function gen(args: string[]) {
  const r = spawnSync("python3", [generator, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  // JSON as the server (or the generator) answers it, read field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return JSON.parse(r.stdout) as Record<string, any>;
}
/** 8 + N + max(data_offsets end): what every loader requires the file size to be. */
function headerImpliedSize(file: string): { size: number; tensors: number; bytes: number } {
  const fd = openSync(file, "r");
  const len = Buffer.alloc(8);
  readSync(fd, len, 0, 8, 0);
  const n = Number(len.readBigUInt64LE());
  const header = Buffer.alloc(n);
  readSync(fd, header, 0, n, 8);
  closeSync(fd);
  expect(n % 8).toBe(0);
  const meta = JSON.parse(header.toString("utf8")) as Record<string, { data_offsets: [number, number]; dtype: string; shape: number[] }>;
  delete meta.__metadata__;
  const ends = Object.values(meta).map((t) => t.data_offsets[1]);
  const bytes = Object.values(meta).reduce((s, t) => s + t.data_offsets[1] - t.data_offsets[0], 0);
  for (const t of Object.values(meta)) expect(t.data_offsets[1] - t.data_offsets[0]).toBe(t.shape.reduce((a, b) => a * b, 2));
  return { size: 8 + n + Math.max(...ends), tensors: Object.keys(meta).length, bytes };
}

describe("model directory generator", () => {
  const out = join(work, "models", "Qwen3.8-27B");
  const hub = join(work, "hub");
  const made = gen(["write", "--out", out, "--tokenizer-dir", tokenizer, "--cache-dir", hub, "--repo-id", "Qwen/Qwen3.8-27B"]);

  it("declares Qwen3-32B: 17 shards, 65.5 GB, exact sizes, sparse on disk", () => {
    expect(made.model).toMatchObject({ spec: "qwen3-32b", total_size: 65_524_246_528, shards: 17, changed: true });
    const index = JSON.parse(readFileSync(join(out, "model.safetensors.index.json"), "utf8")) as { metadata: { total_size: number }; weight_map: Record<string, string> };
    expect(index.metadata.total_size).toBe(65_524_246_528);
    expect(Object.keys(index.weight_map)).toHaveLength(64 * 11 + 3);
    expect(index.weight_map["model.embed_tokens.weight"]).toBe("model-00001-of-00017.safetensors");
    expect(index.weight_map["lm_head.weight"]).toBe("model-00017-of-00017.safetensors");
    let declared = 0;
    let tensors = 0;
    let blocks = 0;
    for (const shard of new Set(Object.values(index.weight_map))) {
      const file = join(out, shard);
      const implied = headerImpliedSize(file);
      expect(statSync(file).size).toBe(implied.size);
      declared += implied.bytes;
      tensors += implied.tensors;
      blocks += statSync(file).blocks;
    }
    expect(declared).toBe(index.metadata.total_size);
    expect(tensors).toBe(Object.keys(index.weight_map).length);
    expect(blocks * 512).toBeLessThan(10 * 1024 * 1024); // holes, not 65 GB
    const config = JSON.parse(readFileSync(join(out, "config.json"), "utf8"));
    expect(config).toMatchObject({ num_hidden_layers: 64, num_key_value_heads: 8, head_dim: 128, hidden_size: 5120, model_type: "qwen3" });
    expect(readFileSync(join(out, "tokenizer.json"))).toEqual(readFileSync(join(tokenizer, "tokenizer.json")));
    expect((statSync(out).mode & 0o777).toString(8)).toBe("755");
  });

  it("the HF cache copy: snapshots/<rev>/* are relative links into ../../blobs", () => {
    const repo = join(hub, "models--Qwen--Qwen3.8-27B");
    const rev = readFileSync(join(repo, "refs", "main"), "utf8");
    expect(rev).toMatch(/^[0-9a-f]{40}$/);
    expect(made.cache.snapshot).toBe(join(repo, "snapshots", rev));
    const names = readdirSync(join(repo, "snapshots", rev)).sort();
    expect(names).toEqual(readdirSync(out).filter((n) => !n.startsWith(".")).sort());
    for (const name of names) {
      const link = join(repo, "snapshots", rev, name);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]{40,64}$/);
      expect(statSync(link).size).toBe(statSync(join(out, name)).size);
    }
  });

  it("is idempotent and never replaces a directory it did not make", () => {
    expect(gen(["write", "--out", out, "--tokenizer-dir", tokenizer, "--cache-dir", hub, "--repo-id", "Qwen/Qwen3.8-27B"])).toMatchObject({ model: { changed: false }, cache: { changed: false } });
    const foreign = join(work, "foreign");
    spawnSync("mkdir", ["-p", join(foreign, "keep")]);
    const r = spawnSync("python3", [generator, "write", "--out", foreign, "--spec", "tiny"], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("was not made by this tool");
    expect(existsSync(join(foreign, "keep"))).toBe(true);
  });

  it("faults: a missing shard, a truncated shard, a leftover .incomplete", () => {
    const dir = join(work, "faulty");
    gen(["write", "--out", dir, "--spec", "tiny"]);
    const shards = readdirSync(dir).filter((n) => n.endsWith(".safetensors")).sort();
    expect(shards).toEqual(["model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"]);
    const size = statSync(join(dir, shards[1])).size;
    expect(spawnSync("python3", [generator, "fault", "--dir", dir, "truncate-shard", "--shard", "2"]).status).toBe(0);
    expect(statSync(join(dir, shards[1])).size).toBe(Math.floor(size / 2));
    expect(spawnSync("python3", [generator, "fault", "--dir", dir, "missing-shard", "--shard", "3"]).status).toBe(0);
    expect(existsSync(join(dir, shards[2]))).toBe(false);
    expect(spawnSync("python3", [generator, "fault", "--dir", dir, "incomplete"]).status).toBe(0);
    expect(existsSync(join(dir, `${shards[0]}.incomplete`))).toBe(true);
  });

  it("runs on a host from stdin, at the stack's path", () => {
    expect(modelDirArgv("reprobench-sim-worker-a")).toEqual(["docker", "exec", "-i", "reprobench-sim-worker-a", "python3", "-", "write", "--out", SIM_MODEL_DIR, "--spec", "qwen3-32b", "--tokenizer-dir", "/var/lib/reprobench/models/sim-placeholder", "--cache-dir", SIM_HF_CACHE, "--repo-id", "Qwen/Qwen3.8-27B"]);
    expect(readFileSync(join(root, "Pulumi.a100.yaml"), "utf8")).toContain(`modelPath: ${SIM_MODEL_DIR}`);
  });
});

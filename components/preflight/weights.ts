// The weights checks (what preflight-weights.py read of modelServer.modelPath) and the memory-fit estimate
// of reference gpus.md §3 (SGLang: weights / tp, then the KV pool from mem-fraction-static of the free
// memory). Pure.
import type { ModelGeometry, WeightsFacts } from "./facts";
import { type CheckResult, GIB, MIB, type Problem, gib, listSome, result, skipped } from "./verdict";

export type WeightsMode = "auto" | "safetensors" | "placeholder";

export interface WeightsNeeds {
  modelPath: string;
  modelMountPath: string;
  mode: WeightsMode;
  /** The server gets GPUs (modelServer.gpus all): "auto" then means safetensors. */
  gpus: boolean;
  /** modelServer.preflight.weightsSha256. */
  sha256: Record<string, string>;
}

/** The weights facts the preflight records (outputs, the run manifest). */
export interface WeightsSummary {
  path: string;
  /** "safetensors", "placeholder" or "absent". */
  kind: string;
  shards: number;
  /** Bytes of tensor data (the index's metadata.total_size, else the shards' sum). */
  totalSize: number | null;
  /** Bytes of the shard files on disk. */
  bytesOnDisk: number;
  geometry: ModelGeometry | null;
}

const MAX_LINES = 8;

/** The weights check of one host, and what it read. */
export function evaluateWeights(host: string, w: WeightsFacts | null, need: WeightsNeeds): { summary: WeightsSummary | null; check: CheckResult } {
  if (!w) return { summary: null, check: skipped("weights", "no model server on this host") };
  const p = need.modelPath;
  const at = (file: string) => `${p.replace(/\/$/, "")}/${file}`;
  const problems: Problem[] = [];
  const notes: string[] = [];
  const problem = (subject: string, message: string, fix: string) => problems.push({ host, subject, message, fix });
  const summary: WeightsSummary = { path: p, kind: "absent", shards: 0, totalSize: null, bytesOnDisk: 0, geometry: w.config?.geometry ?? null };
  const done = (detail: string) => ({ summary, check: result("weights", detail, problems, notes) });
  if (w.error) {
    problem(p, `the weights could not be read: ${w.error}`, "install python3 on the host (the preflight reads the safetensors headers with it)");
    return done("not read");
  }
  if (!w.exists) {
    const near = w.siblings?.length ? `; ${parentOf(p)} holds: ${listSome(w.siblings, 8)}` : w.parentExists === false ? `; ${parentOf(p)} does not exist either` : "";
    problem(p, `modelServer.modelPath does not exist${near} (docker refuses the bind mount: 'bind source path does not exist')`, `put the model there, or point modelServer.modelPath (modelServer.overrides.${host}.modelPath) at where it is`);
    return done("missing");
  }
  if (!w.isDir) {
    problem(p, "modelServer.modelPath is not a directory", "point modelServer.modelPath at the model's directory (the one holding config.json)");
    return done("not a directory");
  }
  if (w.hfCache) {
    const repo = w.hfCache.repo ? w.hfCache.repo.replace(/^models--/, "").replace(/--/g, "/") : "REPO";
    const rev = w.hfCache.revision ?? "REVISION";
    problem(p, `is a Hugging Face cache snapshot${w.hfCache.repo ? ` (${w.hfCache.repo}/snapshots/${rev})` : ""}: its ${w.hfCache.linksToBlobs} files are symlinks into ../../blobs, which the read-only bind mount at ${need.modelMountPath} cannot follow`, `materialise it: \`hf download ${repo} --revision ${rev} --local-dir DIR\` (or \`cp -rL ${p} DIR\`), then set modelServer.modelPath: DIR`);
  } else if ((w.linksOutsideCount ?? 0) > 0) {
    const first = (w.linksOutside ?? []).slice(0, 3).map((l) => `${l.file} -> ${l.target}${l.resolves ? "" : " (dangling)"}`);
    problem(at((w.linksOutside ?? [])[0]?.file ?? ""), `${w.linksOutsideCount} symlink${w.linksOutsideCount === 1 ? "" : "s"} point outside the model directory (${first.join(", ")}); the container cannot follow them`, `replace them by the files they point to (\`cp -rL ${p} DIR\`, then modelServer.modelPath: DIR)`);
  }
  if (w.unreadable && w.unreadable.count > 0) {
    const first = w.unreadable.files.slice(0, 3).map((f) => `${f.file}${f.mode ? ` ${f.mode} ${f.uid}:${f.gid}` : ""}`);
    problem(at(w.unreadable.files[0]?.file ?? ""), `${w.unreadable.count} file${w.unreadable.count === 1 ? "" : "s"} or director${w.unreadable.count === 1 ? "y is" : "ies are"} not readable by ${w.readAs}, the container's user (docker --user; first: ${first.join(", ")})`, `\`chmod -R a+rX ${p}\` (or \`chown -R ${w.readAs} ${p}\`)`);
  } else if (w.readCheckError) {
    notes.push(`readability as the container's user not checked: ${w.readCheckError}`);
  }
  if ((w.entryCount ?? 0) === 0) {
    problem(p, "is an empty directory (a `docker run -v` of a missing path creates one)", "put the model there, or point modelServer.modelPath at where it is");
    return done("empty");
  }
  for (const f of w.incomplete ?? []) problem(at(f), "is a partial download (*.incomplete)", "finish the download (run `hf download` again: it resumes) and remove what is left over");

  const hasWeights = (w.index?.present ?? false) || (w.shards?.length ?? 0) > 0;
  if (need.mode === "placeholder" || (need.mode === "auto" && !need.gpus && !hasWeights)) {
    summary.kind = "placeholder";
    notes.push(need.mode === "placeholder" ? "a placeholder model (modelServer.preflight.weights: placeholder): no weights checked" : "no weights here: taken for a placeholder model (modelServer.gpus: none); a server with GPUs refuses it");
    return done(`placeholder, ${w.entryCount} entries`);
  }
  if (!w.config?.present) problem(at("config.json"), "is missing: not a Hugging Face model directory", "download the whole model (config.json, tokenizer, index, shards)");
  else if (w.config.error) problem(at("config.json"), `is not valid JSON: ${w.config.error}`, "download config.json again");
  if (w.index?.error) problem(at(w.index.file ?? "model.safetensors.index.json"), `cannot be read: ${w.index.error}`, "download the index again");
  if (!hasWeights) {
    problem(at("model.safetensors.index.json"), "is missing, and there is no model.safetensors: no safetensors weights here", "download the model's safetensors weights (or set modelServer.preflight.weights: placeholder for a tokenizer-only test model)");
    return done("no weights");
  }
  summary.kind = "safetensors";
  const shards = w.shards ?? [];
  summary.shards = shards.length;
  const bad: { subject: string; message: string; fix: string }[] = [];
  let dataBytes = 0;
  for (const s of shards) {
    summary.bytesOnDisk += s.size ?? 0;
    dataBytes += s.dataBytes ?? 0;
    const redownload = `download it again (\`hf download REPO ${s.file} --local-dir ${p}\`)`;
    if (!s.exists) {
      bad.push({ subject: at(s.file), message: `is named in ${w.index?.file ?? "the index"}'s weight_map but ${s.error === "missing" || !s.error ? "missing" : s.error} (SGLang before PR 32279 loads without it and serves wrong answers)`, fix: redownload });
    } else if (s.error) {
      bad.push({ subject: at(s.file), message: `is not a complete safetensors file: ${s.error}${s.expected !== null ? ` (${s.size} bytes)` : ""}`, fix: redownload });
    } else if (s.expected !== null && s.size !== s.expected) {
      bad.push({ subject: at(s.file), message: `is ${s.size} bytes, its header implies ${s.expected} (8 + header + data): ${s.size! < s.expected ? "truncated" : "trailing bytes"} (loading fails with 'SafetensorError: Error while deserializing header: MetadataIncompleteBuffer')`, fix: redownload });
    }
  }
  for (const b of bad.slice(0, MAX_LINES)) problem(b.subject, b.message, b.fix);
  if (bad.length > MAX_LINES) problem(p, `${bad.length - MAX_LINES} more shards are missing or incomplete`, "download the model again");
  summary.totalSize = w.index?.totalSize ?? (dataBytes || null);
  if (w.index?.totalSize && dataBytes && bad.length === 0 && Math.abs(w.index.totalSize - dataBytes) > 0.01 * w.index.totalSize) {
    notes.push(`the index's total_size (${w.index.totalSize}) differs from the shards' tensors (${dataBytes})`);
  }
  for (const d of w.sha256 ?? []) {
    if (d.error) problem(at(d.file), `cannot be hashed: ${d.error}`, "download it, or drop it from modelServer.preflight.weightsSha256");
    else if (d.actual !== d.expected) problem(at(d.file), `sha256 ${d.actual} differs from modelServer.preflight.weightsSha256 (${d.expected})`, `download it again (\`hf download REPO ${d.file} --local-dir ${p}\`)`);
  }
  if ((w.otherSafetensors ?? []).length) notes.push(`safetensors files the index does not name: ${listSome(w.otherSafetensors!)}`);
  const verified = (w.sha256 ?? []).length ? `, ${(w.sha256 ?? []).length} sha256 checked` : "";
  return done(`${shards.length} shard${shards.length === 1 ? "" : "s"}, ${summary.totalSize !== null ? gib(summary.totalSize) : "size unknown"}${verified}`);
}

function parentOf(p: string): string {
  const i = p.replace(/\/$/, "").lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

// ---------------------------------------------------------------------------------------------------------
// Memory fit (reference gpus.md §3).

/** What torch and NCCL take of each GPU before the weights (≈ 0.5 GiB). */
export const CUDA_CONTEXT_BYTES = 512 * MIB;
/** Replicated tensors, activations at load, fragmentation (≈ 1 GiB). */
export const LOAD_OVERHEAD_BYTES = GIB;

export interface FitInputs {
  /** The smallest free memory among the server's GPUs, MiB (our own server's share counted free). */
  freeMiB: number;
  tp: number;
  memFractionStatic: number;
  /** Tensor bytes of the checkpoint (index metadata.total_size). */
  totalSize: number;
  geometry: ModelGeometry | null;
  /** modelServer.kvCacheDtype (fp8_* halves the cell). */
  kvCacheDtype: string | null;
  contextLength: number | null;
}

export interface FitEstimate {
  /** free − CUDA context, bytes per GPU ("pre"). */
  available: number;
  weightsPerGpu: number;
  /** pre × mfs − weights − overhead: the KV pool per GPU. */
  kvPool: number;
  /** KV bytes per token per GPU, null when config.json does not say. */
  cellBytes: number | null;
  /** The expected max_total_num_tokens (compare with SGLang's log after start). */
  maxTokens: number | null;
}

/** KV bytes per token and GPU: max(1, kv_heads // tp) × (head_dim + v_head_dim) × full-attention layers × dtype bytes (MLA: one latent). */
export function kvCellBytes(g: ModelGeometry | null, tp: number, kvCacheDtype: string | null): number | null {
  if (!g || !g.num_hidden_layers) return null;
  let layers = g.num_hidden_layers;
  if (Array.isArray(g.layer_types) && g.layer_types.length) layers = g.layer_types.filter((t) => /full/i.test(t)).length;
  else if (g.full_attention_interval && g.full_attention_interval > 0) layers = Math.floor(g.num_hidden_layers / g.full_attention_interval);
  const dtypeBytes = kvCacheDtype?.startsWith("fp8") ? 1 : (g.torch_dtype ?? g.dtype) === "float32" ? 4 : 2;
  if (g.kv_lora_rank) return (g.kv_lora_rank + (g.qk_rope_head_dim ?? 0)) * layers * dtypeBytes;
  const heads = g.num_attention_heads;
  const headDim = g.head_dim ?? (g.hidden_size && heads ? g.hidden_size / heads : null);
  if (!headDim) return null;
  const kvHeads = g.num_key_value_heads ?? heads ?? 1;
  return Math.max(1, Math.floor(kvHeads / tp)) * (headDim + (g.v_head_dim ?? headDim)) * layers * dtypeBytes;
}

export function estimateFit(i: FitInputs): FitEstimate {
  const available = i.freeMiB * MIB - CUDA_CONTEXT_BYTES;
  const weightsPerGpu = i.totalSize / i.tp;
  const kvPool = available * i.memFractionStatic - weightsPerGpu - LOAD_OVERHEAD_BYTES;
  const cellBytes = kvCellBytes(i.geometry, i.tp, i.kvCacheDtype);
  const maxTokens = cellBytes && kvPool > 0 ? Math.floor(kvPool / cellBytes) : null;
  return { available, weightsPerGpu, kvPool, cellBytes, maxTokens };
}

/** The memory-fit check: refused when the weights or the KV pool cannot fit at this tp and mem-fraction-static. */
export function evaluateFit(host: string, i: FitInputs | null, why?: string): { estimate: FitEstimate | null; check: CheckResult } {
  if (!i) return { estimate: null, check: skipped("memory fit", why ?? "no GPU memory or weights size to estimate from") };
  const e = estimateFit(i);
  const figures = `weights ${gib(i.totalSize)} / tp ${i.tp} = ${gib(e.weightsPerGpu)} per GPU, ${gib(e.available)} free per GPU (after ≈0.5 GiB CUDA context), mem-fraction-static ${i.memFractionStatic}`;
  const subject = `model at tp ${i.tp}`;
  const problems: Problem[] = [];
  const notes: string[] = [];
  const twiceTp = i.tp * 2;
  if (e.weightsPerGpu + LOAD_OVERHEAD_BYTES > e.available) {
    problems.push({ host, subject, message: `does not fit: ${figures}; loading would fail with 'torch.OutOfMemoryError: CUDA out of memory'`, fix: `raise modelServer.tp (tp ${twiceTp}: ${gib(i.totalSize / twiceTp)} per GPU) or use GPUs with more memory` });
  } else if (e.kvPool <= 0) {
    const need = (e.weightsPerGpu + LOAD_OVERHEAD_BYTES) / e.available;
    problems.push({ host, subject, message: `leaves no KV cache: ${figures} gives a pool of ${gib(e.kvPool)}; SGLang would stop with 'Not enough memory. Please try to increase --mem-fraction-static'`, fix: need < 0.95 ? `raise modelServer.memFractionStatic above ${need.toFixed(2)}, or raise modelServer.tp` : `raise modelServer.tp (tp ${twiceTp}: ${gib(i.totalSize / twiceTp)} per GPU)` });
  } else if (e.maxTokens !== null && i.contextLength !== null && e.maxTokens < i.contextLength) {
    notes.push(`the KV pool (${gib(e.kvPool)}, ≈${e.maxTokens} tokens) holds less than one request of contextLength ${i.contextLength}`);
  }
  const detail = `${gib(e.weightsPerGpu)} weights + ${gib(Math.max(0, e.kvPool))} KV per GPU${e.maxTokens !== null ? `, ≈${e.maxTokens} tokens` : ""}`;
  return { estimate: e, check: result("memory fit", detail, problems, notes) };
}

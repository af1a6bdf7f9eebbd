#!/usr/bin/env python3
"""Model directories for the simulated GPU hosts, in Hugging Face layout, with sparse weight shards.

A real model's files, without its weights: config.json, generation_config.json, the double's tiny tokenizer
files, `model.safetensors.index.json` (weight_map, metadata.total_size) and shards whose safetensors headers
declare the real model's tensors (names, dtypes, shapes, data_offsets). The tensor data is a hole: each shard
is written as its header and then truncated to its full size, so a 65 GB model takes a few MB on disk (copying
it with docker cp / tar / rsync without --sparse would expand it: create it where it is used).

The default spec ("qwen3-32b") is Qwen3-32B's geometry (64 layers, 64 heads, 8 KV heads, head_dim 128,
hidden 5120, intermediate 25600, vocab 151936, untied lm_head; 65.5 GB in BF16, 17 shards of <= 4 GB, as the
published checkpoint), with the seed's 262144-token context: at tp 4 on A100-40GB the weights take ~15.3 GiB
per GPU and the KV pool at mem-fraction-static 0.9 holds ~300k tokens (gpus.md §3); at tp 1 it cannot fit.

safetensors format (huggingface/safetensors README): 8 bytes little-endian u64 N, N bytes of JSON header
(padded with spaces to a multiple of 8), then the data; file size = 8 + N + max(data_offsets end). Loaders
fail with `MetadataIncompleteBuffer` when the file is shorter or longer than that.

Also a copy in Hugging Face cache layout (`hub/models--ORG--NAME/{blobs,refs/main,snapshots/REV/…}`, every
snapshot file a relative symlink `../../blobs/<etag>`), the layout that a bind mount of `snapshots/REV`
cannot follow. Blob names: the git blob sha1 for small files, as the Hub's ETag; for shards a sha256 of the
header and size, NOT of the content (hashing 65 GB of zeros at `sim up` takes minutes).

CLI (python3 stdlib; `sim up` pipes this file into `python3 -` on each host):
  hf_model.py write --out DIR [--spec qwen3-32b|tiny|small] [--tokenizer-dir DIR] [--cache-dir HUB --repo-id ORG/NAME]
  hf_model.py describe [--spec S]                 the plan as JSON (shards, sizes, total_size)
  hf_model.py fault --dir DIR missing-shard|truncate-shard|incomplete|unreadable [--shard N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

STAMP = ".reprobench-model.json"
DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1, "I8": 1, "U8": 1}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")

SPECS: Dict[str, Dict[str, Any]] = {
    "qwen3-32b": {
        "source": "Qwen/Qwen3-32B",
        "max_shard_bytes": 4_000_000_000,
        "config": {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "attention_dropout": 0.0,
            "bos_token_id": 151643,
            "eos_token_id": 151645,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "initializer_range": 0.02,
            "intermediate_size": 25600,
            "max_position_embeddings": 262144,
            "max_window_layers": 64,
            "model_type": "qwen3",
            "num_attention_heads": 64,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "transformers_version": "4.51.0",
            "use_cache": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
    },
    # Small enough to write with real zeros in tests; the same layout (3 shards).
    "tiny": {
        "source": "reprobench/tiny-qwen3",
        "max_shard_bytes": 200_000,
        "config": {
            "architectures": ["Qwen3ForCausalLM"],
            "head_dim": 16,
            "hidden_size": 64,
            "intermediate_size": 128,
            "max_position_embeddings": 4096,
            "model_type": "qwen3",
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "num_key_value_heads": 2,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 1000,
        },
    },
    # The fake hub's test repo (sim/hub): 17.6 MB in 2 shards, the first one (11.7 MB) larger than the 10 MiB
    # that huggingface_hub writes at a time, so a download cut inside it leaves a partial file to resume.
    "small": {
        "source": "reprobench/small-qwen3",
        "max_shard_bytes": 12_000_000,
        "config": {
            "architectures": ["Qwen3ForCausalLM"],
            "head_dim": 64,
            "hidden_size": 256,
            "intermediate_size": 768,
            "max_position_embeddings": 4096,
            "model_type": "qwen3",
            "num_attention_heads": 4,
            "num_hidden_layers": 4,
            "num_key_value_heads": 2,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 22000,
        },
    },
}

Tensor = Tuple[str, str, List[int]]


def model_tensors(config: Dict[str, Any]) -> List[Tensor]:
    """(name, dtype, shape) of a Qwen3 dense checkpoint, in the order the model saves them."""
    h, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    hd, heads, kv = config["head_dim"], config["num_attention_heads"], config["num_key_value_heads"]
    dtype = "BF16"
    out: List[Tensor] = [("model.embed_tokens.weight", dtype, [vocab, h])]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", dtype, [h]),
            (p + "self_attn.q_proj.weight", dtype, [heads * hd, h]),
            (p + "self_attn.k_proj.weight", dtype, [kv * hd, h]),
            (p + "self_attn.v_proj.weight", dtype, [kv * hd, h]),
            (p + "self_attn.o_proj.weight", dtype, [h, heads * hd]),
            (p + "self_attn.q_norm.weight", dtype, [hd]),
            (p + "self_attn.k_norm.weight", dtype, [hd]),
            (p + "post_attention_layernorm.weight", dtype, [h]),
            (p + "mlp.gate_proj.weight", dtype, [inter, h]),
            (p + "mlp.up_proj.weight", dtype, [inter, h]),
            (p + "mlp.down_proj.weight", dtype, [h, inter]),
        ]
    out.append(("model.norm.weight", dtype, [h]))
    if not config.get("tie_word_embeddings"):
        out.append(("lm_head.weight", dtype, [vocab, h]))
    return out


def tensor_bytes(t: Tensor) -> int:
    n = DTYPE_BYTES[t[1]]
    for d in t[2]:
        n *= d
    return n


def shard_tensors(tensors: Sequence[Tensor], max_shard_bytes: int) -> List[List[Tensor]]:
    """transformers' save_pretrained sharding: in order, a new shard when the next tensor would overflow."""
    shards: List[List[Tensor]] = [[]]
    size = 0
    for t in tensors:
        b = tensor_bytes(t)
        if shards[-1] and size + b > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += b
    return shards


def safetensors_header(tensors: Sequence[Tensor]) -> Tuple[bytes, int]:
    """(the 8-byte length + padded JSON header, data length). Offsets in name order, as safetensors writes."""
    meta: Dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in sorted(tensors, key=lambda t: t[0]):
        n = tensor_bytes((name, dtype, shape))
        meta[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(meta, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, offset


def shard_name(i: int, n: int) -> str:
    return f"model-{i + 1:05d}-of-{n:05d}.safetensors"


def plan(spec_name: str = "qwen3-32b") -> Dict[str, Any]:
    spec = SPECS[spec_name]
    shards = shard_tensors(model_tensors(spec["config"]), spec["max_shard_bytes"])
    files = []
    weight_map: Dict[str, str] = {}
    total = 0
    for i, tensors in enumerate(shards):
        name = shard_name(i, len(shards))
        header, data = safetensors_header(tensors)
        files.append({"name": name, "header_bytes": len(header) - 8, "size": len(header) + data, "tensors": len(tensors)})
        for t in tensors:
            weight_map[t[0]] = name
        total += data
    return {"spec": spec_name, "source": spec["source"], "total_size": total, "shards": files,
            "weight_map": dict(sorted(weight_map.items())), "config": spec["config"]}


def _digest(p: Dict[str, Any], tokenizer: Dict[str, bytes]) -> str:
    h = hashlib.sha256(json.dumps({k: p[k] for k in ("spec", "total_size", "shards", "config")}, sort_keys=True).encode())
    for name in sorted(tokenizer):
        h.update(name.encode() + b"\0" + tokenizer[name])
    return h.hexdigest()


def _small_files(p: Dict[str, Any], tokenizer: Dict[str, bytes]) -> Dict[str, bytes]:
    index = {"metadata": {"total_size": p["total_size"]}, "weight_map": p["weight_map"]}
    cfg = p["config"]
    generation = {"bos_token_id": cfg.get("bos_token_id", 151643), "eos_token_id": [151645, 151643],
                  "do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95}
    files = {
        "config.json": (json.dumps(cfg, indent=2) + "\n").encode(),
        "generation_config.json": (json.dumps(generation, indent=2) + "\n").encode(),
        "model.safetensors.index.json": (json.dumps(index, indent=2) + "\n").encode(),
    }
    files.update(tokenizer)
    return files


def _read_tokenizer(tokenizer_dir: Optional[str]) -> Dict[str, bytes]:
    out: Dict[str, bytes] = {}
    for name in TOKENIZER_FILES:
        if tokenizer_dir and os.path.isfile(os.path.join(tokenizer_dir, name)):
            with open(os.path.join(tokenizer_dir, name), "rb") as f:
                out[name] = f.read()
    return out


def _write_shard(path: str, tensors: Sequence[Tensor]) -> int:
    header, data = safetensors_header(tensors)
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + data)  # the data is a hole: sparse
    return len(header) + data


def _shard_tensors_by_name(spec_name: str) -> Dict[str, List[Tensor]]:
    spec = SPECS[spec_name]
    shards = shard_tensors(model_tensors(spec["config"]), spec["max_shard_bytes"])
    return {shard_name(i, len(shards)): s for i, s in enumerate(shards)}


def _stamp_of(out: str) -> Optional[Dict[str, Any]]:
    try:
        with open(os.path.join(out, STAMP), encoding="utf-8") as f:
            return json.load(f)
    except (FileNotFoundError, ValueError):
        return None


def _replaceable(out: str) -> None:
    """Only a directory this tool made (its stamp) or an empty one is ever replaced."""
    if os.path.lexists(out) and not os.path.isdir(out):
        raise SystemExit(f"hf_model: {out} exists and is not a directory")
    if os.path.isdir(out) and os.listdir(out) and _stamp_of(out) is None:
        raise SystemExit(f"hf_model: {out} is not empty and was not made by this tool ({STAMP} missing); not touching it")


def write_model_dir(out: str, spec_name: str = "qwen3-32b", tokenizer_dir: Optional[str] = None) -> Dict[str, Any]:
    """Writes (or keeps, when its stamp matches) the HF-layout model directory; returns the plan + 'changed'."""
    p = plan(spec_name)
    tokenizer = _read_tokenizer(tokenizer_dir)
    digest = _digest(p, tokenizer)
    stamp = _stamp_of(out)
    if stamp is not None and stamp.get("digest") == digest:
        return {**_summary(p), "dir": out, "changed": False}
    _replaceable(out)
    tmp = out.rstrip("/") + ".reprobench-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, mode=0o755)
    for name, content in _small_files(p, tokenizer).items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(content)
    for name, tensors in _shard_tensors_by_name(spec_name).items():
        _write_shard(os.path.join(tmp, name), tensors)
    with open(os.path.join(tmp, STAMP), "w", encoding="utf-8") as f:
        json.dump({"spec": spec_name, "digest": digest}, f)
    for entry in os.listdir(tmp):
        os.chmod(os.path.join(tmp, entry), 0o644)
    os.chmod(tmp, 0o755)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    os.rename(tmp, out)
    return {**_summary(p), "dir": out, "changed": True}


def git_blob_sha1(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def write_hf_cache(hub: str, repo_id: str, spec_name: str = "qwen3-32b", tokenizer_dir: Optional[str] = None) -> Dict[str, Any]:
    """`hub/models--ORG--NAME/` with blobs, refs/main and snapshots/REV/* -> ../../blobs/ETAG symlinks."""
    p = plan(spec_name)
    tokenizer = _read_tokenizer(tokenizer_dir)
    digest = _digest(p, tokenizer)
    revision = hashlib.sha1(f"{repo_id}\0{digest}".encode()).hexdigest()
    repo_dir = os.path.join(hub, "models--" + repo_id.replace("/", "--"))
    stamp = _stamp_of(repo_dir)
    if stamp is not None and stamp.get("digest") == digest:
        return {"repo_dir": repo_dir, "revision": revision, "snapshot": os.path.join(repo_dir, "snapshots", revision), "changed": False}
    _replaceable(repo_dir)
    tmp = repo_dir + ".reprobench-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for d in ("blobs", "refs", os.path.join("snapshots", revision)):
        os.makedirs(os.path.join(tmp, d), mode=0o755)
    links: Dict[str, str] = {}
    for name, content in _small_files(p, tokenizer).items():
        etag = git_blob_sha1(content)
        with open(os.path.join(tmp, "blobs", etag), "wb") as f:
            f.write(content)
        links[name] = etag
    for name, tensors in _shard_tensors_by_name(spec_name).items():
        header, data = safetensors_header(tensors)
        etag = hashlib.sha256(header + str(len(header) + data).encode()).hexdigest()
        _write_shard(os.path.join(tmp, "blobs", etag), tensors)
        links[name] = etag
    for name, etag in links.items():
        os.chmod(os.path.join(tmp, "blobs", etag), 0o644)
        os.symlink(os.path.join("..", "..", "blobs", etag), os.path.join(tmp, "snapshots", revision, name))
    with open(os.path.join(tmp, "refs", "main"), "w", encoding="utf-8") as f:
        f.write(revision)
    with open(os.path.join(tmp, STAMP), "w", encoding="utf-8") as f:
        json.dump({"spec": spec_name, "digest": digest, "revision": revision}, f)
    for root, dirs, _files in os.walk(tmp):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    os.chmod(tmp, 0o755)
    if os.path.isdir(repo_dir):
        shutil.rmtree(repo_dir)
    os.makedirs(hub, exist_ok=True)
    os.rename(tmp, repo_dir)
    return {"repo_dir": repo_dir, "revision": revision, "snapshot": os.path.join(repo_dir, "snapshots", revision), "changed": True}


def _summary(p: Dict[str, Any]) -> Dict[str, Any]:
    return {"spec": p["spec"], "source": p["source"], "total_size": p["total_size"], "shards": len(p["shards"]),
            "bytes": sum(s["size"] for s in p["shards"])}


def apply_fault(model_dir: str, fault: str, shard: int = 1) -> str:
    """Break a model directory the ways downloads break (gpus.md §1.17-1.19). Returns what was done."""
    with open(os.path.join(model_dir, "model.safetensors.index.json"), encoding="utf-8") as f:
        index = json.load(f)
    shards = sorted(set(index["weight_map"].values()))
    if not 1 <= shard <= len(shards):
        raise SystemExit(f"hf_model: --shard must be 1..{len(shards)}, got {shard}")
    target = os.path.join(model_dir, shards[shard - 1])
    if fault == "missing-shard":
        os.remove(target)
        return f"removed {target}"
    if fault == "truncate-shard":
        size = os.path.getsize(target)
        with open(target, "r+b") as f:
            f.truncate(size // 2)
        return f"truncated {target} from {size} to {size // 2} bytes"
    if fault == "incomplete":
        path = target + ".incomplete"
        open(path, "wb").close()
        return f"created {path}"
    if fault == "unreadable":
        os.chmod(model_dir, 0o700)
        return f"chmod 0700 {model_dir} (root only)"
    raise SystemExit(f"hf_model: unknown fault {fault!r}")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="hf_model.py", description="Sparse Hugging Face model directories for the sim.")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("--out", required=True)
    w.add_argument("--spec", default="qwen3-32b", choices=sorted(SPECS))
    w.add_argument("--tokenizer-dir")
    w.add_argument("--cache-dir")
    w.add_argument("--repo-id")
    d = sub.add_parser("describe")
    d.add_argument("--spec", default="qwen3-32b", choices=sorted(SPECS))
    f = sub.add_parser("fault")
    f.add_argument("--dir", required=True)
    f.add_argument("fault", choices=["missing-shard", "truncate-shard", "incomplete", "unreadable"])
    f.add_argument("--shard", type=int, default=1)
    args = parser.parse_args(list(argv))
    if args.command == "describe":
        print(json.dumps(plan(args.spec)))
    elif args.command == "fault":
        print(apply_fault(args.dir, args.fault, args.shard))
    else:
        result: Dict[str, Any] = {"model": write_model_dir(args.out, args.spec, args.tokenizer_dir)}
        if args.cache_dir:
            if not args.repo_id:
                parser.error("--cache-dir needs --repo-id")
            result["cache"] = write_hf_cache(args.cache_dir, args.repo_id, args.spec, args.tokenizer_dir)
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

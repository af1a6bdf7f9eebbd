#!/usr/bin/env bash
# Defines preflight_weights, which prints what a model directory holds as one JSON object: the facts
# components/preflight/weights.ts judges. Loaded before preflight-host.sh, which calls it
# (scriptWithEnv(["preflight-weights", "preflight-host"], …)). Read-only: it opens files for reading only.
#   preflight_weights MODEL_PATH UID GID [SHA256_JSON]
#     MODEL_PATH   the directory modelServer.modelPath names on this host
#     UID GID      who the container runs as (docker --user uid:gid, no supplementary groups): the
#                  readability walk runs as it (in a child that drops to it, when run as root)
#     SHA256_JSON  {"<file relative to MODEL_PATH>": "<sha256 hex>"}: each listed file is hashed (read whole)
# The reader is python3 (standard library). Safetensors layout (huggingface/safetensors README): 8 bytes
# little-endian u64 N, an N-byte JSON header whose tensors carry data_offsets [begin, end] relative to the
# byte after the header; a complete file is exactly 8 + N + max(end) bytes (a shorter one is what
# safetensors calls MetadataIncompleteBuffer).
set -euo pipefail
preflight_weights() {
  MODEL_PATH=$1 CONTAINER_UID=$2 CONTAINER_GID=$3 WEIGHTS_SHA256_JSON=${4:-"{}"} python3 - <<'PY'
# What a model directory holds, as one JSON object on stdout: the facts components/preflight/weights.ts
# judges (reprobench's preflight, components/preflight.ts and `reprobench check`). Read-only: it opens
# files for reading and never writes. Run by preflight-host.sh (as root), standard library only.
# Inputs (env):
#   MODEL_PATH           the directory modelServer.modelPath names on this host
#   CONTAINER_UID        uid the container runs as (docker --user); the readability walk runs as it
#   CONTAINER_GID        its gid (no supplementary groups, as docker --user uid:gid gives none)
#   WEIGHTS_SHA256_JSON  {"<file relative to MODEL_PATH>": "<sha256 hex>"}; each listed file is hashed
#                        (reads the whole file) and its digest reported. Optional.
# Safetensors layout (huggingface/safetensors README): 8 bytes little-endian u64 N, an N-byte JSON header
# whose tensors carry data_offsets [begin, end] relative to the byte after the header; a complete file is
# exactly 8 + N + max(end) bytes (a shorter one is what safetensors calls MetadataIncompleteBuffer).
import hashlib
import json
import os
import re
import stat
import struct
import sys

MAX_HEADER = 100 * 1024 * 1024  # safetensors refuses headers above 100 MB
INDEX_NAMES = ("model.safetensors.index.json",)
SINGLE_NAME = "model.safetensors"
MAX_LISTED = 20
GEOMETRY_KEYS = (
    "model_type", "architectures", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "hidden_size", "v_head_dim", "kv_lora_rank", "qk_rope_head_dim", "layer_types", "full_attention_interval",
    "torch_dtype", "dtype", "max_position_embeddings", "quantization_config",
)


def shard_facts(path, name):
    """Size, the size its header implies, the tensor bytes, or what is wrong with the header."""
    full = os.path.join(path, name)
    out = {"file": name, "exists": False, "size": None, "expected": None, "dataBytes": None, "tensors": None, "error": None}
    try:
        st = os.stat(full)
    except FileNotFoundError:
        out["error"] = "missing" if not os.path.islink(full) else "broken symlink -> " + os.readlink(full)
        return out
    except OSError as e:
        out["error"] = e.strerror
        return out
    out["exists"] = True
    out["size"] = st.st_size
    try:
        with open(full, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                out["error"] = "shorter than the 8-byte header length"
                return out
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER:
                out["error"] = "header length %d exceeds 100 MB: not a safetensors file" % n
                return out
            raw = f.read(n)
    except OSError as e:
        out["error"] = e.strerror
        return out
    if len(raw) < n:
        out["error"] = "header cut off (%d of %d bytes)" % (len(raw), n)
        out["expected"] = 8 + n
        return out
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        out["error"] = "header is not JSON (%s)" % str(e)[:80]
        return out
    ends = [0]
    data = 0
    tensors = 0
    for key, t in header.items():
        if key == "__metadata__" or not isinstance(t, dict):
            continue
        offsets = t.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(x, int) for x in offsets)):
            out["error"] = "tensor %s has no data_offsets" % key[:80]
            return out
        ends.append(offsets[1])
        data += offsets[1] - offsets[0]
        tensors += 1
    out["expected"] = 8 + n + max(ends)
    out["dataBytes"] = data
    out["tensors"] = tensors
    return out


def geometry(config):
    """The KV geometry config.json gives (a multimodal model's text_config when it has one)."""
    src = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    g = {k: src.get(k) for k in GEOMETRY_KEYS if k in src}
    if isinstance(g.get("layer_types"), list):
        g["layer_types"] = [str(x) for x in g["layer_types"]]
    if isinstance(g.get("quantization_config"), dict):
        g["quantization_config"] = {k: g["quantization_config"].get(k) for k in ("quant_method", "bits") if k in g["quantization_config"]}
    return g


def hf_cache_facts(path, real):
    """Whether the directory is a Hugging Face cache snapshot (models--org--name/snapshots/<rev>, links into ../../blobs)."""
    m = re.search(r"/(models--[^/]+)/snapshots/([^/]+)$", real) or re.search(r"/(models--[^/]+)/snapshots/([^/]+)$", path)
    links_to_blobs = 0
    for name in sorted(os.listdir(path))[:200]:
        full = os.path.join(path, name)
        if os.path.islink(full) and "blobs/" in os.readlink(full):
            links_to_blobs += 1
    if not m and links_to_blobs == 0:
        return None
    return {"repo": m.group(1) if m else None, "revision": m.group(2) if m else None, "linksToBlobs": links_to_blobs}


def walk(path):
    """Every file and directory under path (links not followed), with links that leave it or dangle."""
    files, dirs, incomplete, outside = [], [path], [], []
    root = os.path.realpath(path)
    for d, subdirs, names in os.walk(path):
        for s in subdirs:
            full = os.path.join(d, s)
            if os.path.islink(full):
                names.append(s)
            else:
                dirs.append(full)
        for name in names:
            full = os.path.join(d, name)
            rel = os.path.relpath(full, path)
            if name.endswith(".incomplete"):
                incomplete.append(rel)
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not (target == root or target.startswith(root + os.sep)) or not os.path.exists(full):
                    outside.append({"file": rel, "target": os.readlink(full), "resolves": os.path.exists(full)})
                    continue
            files.append(full)
    return files, dirs, incomplete, outside


def unreadable_as(uid, gid, files, dirs, path):
    """What uid:gid (no supplementary groups) cannot read, checked in a child that drops to it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        bad = []
        try:
            # Inside the container the directory is the mount point: what lies above it on the host
            # does not matter, so the walk starts in it (entered before dropping to the user).
            os.chdir(path)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            for d in dirs:
                if not os.access(os.path.relpath(d, path), os.R_OK | os.X_OK):
                    bad.append(d)
            for f in files:
                if not os.access(os.path.relpath(f, path), os.R_OK):
                    bad.append(f)
        except OSError as e:
            bad = ["!" + e.strerror]
        with os.fdopen(w, "w") as out:
            json.dump(bad, out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as inp:
        bad = json.load(inp)
    os.waitpid(pid, 0)
    if bad and bad[0].startswith("!"):
        return None, bad[0][1:]
    listed = []
    for p in bad[:MAX_LISTED]:
        try:
            st = os.lstat(p)
            listed.append({"file": os.path.relpath(p, path), "mode": stat.filemode(st.st_mode), "uid": st.st_uid, "gid": st.st_gid})
        except OSError:
            listed.append({"file": os.path.relpath(p, path), "mode": None, "uid": None, "gid": None})
    return {"count": len(bad), "files": listed}, None


def main():
    path = os.environ["MODEL_PATH"]
    uid = int(os.environ.get("CONTAINER_UID", "0"))
    gid = int(os.environ.get("CONTAINER_GID", "0"))
    wanted = json.loads(os.environ.get("WEIGHTS_SHA256_JSON") or "{}")
    out = {"path": path, "exists": os.path.lexists(path), "isDir": os.path.isdir(path), "realpath": os.path.realpath(path)}
    if not out["isDir"]:
        parent = os.path.dirname(path.rstrip("/")) or "/"
        out["parentExists"] = os.path.isdir(parent)
        out["siblings"] = sorted(os.listdir(parent))[:MAX_LISTED] if out["parentExists"] else []
        print(json.dumps(out))
        return
    out["hfCache"] = hf_cache_facts(path, out["realpath"])
    entries = sorted(os.listdir(path))
    out["entries"] = entries[:200]
    out["entryCount"] = len(entries)
    files, dirs, incomplete, outside = walk(path)
    out["fileCount"] = len(files)
    out["incomplete"] = incomplete[:MAX_LISTED]
    out["linksOutside"] = outside[:MAX_LISTED]
    out["linksOutsideCount"] = len(outside)
    config = {"present": os.path.isfile(os.path.join(path, "config.json")), "error": None, "geometry": None}
    if config["present"]:
        try:
            with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
                config["geometry"] = geometry(json.load(f))
        except (OSError, ValueError) as e:
            config["error"] = str(e)[:200]
    out["config"] = config
    index = {"present": False, "file": None, "error": None, "totalSize": None, "shardCount": 0}
    shard_names = []
    for name in INDEX_NAMES:
        if os.path.isfile(os.path.join(path, name)):
            index["present"], index["file"] = True, name
            try:
                with open(os.path.join(path, name), encoding="utf-8") as f:
                    doc = json.load(f)
                weight_map = doc.get("weight_map")
                if not isinstance(weight_map, dict) or not weight_map:
                    index["error"] = "no weight_map"
                else:
                    shard_names = sorted(set(str(v) for v in weight_map.values()))
                total = (doc.get("metadata") or {}).get("total_size")
                index["totalSize"] = total if isinstance(total, int) else None
            except (OSError, ValueError, AttributeError) as e:
                index["error"] = str(e)[:200]
            break
    if not index["present"] and os.path.lexists(os.path.join(path, SINGLE_NAME)):
        shard_names = [SINGLE_NAME]
    index["shardCount"] = len(shard_names)
    out["index"] = index
    out["singleFile"] = not index["present"] and shard_names == [SINGLE_NAME]
    out["shards"] = [shard_facts(path, n) for n in shard_names]
    out["otherSafetensors"] = sorted(n for n in entries if n.endswith(".safetensors") and n not in shard_names)[:MAX_LISTED]
    if os.getuid() == 0 or os.getuid() == uid:
        out["unreadable"], why = unreadable_as(uid, gid, files, dirs, path) if os.getuid() == 0 else unreadable_as_self(files, dirs, path)
        out["readCheckError"] = why
    else:
        out["unreadable"], out["readCheckError"] = None, "the check runs as uid %d, neither root nor the container's uid %d" % (os.getuid(), uid)
    out["readAs"] = "%d:%d" % (uid, gid)
    digests = []
    for rel, expected in sorted(wanted.items()):
        full = os.path.join(path, rel)
        entry = {"file": rel, "expected": str(expected).lower(), "actual": None, "error": None}
        try:
            h = hashlib.sha256()
            with open(full, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            entry["actual"] = h.hexdigest()
        except OSError as e:
            entry["error"] = e.strerror
        digests.append(entry)
    out["sha256"] = digests
    print(json.dumps(out))


def unreadable_as_self(files, dirs, path):
    os.chdir(path)
    rel = lambda p: os.path.relpath(p, path)
    bad = [d for d in dirs if not os.access(rel(d), os.R_OK | os.X_OK)] + [f for f in files if not os.access(rel(f), os.R_OK)]
    return {"count": len(bad), "files": [{"file": os.path.relpath(p, path), "mode": None, "uid": None, "gid": None} for p in bad[:MAX_LISTED]]}, None


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the facts say what failed; the judge turns it into a problem
        print(json.dumps({"path": os.environ.get("MODEL_PATH"), "error": "%s: %s" % (type(e).__name__, str(e)[:300])}))
PY
}
declare -F preflight_weights >/dev/null

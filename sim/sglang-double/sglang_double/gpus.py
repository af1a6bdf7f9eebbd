"""Simulated GPUs and model weights for the SGLang / vLLM doubles (stdlib only).

A container started with `--gpus` on a sim host has the GPU inventory the toolkit hook wrote into it
(/run/reprobench-sim/gpu-inventory.json: the visible GPUs renumbered 0..k-1, their memory, the driver, the
fabric manager state; sim/images/sim-host/files/gpu/sim-gpu.py). With it, the double starts as the real
servers start, from the model directory's files, and fails where they fail, with their messages
(shared/reference/gpus.md §1, order of §1 "Order in which they appear"):

  fabric manager stopped (SXM)   torch: "Error 802: system not yet initialized"                        (1.15)
  tp x dp > CUDA devices         "Context: self.device='cuda' self.gpu_id=N …" then
                                 "torch.AcceleratorError: CUDA error: invalid device ordinal"           (1.6)
  tp > 1 and /dev/shm small      "NCCL WARN Error while creating shared memory segment …" +
                                 "torch.distributed.DistBackendError: NCCL error … unhandled system error" (1.12)
  free memory unbalanced         "RuntimeError: The memory capacity is unbalanced. …"                   (1.7)
  weights / tp > free            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …"     (1.9)
  shard size != its header       "safetensors_rust.SafetensorError: Error while deserializing header:
                                 MetadataIncompleteBuffer"                                             (1.17)
  KV pool <= 0                   "RuntimeError: Not enough memory. Please try to increase
                                 --mem-fraction-static. Current value: mem_fraction_static=…"         (1.8)
  a shard named in the index missing: served silently, every answer garbage (SGLang before PR 32279;
  vLLM raises "Following weights were not initialized from checkpoint")                               (1.18)

Memory model (gpus.md §3): torch's total = memory.total - memory.reserved; `pre` (free after CUDA context and
NCCL) = total - used - CONTEXT_MIB; weights per GPU = index total_size / (tp * pp); SGLang's KV pool
rest = post - pre * (1 - mem_fraction_static), tokens = rest / cell with
cell = max(1, kv_heads // tp) * head_dim * 2 * full_attention_layers * kv_dtype_bytes.

Without an inventory (no `--gpus`, as the `local` stack ran before) none of this applies: the double
behaves exactly as it always did.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import struct
from typing import Any, Dict, List, Optional, Tuple

CONTAINER_INVENTORY = "/run/reprobench-sim/gpu-inventory.json"
INVENTORY_ENV = "REPROBENCH_SIM_GPU_INVENTORY"
# /dev/shm size the double measures, overridable for tests.
SHM_ENV = "SGLANG_DOUBLE_SHM_BYTES"
MIB = 1 << 20
GIB = 1 << 30
# CUDA context + NCCL buffers per rank (torch sees 39.39 GiB on an A100-40GB, SGLang ~38.5 GiB free after init).
CONTEXT_MIB = 920
# Below this, NCCL cannot create its segments for tp > 1 (docker's default /dev/shm is 64 MiB; --ipc host
# or --shm-size gives the host's).
NCCL_MIN_SHM_BYTES = 1 << 30
NCCL_SEGMENT_BYTES = 7340384
VLLM_ACTIVATION_GIB = 1.5


class StartupFailure(Exception):
    """The server dies at start-up: `lines` are what it prints (stderr) before it exits 1."""

    def __init__(self, lines: List[str]) -> None:
        super().__init__(lines[-1] if lines else "startup failure")
        self.lines = lines


def load_inventory() -> Optional[Dict[str, Any]]:
    path = os.environ.get(INVENTORY_ENV) or CONTAINER_INVENTORY
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def shm_bytes() -> int:
    raw = os.environ.get(SHM_ENV)
    if raw:
        return int(raw)
    try:
        st = os.statvfs("/dev/shm")
        return st.f_blocks * st.f_frsize
    except OSError:
        return 0


def _now() -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _prefix(dp: Optional[int], tp: Optional[int], dp_size: int) -> str:
    where = []
    if dp is not None and dp_size > 1:
        where.append(f"DP{dp}")
    if tp is not None:
        where.append(f"TP{tp}")
    return f"[{_now()}{' ' + ' '.join(where) if where else ''}]"


def _fmt_size(nbytes: float) -> str:
    """torch's format_size in OOM messages: MiB below 1 GiB, else GiB, two decimals."""
    return f"{nbytes / MIB:.2f} MiB" if nbytes < GIB else f"{nbytes / GIB:.2f} GiB"


# --- weights -----------------------------------------------------------------------------------------------

class Weights:
    def __init__(self) -> None:
        self.total_size = 0
        self.config: Dict[str, Any] = {}
        self.shards: List[str] = []
        self.missing: List[str] = []
        self.missing_tensors: List[str] = []
        # (shard, safetensors error kind) of the first broken shard, in load order
        self.broken: Optional[Tuple[str, str]] = None
        # (name, bytes) of every tensor of the present shards, in load order
        self.tensors: List[Tuple[str, int]] = []


DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
               "F8_E4M3": 1, "F8_E5M2": 1, "BOOL": 1}


def shard_problem(path: str) -> Tuple[Optional[str], List[Tuple[str, int]]]:
    """(the safetensors error kind or None, the tensors it declares). Checks the size the header implies."""
    size = os.path.getsize(path)
    if size < 8:
        return "HeaderTooSmall", []
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > size - 8 or n > 100 * MIB:
            return "InvalidHeaderLength", []
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "InvalidHeaderDeserialization", []
    tensors = []
    end = 0
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, stop = meta["data_offsets"]
        end = max(end, stop)
        tensors.append((name, stop - start))
    if 8 + n + end != size:
        return "MetadataIncompleteBuffer", tensors
    return None, tensors


def model_config_failure(model_path: str) -> Optional[List[str]]:
    """What transformers says when the model directory is not usable (gpus.md §1.19), or None."""
    if not os.path.isdir(model_path):
        return [
            "Traceback (most recent call last):",
            f"huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '{model_path}'. Use `repo_type` argument if needed.",
        ]
    config = os.path.join(model_path, "config.json")
    try:
        with open(config, encoding="utf-8") as f:
            json.load(f)
    except PermissionError:
        return ["Traceback (most recent call last):", f"PermissionError: [Errno 13] Permission denied: '{config}'"]
    except FileNotFoundError:
        if not os.access(model_path, os.R_OK | os.X_OK):
            return ["Traceback (most recent call last):", f"PermissionError: [Errno 13] Permission denied: '{config}'"]
        return [
            "Traceback (most recent call last):",
            f"OSError: {model_path} does not appear to have a file named config.json. Checkout 'https://huggingface.co/{model_path}/tree/None' for available files.",
        ]
    return None


def read_weights(model_path: str) -> Optional[Weights]:
    """The checkpoint as a loader sees it; None when the directory has no safetensors (the tiny placeholder)."""
    w = Weights()
    try:
        with open(os.path.join(model_path, "config.json"), encoding="utf-8") as f:
            w.config = json.load(f)
    except (OSError, ValueError):
        w.config = {}
    index_path = os.path.join(model_path, "model.safetensors.index.json")
    if os.path.isfile(index_path):
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
        weight_map: Dict[str, str] = index.get("weight_map", {})
        w.shards = sorted(set(weight_map.values()))
        w.total_size = int(index.get("metadata", {}).get("total_size", 0))
        by_shard: Dict[str, List[str]] = {}
        for tensor, shard in weight_map.items():
            by_shard.setdefault(shard, []).append(tensor)
    elif os.path.isfile(os.path.join(model_path, "model.safetensors")):
        w.shards = ["model.safetensors"]
        by_shard = {}
    else:
        return None
    declared = 0
    for shard in w.shards:
        path = os.path.join(model_path, shard)
        if not os.path.exists(path):
            w.missing.append(shard)
            w.missing_tensors += sorted(by_shard.get(shard, []))
            continue
        try:
            problem, tensors = shard_problem(path)
        except PermissionError:
            problem, tensors = "PermissionError", []
        declared += sum(b for _, b in tensors)
        w.tensors += tensors
        if problem and w.broken is None:
            w.broken = (shard, problem)
    if not w.total_size:
        w.total_size = declared
    return w


def kv_cell_bytes(config: Dict[str, Any], tp: int, kv_cache_dtype: str) -> Optional[int]:
    """Bytes of KV cache per token per rank (gpus.md §3 step 4), or None without the geometry."""
    try:
        layers = int(config["num_hidden_layers"])
        heads = int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads", heads))
        head_dim = int(config.get("head_dim") or config["hidden_size"] // heads)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if isinstance(config.get("layer_types"), list):
        layers = sum(1 for t in config["layer_types"] if t in ("full_attention", "attention"))
    elif config.get("full_attention_interval"):
        layers = layers // int(config["full_attention_interval"])
    dtype_bytes = 1 if str(kv_cache_dtype).startswith(("fp8", "mxfp8")) else 2
    return max(1, kv_heads // tp) * head_dim * 2 * layers * dtype_bytes


# --- the GPUs ------------------------------------------------------------------------------------------------

def cuda_devices(inv: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What CUDA enumerates: a GPU in MIG mode without MIG instances gives no CUDA device."""
    return [g for g in inv.get("gpus", []) if g.get("migMode", "Disabled") != "Enabled"]


def torch_total_mib(g: Dict[str, Any]) -> int:
    return int(g["memoryTotalMiB"]) - int(g.get("memoryReservedMiB", 0))


def pre_free_gib(g: Dict[str, Any]) -> float:
    """Free GiB after torch.distributed init on this GPU (SGLang's get_available_gpu_memory)."""
    return max(0.0, (torch_total_mib(g) - int(g.get("memoryUsedMiB", 0)) - CONTEXT_MIB) / 1024)


def gpu_report(inv: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """What /server_info (double.gpus) and /_double/stats say about the GPUs the container got."""
    if inv is None:
        return {"inventory": False, "requested": None, "visible": 0}
    devices = cuda_devices(inv)
    return {
        "inventory": True,
        "requested": inv.get("requested"),
        "visible": len(inv.get("gpus", [])),
        "cuda_devices": len(devices),
        "names": sorted({g["name"] for g in inv.get("gpus", [])}),
        "uuids": [g["uuid"] for g in inv.get("gpus", [])],
        "driver_version": inv.get("driverVersion"),
        "cuda_version": inv.get("cudaVersion"),
        "free_mib": [torch_total_mib(g) - int(g.get("memoryUsedMiB", 0)) for g in inv.get("gpus", [])],
    }


def _needs_fabric_manager(inv: Dict[str, Any]) -> bool:
    return inv.get("fabricManager") == "stopped" and any("SXM" in g.get("name", "") for g in inv.get("gpus", []))


def _traceback(prefix: str, frames: List[Tuple[str, int, str, str]], error: List[str]) -> List[str]:
    lines = [f"{prefix} Scheduler hit an exception: Traceback (most recent call last):"]
    for path, line, func, code in frames:
        lines += [f'  File "/sgl-workspace/sglang/python/sglang/srt/{path}", line {line}, in {func}', f"    {code}"]
    return lines + error


SCHEDULER_FRAMES = [("managers/scheduler.py", 3024, "run_scheduler_process", "scheduler = Scheduler("),
                    ("managers/scheduler.py", 352, "__init__", "self.tp_worker = TpModelWorker("),
                    ("managers/tp_worker.py", 94, "__init__", "self.model_runner = ModelRunner(")]

ERROR_802 = ("Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
             "that might have already set an error? Error 802: system not yet initialized")
ORDINAL = ["torch.AcceleratorError: CUDA error: invalid device ordinal",
           "GPU device may be out of range, do you have enough GPUs?",
           "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]


def _sigquit() -> str:
    return f"[{_now()}] Received sigquit from a child process. It usually means the child failed."


def _nccl_shm_error(prefix: str) -> List[str]:
    host = os.uname().nodename
    pid = os.getpid()
    seg = "".join(random.Random(pid).choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(6))
    warn = f"Error while creating shared memory segment /dev/shm/nccl-{seg} (size {NCCL_SEGMENT_BYTES})"
    return [
        f"{host}:{pid}:{pid + 1} [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
        f"{host}:{pid}:{pid + 1} [0] include/shm.h:48 NCCL WARN {warn}",
    ] + _traceback(prefix, SCHEDULER_FRAMES + [("model_executor/model_runner.py", 721, "init_torch_distributed", "initialize_model_parallel(")], [
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        f"Last error:\n{warn}",
    ])


def _oom(gpu_id: int, g: Dict[str, Any], pre: float, tensors: List[Tuple[str, int]], per_rank_total: float, split: int) -> List[str]:
    """torch's OOM text for the first tensor that no longer fits on this rank."""
    used = 0.0
    tried = per_rank_total
    for _name, nbytes in tensors or [("weights", int(per_rank_total * split))]:
        part = nbytes / split
        if used + part > pre * GIB:
            tried = part
            break
        used += part
    total = torch_total_mib(g) * MIB
    free = max(0.0, pre * GIB - used)
    return [
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {_fmt_size(tried)}. GPU {gpu_id} has a total capacity of "
        f"{_fmt_size(total)} of which {_fmt_size(free)} is free. Including non-PyTorch memory, this process has "
        f"{_fmt_size(used + CONTEXT_MIB * MIB)} memory in use. Of the allocated memory {_fmt_size(used)} is allocated by PyTorch, "
        f"and 20.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        f"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
        f"(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    ]


def _truthy(value: Optional[str]) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on")


class GpuPlan:
    """A start-up that succeeds: the log lines, the per-rank memory figures, whether the answers are garbage."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.garbage = False
        self.max_total_num_tokens: Optional[int] = None
        self.weight_gb = 0.0
        self.kvcache_gb = 0.0
        self.avail_gb = 0.0
        self.report: Dict[str, Any] = {}


def plan_sglang(args: Dict[str, Any], inv: Dict[str, Any], env: Optional[Dict[str, str]] = None,
                shm: Optional[int] = None) -> GpuPlan:
    """SGLang's start-up on these GPUs and this model directory; raises StartupFailure as SGLang dies."""
    env = dict(os.environ) if env is None else env
    shm = shm_bytes() if shm is None else shm
    tp, dp, pp = int(args["tp_size"]), int(args["dp_size"]), int(args.get("pp_size") or 1)
    base, step = int(args.get("base_gpu_id") or 0), int(args.get("gpu_id_step") or 1)
    mfs = float(args["mem_fraction_static"])
    model_path = args["model_path"]
    plan = GpuPlan()
    plan.report = gpu_report(inv)
    problem = model_config_failure(model_path)
    if problem:
        raise StartupFailure(problem)
    devices = cuda_devices(inv)
    if _needs_fabric_manager(inv):
        raise StartupFailure(
            [f"/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: {ERROR_802} (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)"]
            + _traceback(_prefix(0, 0, dp), SCHEDULER_FRAMES + [("model_executor/model_runner.py", 702, "init_torch_distributed", "torch.get_device_module(self.device).set_device(self.gpu_id)")],
                         [f"RuntimeError: {ERROR_802}"])
            + [_sigquit()])
    ranks = [(d, r, base + (d * tp * pp + r) * step) for d in range(dp) for r in range(tp * pp)]
    for d, r, gpu_id in ranks:
        if gpu_id >= len(devices):
            prefix = _prefix(d, r % tp, dp)
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            raise StartupFailure(
                [f"{prefix} Init torch distributed begin.",
                 f"{prefix} Context: self.device='cuda' self.gpu_id={gpu_id} os.environ.get('CUDA_VISIBLE_DEVICES')={visible!r} self.tp_rank={r % tp} self.tp_size={tp}"]
                + _traceback(prefix, SCHEDULER_FRAMES + [("model_executor/model_runner.py", 702, "init_torch_distributed", "torch.get_device_module(self.device).set_device(self.gpu_id)")], ORDINAL)
                + [_sigquit()])
    if tp * pp > 1 and shm < NCCL_MIN_SHM_BYTES:
        raise StartupFailure(_nccl_shm_error(_prefix(0, 0, dp)) + [_sigquit()])
    pre = {gpu_id: pre_free_gib(devices[gpu_id]) for _, _, gpu_id in ranks}
    check_balance = not (_truthy(env.get("SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK"))
                         or str(env.get("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "true")).lower() in ("0", "false", "no", "off"))
    for d in range(dp):
        group = [(r, gpu_id) for dd, r, gpu_id in ranks if dd == d]
        low = min(pre[g] for _, g in group)
        plan.lines.append(f"{_prefix(d, 0, dp)} Init torch distributed ends. mem usage={CONTEXT_MIB / 1024:.2f} GB")
        for r, gpu_id in group:
            local = pre[gpu_id]
            if tp > 1 and low < local * 0.9:
                msg = (f"The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
                       f"min_per_gpu_memory={low:.2f}, local_gpu_memory={local:.2f}, local_gpu_memory * 0.9={local * 0.9:.2f}")
                if check_balance:
                    raise StartupFailure(plan.lines + _traceback(_prefix(d, r % tp, dp), SCHEDULER_FRAMES + [("model_executor/model_runner.py", 745, "init_torch_distributed", "raise RuntimeError(")], [f"RuntimeError: {msg}"]) + [_sigquit()])
                plan.lines.append(f"{_prefix(d, r % tp, dp)} WARNING: {msg}")
    weights = read_weights(model_path)
    per_rank = (weights.total_size / (tp * pp)) / GIB if weights else 0.0
    low_all = min(pre.values())
    plan.lines.append(f"{_prefix(0, 0, dp)} Load weight begin. avail mem={low_all:.2f} GB")
    if weights:
        for d, r, gpu_id in ranks:
            if per_rank > pre[gpu_id]:
                raise StartupFailure(plan.lines + _traceback(_prefix(d, r % tp, dp), SCHEDULER_FRAMES + [("model_loader/loader.py", 612, "load_model", "model = _initialize_model(")],
                                                _oom(gpu_id, devices[gpu_id], pre[gpu_id], weights.tensors, per_rank * GIB, tp * pp)) + [_sigquit()])
        total = len(weights.shards)
        if weights.broken:
            shard, kind = weights.broken
            k = weights.shards.index(shard)
            plan_lines = [f"Loading safetensors checkpoint shards: {100 * k // max(total, 1):3d}% Completed | {k}/{total} [00:{k * 3:02d}<?, ?it/s]"]
            error = (f"PermissionError: [Errno 13] Permission denied: '{os.path.join(model_path, shard)}'" if kind == "PermissionError"
                     else f"safetensors_rust.SafetensorError: Error while deserializing header: {kind}")
            raise StartupFailure(plan.lines + plan_lines + _traceback(_prefix(0, 0, dp), SCHEDULER_FRAMES + [("model_loader/weight_utils.py", 611, "safetensors_weights_iterator", 'with safe_open(st_file, framework="pt") as f:')], [error]) + [_sigquit()])
        plan.lines.append(f"Loading safetensors checkpoint shards: 100% Completed | {total}/{total} [00:{min(59, total * 3):02d}<00:00,  {1 / 3:.2f}it/s]")
        # Old SGLang skips a shard the index names but the directory lacks: those weights stay garbage.
        plan.garbage = bool(weights.missing)
    post = low_all - per_rank
    arch = (weights.config.get("architectures") or ["Qwen3ForCausalLM"])[0] if weights else "Qwen3NextForCausalLM"
    plan.lines.append(f"{_prefix(0, 0, dp)} Load weight end. type={arch}, dtype=torch.bfloat16, avail mem={post:.2f} GB, mem usage={per_rank:.2f} GB.")
    plan.weight_gb = round(per_rank, 2)
    plan.avail_gb = post
    cell = kv_cell_bytes(weights.config, tp, args.get("kv_cache_dtype", "auto")) if weights else None
    if cell is not None:
        rest = post - low_all * (1 - mfs)
        tokens = int(rest * GIB // cell) if rest > 0 else 0
        if args.get("max_total_tokens"):
            tokens = min(tokens, int(args["max_total_tokens"]))
        page = int(args.get("page_size") or 1)
        tokens = tokens // page * page
        if tokens <= 0:
            raise StartupFailure(plan.lines + _traceback(_prefix(0, 0, dp), SCHEDULER_FRAMES + [("model_executor/pool_configurator.py", 88, "__post_init__", "raise RuntimeError(")],
                                                         [f"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static={mfs!r}"]) + [_sigquit()])
        kv_gib = tokens * cell / GIB
        plan.max_total_num_tokens = tokens
        plan.kvcache_gb = round(kv_gib, 2)
        plan.avail_gb = post - kv_gib
        plan.lines += [
            f"{_prefix(0, 0, dp)} KV Cache is allocated. #tokens: {tokens}, K size: {kv_gib / 2:.2f} GB, V size: {kv_gib / 2:.2f} GB",
            f"{_prefix(0, 0, dp)} Memory pool end. avail mem={post - kv_gib:.2f} GB",
            f"{_prefix(0, 0, dp)} max_total_num_tokens={tokens}, chunked_prefill_size={args.get('chunked_prefill_size')}, "
            f"max_prefill_tokens={args.get('max_prefill_tokens')}, max_running_requests={args.get('max_running_requests')}, "
            f"context_len={args.get('context_length') or weights.config.get('max_position_embeddings')}, available_gpu_mem={post - kv_gib:.2f} GB",
        ]
    return plan


def plan_vllm(args: Dict[str, Any], inv: Dict[str, Any], shm: Optional[int] = None) -> GpuPlan:
    """vLLM's start-up on these GPUs (gpus.md §1.6v, 1.11, 1.17, 1.18); raises StartupFailure."""
    shm = shm_bytes() if shm is None else shm
    tp, pp, dp = int(args["tensor_parallel_size"]), int(args.get("pipeline_parallel_size") or 1), int(args["data_parallel_size"])
    util = float(args["gpu_memory_utilization"])
    model = args["model"]
    plan = GpuPlan()
    plan.report = gpu_report(inv)
    devices = cuda_devices(inv)
    if _needs_fabric_manager(inv):
        raise StartupFailure([f"RuntimeError: {ERROR_802}"])
    world = tp * pp
    if world > len(devices):
        raise StartupFailure([f"RuntimeError: please ensure that world_size ({world}) is less than than max local gpu count ({len(devices)})"])
    if world * dp > len(devices):
        raise StartupFailure(["RuntimeError: CUDA error: invalid device ordinal"] + ORDINAL[1:])
    if world > 1 and shm < NCCL_MIN_SHM_BYTES:
        lines = _nccl_shm_error("(EngineCore_DP0 pid=1)")
        raise StartupFailure([l for l in lines if "NCCL WARN" in l] + [l for l in lines if l.startswith(("torch.distributed", "ncclSystemError"))])
    used = devices[: world * dp]
    for i, g in enumerate(used):
        total = torch_total_mib(g) / 1024
        free = (torch_total_mib(g) - int(g.get("memoryUsedMiB", 0))) / 1024
        if free < util * total:
            raise StartupFailure([f"ValueError: Free memory on device ({free:.2f}/{total:.2f} GiB) on startup is less than desired GPU memory utilization ({util}, {util * total:.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."])
    weights = read_weights(model) if os.path.isdir(model) else None
    per_rank = (weights.total_size / world) / GIB if weights else 0.0
    budget = util * torch_total_mib(used[0]) / 1024 if used else 0.0
    if weights:
        if per_rank > budget - CONTEXT_MIB / 1024:
            raise StartupFailure(_oom(0, used[0], budget - CONTEXT_MIB / 1024, weights.tensors, per_rank * GIB, world))
        if weights.broken:
            shard, kind = weights.broken
            raise StartupFailure([f"safetensors_rust.SafetensorError: Error while deserializing header: {kind}" if kind != "PermissionError"
                                  else f"PermissionError: [Errno 13] Permission denied: '{os.path.join(model, shard)}'"])
        if weights.missing:
            names = ", ".join(repr(n) for n in weights.missing_tensors)
            raise StartupFailure([f"ValueError: Following weights were not initialized from checkpoint: {{{names}}}"])
    plan.lines.append(f"Model loading took {per_rank:.4f} GiB and 3.000000 seconds")
    kv = budget - per_rank - CONTEXT_MIB / 1024 - VLLM_ACTIVATION_GIB
    cell = kv_cell_bytes(weights.config, tp, args.get("kv_cache_dtype", "auto")) if weights else None
    plan.weight_gb = round(per_rank, 2)
    if cell is not None:
        if kv <= 0:
            raise StartupFailure(["ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."])
        tokens = int(kv * GIB // cell)
        need = args["max_model_len"] * cell / GIB
        if tokens < args["max_model_len"]:
            raise StartupFailure([f"ValueError: To serve at least one request with the models's max seq len ({args['max_model_len']}), ({need:.2f} GiB KV cache is needed, which is larger than the available KV cache memory ({kv:.2f} GiB). Based on the available memory, the estimated maximum model length is {tokens}. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."])
        plan.max_total_num_tokens = tokens
        plan.kvcache_gb = round(kv, 2)
        plan.lines += [f"Available KV cache memory: {kv:.2f} GiB", f"GPU KV cache size: {tokens:,} tokens",
                       f"Maximum concurrency for {args['max_model_len']:,} tokens per request: {tokens / args['max_model_len']:.2f}x"]
    return plan


_GARBAGE = ("\u0120\u0120", "\u7684", "attribute", "\u043d\u043e\u0440\u043c\u0430\u043b\u044c\u043d\u043e", "\u0109", "}}", "ob",
            ".scalablytyped", "\u0e01\u0e32\u0e23", "_REF", "Pending", "\u30b9", "(dp", "oundation", "\u2581\u2581", "ingle")


def garbage_text(words: int, seed: str) -> str:
    """What a model with uninitialised weights says: token soup, deterministic per request text."""
    rng = random.Random(seed)
    return " ".join(rng.choice(_GARBAGE) for _ in range(max(8, words)))

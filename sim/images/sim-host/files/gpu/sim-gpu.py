#!/usr/bin/env python3
"""Simulated NVIDIA GPUs for the reprobench sim hosts (stdlib only, one file, two tools).

Installed on every sim host as /usr/local/lib/reprobench-sim/sim-gpu.py and called through symlinks:

  /usr/local/bin/nvidia-smi                       -> the host's `nvidia-smi`, reading HOST_INVENTORY
  /usr/local/bin/nvidia-container-runtime-hook    -> the NVIDIA container toolkit's OCI prestart hook
                                                     (present = toolkit installed; see ../README.md, "GPUs")

The tool is chosen by the name it is called as (argv[0]); `sim-gpu.py nvidia-smi ARGS…` and
`sim-gpu.py nvidia-container-runtime-hook ARGS…` work too (tests).

The hook does what the real one does (NVIDIA/nvidia-container-toolkit cmd/nvidia-container-runtime-hook +
nvidia-container-cli, shared/reference/gpus.md §2c): it reads the OCI state on stdin, then
<bundle>/config.json (root.path, process.env), picks the devices named by NVIDIA_VISIBLE_DEVICES, checks the
NVIDIA_REQUIRE_* constraints against the driver (unless NVIDIA_DISABLE_REQUIRE), and "mounts the driver":
it writes a filtered, renumbered inventory to CONTAINER_INVENTORY and a copy of this file as /usr/bin/nvidia-smi
into the container's root file system. Failures print the real tool's messages on stderr and exit 1, which
runc turns into `error running prestart hook #0: exit status 1, stdout: , stderr: …`.

The in-container nvidia-smi answers from CONTAINER_INVENTORY (the host's processes are not visible in a
container's PID namespace, as with the real tool: their memory shows in memory.used, the processes do not).

A model server is a compute process on the host, as on a real one: when the container the hook prepares runs
SGLang or vLLM (process.args, past an init and a `sh -c 'exec "$@" …'` wrapper), the hook records its init
pid in HOST_PROCESSES on each GPU the server will use (the first tp × dp × pp it was given), holding
--mem-fraction-static / --gpu-memory-utilization × the GPU's memory. The host's nvidia-smi lists those next to
the inventory's foreign processes, while the pid lives; the container inventory is written before the record,
so a server does not see its own memory as taken. One pid stands for the server's GPU processes (SGLang's
schedulers and vLLM's workers are its children on a real host, one per GPU).
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

HOST_INVENTORY = "/etc/reprobench-sim/gpu-inventory.json"
CONTAINER_INVENTORY = "/run/reprobench-sim/gpu-inventory.json"
# The servers the hook started, on the host. /run is a tmpfs (gone with the pids on a reboot); not named like
# CONTAINER_INVENTORY, whose presence tells nvidia-smi that it runs in a container.
HOST_PROCESSES = "/run/reprobench-sim/gpu-processes.json"
# Tests (and nothing else) point the tools at another file.
INVENTORY_ENV = "REPROBENCH_SIM_GPU_INVENTORY"
HOOK_LOG = "/var/log/reprobench-sim-gpu-hook.log"

NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)
INVALID_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."


# --- the inventory -------------------------------------------------------------------------------------

def inventory_path() -> str:
    override = os.environ.get(INVENTORY_ENV)
    if override:
        return override
    # Inside a container the hook's copy; on the host the host's file.
    return CONTAINER_INVENTORY if os.path.exists(CONTAINER_INVENTORY) else HOST_INVENTORY


def load_inventory(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def processes_path() -> str:
    override = os.environ.get(INVENTORY_ENV)
    # Tests: next to the inventory they point at.
    return os.path.join(os.path.dirname(os.path.abspath(override)), "gpu-processes.json") if override else HOST_PROCESSES


def load_server_processes(path: Optional[str] = None) -> List[Dict[str, Any]]:
    try:
        with open(path or processes_path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    return [p for p in data.get("processes", []) if isinstance(p, dict)] if isinstance(data, dict) else []


def process_alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def _stat(pid: int) -> Optional[List[str]]:
    """/proc/PID/stat from field 3 (state) on: the name before it may hold spaces and parentheses."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return None
    return fields if len(fields) > 19 else None


def start_time(pid: int) -> Optional[str]:
    """Field 22, the start in clock ticks since boot: with the pid it names one process."""
    fields = _stat(pid)
    return fields[19] if fields else None


def entry_alive(p: Dict[str, Any]) -> bool:
    # A zombie has released its GPU memory already (the driver frees it at exit); a recorded start time keeps a
    # reused pid from reviving a server's entry.
    fields = _stat(int(p["pid"]))
    return fields is not None and fields[0] != "Z" and ("startTime" not in p or fields[19] == p["startTime"])


def live_processes(inv: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The compute processes that still run (a killed job frees its memory, as on a real GPU).

    A container's inventory has none (folded into memoryUsedMiB by the hook); a host's are the inventory's
    foreign ones and the servers the hook recorded, each while its process runs."""
    if inv.get("scope") == "container":
        return []
    return [p for p in list(inv.get("processes", [])) + load_server_processes() if entry_alive(p)]


def gpu_used_mib(inv: Dict[str, Any], gpu: Dict[str, Any], procs: Optional[List[Dict[str, Any]]] = None) -> int:
    procs = live_processes(inv) if procs is None else procs
    return int(gpu.get("memoryUsedMiB", 0)) + sum(int(p["usedMiB"]) for p in procs if p["gpuUuid"] == gpu["uuid"])


def gpu_free_mib(inv: Dict[str, Any], gpu: Dict[str, Any], procs: Optional[List[Dict[str, Any]]] = None) -> int:
    return max(0, int(gpu["memoryTotalMiB"]) - int(gpu.get("memoryReservedMiB", 0)) - gpu_used_mib(inv, gpu, procs))


# --- nvidia-smi ----------------------------------------------------------------------------------------
# Output formats of the real tool (R580, as in nvidia-smi(1) and the outputs quoted in gpus.md §2a):
#   -L:                 "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5fd4d3e5-8c37-a2f9-1b6e-0d2c4e8f9a10)"
#   --query-gpu=…  --format=csv:  a header "index, name, memory.total [MiB]" (units in brackets, also with
#                       nounits), then one line per GPU, values joined by ", ": "0, NVIDIA A100-SXM4-40GB, 40960 MiB";
#                       noheader drops the header, nounits drops " MiB" / " W" / " %" from the values.
#   --query-compute-apps=gpu_uuid,pid,process_name,used_memory: header "gpu_uuid, pid, process_name,
#                       used_gpu_memory [MiB]", lines "GPU-…, 12345, python3, 10240 MiB"; nothing (or the header
#                       alone) when no process runs.
#   -q:                 "Driver Version                            : 580.95.05" (keys padded to column 42,
#                       nested keys indented by 4 per level), "CUDA Version", per GPU "GPU 00000000:07:00.0" blocks.
#   no GPU visible:     "No devices were found" (exit 6); no driver: NO_DRIVER (exit 9).

def _mib(value: int) -> str:
    return f"{value} MiB"


def _gpu_fields(inv: Dict[str, Any], procs: List[Dict[str, Any]]) -> Dict[str, Tuple[str, Any]]:
    """query field -> (header, getter(gpu) -> value text with unit)."""
    def mig(g: Dict[str, Any]) -> str:
        return g.get("migMode", "Disabled")
    count = len(inv.get("gpus", []))
    return {
        "index": ("index", lambda g: str(g["index"])),
        "count": ("count", lambda g: str(count)),
        "uuid": ("uuid", lambda g: g["uuid"]),
        "gpu_uuid": ("uuid", lambda g: g["uuid"]),
        "name": ("name", lambda g: g["name"]),
        "gpu_name": ("name", lambda g: g["name"]),
        "serial": ("serial", lambda g: g.get("serial", "[N/A]")),
        "gpu_serial": ("serial", lambda g: g.get("serial", "[N/A]")),
        "pci.bus_id": ("pci.bus_id", lambda g: g["pciBusId"]),
        "gpu_bus_id": ("pci.bus_id", lambda g: g["pciBusId"]),
        "pci.domain": ("pci.domain", lambda g: "0x" + g["pciBusId"][:8][-4:]),
        "pci.bus": ("pci.bus", lambda g: "0x" + g["pciBusId"].split(":")[1]),
        "driver_version": ("driver_version", lambda g: inv["driverVersion"]),
        "vbios_version": ("vbios_version", lambda g: g.get("vbiosVersion", "92.00.36.00.01")),
        "memory.total": ("memory.total [MiB]", lambda g: _mib(int(g["memoryTotalMiB"]))),
        "memory.reserved": ("memory.reserved [MiB]", lambda g: _mib(int(g.get("memoryReservedMiB", 0)))),
        "memory.used": ("memory.used [MiB]", lambda g: _mib(gpu_used_mib(inv, g, procs))),
        "memory.free": ("memory.free [MiB]", lambda g: _mib(gpu_free_mib(inv, g, procs))),
        "mig.mode.current": ("mig.mode.current", mig),
        "mig.mode.pending": ("mig.mode.pending", mig),
        "compute_mode": ("compute_mode", lambda g: g.get("computeMode", "Default")),
        "persistence_mode": ("persistence_mode", lambda g: g.get("persistenceMode", "Enabled")),
        "display_mode": ("display_mode", lambda g: "Disabled"),
        "display_active": ("display_active", lambda g: "Disabled"),
        "pstate": ("pstate", lambda g: "P0"),
        "compute_cap": ("compute_cap", lambda g: g.get("computeCap", "8.0")),
        "temperature.gpu": ("temperature.gpu", lambda g: str(g.get("temperatureC", 33))),
        "utilization.gpu": ("utilization.gpu [%]", lambda g: "0 %"),
        "utilization.memory": ("utilization.memory [%]", lambda g: "0 %"),
        "power.draw": ("power.draw [W]", lambda g: f"{float(g.get('powerDrawW', 54.6)):.2f} W"),
        "power.limit": ("power.limit [W]", lambda g: f"{float(g.get('powerLimitW', 400)):.2f} W"),
        "ecc.mode.current": ("ecc.mode.current", lambda g: "Enabled"),
        "ecc.errors.uncorrected.volatile.total": ("ecc.errors.uncorrected.volatile.total", lambda g: str(g.get("eccUncorrected", 0))),
        "ecc.errors.corrected.volatile.total": ("ecc.errors.corrected.volatile.total", lambda g: "0"),
        "fabric.state": ("fabric.state", lambda g: _fabric(inv)[0]),
        "fabric.status": ("fabric.status", lambda g: _fabric(inv)[1]),
    }


APP_FIELDS: Dict[str, Tuple[str, Any]] = {
    "gpu_uuid": ("gpu_uuid", lambda p, g: p["gpuUuid"]),
    "gpu_name": ("gpu_name", lambda p, g: g["name"] if g else "[N/A]"),
    "gpu_bus_id": ("gpu_bus_id", lambda p, g: g["pciBusId"] if g else "[N/A]"),
    "gpu_serial": ("gpu_serial", lambda p, g: g.get("serial", "[N/A]") if g else "[N/A]"),
    "pid": ("pid", lambda p, g: str(p["pid"])),
    "process_name": ("process_name", lambda p, g: p["name"]),
    "name": ("process_name", lambda p, g: p["name"]),
    "used_memory": ("used_gpu_memory [MiB]", lambda p, g: _mib(int(p["usedMiB"]))),
    "used_gpu_memory": ("used_gpu_memory [MiB]", lambda p, g: _mib(int(p["usedMiB"]))),
}


def _fabric(inv: Dict[str, Any]) -> Tuple[str, str]:
    # nvidia-smi -q "Fabric" (State / Status): Completed/Success once the fabric manager has trained the
    # NVSwitch fabric; while it is not running the GPUs stay uninitialised (CUDA error 802).
    fm = inv.get("fabricManager", "running")
    if fm == "stopped":
        return ("Not Started", "N/A")
    if fm == "running":
        return ("Completed", "Success")
    return ("N/A", "N/A")


def _strip_unit(value: str) -> str:
    for unit in (" MiB", " W", " %"):
        if value.endswith(unit):
            return value[: -len(unit)]
    return value


def _csv(headers: List[str], rows: List[List[str]], fmt: Sequence[str]) -> str:
    out = []
    if "noheader" not in fmt:
        out.append(", ".join(headers))
    for row in rows:
        out.append(", ".join(_strip_unit(v) if "nounits" in fmt else v for v in row))
    return "".join(line + "\n" for line in out)


def _select(gpus: List[Dict[str, Any]], ids: Optional[str]) -> Optional[List[Dict[str, Any]]]:
    if ids is None:
        return gpus
    chosen = []
    for ident in ids.split(","):
        ident = ident.strip()
        match = [g for g in gpus if str(g["index"]) == ident or g["uuid"] == ident or g["pciBusId"].lower() == ident.lower()]
        if not match:
            return None
        chosen.extend(match)
    return chosen


def _kv(indent: int, key: str, value: Any) -> str:
    return f"{' ' * indent}{key}".ljust(42) + f": {value}\n"


def _section(indent: int, key: str) -> str:
    return f"{' ' * indent}{key}\n"


def _query_text(inv: Dict[str, Any], gpus: List[Dict[str, Any]], procs: List[Dict[str, Any]]) -> str:
    now = datetime.datetime.now().strftime("%a %b %e %H:%M:%S %Y")
    state, status = _fabric(inv)
    text = "\n==============NVSMI LOG==============\n\n"
    text += _kv(0, "Timestamp", now) + _kv(0, "Driver Version", inv["driverVersion"]) + _kv(0, "CUDA Version", inv["cudaVersion"]) + "\n"
    text += _kv(0, "Attached GPUs", len(inv.get("gpus", [])))
    for g in gpus:
        mig = g.get("migMode", "Disabled")
        text += f"GPU {g['pciBusId']}\n"
        text += _kv(4, "Product Name", g["name"]) + _kv(4, "Product Brand", "NVIDIA") + _kv(4, "Product Architecture", "Ampere")
        text += _kv(4, "Display Mode", "Disabled") + _kv(4, "Display Active", "Disabled")
        text += _kv(4, "Persistence Mode", g.get("persistenceMode", "Enabled"))
        text += _section(4, "MIG Mode") + _kv(8, "Current", mig) + _kv(8, "Pending", mig)
        text += _kv(4, "Serial Number", g.get("serial", "[N/A]")) + _kv(4, "GPU UUID", g["uuid"])
        text += _kv(4, "Minor Number", g.get("hostIndex", g["index"]))
        text += _section(4, "Fabric") + _kv(8, "State", state) + _kv(8, "Status", status)
        bus = g["pciBusId"]
        text += _section(4, "PCI") + _kv(8, "Bus", "0x" + bus.split(":")[1]) + _kv(8, "Device", "0x00")
        text += _kv(8, "Domain", "0x" + bus[4:8]) + _kv(8, "Bus Id", bus)
        text += _section(4, "FB Memory Usage")
        text += _kv(8, "Total", _mib(int(g["memoryTotalMiB"]))) + _kv(8, "Reserved", _mib(int(g.get("memoryReservedMiB", 0))))
        text += _kv(8, "Used", _mib(gpu_used_mib(inv, g, procs))) + _kv(8, "Free", _mib(gpu_free_mib(inv, g, procs)))
        text += _kv(4, "Compute Mode", g.get("computeMode", "Default"))
        mine = [p for p in procs if p["gpuUuid"] == g["uuid"]]
        if not mine:
            text += _kv(4, "Processes", "None")
        else:
            text += "    Processes\n"
            for p in mine:
                text += _kv(8, "GPU instance ID", "N/A") + _kv(8, "Compute instance ID", "N/A") + _kv(8, "Process ID", p["pid"])
                text += _kv(12, "Type", "C") + _kv(12, "Name", p["name"]) + _kv(12, "Used GPU Memory", _mib(int(p["usedMiB"])))
        text += "\n"
    return text


def _table(inv: Dict[str, Any], gpus: List[Dict[str, Any]], procs: List[Dict[str, Any]]) -> str:
    """The default `nvidia-smi` screen (R550+ layout, 89 columns)."""
    line = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
    now = datetime.datetime.now().strftime("%a %b %e %H:%M:%S %Y")
    out = [f"{now}       ", "+" + "-" * 89 + "+"]
    head = f" NVIDIA-SMI {inv['driverVersion']:<22}Driver Version: {inv['driverVersion']:<15}CUDA Version: {inv['cudaVersion']:<9}"
    out += ["|" + head.ljust(89) + "|", line]
    out += ["| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
            "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
            "|                                         |                        |               MIG M. |",
            "|" + "=" * 41 + "+" + "=" * 24 + "+" + "=" * 22 + "|"]
    for g in gpus:
        persist = "On" if g.get("persistenceMode", "Enabled") == "Enabled" else "Off"
        name = g["name"][:28]
        out.append(f"| {g['index']:>3}  {name:<28}{persist:>7}  |   {g['pciBusId']} Off | {g.get('eccUncorrected', 0):>20} |")
        used = f"{gpu_used_mib(inv, g, procs)}MiB /  {int(g['memoryTotalMiB'])}MiB"
        power = f"{int(float(g.get('powerDrawW', 54.6)))}W /  {int(float(g.get('powerLimitW', 400)))}W"
        out.append(f"| N/A   {g.get('temperatureC', 33)}C    P0 {power:>25} | {used:>22} | {'0%':>8} {g.get('computeMode', 'Default'):>11} |")
        out.append(f"|{'':41}|{'':24}| {g.get('migMode', 'Disabled'):>20} |")
        out.append(line)
    out.append(" " * 91)
    out += ["+" + "-" * 89 + "+", "| Processes:".ljust(90) + "|",
            "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
            "|        ID   ID                                                               Usage      |",
            "|" + "=" * 89 + "|"]
    index_of = {g["uuid"]: g["index"] for g in gpus}
    shown = [p for p in procs if p["gpuUuid"] in index_of]
    if not shown:
        out.append("|  No running processes found".ljust(90) + "|")
    for p in shown:
        out.append(f"|  {index_of[p['gpuUuid']]:>3}   N/A  N/A  {p['pid']:>15}      C   {p['name'][:34]:<34} {int(p['usedMiB']):>7}MiB |")
    out.append("+" + "-" * 89 + "+")
    return "\n".join(out) + "\n"


def _option_value(args: List[str], i: int, name: str) -> Tuple[Optional[str], int]:
    """`--name=value`, `--name value` (and `-i value`, `-i0`)."""
    arg = args[i]
    if arg.startswith(name + "="):
        return arg[len(name) + 1:], i + 1
    if arg == name:
        return (args[i + 1], i + 2) if i + 1 < len(args) else (None, i + 1)
    return None, i + 1


def nvidia_smi(argv: Sequence[str], out: Any = sys.stdout, err: Any = sys.stderr) -> int:
    args = list(argv)
    mode, query, fmt, ids = "table", None, None, None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-L", "--list-gpus"):
            mode, i = "list", i + 1
        elif arg in ("-q", "--query"):
            mode, i = "q", i + 1
        elif arg in ("-h", "--help"):
            out.write("NVIDIA System Management Interface -- v" + "(reprobench sim)\n")
            return 0
        elif arg.startswith("--query-gpu"):
            query, i = _option_value(args, i, "--query-gpu")
            mode = "query-gpu"
        elif arg.startswith("--query-compute-apps"):
            query, i = _option_value(args, i, "--query-compute-apps")
            mode = "query-apps"
        elif arg.startswith("--format"):
            fmt, i = _option_value(args, i, "--format")
        elif arg.startswith("--id") or arg == "-i":
            ids, i = _option_value(args, i, "--id" if arg.startswith("--id") else "-i")
        elif arg.startswith("-i") and len(arg) > 2:
            ids, i = arg[2:], i + 1
        elif arg in ("-d", "--display"):
            i += 2  # -q -d MEMORY,…: the whole report is printed
        else:
            err.write(INVALID_ARGS + "\n")
            return 2
    inv = load_inventory(inventory_path())
    if inv is None or inv.get("fault") in ("driver-not-loaded", "nvml-missing"):
        out.write(NO_DRIVER + "\n\n")
        return 9
    procs = live_processes(inv)
    gpus = _select(inv.get("gpus", []), ids)
    if gpus is None:
        out.write("No devices were found\n")
        return 6
    if not inv.get("gpus"):
        out.write("No devices were found\n")
        return 6
    if mode in ("query-gpu", "query-apps"):
        if not query or fmt is None:
            err.write(INVALID_ARGS + "\n")
            return 2
        parts = [p.strip() for p in fmt.split(",")]
        if parts[0] != "csv" or any(p not in ("csv", "noheader", "nounits") for p in parts):
            err.write(INVALID_ARGS + "\n")
            return 2
        names = [q.strip() for q in query.split(",") if q.strip()]
        table = _gpu_fields(inv, procs) if mode == "query-gpu" else APP_FIELDS
        for name in names:
            if name not in table:
                out.write(f'Field "{name}" is not a valid field to query.\n\n')
                return 2
        headers = [table[n][0] for n in names]
        if mode == "query-gpu":
            rows = [[table[n][1](g) for n in names] for g in gpus]
        else:
            by_uuid = {g["uuid"]: g for g in gpus}
            rows = [[table[n][1](p, by_uuid.get(p["gpuUuid"])) for n in names] for p in procs if p["gpuUuid"] in by_uuid]
        out.write(_csv(headers, rows, parts))
        return 0
    if mode == "list":
        out.write("".join(f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})\n" for g in gpus))
        return 0
    if mode == "q":
        out.write(_query_text(inv, gpus, procs))
        return 0
    out.write(_table(inv, gpus, procs))
    return 0


# --- nvidia-container-runtime-hook ------------------------------------------------------------------------

class HookError(Exception):
    """A failure of nvidia-container-cli: the message goes to stderr as the real one prints it."""


def _version_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _compare(have: Tuple[int, ...], op: str, want: Tuple[int, ...]) -> bool:
    n = max(len(have), len(want))
    a, b = have + (0,) * (n - len(have)), want + (0,) * (n - len(want))
    return {">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b, "=": a == b, "==": a == b}[op]


def check_requirements(env: Dict[str, str], inv: Dict[str, Any], gpus: List[Dict[str, Any]]) -> Optional[str]:
    """The first unsatisfied condition of the NVIDIA_REQUIRE_* constraints, or None.

    libnvidia-container's rules: every NVIDIA_REQUIRE_* variable must hold; in one variable space-separated
    alternatives are ORed and comma-separated conditions ANDed; keys cuda, driver, arch, brand. A legacy
    image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) requires cuda>=<major.minor of CUDA_VERSION>.
    """
    if env.get("NVIDIA_DISABLE_REQUIRE", "").lower() in ("1", "true", "yes", "on"):
        return None
    exprs = [v for k, v in sorted(env.items()) if k.startswith("NVIDIA_REQUIRE_") and v.strip()]
    if "NVIDIA_REQUIRE_CUDA" not in env and env.get("CUDA_VERSION"):
        exprs.append("cuda>=" + ".".join(env["CUDA_VERSION"].split(".")[:2]))
    facts = {
        "cuda": inv["cudaVersion"],
        "driver": inv["driverVersion"],
        "arch": [g.get("computeCap", "8.0") for g in gpus] or ["8.0"],
        "brand": [g.get("brand", "nvidia").lower() for g in gpus] or ["nvidia"],
    }

    def holds(cond: str) -> bool:
        m = re.fullmatch(r"\s*(cuda|driver|arch|brand)\s*(>=|<=|==|=|>|<)\s*(\S+)\s*", cond)
        if m is None:
            raise HookError(f"nvidia-container-cli: requirement error: invalid expression: {cond}")
        key, op, value = m.groups()
        if key == "brand":
            return all(b == value.lower() for b in facts["brand"]) if op in ("=", "==") else False
        if key == "arch":
            return all(_compare(_version_tuple(a), op, _version_tuple(value)) for a in facts["arch"])
        return _compare(_version_tuple(str(facts[key])), op, _version_tuple(value))

    for expr in exprs:
        alternatives = [alt.split(",") for alt in expr.split()]
        if any(all(holds(c) for c in alt) for alt in alternatives):
            continue
        first = next(c for c in alternatives[0] if not holds(c))
        return first.strip()
    return None


def select_devices(value: str, inv: Dict[str, Any]) -> List[Dict[str, Any]]:
    """NVIDIA_VISIBLE_DEVICES -> the host GPUs it names (all | none | comma list of indices or UUIDs)."""
    gpus = inv.get("gpus", [])
    if value == "all":
        return list(gpus)
    if value == "none":
        return []
    chosen: List[Dict[str, Any]] = []
    for ident in (v.strip() for v in value.split(",")):
        if not ident:
            continue
        match = [g for g in gpus if str(g["index"]) == ident or g["uuid"] == ident]
        if not match:
            raise HookError(f"nvidia-container-cli: device error: {ident}: unknown device")
        if match[0] not in chosen:
            chosen.append(match[0])
    return chosen


def container_inventory(inv: Dict[str, Any], chosen: List[Dict[str, Any]], requested: str) -> Dict[str, Any]:
    """What the container sees: the chosen GPUs renumbered 0..k-1 (as CUDA numbers them), their memory as it
    is now (foreign processes folded into memoryUsedMiB), no processes (another PID namespace)."""
    procs = live_processes(inv)
    gpus = []
    for i, g in enumerate(chosen):
        seen = dict(g)
        seen["hostIndex"] = g["index"]
        seen["index"] = i
        seen["memoryUsedMiB"] = gpu_used_mib(inv, g, procs)
        gpus.append(seen)
    return {
        "version": inv.get("version", 1),
        "scope": "container",
        "host": inv.get("host"),
        "requested": requested,
        "driverVersion": inv["driverVersion"],
        "cudaVersion": inv["cudaVersion"],
        "fabricManager": inv.get("fabricManager", "running"),
        "gpus": gpus,
        "processes": [],
    }


# --- the model server as a host compute process --------------------------------------------------------
# Memory a server holds per GPU when the flag is absent:
#   SGLang: --mem-fraction-static has no fixed default; ServerArgs resolves None at start from the GPU's memory
#     (python/sglang/srt/server_args.py, _handle_gpu_memory_settings: round((gpu_mem - reserved_mem) / gpu_mem, 3),
#     reserved_mem from the chunked-prefill size, the CUDA graphs and tp × pp; 0.88 when the capacity is unknown;
#     PR sgl-project/sglang#10975). The sim takes 0.836, the resolved value of shared/reference/sglang.md §1.2
#     that the double reports in /server_info (sglang_double/args.py RESOLVED_DEFAULTS), so both say the same.
#   vLLM: --gpu-memory-utilization 0.9 (vllm/config/cache.py, CacheConfig.gpu_memory_utilization
#     `Field(default=0.9, gt=0, le=1)` at vllm-project/vllm@c1d8642, as sglang_double/vllm_args.py takes it; a
#     later main has 0.92).
SGLANG_MEM_FRACTION_STATIC = 0.836
VLLM_GPU_MEMORY_UTILIZATION = 0.9
_SHELLS = ("sh", "bash", "dash")
_INITS = ("docker-init", "tini", "tini-static", "dumb-init")


def server_command(args: Sequence[str]) -> List[str]:
    """The command process.args ends up exec'ing: past an init (docker run --init) and a
    `sh -c 'exec "$@" …' NAME ARGS…` wrapper (reprobench's --api-key entrypoint is one)."""
    cmd = [str(a) for a in args]
    for _ in range(4):
        exe = os.path.basename(cmd[0]) if cmd else ""
        if exe in _INITS:
            rest = cmd[1:]
            if "--" in rest:
                cmd = rest[rest.index("--") + 1:]
            else:
                while rest and rest[0].startswith("-"):
                    rest = rest[1:]
                cmd = rest
        elif exe in _SHELLS and len(cmd) >= 3 and cmd[1] == "-c":
            try:
                words = shlex.split(cmd[2])
            except ValueError:
                return []
            if words[:1] == ["exec"]:
                words = words[1:]
            cmd = [x for w in words for x in (cmd[4:] if w == "$@" else [w])]
        else:
            break
    return cmd


def _flag(cmd: Sequence[str], names: Sequence[str]) -> Optional[str]:
    """The value of the last of these flags (`--name V` or `--name=V`; argparse keeps the last)."""
    value = None
    for i, arg in enumerate(cmd):
        for name in names:
            if arg == name and i + 1 < len(cmd):
                value = cmd[i + 1]
            elif arg.startswith(name + "="):
                value = arg[len(name) + 1:]
    return value


def _has(cmd: Sequence[str], name: str) -> bool:
    return any(a == name or a.startswith(name + "=") for a in cmd)


def server_claim(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """What a SGLang or vLLM server among process.args takes: engine, process name, memory fraction and the
    CUDA device indices it uses; None for anything else (an `nvidia-smi -L` check holds no memory)."""
    cmd = server_command(args)
    exe = os.path.basename(cmd[0]) if cmd else ""
    if "sglang.launch_server" in cmd or (exe == "sglang" and cmd[1:2] == ["serve"]) or _has(cmd, "--mem-fraction-static"):
        engine = "sglang"
    elif "vllm.entrypoints.openai.api_server" in cmd or (exe == "vllm" and cmd[1:2] == ["serve"]) or _has(cmd, "--gpu-memory-utilization"):
        engine = "vllm"
    else:
        return None
    try:
        if engine == "sglang":
            fraction = float(_flag(cmd, ["--mem-fraction-static"]) or SGLANG_MEM_FRACTION_STATIC)
            tp = int(_flag(cmd, ["--tp-size", "--tp", "--tensor-parallel-size"]) or 1)
            # DP attention splits the tp GPUs; plain DP replicates the tp group.
            dp = 1 if _has(cmd, "--enable-dp-attention") else int(_flag(cmd, ["--dp-size", "--dp", "--data-parallel-size"]) or 1)
            pp = int(_flag(cmd, ["--pp-size", "--pipeline-parallel-size"]) or 1)
            base = int(_flag(cmd, ["--base-gpu-id"]) or 0)
            step = int(_flag(cmd, ["--gpu-id-step"]) or 1)
        else:
            fraction = float(_flag(cmd, ["--gpu-memory-utilization"]) or VLLM_GPU_MEMORY_UTILIZATION)
            tp = int(_flag(cmd, ["--tensor-parallel-size", "-tp"]) or 1)
            dp = int(_flag(cmd, ["--data-parallel-size", "-dp"]) or 1)
            pp = int(_flag(cmd, ["--pipeline-parallel-size", "-pp"]) or 1)
            base, step = 0, 1
    except ValueError:
        return None  # the server refuses its arguments and exits before touching a GPU
    if not 0 < fraction <= 1 or min(tp, dp, pp, step) < 1 or base < 0:
        return None
    # nvidia-smi names the interpreter: a console script (`sglang`, `vllm`) runs under python3 by its #! line.
    name = cmd[0] if re.fullmatch(r"python[0-9.]*", exe) else "python3"
    return {"engine": engine, "name": name, "fraction": fraction, "devices": [base + i * step for i in range(tp * dp * pp)]}


def record_server(entries: List[Dict[str, Any]], container_id: str, path: Optional[str] = None) -> None:
    """Adds a container's entries to the host's record, dropping dead pids and an earlier start of the same
    container, so the file does not grow. Hooks of containers started together run at once: the
    read-modify-write holds an exclusive lock, and a rename publishes it (nvidia-smi reads without the lock)."""
    path = path or processes_path()
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o755, exist_ok=True)
    with open(path + ".lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = [p for p in load_server_processes(path) if p.get("containerId") != container_id and entry_alive(p)]
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpu-processes.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": 1, "processes": kept + entries}, f, indent=1)
                f.write("\n")
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _record_server(state: Dict[str, Any], spec: Dict[str, Any], host: Dict[str, Any], chosen: List[Dict[str, Any]]) -> str:
    """The hook log's note on the record (a failure to record must not fail the container)."""
    pid = state.get("pid")
    claim = server_claim(spec.get("process", {}).get("args") or [])
    if claim is None or not chosen or not isinstance(pid, int) or pid <= 0 or not process_alive(pid):
        return ""
    procs = live_processes(host)
    used = [chosen[i] for i in claim["devices"] if i < len(chosen)]
    # A server cannot hold more than is free; one that claims more fails at start and its pid goes.
    entries = [{"gpuUuid": g["uuid"], "pid": pid, "name": claim["name"],
                "usedMiB": min(round(claim["fraction"] * int(g["memoryTotalMiB"])), gpu_free_mib(host, g, procs)),
                "engine": claim["engine"], "containerId": str(state.get("id", ""))} for g in used]
    started = start_time(pid)
    if started is not None:
        for e in entries:
            e["startTime"] = started
    try:
        record_server(entries, str(state.get("id", "")))
    except OSError as e:
        return f"; not recorded as a GPU process: {e}"
    return f"; pid {pid} ({claim['engine']}) recorded on host GPU(s) {','.join(str(g['index']) for g in used)}"


def _inside(base: str, relative: str) -> str:
    """base/relative with symlinks resolved, refusing a path that leaves base (a hostile image's links)."""
    target = os.path.realpath(os.path.join(base, relative.lstrip("/")))
    if not (target == base or target.startswith(base.rstrip("/") + "/")):
        raise HookError(f"nvidia-container-cli: mount error: {relative}: path escapes the container root")
    return target


def _write_into_root(base: str, inventory: Dict[str, Any], smi_source: str) -> None:
    inv_path = _inside(base, CONTAINER_INVENTORY)
    os.makedirs(os.path.dirname(inv_path), mode=0o755, exist_ok=True)
    with open(inv_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(inventory, f, indent=1)
        f.write("\n")
    os.chmod(inv_path + ".tmp", 0o644)
    os.replace(inv_path + ".tmp", inv_path)
    smi = _inside(base, "/usr/bin/nvidia-smi")
    os.makedirs(os.path.dirname(smi), mode=0o755, exist_ok=True)
    shutil.copyfile(smi_source, smi + ".tmp")
    os.chmod(smi + ".tmp", 0o755)
    os.replace(smi + ".tmp", smi)


def prestart(state: Dict[str, Any], host_inventory: Optional[Dict[str, Any]], smi_source: str) -> Tuple[str, Optional[Dict[str, Any]]]:
    """One prestart call. Returns (what happened, the container inventory written or None); raises HookError."""
    bundle = state.get("bundle") or os.getcwd()
    with open(os.path.join(bundle, "config.json"), encoding="utf-8") as f:
        spec = json.load(f)
    env: Dict[str, str] = {}
    for entry in spec.get("process", {}).get("env", []) or []:
        key, _, value = entry.partition("=")
        env[key] = value  # a later entry wins (docker appends NVIDIA_VISIBLE_DEVICES after the image's)
    requested = env.get("NVIDIA_VISIBLE_DEVICES")
    if requested is None or requested.strip() in ("", "void"):
        return ("no devices requested (NVIDIA_VISIBLE_DEVICES unset or void): nothing to do", None)
    requested = requested.strip()
    if host_inventory is None or host_inventory.get("fault") == "driver-not-loaded":
        raise HookError("nvidia-container-cli: initialization error: nvml error: driver not loaded")
    if host_inventory.get("fault") == "nvml-missing":
        raise HookError("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory")
    chosen = select_devices(requested, host_inventory)
    unmet = check_requirements(env, host_inventory, chosen)
    if unmet is not None:
        raise HookError(f"nvidia-container-cli: requirement error: unsatisfied condition: {unmet}, please update your driver to a newer version, or use an earlier cuda container")
    root = spec.get("root", {}).get("path", "rootfs")
    if not os.path.isabs(root):
        root = os.path.join(bundle, root)
    # Inside the container's mount namespace (as nvidia-container-cli enters it), so a tmpfs on /run counts.
    pid = state.get("pid")
    base = f"/proc/{pid}/root{root}" if pid and os.path.isdir(f"/proc/{pid}/root{root}") else root
    inventory = container_inventory(host_inventory, chosen, requested)
    _write_into_root(os.path.realpath(base), inventory, smi_source)
    # After the container's inventory: the server sees the memory free that it is about to take.
    note = _record_server(state, spec, host_inventory, chosen)
    return (f"{len(chosen)} GPU(s) for NVIDIA_VISIBLE_DEVICES={requested}{note}", inventory)


def hook(argv: Sequence[str], stdin: Any = sys.stdin, err: Any = sys.stderr) -> int:
    command = argv[0] if argv else ""
    if command in ("poststart", "poststop", "createContainer", "startContainer"):
        return 0
    if command != "prestart":
        err.write(f"nvidia-container-runtime-hook: unknown command {command!r} (expected prestart, poststart or poststop)\n")
        return 2
    # The real hook's first line, in "legacy" mode (no CDI): gpus.md §1.4.
    err.write("Auto-detected mode as 'legacy'\n")
    try:
        state = json.load(stdin)
        host = load_inventory(os.environ.get(INVENTORY_ENV) or HOST_INVENTORY)
        what, _ = prestart(state, host, os.path.realpath(__file__))
        _log(f"{state.get('id', '?')[:12]}: {what}")
        return 0
    except HookError as e:
        err.write(f"{e}\n")
        _log(f"refused: {e}")
        return 1
    except (OSError, ValueError, KeyError) as e:
        err.write(f"nvidia-container-cli: container error: {e}\n")
        _log(f"failed: {e}")
        return 1


def _log(line: str) -> None:
    try:
        with open(os.environ.get("REPROBENCH_SIM_GPU_HOOK_LOG", HOOK_LOG), "a", encoding="utf-8") as f:
            f.write(f"{datetime.datetime.now().isoformat(timespec='seconds')} {line}\n")
    except OSError:
        pass


def main(argv: Sequence[str]) -> int:
    tool = os.path.basename(argv[0])
    rest = list(argv[1:])
    if tool not in ("nvidia-smi", "nvidia-container-runtime-hook") and rest:
        tool, rest = rest[0], rest[1:]
    if tool == "nvidia-smi":
        return nvidia_smi(rest)
    if tool == "nvidia-container-runtime-hook":
        return hook(rest)
    sys.stderr.write("usage: sim-gpu.py nvidia-smi|nvidia-container-runtime-hook ARGS…\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

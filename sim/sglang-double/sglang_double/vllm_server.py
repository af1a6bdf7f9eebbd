"""vLLM mode of the test double: the HTTP contract of `vllm serve` on top of the shared server.

What differs from SGLang (shared/reference/sglang.md §5), and why it matters to the router:
- The port stays closed until the "engine" is up: vLLM binds only after the model is loaded, so a
  router sees connection refused, never a 503, while a vLLM worker loads.
- `/health` (and `/ping`) are 200 with an empty body and need no key; `/version` gives the version.
- There is no `/server_info`, `/get_server_info`, `/model_info` or `/get_model_info` (404 in
  FastAPI's shape), so sglang-router's `--dp-aware` cannot discover ranks on a vLLM worker.
- `--api-key` guards only `/v1/*` (vLLM's authentication middleware skips other paths).
- Data parallelism is internal: `data_parallel_rank` in a body is ignored; the double spreads
  requests over its `--data-parallel-size` ranks itself.
- `/v1/models` says `owned_by: "vllm"` with `root` = the model; ids are `chatcmpl-<hex>`; errors use
  vLLM's `{"error": {...}}` shape; a request for a model that is not served is 404.
Scenario replies, the x-double-* response headers and /_double/* are the same as in SGLang mode.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
import uuid
from typing import Any, Dict, List, Optional, Sequence

from .gpus import StartupFailure, load_inventory, plan_vllm
from .scenario import Scenario, load_env_scenario
from .server import READY, DoubleHandler, DoubleState, HttpError, _env_float, make_server, stop_serving
from .vllm_args import parse_vllm_args

VLLM_VERSION = "0.33.0"

# method -> paths of the vLLM routes the double serves (anything else on these paths is 405).
ROUTES: Dict[str, Sequence[str]] = {
    "/health": ("GET", "HEAD"),
    "/ping": ("GET", "HEAD", "POST"),
    "/version": ("GET", "HEAD"),
    "/load": ("GET", "HEAD"),
    "/metrics": ("GET", "HEAD"),
    "/v1/models": ("GET", "HEAD"),
    "/v1/chat/completions": ("POST",),
    "/v1/completions": ("POST",),
}
# Routes whose body names a model that must be served (vLLM answers 404 otherwise).
MODEL_ROUTES = ("/v1/chat/completions", "/v1/completions")


class VllmState(DoubleState):
    """DoubleState with vLLM's model cards and an `engine` field in /_double/stats."""

    def __init__(self, args: Dict[str, Any], scenario: Scenario, host_tag: str, version: str) -> None:
        super().__init__(args, scenario, host_tag, version)
        self.served_model_names: List[str] = list(args["served_model_names"])
        self.api_keys: List[str] = list(args["api_keys"])

    def model_card(self, name: Optional[str] = None) -> Dict[str, Any]:
        return {
            "id": name or self.served_model_name,
            "object": "model",
            "created": self.created,
            "owned_by": "vllm",
            "root": self.args["model_path"],
            "parent": None,
            "max_model_len": self.context_length,
            "permission": [{
                "id": f"modelperm-{uuid.uuid4().hex}",
                "object": "model_permission",
                "created": self.created,
                "allow_create_engine": False,
                "allow_sampling": True,
                "allow_logprobs": True,
                "allow_search_indices": False,
                "allow_view": True,
                "allow_fine_tuning": False,
                "organization": "*",
                "group": None,
                "is_blocking": False,
            }],
        }

    def stats(self) -> Dict[str, Any]:
        stats = super().stats()
        stats["engine"] = "vllm"
        return stats


def _vllm_error(status: int, message: str, err_type: str, param: Optional[str] = None) -> HttpError:
    return HttpError(status, {"error": {"message": message, "type": err_type, "param": param, "code": status}})


class VllmHandler(DoubleHandler):
    """vLLM's routes, auth rule, ids and error shapes; completions themselves come from DoubleHandler."""

    state: VllmState
    REASONING_DELTA_KEYS = ("reasoning", "reasoning_content")

    def version_string(self) -> str:
        return "uvicorn"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        sys.stderr.write(f"[vllm-double {self.state.host_tag}] {self.address_string()} {format % args}\n")

    def _authorized(self, path: str) -> bool:
        keys = self.state.api_keys
        if not keys or self.command == "OPTIONS" or not path.startswith("/v1"):
            return True
        return any(self.headers.get("Authorization") == f"Bearer {key}" for key in keys)

    def _requested_rank(self, body: Dict[str, Any]) -> Optional[int]:
        # vLLM balances its DP ranks itself; a router's data_parallel_rank key means nothing to it.
        return None

    def _json_body(self) -> Dict[str, Any]:
        payload = super()._json_body()
        path = self.path.split("?", 1)[0]
        model = payload.get("model")
        if path in MODEL_ROUTES and model is not None and model not in self.state.served_model_names:
            raise _vllm_error(404, f"The model `{model}` does not exist.", "NotFoundError", "model")
        return payload

    def _json(self, status: int, payload: Any, headers: Optional[Dict[str, str]] = None) -> None:
        super()._json(status, _vllm_shape(payload), headers)

    def _stream_chat(self, response_id: str, fingerprint: str, *rest: Any, **kwargs: Any) -> None:
        # vLLM ids carry no host; the x-double-* headers still say who served the stream.
        super()._stream_chat(f"chatcmpl-{uuid.uuid4().hex}", None, *rest, **kwargs)  # type: ignore[arg-type]

    def _route(self, path: str) -> None:
        state = self.state
        method = self.command
        allowed = ROUTES.get(path)
        if allowed is None:
            self._read_body()
            self._json(404, {"detail": "Not Found"})
            return
        if method not in allowed:
            self._read_body()
            self._json(405, {"detail": "Method Not Allowed"})
            return
        if path in ("/health", "/ping"):
            self._read_body()
            self._send(state.health_status_override or 200, b"", "application/json")
        elif path == "/version":
            self._json(200, {"version": state.version})
        elif path == "/load":
            self._json(200, {"server_load": sum(l["inflight"] + l["waiting"] for l in state.loads())})
        elif path == "/metrics":
            self._text(200, self._metrics())
        elif path == "/v1/models":
            self._json(200, {"object": "list", "data": [state.model_card(name) for name in state.served_model_names]})
        elif path == "/v1/chat/completions":
            self._chat_completions()
        else:
            self._completions()

    def _metrics(self) -> str:
        model = self.state.served_model_name
        stats = self.state.stats()
        lines = [
            "# TYPE vllm:num_requests_running gauge",
            *(f'vllm:num_requests_running{{engine="{r["dp_rank"]}",model_name="{model}"}} {float(r["inflight"])}' for r in stats["ranks"]),
            "# TYPE vllm:num_requests_waiting gauge",
            *(f'vllm:num_requests_waiting{{engine="{r["dp_rank"]}",model_name="{model}"}} {float(r["waiting"])}' for r in stats["ranks"]),
            "# TYPE vllm:request_success_total counter",
            *(f'vllm:request_success_total{{engine="{r["dp_rank"]}",model_name="{model}"}} {float(r["requests"])}' for r in stats["ranks"]),
        ]
        return "\n".join(lines) + "\n"


def _vllm_shape(payload: Any) -> Any:
    """Rewrite the shared SGLang-flavoured payloads into vLLM's: ids, fingerprint, message and error keys."""
    if not isinstance(payload, dict):
        return payload
    kind = payload.get("object")
    if kind == "error":
        return {"error": {key: payload.get(key) for key in ("message", "type", "param", "code")}}
    if kind not in ("chat.completion", "text_completion"):
        return payload
    shaped = dict(payload)
    prefix = "chatcmpl" if kind == "chat.completion" else "cmpl"
    shaped["id"] = f"{prefix}-{uuid.uuid4().hex}"
    shaped["system_fingerprint"] = None
    choices = []
    for choice in payload.get("choices") or []:
        choice = dict(choice)
        choice.pop("matched_stop", None)
        choice["stop_reason"] = None
        message = choice.get("message")
        if isinstance(message, dict):
            message = dict(message)
            # vLLM returns an empty list, not null, and names the reasoning `reasoning` (the older
            # `reasoning_content` key is kept for clients that still read it).
            if message.get("tool_calls") is None:
                message["tool_calls"] = []
            message["reasoning"] = message.get("reasoning_content")
            # vLLM's Qwen3 parser returns (reasoning, None) when the output ends inside <think>:
            # a completion cut off while thinking has content null, not "".
            if message["reasoning"] is not None and message.get("content") == "":
                message["content"] = None
            message.setdefault("refusal", None)
            message.setdefault("annotations", None)
            choice["message"] = message
        choices.append(choice)
    shaped["choices"] = choices
    usage = payload.get("usage")
    if isinstance(usage, dict):
        usage = dict(usage)
        usage.pop("reasoning_tokens", None)
        usage.setdefault("prompt_tokens_details", None)
        shaped["usage"] = usage
    return shaped


def serve_vllm(args: Dict[str, Any], scenario: Scenario) -> int:
    """Run the vLLM-mode double until SIGTERM/SIGINT; the port opens only once the load is over."""
    host_tag = os.environ.get("SGLANG_DOUBLE_HOST_TAG") or socket.gethostname()
    # vLLM has no "bound but 503" phase: the whole load (and any extra closed time) happens before bind.
    closed_seconds = _env_float("SGLANG_DOUBLE_LOAD_SECONDS", 1.0) + _env_float("SGLANG_DOUBLE_PORT_CLOSED_SECONDS", 0.0)
    version = os.environ.get("SGLANG_DOUBLE_VERSION") or VLLM_VERSION
    state = VllmState(args, scenario, host_tag, version)
    log = lambda msg: sys.stderr.write(f"[vllm-double {host_tag}] {msg}\n")  # noqa: E731

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())

    log(f"vLLM API server version {version}")
    # vLLM's next line: the flags that differ from their defaults, --api-key's keys in plain text (releases
    # before vllm-project/vllm#52523 print them; a gate must hold against those).
    log(f"non-default args: {args['non_default_args']!r}")
    log(
        f"loading model {args['model']} (tp={args['tensor_parallel_size']} dp={args['data_parallel_size']}, "
        f"max_model_len={args['max_model_len']}, max_num_seqs={args['max_num_seqs']}, simulated)"
    )
    inventory = load_inventory()
    if inventory is not None:
        # Started with --gpus on a sim host: vLLM's checks on these GPUs and weights (sglang_double/gpus.py).
        try:
            state.gpu = plan_vllm(args, inventory)
        except StartupFailure as failure:
            if stop.wait(closed_seconds):
                return 0
            sys.stderr.write("".join(line + "\n" for line in failure.lines))
            return 1
    if stop.wait(closed_seconds):
        return 0
    if state.gpu is not None:
        sys.stderr.write("".join(line + "\n" for line in state.gpu.lines))
    try:
        server = make_server(state, args["host"], args["port"], VllmHandler)
    except OSError as err:
        log(f"cannot bind {args['host']}:{args['port']}: {err.strerror}")
        return 1
    with state.lock:
        state.phase = READY
        state.ready_at = time.time()
    # The lines vLLM prints as it starts serving (uvicorn's startup line last), before the first request is
    # answered, as uvicorn completes its startup before it serves.
    log(f"Starting vLLM API server 0 on http://{args['host']}:{server.server_address[1]}")
    log("Application startup complete.")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    stop.wait()
    stop_serving(state, server, log)
    return 0


def run_vllm(argv: Sequence[str], prog: str) -> int:
    """`vllm serve ...`: parse vLLM flags (exit 2 on a bad one), load the scenario, serve."""
    args = parse_vllm_args(argv, prog)
    scenario = load_env_scenario("vllm-double")
    if scenario is None:
        return 2
    return serve_vllm(args, scenario)

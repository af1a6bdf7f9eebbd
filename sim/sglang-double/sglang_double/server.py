"""HTTP server of the SGLang test double (stdlib only).

It serves the worker contract of shared/reference/sglang.md §7 so that the REAL sglang-router 0.3.2
can discover, health-check and route to it, and tags every completion with the host and DP rank that
served it (response headers `x-double-worker` / `x-double-dp-rank`, and the same in the JSON `id` and
`system_fingerprint`) so tests can assert where the router sent each request.

Environment:
  SGLANG_DOUBLE_HOST_TAG         identity in tags and /_double/stats (default: the hostname)
  SGLANG_DOUBLE_LOAD_SECONDS     simulated model load: /health (and everything else) 503 until it ends (default 1)
  SGLANG_DOUBLE_PORT_CLOSED_SECONDS  time before the port is even bound, like weight loading (default 0)
  SGLANG_DOUBLE_SCENARIO         scenario file (JSON, or YAML if PyYAML is installed); unset = default reply only
  SGLANG_DOUBLE_SERVER_INFO_404  "1": /server_info answers 404 (emulates SGLang before /server_info existed)
  SGLANG_DOUBLE_VERSION          version string reported in /server_info (default 0.5.23)
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import sys
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from .args import SIMULATED_TOKEN_CAPACITY, public_server_args, server_args_repr
from .gpus import GpuPlan, StartupFailure, garbage_text, load_inventory, plan_sglang
from .scenario import Conversation, Outcome, Reply, Scenario

LOADING = "loading"
READY = "ready"
SHUTTING_DOWN = "shutting_down"

# SGLang's api-key middleware lets these through without a key (sglang `add_api_key_middleware`:
# OPTIONS, and paths starting with /health or /metrics). /_double/* are the double's own test hooks.
AUTH_EXEMPT_PREFIXES = ("/health", "/metrics", "/_double/")


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"sglang-double: {name} must be a number of seconds, got {raw!r}")
    if value < 0:
        raise SystemExit(f"sglang-double: {name} must be >= 0, got {raw!r}")
    return value


def _approx_tokens(text: str) -> int:
    # No tokenizer in the double: whitespace words are a stable, monotone stand-in for token counts.
    return len(text.split())


def _message_text(content: Any) -> str:
    """OpenAI message content is a string or a list of parts; only the text parts matter here."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


# The window sglang:gen_throughput averages over (SGLang reports its last decode-log interval).
THROUGHPUT_WINDOW_SECONDS = 10.0


class RankState:
    def __init__(self, rank: int, max_running: int) -> None:
        self.rank = rank
        # Requests beyond max_running_requests wait, as in SGLang's scheduler queue.
        self.slots = threading.BoundedSemaphore(max_running)
        self.requests = 0
        self.routed_by_router = 0
        self.inflight = 0
        self.waiting = 0
        self.peak_inflight = 0
        self.tokens_out = 0
        # (time, completion tokens) of recent replies, for sglang:gen_throughput.
        self.token_events: List[Tuple[float, int]] = []

    def add_tokens(self, tokens: int, now: float) -> None:
        """Caller holds the state lock."""
        self.tokens_out += tokens
        self.token_events.append((now, tokens))
        cutoff = now - THROUGHPUT_WINDOW_SECONDS
        while self.token_events and self.token_events[0][0] < cutoff:
            self.token_events.pop(0)

    def gen_throughput(self, now: float) -> float:
        """Tokens per second over the last window. Caller holds the state lock."""
        cutoff = now - THROUGHPUT_WINDOW_SECONDS
        return sum(t for at, t in self.token_events if at >= cutoff) / THROUGHPUT_WINDOW_SECONDS


class DoubleState:
    """Everything the handlers share. All mutation happens under `lock`."""

    def __init__(self, args: Dict[str, Any], scenario: Scenario, host_tag: str, version: str) -> None:
        self.args = args
        self.scenario = scenario
        self.host_tag = host_tag
        self.version = version
        self.dp_size: int = args["dp_size"]
        self.max_running: int = args["max_running_requests"]
        self.served_model_name: str = args["served_model_name"]
        self.context_length: int = args["context_length"] or 262144
        self.api_key: Optional[str] = args.get("api_key")
        self.lock = threading.Lock()
        self.phase = LOADING
        self.ready_at: Optional[float] = None
        self.started_at = time.time()
        self.created = int(self.started_at)
        self.ranks = [RankState(i, self.max_running) for i in range(self.dp_size)]
        self.round_robin = 0
        self.by_path: Dict[str, int] = {}
        self.unauthorized = 0
        self.server_info_404 = os.environ.get("SGLANG_DOUBLE_SERVER_INFO_404") == "1"
        # Overrides set through POST /_double/state (fault injection at run time).
        self.health_status_override: Optional[int] = None
        self.chat_fail_status: Optional[int] = None
        self.extra_delay_seconds = 0.0
        # Set when the container has a GPU inventory (started with --gpus on a sim host): the memory
        # figures /server_info reports, and whether a missing shard turned every answer into garbage.
        self.gpu: Optional[GpuPlan] = None

    # -- payloads -------------------------------------------------------------------------------
    def server_info(self) -> Dict[str, Any]:
        shown = public_server_args(self.args)
        info: Dict[str, Any] = dict(shown)
        gpu = self.gpu
        capacity = gpu.max_total_num_tokens if gpu is not None and gpu.max_total_num_tokens is not None else SIMULATED_TOKEN_CAPACITY
        memory = {"weight": gpu.weight_gb if gpu else 0.0, "kvcache": gpu.kvcache_gb if gpu else 0.0, "token_capacity": capacity, "graph": 0.0}
        info.update(
            {
                "status": "ready",
                "max_total_num_tokens": capacity,
                "max_req_input_len": self.context_length - 6,
            }
        )
        states = []
        for rank in range(self.dp_size):
            state = dict(shown)
            state.update(
                {
                    "dp_rank": rank,
                    "use_mla_backend": False,
                    "last_gen_throughput": 0.0,
                    "memory_usage": dict(memory),
                    "effective_max_running_requests_per_dp": self.max_running,
                }
            )
            states.append(state)
        info["internal_states"] = states
        info["version"] = self.version
        info["double"] = {"host_tag": self.host_tag, "scenario": self.scenario.name}
        if gpu is not None:
            # The --gpus request the container got (NVIDIA_VISIBLE_DEVICES) and the GPUs it sees.
            info["double"]["gpus"] = gpu.report
            info["double"]["garbage_weights"] = gpu.garbage
        return info

    def model_info(self) -> Dict[str, Any]:
        return {
            "model_path": self.args["model_path"],
            "tokenizer_path": self.args["tokenizer_path"],
            "is_generation": True,
            "preferred_sampling_params": None,
            "weight_version": "default",
            "has_image_understanding": False,
            "has_audio_understanding": False,
            "model_type": "qwen3_next",
            "architectures": ["Qwen3NextForCausalLM"],
        }

    def model_card(self) -> Dict[str, Any]:
        return {
            "id": self.served_model_name,
            "object": "model",
            "created": self.created,
            "owned_by": "sglang",
            "root": self.served_model_name,
            "max_model_len": self.context_length,
            "parent": None,
        }

    def loads(self) -> List[Dict[str, Any]]:
        with self.lock:
            return [
                {"rank": r.rank, "inflight": r.inflight, "waiting": r.waiting, "tokens": r.tokens_out}
                for r in self.ranks
            ]

    def stats(self) -> Dict[str, Any]:
        with self.lock:
            ranks = [
                {
                    "dp_rank": r.rank,
                    "requests": r.requests,
                    "routed_by_router": r.routed_by_router,
                    "inflight": r.inflight,
                    "waiting": r.waiting,
                    "peak_inflight": r.peak_inflight,
                }
                for r in self.ranks
            ]
            return {
                "host_tag": self.host_tag,
                "phase": self.phase,
                "dp_size": self.dp_size,
                "max_running_requests": self.max_running,
                "scenario": self.scenario.name,
                "ranks": ranks,
                "requests_total": sum(r["requests"] for r in ranks),
                "rules": self.scenario.hit_counts(),
                "by_path": dict(self.by_path),
                "unauthorized": self.unauthorized,
                **({"gpus": self.gpu.report, "garbage_weights": self.gpu.garbage} if self.gpu is not None else {}),
            }

    def reset(self) -> None:
        with self.lock:
            for r in self.ranks:
                r.requests = r.routed_by_router = r.peak_inflight = r.tokens_out = 0
                r.token_events.clear()
            self.by_path.clear()
            self.unauthorized = 0
        self.scenario.reset_counts()

    def pick_rank(self, requested: Optional[int]) -> int:
        """The router's `data_parallel_rank` wins; without it, SGLang's own DP controller round-robins."""
        with self.lock:
            if requested is not None:
                return requested
            rank = self.round_robin % self.dp_size
            self.round_robin += 1
            return rank


class HttpError(Exception):
    def __init__(self, status: int, payload: Any) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.payload = payload


def _openai_error(status: int, message: str, err_type: str = "BadRequestError", param: Optional[str] = None) -> HttpError:
    return HttpError(status, {"object": "error", "message": message, "type": err_type, "param": param, "code": status})


class DropConnection(Exception):
    """Close the socket without any reply (fault injection: a worker that dies mid-request)."""


class DoubleHandler(http.server.BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive: the router's reqwest client pools connections. Every reply sets
    # Content-Length (streams close the connection instead).
    protocol_version = "HTTP/1.1"
    server_version = "sglang-double"
    sys_version = ""
    state: DoubleState  # set on the subclass built by make_server
    # Delta keys of streamed thinking (SGLang: reasoning_content; vLLM adds its newer `reasoning`).
    REASONING_DELTA_KEYS: Tuple[str, ...] = ("reasoning_content",)

    # -- plumbing -------------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        sys.stderr.write(f"[sglang-double {self.state.host_tag}] {self.address_string()} {format % args}\n")

    def _send(self, status: int, body: bytes, content_type: str, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: Optional[Dict[str, str]] = None) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _text(self, status: int, text: str) -> None:
        self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return self._read_chunked()
            return b""
        try:
            size = int(length)
        except ValueError:
            raise HttpError(400, {"error": f"bad Content-Length {length!r}"})
        return self.rfile.read(size) if size > 0 else b""

    def _read_chunked(self) -> bytes:
        chunks = []
        while True:
            line = self.rfile.readline(65537)
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                # trailer section ends with an empty line
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline(65537)

    def _json_body(self) -> Dict[str, Any]:
        body = self._read_body()
        content_type = self.headers.get("Content-Type", "")
        # SGLang's JSON endpoints reject other content types with 400 (sglang.md §2.5).
        if "application/json" not in content_type.lower():
            raise _openai_error(400, f"Content-Type must be application/json, got {content_type or 'none'!r}")
        try:
            payload = json.loads(body or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise _openai_error(400, f"request body is not valid JSON: {err}")
        if not isinstance(payload, dict):
            raise _openai_error(400, "request body must be a JSON object")
        return payload

    def _authorized(self, path: str) -> bool:
        key = self.state.api_key
        if key is None or self.command == "OPTIONS" or path.startswith(AUTH_EXEMPT_PREFIXES):
            return True
        return self.headers.get("Authorization") == f"Bearer {key}"

    def parse_request(self) -> bool:
        # The router's gRPC probe opens with the HTTP/2 preface. Plain http.server answers it in
        # HTTP/0.9 style (a bare HTML body); send a proper HTTP/1.1 505 and close instead.
        if self.raw_requestline.startswith(b"PRI * HTTP/2.0"):
            self.command, self.path, self.request_version = "PRI", "*", "HTTP/1.1"
            self.requestline = "PRI * HTTP/2.0"
            self.close_connection = True
            self.send_error(505, "HTTP/2 is not supported here (HTTP/1.1 only)")
            return False
        return super().parse_request()

    # -- dispatch -------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_OPTIONS(self) -> None:
        self._send(200, b"", "text/plain")

    def _dispatch(self) -> None:
        path = self.path.split("?", 1)[0]
        state = self.state
        with state.lock:
            state.by_path[path] = state.by_path.get(path, 0) + 1
        try:
            if not self._authorized(path):
                with state.lock:
                    state.unauthorized += 1
                # Drain the body so a keep-alive connection stays in sync.
                self._read_body()
                self._json(401, {"error": "Unauthorized"})
                return
            if path.startswith("/_double/"):
                self._double_hook(path)
                return
            with state.lock:
                phase = state.phase
            if phase != READY:
                self._read_body()
                # LOADING / SHUTTING_DOWN: every route answers 503, so nothing is 200 before all are.
                self._json(503, {"error": f"server is {phase}"})
                return
            self._route(path)
        except HttpError as err:
            self._json(err.status, err.payload)
        except DropConnection:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _route(self, path: str) -> None:
        state = self.state
        method = self.command
        if path in ("/health", "/health_generate") and method in ("GET", "HEAD", "POST"):
            status = state.health_status_override or 200
            self._send(status, b"", "text/plain")
        elif path in ("/server_info", "/get_server_info") and method == "GET":
            if path == "/server_info" and state.server_info_404:
                self._json(404, {"detail": "Not Found"})
            else:
                self._json(200, state.server_info())
        elif path in ("/model_info", "/get_model_info") and method == "GET":
            self._json(200, state.model_info())
        elif path == "/v1/models" and method == "GET":
            self._json(200, {"object": "list", "data": [state.model_card()]})
        elif path.startswith("/v1/models/") and method == "GET":
            model = path[len("/v1/models/"):]
            if model == state.served_model_name:
                self._json(200, state.model_card())
            else:
                self._json(
                    404,
                    {"error": {"message": f"The model '{model}' does not exist", "type": "invalid_request_error",
                               "param": "model", "code": "model_not_found"}},
                )
        elif path == "/v1/chat/completions" and method == "POST":
            self._chat_completions()
        elif path == "/v1/completions" and method == "POST":
            self._completions()
        elif path == "/generate" and method == "POST":
            self._generate()
        elif path == "/flush_cache" and method in ("GET", "POST"):
            self._read_body()
            self._text(200, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
        elif path == "/get_load" and method == "GET":
            self._json(200, [
                {"dp_rank": l["rank"], "num_reqs": l["inflight"] + l["waiting"], "num_waiting_reqs": l["waiting"], "num_tokens": l["tokens"]}
                for l in state.loads()
            ])
        elif path == "/v1/loads" and method == "GET":
            loads = state.loads()
            self._json(200, {
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "dp_rank_count": state.dp_size,
                "loads": [
                    {"dp_rank": l["rank"], "num_running_reqs": l["inflight"], "num_waiting_reqs": l["waiting"],
                     "num_total_reqs": l["inflight"] + l["waiting"], "num_used_tokens": 0,
                     "max_total_num_tokens": SIMULATED_TOKEN_CAPACITY, "token_usage": 0.0, "gen_throughput": 0.0,
                     "cache_hit_rate": 0.0, "utilization": 0.0, "max_running_requests": state.max_running}
                    for l in loads
                ],
            })
        elif path == "/metrics" and method == "GET" and state.args.get("enable_metrics"):
            self._text(200, self._metrics())
        else:
            self._read_body()
            self._json(404, {"detail": "Not Found"})

    def _metrics(self) -> str:
        """Prometheus text as SGLang serves it with --enable-metrics (only then is /metrics routed).

        The scheduler gauges have SGLang's names and labels: sglang:num_running_reqs, sglang:num_queue_reqs,
        sglang:gen_throughput, sglang:token_usage and sglang:max_total_num_tokens are SchedulerMetricsCollector
        gauges (sgl-project/sglang python/sglang/srt/metrics/collector.py), labelled model_name, engine_type
        ("unified"), tp_rank, pp_rank and, with DP, dp_rank (scheduler_metrics_mixin.py init_metrics). Only
        TP rank 0 reports by default, so every series here has tp_rank="0".
        """
        state = self.state
        now = time.time()
        model = state.served_model_name.replace("\\", "\\\\").replace('"', '\\"')
        with state.lock:
            ranks = [(r.rank, r.inflight, r.waiting, r.requests, r.gen_throughput(now)) for r in state.ranks]

        def labels(rank: int) -> str:
            dp = f',dp_rank="{rank}"' if state.dp_size > 1 else ""
            return f'{{model_name="{model}",engine_type="unified",tp_rank="0",pp_rank="0"{dp}}}'

        gauges = [
            ("sglang:num_running_reqs", "The number of running requests.", lambda r: r[1]),
            ("sglang:num_queue_reqs", "The number of requests in the waiting queue.", lambda r: r[2]),
            ("sglang:gen_throughput", "The generation throughput (token/s).", lambda r: round(r[4], 3)),
            ("sglang:token_usage", "The token usage.", lambda r: 0.0),
            ("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", lambda r: SIMULATED_TOKEN_CAPACITY),
        ]
        lines: List[str] = []
        for name, doc, value in gauges:
            lines += [f"# HELP {name} {doc}", f"# TYPE {name} gauge"]
            lines += [f"{name}{labels(r[0])} {value(r)}" for r in ranks]
        # Request count (TokenizerMetricsCollector's counter; one per server in SGLang, kept per rank here).
        lines += ["# HELP sglang:num_requests_total Number of requests processed.", "# TYPE sglang:num_requests_total counter"]
        lines += [f'sglang:num_requests_total{{dp_rank="{r[0]}",model_name="{model}"}} {r[3]}' for r in ranks]
        return "\n".join(lines) + "\n"

    # -- test hooks -------------------------------------------------------------------------------
    def _double_hook(self, path: str) -> None:
        state = self.state
        if path == "/_double/stats" and self.command == "GET":
            self._json(200, state.stats())
        elif path == "/_double/reset" and self.command == "POST":
            self._read_body()
            state.reset()
            self._json(200, {"ok": True})
        elif path == "/_double/state" and self.command == "POST":
            body = self._json_body()
            allowed = {"phase", "health_status", "chat_fail_status", "extra_delay_seconds"}
            unknown = sorted(set(body) - allowed)
            if unknown:
                raise HttpError(400, {"error": f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"})
            with state.lock:
                if "phase" in body:
                    if body["phase"] not in (LOADING, READY, SHUTTING_DOWN):
                        raise HttpError(400, {"error": f"phase must be loading, ready or shutting_down, got {body['phase']!r}"})
                    state.phase = body["phase"]
                for key, attr in (("health_status", "health_status_override"), ("chat_fail_status", "chat_fail_status")):
                    if key in body:
                        value = body[key]
                        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 200 <= value <= 599):
                            raise HttpError(400, {"error": f"{key} must be an HTTP status 200..599 or null, got {value!r}"})
                        setattr(state, attr, value)
                if "extra_delay_seconds" in body:
                    value = body["extra_delay_seconds"]
                    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                        raise HttpError(400, {"error": f"extra_delay_seconds must be a number >= 0, got {value!r}"})
                    state.extra_delay_seconds = float(value)
            self._json(200, {"ok": True, "phase": state.phase})
        else:
            self._read_body()
            self._json(404, {"detail": "Not Found"})

    # -- generation -------------------------------------------------------------------------------
    def _requested_rank(self, body: Dict[str, Any]) -> Optional[int]:
        rank = body.get("data_parallel_rank")
        if rank is None:
            return None
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.state.dp_size:
            raise _openai_error(400, f"data_parallel_rank must be an integer in 0..{self.state.dp_size - 1}, got {rank!r}", param="data_parallel_rank")
        return rank

    def _run_scenario(self, body: Dict[str, Any], user_messages: List[str], assistant_count: int) -> Tuple[int, bool, Outcome, RankState]:
        """Pick the rank, take one of its running slots, apply delays and faults. Caller releases the slot."""
        state = self.state
        requested = self._requested_rank(body)
        rank = state.pick_rank(requested)
        rank_state = state.ranks[rank]
        model = body.get("model") if isinstance(body.get("model"), str) else state.served_model_name
        outcome = state.scenario.resolve(Conversation(user_messages, assistant_count, model, rank, state.host_tag))
        with state.lock:
            rank_state.requests += 1
            rank_state.waiting += 1
            if requested is not None:
                rank_state.routed_by_router += 1
        rank_state.slots.acquire()
        with state.lock:
            rank_state.waiting -= 1
            rank_state.inflight += 1
            rank_state.peak_inflight = max(rank_state.peak_inflight, rank_state.inflight)
            fail_status = state.chat_fail_status
            delay = outcome.delay_seconds + state.extra_delay_seconds
        try:
            if delay > 0:
                time.sleep(delay)
            if fail_status is not None:
                raise _openai_error(fail_status, "injected failure (/_double/state chat_fail_status)", "InternalServerError")
            if outcome.fail is not None:
                fail = outcome.fail
                if fail.hang_seconds > 0:
                    time.sleep(fail.hang_seconds)
                if fail.disconnect or fail.hang_seconds > 0:
                    raise DropConnection()
                raise _openai_error(fail.status, fail.message, "InternalServerError" if fail.status >= 500 else "BadRequestError")
        except BaseException:
            self._release(rank_state)
            raise
        return rank, requested is not None, outcome, rank_state

    def _release(self, rank_state: RankState) -> None:
        with self.state.lock:
            rank_state.inflight -= 1
        rank_state.slots.release()

    def _tag_headers(self, rank: int, outcome: Outcome) -> Dict[str, str]:
        return {
            "x-double-worker": self.state.host_tag,
            "x-double-dp-rank": str(rank),
            "x-double-rule": outcome.rule,
            "x-double-turn": str(outcome.turn),
        }

    def _render(self, reply: Reply, rank: int) -> Reply:
        # Placeholders let one scenario file serve every host: {{host}}, {{dp_rank}}, {{model}}.
        content = (
            reply.content.replace("{{host}}", self.state.host_tag)
            .replace("{{dp_rank}}", str(rank))
            .replace("{{model}}", self.state.served_model_name)
        )
        if self.state.gpu is not None and self.state.gpu.garbage:
            # Weights left uninitialised (a shard the index names is missing): token soup, no tool calls.
            soup = garbage_text(len(content.split()), content)
            return Reply(content=soup, reasoning_content=garbage_text(len(soup.split()), soup[::-1]), finish_reason="length",
                         tool_calls=None, reasoning_tokens=reply.reasoning_tokens)
        return Reply(content=content, reasoning_content=reply.reasoning_content, finish_reason=reply.finish_reason,
                     tool_calls=reply.tool_calls, reasoning_tokens=reply.reasoning_tokens)

    def _thinking_enabled(self, body: Dict[str, Any]) -> bool:
        """Whether this chat request thinks, as SGLang decides it (serving_chat `_get_reasoning_from_request`).

        No reasoning parser: never. Parsers of always-thinking models (DeepSeek-R1, Qwen3 *-Thinking,
        gpt-oss): always, whatever the kwargs say. Otherwise (qwen3): on unless `enable_thinking` is
        false in the request's `chat_template_kwargs`, which are the server's
        `--default-chat-template-kwargs` with the request's own keys on top (a request key wins).
        """
        parser = self.state.args.get("reasoning_parser")
        if parser is None:
            return False
        if parser in ALWAYS_THINKING_PARSERS:
            return True
        kwargs: Dict[str, Any] = dict(self.state.args.get("default_chat_template_kwargs") or {})
        if isinstance(body.get("chat_template_kwargs"), dict):
            kwargs.update(body["chat_template_kwargs"])
        return kwargs.get("enable_thinking", True) is not False

    def _reasoning(self, reply: Reply, body: Dict[str, Any], user_messages: List[str]) -> Optional[str]:
        """The whole thinking this reply would produce unbounded (None when the request does not think)."""
        if not self._thinking_enabled(body):
            return None
        if reply.reasoning_content is not None:
            return reply.reasoning_content or None
        words = reply.reasoning_tokens if reply.reasoning_tokens is not None else self.state.scenario.reasoning_tokens
        return _thinking_text(words, user_messages[-1] if user_messages else "") or None

    @staticmethod
    def _budget(body: Dict[str, Any]) -> Optional[int]:
        # SGLang: max_completion_tokens or max_tokens (chat), sampling_params.max_new_tokens (/generate).
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or body.get("max_new_tokens")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return limit
        return None

    def _limit(self, content: str, reasoning: Optional[str], finish: str, body: Dict[str, Any]) -> Tuple[str, Optional[str], str, int, int]:
        """Generate within the token budget: thinking first, then the answer, both out of one budget.

        Returns content, reasoning, finish_reason and the two token counts. When the budget runs out
        inside the thinking, the reasoning is cut there, the content is empty and finish_reason is
        "length" (SGLang's reasoning parser then returns everything as reasoning_content).
        """
        limit = self._budget(body)
        reasoning_tokens = _approx_tokens(reasoning or "")
        content_tokens = _approx_tokens(content)
        if limit is None or reasoning_tokens + content_tokens <= limit:
            return content, reasoning, finish, content_tokens, reasoning_tokens
        if reasoning is not None and reasoning_tokens >= limit:
            return "", " ".join(reasoning.split()[:limit]), "length", 0, limit
        content = " ".join(content.split()[: limit - reasoning_tokens])
        return content, reasoning, "length", _approx_tokens(content), reasoning_tokens

    def _chat_completions(self) -> None:
        body = self._json_body()
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _openai_error(400, "messages must be a non-empty list", param="messages")
        user_messages: List[str] = []
        assistant_count = 0
        prompt_tokens = 0
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise _openai_error(400, f"messages[{i}] must be an object with a string 'role'", param="messages")
            text = _message_text(message.get("content"))
            prompt_tokens += _approx_tokens(text)
            if message["role"] == "user":
                user_messages.append(text)
            elif message["role"] == "assistant":
                assistant_count += 1
        rank, by_router, outcome, rank_state = self._run_scenario(body, user_messages, assistant_count)
        try:
            scripted = outcome.reply or self.state.scenario.default
            reply = self._render(scripted, rank)
            content, reasoning, finish, content_tokens, reasoning_tokens = self._limit(
                reply.content, self._reasoning(reply, body, user_messages), reply.finish_reason, body)
            # Cut off while thinking: the answer (and any tool call in it) was never generated.
            thought_out = finish == "length" and reasoning is not None and content_tokens == 0
            separate = body.get("separate_reasoning", True) is not False
            if reasoning is not None and not separate:
                content = f"<think>{reasoning}" + ("" if thought_out else f"</think>{content}")
                reasoning = None
            # Tool calls as SGLang's tool-call parser returns them (a fresh id per call when the scenario
            # names none); the text around them stays in `content`, which is null when there is none.
            tool_calls = None
            if reply.tool_calls and not thought_out:
                if body.get("stream") is True:
                    raise _openai_error(400, f"the double does not stream tool calls (scenario rule {outcome.rule!r}); send stream=false")
                tool_calls = [{"id": call.get("id") or f"call_{uuid.uuid4().hex[:24]}", "index": i, "type": "function",
                               "function": dict(call["function"])} for i, call in enumerate(reply.tool_calls)]
                content_tokens += sum(_approx_tokens(call["function"]["arguments"]) for call in tool_calls)
            completion_tokens = content_tokens + reasoning_tokens
            with self.state.lock:
                rank_state.add_tokens(completion_tokens, time.time())
            response_id = f"chatcmpl-{self.state.host_tag}-dp{rank}-{uuid.uuid4().hex[:16]}"
            fingerprint = f"sglang-double:{self.state.host_tag}:dp{rank}"
            model = body.get("model") if isinstance(body.get("model"), str) else self.state.served_model_name
            usage = {
                "prompt_tokens": prompt_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "completion_tokens": completion_tokens,
                "prompt_tokens_details": None,
                "reasoning_tokens": reasoning_tokens,
            }
            headers = self._tag_headers(rank, outcome)
            headers["x-double-routed-by"] = "router" if by_router else "internal"
            if body.get("stream") is True:
                self._stream_chat(response_id, fingerprint, model, content, reasoning, finish, usage, body, headers)
                return
            self._json(200, {
                "id": response_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": fingerprint,
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": content if content or not tool_calls else None,
                                "reasoning_content": reasoning, "tool_calls": tool_calls},
                    "logprobs": None,
                    "finish_reason": finish,
                    "matched_stop": 151645 if finish == "stop" else None,
                }],
                "usage": usage,
            }, headers)
        finally:
            self._release(rank_state)

    def _stream_chat(self, response_id: str, fingerprint: str, model: str, content: str, reasoning: Optional[str],
                     finish: str, usage: Dict[str, Any], body: Dict[str, Any], headers: Dict[str, str]) -> None:
        # No chunked encoding: the stream is delimited by closing the connection.
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        created = int(time.time())

        def frame(delta: Dict[str, Any], finish_reason: Optional[str]) -> None:
            chunk = {"id": response_id, "object": "chat.completion.chunk", "created": created, "model": model,
                     "system_fingerprint": fingerprint,
                     "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode("utf-8"))

        frame({"role": "assistant", "content": ""}, None)
        if reasoning:
            # stream_reasoning (default true) streams the thinking as it comes; false buffers it into
            # one chunk (SGLang sends it once the </think> is seen).
            pieces = _pieces(reasoning) if body.get("stream_reasoning", True) is not False else [reasoning]
            for piece in pieces:
                frame({key: piece for key in self.REASONING_DELTA_KEYS}, None)
        for piece in _pieces(content):
            frame({"content": piece}, None)
        frame({}, finish)
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            chunk = {"id": response_id, "object": "chat.completion.chunk", "created": created, "model": model,
                     "choices": [], "usage": usage}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode("utf-8"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _completions(self) -> None:
        body = self._json_body()
        prompt = body.get("prompt")
        text = prompt if isinstance(prompt, str) else "\n".join(p for p in prompt if isinstance(p, str)) if isinstance(prompt, list) else ""
        rank, _, outcome, rank_state = self._run_scenario(body, [text], 0)
        try:
            reply = self._render(outcome.reply or self.state.scenario.default, rank)
            # No chat template, so no thinking: plain text completion within the budget.
            content, _, finish, tokens, _ = self._limit(reply.content, None, reply.finish_reason, body)
            with self.state.lock:
                rank_state.add_tokens(tokens, time.time())
            self._json(200, {
                "id": f"cmpl-{self.state.host_tag}-dp{rank}-{uuid.uuid4().hex[:16]}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": body.get("model") or self.state.served_model_name,
                "system_fingerprint": f"sglang-double:{self.state.host_tag}:dp{rank}",
                "choices": [{"index": 0, "text": content, "logprobs": None, "finish_reason": finish, "matched_stop": None}],
                "usage": {"prompt_tokens": _approx_tokens(text), "completion_tokens": tokens,
                          "total_tokens": _approx_tokens(text) + tokens},
            }, self._tag_headers(rank, outcome))
        finally:
            self._release(rank_state)

    def _generate(self) -> None:
        body = self._json_body()
        text = body.get("text") if isinstance(body.get("text"), str) else ""
        params = body.get("sampling_params") if isinstance(body.get("sampling_params"), dict) else {}
        started = time.time()
        rank, _, outcome, rank_state = self._run_scenario(body, [text], 0)
        try:
            reply = self._render(outcome.reply or self.state.scenario.default, rank)
            content, _, finish, tokens, _ = self._limit(reply.content, None, reply.finish_reason, params)
            with self.state.lock:
                rank_state.add_tokens(tokens, time.time())
            finish_reason: Dict[str, Any] = {"type": "length", "length": tokens} if finish == "length" else {"type": "stop", "matched": 151645}
            self._json(200, {
                "text": content,
                "output_ids": list(range(tokens)),
                "meta_info": {
                    "id": f"gen-{self.state.host_tag}-dp{rank}-{uuid.uuid4().hex[:16]}",
                    "finish_reason": finish_reason,
                    "prompt_tokens": _approx_tokens(text),
                    "completion_tokens": tokens,
                    "cached_tokens": 0,
                    "dp_rank": rank,
                    "e2e_latency": time.time() - started,
                },
            }, self._tag_headers(rank, outcome))
        finally:
            self._release(rank_state)


# Reasoning parsers of models that always think: SGLang's docs list DeepSeek-R1 ("no enable_thinking")
# and Qwen3-Thinking ("always generates thinking content"); gpt-oss always reasons. vLLM spells them
# deepseek_r1 / openai_gptoss. With these, enable_thinking=false changes nothing.
ALWAYS_THINKING_PARSERS = frozenset({"deepseek-r1", "qwen3-thinking", "gpt-oss", "deepseek_r1", "openai_gptoss"})

_THINKING_SENTENCES = (
    "Let me work out what is being asked before I answer.",
    "I should read the request again, check every constraint it states, and think about edge cases.",
    "First I restate the goal in my own words, then I plan the reply step by step.",
    "Is anything ambiguous here? If so, the most literal reading is probably what the user means.",
    "Let me double-check the plan once more so that the final answer is exact and complete.",
)


def _thinking_text(words: int, last_user: str) -> str:
    """Deterministic stand-in for a model's thinking: exactly `words` whitespace words.

    It opens by quoting the request, as Qwen3's thinking does ("The user wants me to reply with
    exactly READY..."), so the text a gate must not mistake for the answer mentions the answer.
    """
    if words <= 0:
        return ""
    quoted = " ".join(last_user.split()[:24])
    source = ([f'Okay, the user wrote: "{quoted}".'] if quoted else []) + list(_THINKING_SENTENCES)
    out: List[str] = []
    while len(out) < words:
        for sentence in source:
            out.extend(sentence.split())
        source = list(_THINKING_SENTENCES)
    return " ".join(out[:words])


def _pieces(text: str) -> List[str]:
    """Split text into word-sized stream deltas that concatenate back to the original."""
    pieces: List[str] = []
    current = ""
    for ch in text:
        current += ch
        if ch in " \n":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


class DoubleHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The router opens many connections at once (health, discovery, a batch of chats).
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Junk on the socket (the router's gRPC/HTTP2 probe, a reset) must never take the server down.
        kind = sys.exc_info()[0]
        name = kind.__name__ if kind else "error"
        sys.stderr.write(f"[sglang-double] dropped a connection from {client_address}: {name}\n")


def make_server(state: DoubleState, host: str, port: int, handler_class: type = DoubleHandler) -> DoubleHTTPServer:
    """Bind the server; handler_class is DoubleHandler (SGLang) or a subclass (vllm_server.VllmHandler)."""
    handler = type("BoundDoubleHandler", (handler_class,), {"state": state})
    server_class = DoubleHTTPServer
    if ":" in host:
        server_class = type("DoubleHTTPServer6", (DoubleHTTPServer,), {"address_family": socket.AF_INET6})
    return server_class((host, port), handler)


def stop_serving(state: DoubleState, server: DoubleHTTPServer, log: Callable[[str], Any]) -> None:
    """Answer 503 from here on (SGLang and vLLM both refuse work while draining), then close the socket."""
    with state.lock:
        state.phase = SHUTTING_DOWN
    log("shutting down")
    server.shutdown()
    server.server_close()


def serve(args: Dict[str, Any], scenario: Scenario) -> int:
    """Run the double until SIGTERM/SIGINT; returns the process exit status."""
    host_tag = os.environ.get("SGLANG_DOUBLE_HOST_TAG") or socket.gethostname()
    load_seconds = _env_float("SGLANG_DOUBLE_LOAD_SECONDS", 1.0)
    closed_seconds = _env_float("SGLANG_DOUBLE_PORT_CLOSED_SECONDS", 0.0)
    version = os.environ.get("SGLANG_DOUBLE_VERSION", "0.5.23")
    state = DoubleState(args, scenario, host_tag, version)
    log = lambda msg: sys.stderr.write(f"[sglang-double {host_tag}] {msg}\n")  # noqa: E731

    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    # SGLang logs its resolved ServerArgs before it loads anything, the API keys in plain text
    # (sgl-project/sglang#37457): the log of a keyed server holds its key, and so does the double's.
    log(f"server_args={server_args_repr(args)}")
    log(f"loading model {args['model_path']} (tp={args['tp_size']} dp={args['dp_size']}, simulated)")
    inventory = load_inventory()
    if inventory is not None:
        # Started with --gpus on a sim host: start (or die) as SGLang would on these GPUs and weights.
        try:
            state.gpu = plan_sglang(args, inventory)
        except StartupFailure as failure:
            if stop.wait(closed_seconds + load_seconds):
                return 0
            sys.stderr.write("".join(line + "\n" for line in failure.lines))
            return 1
    if closed_seconds > 0 and stop.wait(closed_seconds):
        return 0
    try:
        server = make_server(state, args["host"], args["port"])
    except OSError as err:
        log(f"cannot bind {args['host']}:{args['port']}: {err.strerror}")
        return 1
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    log(f"HTTP server listening on {args['host']}:{server.server_address[1]} (phase {LOADING})")

    if not stop.wait(load_seconds):
        if state.gpu is not None:
            sys.stderr.write("".join(line + "\n" for line in state.gpu.lines))
        with state.lock:
            if state.phase == LOADING:
                state.phase = READY
                state.ready_at = time.time()
        # The line SGLang prints when warm-up is done; scripts grep for it.
        log("The server is fired up and ready to roll!")
        stop.wait()
    stop_serving(state, server, log)
    return 0

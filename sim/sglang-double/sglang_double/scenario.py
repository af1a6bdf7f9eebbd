"""Scripted model behaviour: a scenario file maps conversations to replies, delays and faults.

A scenario is JSON (stdlib only, so it runs on any python3 >= 3.8; YAML is read as well when PyYAML
happens to be installed). Shape:

    {
      "name": "sim-default",
      "default": {"content": "..."},                    # used when no rule matches
      "reasoning": {"tokens": 400},                     # thinking length when the server thinks (default 400)
      "rules": [
        {"name": "ready-probe",
         "match": {"last_user_contains": "Reply with exactly READY."},
         "reply": {"content": "READY"}},
        {"name": "solve-hello",
         "match": {"first_user_contains": "hello.txt"},
         "turns": [{"json": {...}}, {"json": {...}}]},   # turn N = N-th assistant message to write
        {"name": "flaky", "match": {...}, "times": 2,    # only the first 2 matches, then fall through
         "fail": {"status": 500, "message": "injected"}},
        {"name": "slow", "match": {...}, "delay_seconds": 3, "reply": {...}},
        {"name": "tool", "match": {"first_user_contains": ["SUBMIT", "hello.txt"]},   # list: all must occur
         "turns": [{"content": "why", "tool_calls": [{"function": {"name": "bash", "arguments": {"command": "ls"}}}]}]}
      ]
    }

Thinking: when the server runs with a reasoning parser and thinking is on for the request, every chat
reply thinks first. Its reasoning is the reply's `reasoning_content` when the scenario gives one, else
generated text of `reasoning_tokens` words (per reply) or `reasoning.tokens` (whole scenario).

Rules are tried in order; every key of `match` must hold (AND). Every problem in a scenario file is
reported with the file and the JSON path of the bad key, before the server starts.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names the file and the bad key."""


# The *_contains keys take one string or a list of strings that must all occur (one message, AND).
CONTAINS_KEYS = ("last_user_contains", "first_user_contains", "any_user_contains")
MATCH_KEYS = {
    "last_user_contains": (str, list),
    "first_user_contains": (str, list),
    "any_user_contains": (str, list),
    "last_user_regex": str,
    "model": str,
    "dp_rank": int,
    "host": str,
}
REPLY_KEYS = {"content", "json", "reasoning_content", "reasoning_tokens", "finish_reason", "tool_calls"}
TOOL_CALL_KEYS = {"id", "type", "function"}
TOOL_FUNCTION_KEYS = {"name", "arguments"}
FAIL_KEYS = {"status", "message", "hang_seconds", "disconnect"}
RULE_KEYS = {"name", "match", "reply", "turns", "fail", "delay_seconds", "times", "comment"}
# "network": the sim proxy's initial network conditions, "registry": the sim registry's pull limits
# (sim/cluster.ts reads both; the double ignores them).
TOP_KEYS = {"name", "description", "default", "rules", "reasoning", "comment", "network", "registry"}
REASONING_KEYS = {"tokens", "comment"}
# How long the double thinks when a scenario does not say: a Qwen3 answer to a one-line question
# typically spends a few hundred tokens in <think> first.
DEFAULT_REASONING_TOKENS = 400
FINISH_REASONS = {"stop", "length", "tool_calls", "abort"}


@dataclass
class Reply:
    content: str
    # Scripted thinking text; None = generate `reasoning_tokens` words (or the scenario's default).
    reasoning_content: Optional[str] = None
    finish_reason: str = "stop"
    # OpenAI-shaped calls as SGLang's tool-call parser returns them: {id?, type, function: {name,
    # arguments (JSON text)}}. A missing id is filled per response (`call_<hex>`) by the server.
    tool_calls: Optional[List[Dict[str, Any]]] = None
    # Length of the generated thinking for this reply (None = the scenario's reasoning.tokens).
    reasoning_tokens: Optional[int] = None


@dataclass
class Fail:
    status: int = 500
    message: str = "injected failure"
    hang_seconds: float = 0.0
    disconnect: bool = False


@dataclass
class Rule:
    name: str
    match: Dict[str, Any]
    turns: List[Reply]
    fail: Optional[Fail]
    delay_seconds: float
    times: Optional[int]
    regex: Optional["re.Pattern[str]"] = None
    hits: int = 0


@dataclass
class Conversation:
    """What a rule can look at: the request's messages (flattened to text) and where it landed."""

    user_messages: List[str]
    assistant_count: int
    model: str
    dp_rank: int
    host: str


@dataclass
class Outcome:
    rule: str
    reply: Optional[Reply]
    fail: Optional[Fail]
    delay_seconds: float
    turn: int


@dataclass
class Scenario:
    name: str
    default: Reply
    rules: List[Rule] = field(default_factory=list)
    reasoning_tokens: int = DEFAULT_REASONING_TOKENS
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, conv: Conversation) -> Outcome:
        """The first rule whose `match` holds (and whose `times` budget is not spent) decides."""
        with self._lock:
            for rule in self.rules:
                if not _matches(rule, conv):
                    continue
                if rule.times is not None and rule.hits >= rule.times:
                    continue
                rule.hits += 1
                turn = min(conv.assistant_count, len(rule.turns) - 1) if rule.turns else 0
                reply = rule.turns[turn] if rule.turns else None
                return Outcome(rule.name, reply, rule.fail, rule.delay_seconds, turn)
        return Outcome("default", self.default, None, 0.0, 0)

    def hit_counts(self) -> Dict[str, int]:
        with self._lock:
            return {rule.name: rule.hits for rule in self.rules}

    def reset_counts(self) -> None:
        with self._lock:
            for rule in self.rules:
                rule.hits = 0


def _contains(needles: Any, text: str) -> bool:
    if isinstance(needles, str):
        return needles in text
    return all(needle in text for needle in needles)


def _matches(rule: Rule, conv: Conversation) -> bool:
    m = rule.match
    last_user = conv.user_messages[-1] if conv.user_messages else ""
    first_user = conv.user_messages[0] if conv.user_messages else ""
    if "last_user_contains" in m and not _contains(m["last_user_contains"], last_user):
        return False
    if "first_user_contains" in m and not _contains(m["first_user_contains"], first_user):
        return False
    if "any_user_contains" in m and not any(_contains(m["any_user_contains"], text) for text in conv.user_messages):
        return False
    if rule.regex is not None and not rule.regex.search(last_user):
        return False
    if "model" in m and m["model"] != conv.model:
        return False
    if "dp_rank" in m and m["dp_rank"] != conv.dp_rank:
        return False
    if "host" in m and m["host"] != conv.host:
        return False
    return True


def _check_keys(obj: Any, allowed: set, where: str, source: str) -> Dict[str, Any]:
    if not isinstance(obj, dict):
        raise ScenarioError(f"{source}: {where} must be an object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ScenarioError(f"{source}: {where}.{unknown[0]} is not a known key (allowed: {', '.join(sorted(allowed))})")
    return obj


def _number(value: Any, where: str, source: str, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ScenarioError(f"{source}: {where} must be a number >= {minimum:g}, got {value!r}")
    return float(value)


def _count(value: Any, where: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScenarioError(f"{source}: {where} must be an integer >= 0 (a token count), got {value!r}")
    return value


def _parse_tool_calls(obj: Any, where: str, source: str) -> List[Dict[str, Any]]:
    if not isinstance(obj, list) or not obj:
        raise ScenarioError(f"{source}: {where} must be a non-empty list of tool calls")
    calls: List[Dict[str, Any]] = []
    for i, raw in enumerate(obj):
        at = f"{where}[{i}]"
        call = _check_keys(raw, TOOL_CALL_KEYS, at, source)
        if call.get("type", "function") != "function":
            raise ScenarioError(f"{source}: {at}.type must be 'function', got {call.get('type')!r}")
        if "id" in call and (not isinstance(call["id"], str) or not call["id"]):
            raise ScenarioError(f"{source}: {at}.id must be a non-empty string (or left out: the server makes one)")
        if "function" not in call:
            raise ScenarioError(f"{source}: {at}.function is required ({{name, arguments}})")
        function = _check_keys(call["function"], TOOL_FUNCTION_KEYS, f"{at}.function", source)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{source}: {at}.function.name must be a non-empty string")
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            # On the wire `arguments` is JSON text; a scenario may give that text, but it must parse.
            try:
                json.loads(arguments)
            except json.JSONDecodeError as err:
                raise ScenarioError(f"{source}: {at}.function.arguments is a string but not JSON text: {err.msg}") from err
        elif isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        else:
            raise ScenarioError(f"{source}: {at}.function.arguments must be an object or a JSON string, got {type(arguments).__name__}")
        entry: Dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
        if "id" in call:
            entry["id"] = call["id"]
        calls.append(entry)
    return calls


def _parse_reply(obj: Any, where: str, source: str) -> Reply:
    obj = _check_keys(obj, REPLY_KEYS, where, source)
    tool_calls = _parse_tool_calls(obj["tool_calls"], f"{where}.tool_calls", source) if "tool_calls" in obj else None
    if "content" in obj and "json" in obj or (tool_calls is None and "content" not in obj and "json" not in obj):
        raise ScenarioError(
            f"{source}: {where} needs exactly one of 'content' (text) or 'json' (object sent as JSON text)"
            " (both may be left out when it has tool_calls)"
        )
    if "content" not in obj and "json" not in obj:
        content = ""
    elif "content" in obj:
        if not isinstance(obj["content"], str):
            raise ScenarioError(f"{source}: {where}.content must be a string, got {type(obj['content']).__name__}")
        content = obj["content"]
    else:
        # Terminus-2 reads plain text and parses it as JSON, so structured replies are sent as JSON text.
        content = json.dumps(obj["json"], indent=2)
    reasoning = obj.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ScenarioError(f"{source}: {where}.reasoning_content must be a string or null")
    reasoning_tokens = obj.get("reasoning_tokens")
    if reasoning_tokens is not None:
        if reasoning is not None:
            raise ScenarioError(f"{source}: {where} has both reasoning_content and reasoning_tokens (scripted text or a generated length, not both)")
        reasoning_tokens = _count(reasoning_tokens, f"{where}.reasoning_tokens", source)
    # SGLang reports finish_reason "tool_calls" when its parser found calls in a completed generation.
    finish = obj.get("finish_reason", "tool_calls" if tool_calls else "stop")
    if finish not in FINISH_REASONS:
        raise ScenarioError(f"{source}: {where}.finish_reason must be one of {sorted(FINISH_REASONS)}, got {finish!r}")
    return Reply(content=content, reasoning_content=reasoning, finish_reason=finish, tool_calls=tool_calls,
                 reasoning_tokens=reasoning_tokens)


def _parse_fail(obj: Any, where: str, source: str) -> Fail:
    obj = _check_keys(obj, FAIL_KEYS, where, source)
    status = obj.get("status", 500)
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise ScenarioError(f"{source}: {where}.status must be an HTTP error status 400..599, got {status!r}")
    message = obj.get("message", "injected failure")
    if not isinstance(message, str):
        raise ScenarioError(f"{source}: {where}.message must be a string")
    hang = _number(obj.get("hang_seconds", 0), f"{where}.hang_seconds", source)
    disconnect = obj.get("disconnect", False)
    if not isinstance(disconnect, bool):
        raise ScenarioError(f"{source}: {where}.disconnect must be true or false")
    return Fail(status=status, message=message, hang_seconds=hang, disconnect=disconnect)


def _parse_rule(obj: Any, index: int, source: str, seen: set) -> Rule:
    where = f"rules[{index}]"
    obj = _check_keys(obj, RULE_KEYS, where, source)
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{source}: {where}.name is required (a non-empty string)")
    if name in seen or name == "default":
        raise ScenarioError(f"{source}: {where}.name {name!r} is used twice (or is the reserved name 'default')")
    seen.add(name)
    match = _check_keys(obj.get("match", {}), set(MATCH_KEYS), f"{where}.match", source)
    for key, kind in MATCH_KEYS.items():
        if key in CONTAINS_KEYS and key in match:
            value = match[key]
            if not (isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(v, str) for v in value))):
                raise ScenarioError(f"{source}: {where}.match.{key} must be a string or a non-empty list of strings, got {value!r}")
        elif key in match and (isinstance(match[key], bool) or not isinstance(match[key], kind)):
            raise ScenarioError(f"{source}: {where}.match.{key} must be a {kind.__name__}, got {match[key]!r}")
    regex = None
    if "last_user_regex" in match:
        try:
            regex = re.compile(match["last_user_regex"])
        except re.error as err:
            raise ScenarioError(f"{source}: {where}.match.last_user_regex is not a valid regex: {err}") from err
    outcomes = [key for key in ("reply", "turns", "fail") if key in obj]
    if len(outcomes) != 1:
        raise ScenarioError(f"{source}: {where} needs exactly one of 'reply', 'turns' or 'fail' (got {outcomes or 'none'})")
    turns: List[Reply] = []
    if "reply" in obj:
        turns = [_parse_reply(obj["reply"], f"{where}.reply", source)]
    if "turns" in obj:
        if not isinstance(obj["turns"], list) or not obj["turns"]:
            raise ScenarioError(f"{source}: {where}.turns must be a non-empty list of replies")
        turns = [_parse_reply(t, f"{where}.turns[{i}]", source) for i, t in enumerate(obj["turns"])]
    fail = _parse_fail(obj["fail"], f"{where}.fail", source) if "fail" in obj else None
    delay = _number(obj.get("delay_seconds", 0), f"{where}.delay_seconds", source)
    times = obj.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ScenarioError(f"{source}: {where}.times must be an integer >= 1, got {times!r}")
    return Rule(name=name, match=match, turns=turns, fail=fail, delay_seconds=delay, times=times, regex=regex)


def parse_scenario(data: Any, source: str) -> Scenario:
    data = _check_keys(data, TOP_KEYS, "(top level)", source)
    rules_raw = data.get("rules", [])
    if not isinstance(rules_raw, list):
        raise ScenarioError(f"{source}: rules must be a list")
    default = _parse_reply(data.get("default", {"content": DEFAULT_CONTENT}), "default", source)
    seen: set = set()
    rules = [_parse_rule(rule, i, source, seen) for i, rule in enumerate(rules_raw)]
    name = data.get("name", os.path.splitext(os.path.basename(source))[0])
    if not isinstance(name, str):
        raise ScenarioError(f"{source}: name must be a string")
    reasoning = _check_keys(data.get("reasoning", {}), REASONING_KEYS, "reasoning", source)
    reasoning_tokens = _count(reasoning.get("tokens", DEFAULT_REASONING_TOKENS), "reasoning.tokens", source)
    return Scenario(name=name, default=default, rules=rules, reasoning_tokens=reasoning_tokens)


DEFAULT_CONTENT = "This is the SGLang test double; no scenario rule matched this conversation."


def load_scenario(path: Optional[str]) -> Scenario:
    """Load a scenario file; no path gives a scenario with only the default reply."""
    if not path:
        return Scenario(name="none", default=Reply(content=DEFAULT_CONTENT))
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        raise ScenarioError(f"{path}: cannot read scenario file ({err.strerror})") from err
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml  # type: ignore[import-not-found]
        except ImportError as err:
            raise ScenarioError(f"{path}: YAML scenarios need PyYAML, which is not installed; use JSON") from err
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise ScenarioError(f"{path}: not valid YAML: {err}") from err
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ScenarioError(f"{path}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from err
    return parse_scenario(data, path)


def load_env_scenario(tool: str) -> Optional[Scenario]:
    """The scenario SGLANG_DOUBLE_SCENARIO names (both engine modes read it); None once stderr says why it is unusable."""
    try:
        return load_scenario(os.environ.get("SGLANG_DOUBLE_SCENARIO"))
    except ScenarioError as err:
        sys.stderr.write(f"{tool}: bad scenario (SGLANG_DOUBLE_SCENARIO): {err}\n")
        return None

"""SGLang test double for reprobench's simulated cluster (see ../README.md)."""

from __future__ import annotations

from typing import Optional, Sequence

from .args import parse_server_args, resolve_server_args
from .scenario import load_env_scenario


def run(argv: Sequence[str], prog: str, positional_model: Optional[str] = None) -> int:
    """Parse SGLang server flags (exit 2 on a bad flag, like SGLang), load the scenario, serve."""
    from .server import serve

    args = resolve_server_args(parse_server_args(argv, prog, positional_model))
    scenario = load_env_scenario("sglang-double")
    if scenario is None:
        return 2
    return serve(args, scenario)

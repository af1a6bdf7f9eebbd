"""SGLang test double for reprobench's simulated cluster (see ../README.md)."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

from .args import parse_server_args, resolve_server_args
from .scenario import ScenarioError, load_scenario


def run(argv: Sequence[str], prog: str, positional_model: Optional[str] = None) -> int:
    """Parse SGLang server flags (exit 2 on a bad flag, like SGLang), load the scenario, serve."""
    from .server import serve

    args = resolve_server_args(parse_server_args(argv, prog, positional_model))
    try:
        scenario = load_scenario(os.environ.get("SGLANG_DOUBLE_SCENARIO"))
    except ScenarioError as err:
        sys.stderr.write(f"sglang-double: bad scenario (SGLANG_DOUBLE_SCENARIO): {err}\n")
        return 2
    return serve(args, scenario)

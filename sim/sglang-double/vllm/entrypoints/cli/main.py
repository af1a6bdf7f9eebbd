"""The `vllm` console script: `vllm serve [MODEL] [flags...]`, `vllm --version`."""

from __future__ import annotations

import sys
from typing import List, Optional

SUBCOMMANDS = ("chat", "complete", "serve", "bench", "collect-env", "run-batch")
USAGE = "usage: vllm [-h] [-v] {" + ",".join(SUBCOMMANDS) + "} ...\n"


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-v", "--version"):
        from vllm import __version__

        # vLLM prints the bare version string.
        sys.stdout.write(f"{__version__}\n")
        return 0
    if not args or args[0] in ("-h", "--help"):
        out = sys.stdout if args else sys.stderr
        out.write(USAGE + "\nvLLM CLI (reprobench test double: only `serve` and `--version` are simulated)\n")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in SUBCOMMANDS:
        choices = ", ".join(repr(c) for c in SUBCOMMANDS)
        sys.stderr.write(USAGE + f"vllm: error: argument subparser: invalid choice: {command!r} (choose from {choices})\n")
        return 2
    if command != "serve":
        sys.stderr.write(f"vllm {command}: not simulated by the reprobench test double (only `vllm serve`)\n")
        return 2
    from sglang_double.vllm_server import run_vllm

    return run_vllm(rest, prog="vllm serve")


if __name__ == "__main__":
    sys.exit(main())

"""The `sglang` console script: `sglang serve [MODEL] [--model-path M] [server flags...]`, `sglang version`."""

from __future__ import annotations

import sys
from typing import List, Optional

USAGE = "usage: sglang {serve,version} ...\n"


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\nsubcommands:\n  serve    launch the (simulated) SGLang server\n  version  print the version\n")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "version":
        from sglang import __version__

        sys.stdout.write(f"sglang {__version__} (reprobench test double)\n")
        return 0
    if command != "serve":
        sys.stderr.write(USAGE + f"sglang: error: argument command: invalid choice: {command!r} (choose from 'serve', 'version')\n")
        return 2
    # `sglang serve` strips --model-type before handing the rest to the server-args parser.
    cleaned: List[str] = []
    i = 0
    while i < len(rest):
        if rest[i] == "--model-type" and i + 1 < len(rest):
            i += 2
            continue
        if rest[i].startswith("--model-type="):
            i += 1
            continue
        cleaned.append(rest[i])
        i += 1
    positional = None
    if cleaned and not cleaned[0].startswith("-"):
        positional, cleaned = cleaned[0], cleaned[1:]
    from sglang_double import run

    return run(cleaned, prog="sglang serve", positional_model=positional)


if __name__ == "__main__":
    sys.exit(main())

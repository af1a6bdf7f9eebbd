"""`python3 -m sglang.launch_server --model-path ...` (the older entry point; same flags as `sglang serve`)."""

import sys
import warnings


def main() -> int:
    from sglang_double import run

    # Real SGLang prints this too (sglang.md §1.1).
    warnings.warn("'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.")
    return run(sys.argv[1:], prog="launch_server.py")


if __name__ == "__main__":
    sys.exit(main())

"""`python3 -m vllm.entrypoints.openai.api_server --model M ...` (the entry point before `vllm serve`)."""

import sys


def main() -> int:
    from sglang_double.vllm_server import run_vllm

    return run_vllm(sys.argv[1:], prog="api_server.py")


if __name__ == "__main__":
    sys.exit(main())

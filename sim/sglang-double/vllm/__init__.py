"""Stand-in for the `vllm` package: only the server entry points, backed by the test double (vLLM mode)."""

from sglang_double.vllm_server import VLLM_VERSION as __version__  # noqa: F401

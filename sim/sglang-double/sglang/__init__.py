"""Stand-in for the `sglang` package: only the server entry points, backed by the test double."""

__version__ = "0.5.23"

#!/usr/bin/env bash
# Create (once) a venv holding the REAL sglang-router from PyPI, for the loopback router test.
# Idempotent: a venv whose marker matches the pinned version is reused as is.
#   ROUTER_VENV      venv directory (default ~/.cache/reprobench/router-venv)
#   ROUTER_VERSION   sglang-router version (default 0.3.2, the version seed 000 ran)
#   PYTHON           interpreter used to create the venv (default python3)
# Prints the venv's python path on stdout as its last line.
set -euo pipefail

ROUTER_VENV="${ROUTER_VENV:-$HOME/.cache/reprobench/router-venv}"
ROUTER_VERSION="${ROUTER_VERSION:-0.3.2}"
PYTHON="${PYTHON:-python3}"
marker="$ROUTER_VENV/.reprobench-sglang-router-$ROUTER_VERSION"

venv_ok() {
  [[ -f "$marker" ]] && "$ROUTER_VENV/bin/python" -c "import sglang_router.launch_router" 2>/dev/null
}

if venv_ok; then
  echo "$ROUTER_VENV/bin/python"
  exit 0
fi

mkdir -p "$(dirname "$ROUTER_VENV")"
# A lock so two concurrent callers (parallel test files) do not install into the same directory.
exec 9>"$ROUTER_VENV.lock"
flock -w 600 9
if venv_ok; then
  echo "$ROUTER_VENV/bin/python"
  exit 0
fi
# A half-built venv (interrupted install, other version) is rebuilt from scratch.
rm -rf "$ROUTER_VENV"

"$PYTHON" -m venv "$ROUTER_VENV" >&2
"$ROUTER_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "sglang-router==$ROUTER_VERSION" >&2
"$ROUTER_VENV/bin/python" -c "import sglang_router.launch_router" >&2
touch "$marker"
echo "$ROUTER_VENV/bin/python"

#!/usr/bin/env bash
# Create (once) a venv holding the REAL huggingface_hub client from PyPI, pinned and hash-checked
# (components/weights/requirements.txt, the program's pins: every wheel's sha256, installed with
# --require-hashes --no-deps, so nothing unpinned and no hf-xet comes in). Used by the fake hub's tests; the
# same file pins what a worker installs (components/scripts/weights-download.sh).
# Idempotent: a venv whose marker matches the requirements file's sha256 is reused as is; a half-built one
# (interrupted install, other pins) is rebuilt from scratch under a lock, so parallel callers do not collide.
#   HF_VENV           venv directory (default ${REPROBENCH_CACHE:-~/.cache/reprobench}/hf-hub-venv)
#   PYTHON            interpreter used to create the venv (default python3; 3.11-3.13, see the requirements file)
#   PIP_INDEX_URL     as pip reads it (default: PyPI)
# Prints the venv's python path on stdout as its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/../../components/weights/requirements.txt"
cache="${REPROBENCH_CACHE:-$HOME/.cache/reprobench}"
HF_VENV="${HF_VENV:-$cache/hf-hub-venv}"
PYTHON="${PYTHON:-python3}"
pins="$(sha256sum "$requirements" | cut -c1-16)"
marker="$HF_VENV/.reprobench-hf-hub-$pins"

venv_ok() {
  [[ -f "$marker" ]] && "$HF_VENV/bin/python" -c "import huggingface_hub" 2>/dev/null
}

if venv_ok; then
  echo "$HF_VENV/bin/python"
  exit 0
fi

mkdir -p "$(dirname "$HF_VENV")"
exec 9>"$HF_VENV.lock"
flock -w 600 9
if venv_ok; then
  echo "$HF_VENV/bin/python"
  exit 0
fi
rm -rf "$HF_VENV"

"$PYTHON" -m venv "$HF_VENV" >&2
"$HF_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --require-hashes --no-deps --only-binary=:all: -r "$requirements" >&2
# The client must not find hf_xet (it would send large files to Xet CAS hosts, past HF_ENDPOINT).
if "$HF_VENV/bin/python" -c "import hf_xet" 2>/dev/null; then
  echo "hf-venv: hf_xet is installed in $HF_VENV; it must not be" >&2
  exit 1
fi
"$HF_VENV/bin/python" -c "import huggingface_hub, huggingface_hub.cli.hf" >&2
touch "$marker"
echo "$HF_VENV/bin/python"

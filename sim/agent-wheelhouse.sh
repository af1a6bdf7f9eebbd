#!/usr/bin/env bash
# Fill a wheelhouse on the control machine from which Harbor's `mini-swe-agent` agent installs OFFLINE
# inside a sim task container (Debian trixie, CPython 3.13, x86_64): mini-swe-agent, litellm[proxy] and
# every dependency as binary wheels, plus the `uv` binary taken out of uv's PyPI wheel (Harbor's install
# script only fetches uv from astral.sh when `command -v uv` fails, and task containers cannot reach it).
# `sim up` copies the result to the runner host at /var/cache/reprobench/agent-wheels; a task container
# bind-mounts it and points uv at it (see sim/README.md, "mini-swe-agent"):
#   UV_FIND_LINKS=/var/cache/reprobench/agent-wheels UV_OFFLINE=1 UV_PYTHON_DOWNLOADS=never
# Idempotent: a stamp records what a complete run fetched, so a second call returns at once.
# Inputs (env, all optional):
#   MSWEA_VERSION        mini-swe-agent release (default 2.4.6)
#   UV_VERSION           uv release whose binary goes to bin/uv (default 0.13.9)
#   LITELLM_VERSION      litellm release, installed with its [proxy] extra as Harbor asks (default 1.108.7)
#   AGENT_WHEELHOUSE     target directory (default ~/.cache/reprobench/agent-wheelhouse)
#   PYTHON               interpreter running pip (any version >= 3.9; default python3)
set -euo pipefail
MSWEA_VERSION=${MSWEA_VERSION:-2.4.6}
UV_VERSION=${UV_VERSION:-0.13.9}
LITELLM_VERSION=${LITELLM_VERSION:-1.108.7}
AGENT_WHEELHOUSE=${AGENT_WHEELHOUSE:-$HOME/.cache/reprobench/agent-wheelhouse}
PYTHON=${PYTHON:-python3}
die() { echo "agent-wheelhouse: $*" >&2; exit 1; }
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' is not available (set PYTHON to an interpreter with pip)"

stamp="$AGENT_WHEELHOUSE/.complete-mini-swe-agent-$MSWEA_VERSION-litellm-$LITELLM_VERSION-uv-$UV_VERSION"
cached() {
  [ -f "$stamp" ] && [ -x "$AGENT_WHEELHOUSE/bin/uv" ] || return 1
  echo "agent-wheelhouse: cached: $(find "$AGENT_WHEELHOUSE" -maxdepth 1 -name '*.whl' | wc -l) wheels in $AGENT_WHEELHOUSE"
}
cached && exit 0
mkdir -p "$AGENT_WHEELHOUSE/bin"
# Integration suites bring up sim instances side by side: on a cold cache one fills the directory while the
# others wait for it (writing bin/uv while another caller runs it failed with "Text file busy").
exec 9>"$AGENT_WHEELHOUSE.lock"
flock -w 1800 9 || die "another agent-wheelhouse.sh held $AGENT_WHEELHOUSE.lock for 30 min"
cached && exit 0

# Resolve for the task containers' interpreter, not this one (same tag list as sim/wheelhouse.sh:
# pip does not widen a manylinux tag to older ones). Binary wheels only: nothing is compiled.
target=(--python-version 3.13 --implementation cp --abi cp313 --only-binary=:all:
  --platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
for minor in $(seq 5 41); do target+=(--platform "manylinux_2_${minor}_x86_64"); done
"$PYTHON" -m pip download --disable-pip-version-check --no-input --dest "$AGENT_WHEELHOUSE" "${target[@]}" \
  "mini-swe-agent==$MSWEA_VERSION" "litellm[proxy]==$LITELLM_VERSION" "uv==$UV_VERSION"

ls "$AGENT_WHEELHOUSE"/mini_swe_agent-"$MSWEA_VERSION"-*.whl >/dev/null 2>&1 || die "pip did not leave a mini_swe_agent-$MSWEA_VERSION wheel"
uv_wheel=$(find "$AGENT_WHEELHOUSE" -maxdepth 1 -name "uv-$UV_VERSION-*.whl" | head -n1)
[ -n "$uv_wheel" ] || die "pip did not leave a uv-$UV_VERSION wheel"
# The wheel ships the static binary as uv-<version>.data/scripts/uv.
# Into a new file renamed over bin/uv: a process running the old one keeps its inode.
"$PYTHON" - "$uv_wheel" "$AGENT_WHEELHOUSE/bin/uv.new" <<'EOF'
import shutil, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as zf:
    names = [n for n in zf.namelist() if n.endswith(".data/scripts/uv")]
    if not names:
        sys.exit(f"agent-wheelhouse: {wheel} holds no .data/scripts/uv")
    with zf.open(names[0]) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
EOF
chmod 0755 "$AGENT_WHEELHOUSE/bin/uv.new"
mv -f "$AGENT_WHEELHOUSE/bin/uv.new" "$AGENT_WHEELHOUSE/bin/uv"
"$AGENT_WHEELHOUSE/bin/uv" --version >/dev/null || die "$AGENT_WHEELHOUSE/bin/uv does not run"
touch "$stamp"
echo "agent-wheelhouse: $(find "$AGENT_WHEELHOUSE" -maxdepth 1 -name '*.whl' | wc -l) wheels in $AGENT_WHEELHOUSE ($("$AGENT_WHEELHOUSE/bin/uv" --version))"

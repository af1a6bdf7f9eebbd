#!/usr/bin/env bash
# Fill a wheelhouse on the control machine with exactly the wheels components/weights/requirements.txt pins
# (huggingface_hub for modelServer.download and its dependencies, every sha256 checked), for the sim hosts'
# CPython 3.13 manylinux x86_64. `sim up` serves them on pypi.sim beside Harbor's wheelhouse (merged into the
# simple index only where that cannot change what Harbor resolves: sim/outside.ts mergeableWheels), so a
# worker's weights-download.sh installs them from http://pypi.sim/simple/ through the proxy, as it would
# from PyPI. Kept apart from Harbor's wheelhouse on purpose (it is mounted into the runner as find-links).
# Idempotent: a stamp names the requirements file's sha256, so a second call with the same pins returns at once.
# Inputs (env, all optional):
#   HF_WHEELHOUSE   target directory (default ${REPROBENCH_CACHE:-~/.cache/reprobench}/hf-wheelhouse)
#   PYTHON          interpreter running pip (default python3)
#   PIP_INDEX_URL   as pip reads it (default: PyPI)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/../components/weights/requirements.txt"
cache="${REPROBENCH_CACHE:-$HOME/.cache/reprobench}"
HF_WHEELHOUSE=${HF_WHEELHOUSE:-$cache/hf-wheelhouse}
PYTHON=${PYTHON:-python3}
die() { echo "hf-wheelhouse: $*" >&2; exit 1; }
[ -f "$requirements" ] || die "$requirements is missing"
pins="$(sha256sum "$requirements" | cut -c1-16)"
stamp="$HF_WHEELHOUSE/.complete-hf-$pins"
count() { find "$HF_WHEELHOUSE" -maxdepth 1 -name '*.whl' | wc -l; }
cached() {
  [ -f "$stamp" ] || return 1
  echo "hf-wheelhouse: cached: $(count) wheels in $HF_WHEELHOUSE"
}
cached && exit 0
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' is not available (set PYTHON to an interpreter with pip)"
mkdir -p "$HF_WHEELHOUSE"
# Sim instances come up side by side in the integration suites: one fills, the others wait.
exec 9>"$HF_WHEELHOUSE.lock"
flock -w 1200 9 || die "another hf-wheelhouse.sh held $HF_WHEELHOUSE.lock for 20 min"
cached && exit 0

# For the hosts' interpreter, not this one (as sim/wheelhouse.sh): CPython 3.13, glibc x86_64, every
# manylinux tag trixie's glibc 2.41 accepts. --require-hashes --no-deps: the pins and nothing else.
target=(--python-version 3.13 --implementation cp --abi cp313 --only-binary=:all:
  --platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
for minor in $(seq 5 41); do target+=(--platform "manylinux_2_${minor}_x86_64"); done
# PIP_FIND_LINKS (this machine's pip config may set one) must not offer wheels other than PyPI's.
PIP_FIND_LINKS='' "$PYTHON" -m pip download --disable-pip-version-check --no-input --dest "$HF_WHEELHOUSE" "${target[@]}" \
  --require-hashes --no-deps -r "$requirements" >&2

# Every pinned project has its wheel here (pip download checked each one's sha256).
want=$(grep -cE '^[A-Za-z0-9_.-]+==' "$requirements")
while read -r name; do
  compgen -G "$HF_WHEELHOUSE/${name}-*.whl" >/dev/null || die "pip did not leave a wheel for ${name/-/==} in $HF_WHEELHOUSE"
done < <(sed -nE 's/^([A-Za-z0-9_.-]+)==([^ ]+).*/\1-\2/p' "$requirements")
touch "$stamp"
echo "hf-wheelhouse: $(count) wheels in $HF_WHEELHOUSE ($want pins of $(basename "$requirements"))"

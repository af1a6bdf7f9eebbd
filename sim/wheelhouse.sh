#!/usr/bin/env bash
# Fill a wheelhouse on the control machine with Harbor and every dependency it needs on a CPython 3.13
# manylinux x86_64 host (the simulated hosts run Debian trixie with python3.13 and cannot be assumed to
# reach PyPI). HarborRunner installs from it with `pip install --no-index --find-links` when
# harbor.pipFindLinks is set; the sim mounts it into the hosts at /var/cache/reprobench/wheels.
# Idempotent: pip download skips wheels already present, and a stamp records what a complete run
# fetched, so a second call with the same pins returns at once.
# Inputs (env, all optional):
#   HARBOR_VERSION       harbor release (default 0.21.0)
#   ASCIINEMA_VERSION    asciinema wheel for the tool bundle (default 2.4.0)
#   WHEELHOUSE           target directory (default ~/.cache/reprobench/wheelhouse)
#   PYTHON               interpreter running pip (any version ≥ 3.9; default python3)
#   HARBOR_WHEEL_SHA256  if set, the harbor wheel must have this sha256
set -euo pipefail
HARBOR_VERSION=${HARBOR_VERSION:-0.21.0}
ASCIINEMA_VERSION=${ASCIINEMA_VERSION:-2.4.0}
WHEELHOUSE=${WHEELHOUSE:-$HOME/.cache/reprobench/wheelhouse}
PYTHON=${PYTHON:-python3}
die() { echo "wheelhouse: $*" >&2; exit 1; }
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' is not available (set PYTHON to an interpreter with pip)"

stamp="$WHEELHOUSE/.complete-harbor-$HARBOR_VERSION-asciinema-$ASCIINEMA_VERSION"
cached() {
  [ -f "$stamp" ] && [ -f "$WHEELHOUSE/harbor-$HARBOR_VERSION-py3-none-any.whl" ] || return 1
  echo "wheelhouse: cached: $(find "$WHEELHOUSE" -maxdepth 1 -name '*.whl' | wc -l) wheels in $WHEELHOUSE"
}
cached && exit 0
mkdir -p "$WHEELHOUSE"
# Integration suites bring up sim instances side by side: on a cold cache one fills the directory while the
# others wait for it (two pip downloads writing the same wheels would race).
exec 9>"$WHEELHOUSE.lock"
flock -w 1800 9 || die "another wheelhouse.sh held $WHEELHOUSE.lock for 30 min"
cached && exit 0

# Resolve for the target interpreter, not this one: CPython 3.13, glibc x86_64 (trixie has glibc 2.41;
# pip does not widen a given manylinux tag to older ones, so every accepted tag is listed), binary
# wheels only so nothing needs a compiler on the host.
target=(--python-version 3.13 --implementation cp --abi cp313 --only-binary=:all:
  --platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
for minor in $(seq 5 41); do target+=(--platform "manylinux_2_${minor}_x86_64"); done
"$PYTHON" -m pip download --disable-pip-version-check --no-input --dest "$WHEELHOUSE" "${target[@]}" \
  "harbor==$HARBOR_VERSION" "asciinema==$ASCIINEMA_VERSION" pip setuptools wheel

harbor_wheel="$WHEELHOUSE/harbor-$HARBOR_VERSION-py3-none-any.whl"
[ -f "$harbor_wheel" ] || die "pip did not leave $harbor_wheel"
if [ -n "${HARBOR_WHEEL_SHA256:-}" ]; then
  got=$(sha256sum "$harbor_wheel" | cut -d' ' -f1)
  [ "$got" = "$HARBOR_WHEEL_SHA256" ] || die "harbor wheel sha256 mismatch: expected $HARBOR_WHEEL_SHA256, got $got"
fi
touch "$stamp"
echo "wheelhouse: $(find "$WHEELHOUSE" -maxdepth 1 -name '*.whl' | wc -l) wheels in $WHEELHOUSE (harbor $HARBOR_VERSION sha256 $(sha256sum "$harbor_wheel" | cut -d' ' -f1))"

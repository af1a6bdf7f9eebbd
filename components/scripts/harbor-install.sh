#!/usr/bin/env bash
# Install Harbor on the runner host (seed 000 "安装 Harbor"): a Python venv with harbor==$HARBOR_VERSION
# from a wheel whose sha256 must equal the pin, `pip freeze` saved beside the logs, and the manual's
# `python --version` / `harbor --version` checks. Two ways in:
#   FIND_LINKS set   offline: python$PYTHON_VERSION -m venv + pip install --no-index --find-links (the sim
#                    hosts cannot reach PyPI; sim/wheelhouse.sh fills the directory)
#   FIND_LINKS empty the seed's way: the wheel from PyPI, uv venv --python $PYTHON_VERSION, uv pip install
# Idempotent: an existing venv with the pinned version installed from the pinned wheel is kept.
# Inputs (env):
#   HARBOR_VERSION  e.g. 0.21.0
#   WHEEL_SHA256    sha256 of harbor-$HARBOR_VERSION-py3-none-any.whl
#   VENV            venv directory
#   PYTHON_VERSION  e.g. 3.13
#   FIND_LINKS      wheel directory on this host, or empty
#   EXTRAS          optional extras, comma-separated (e.g. hf-sandbox → harbor[hf-sandbox])
#   WORK_DIR        work directory (logs/ and the downloaded wheel go here)
#   JOBS_DIR        Harbor --jobs-dir (created, never removed)
#   UPLOADS_DIR     where the SSH login uploads the dataset (created 0700 and owned by the login: SUDO_UID
#                   under sudo, else root)
#   PROGRESS_SECS   how often a long step says how long it has run (default 30; "progress:" lines on
#                   stderr, shown by `pulumi up` as they come: components/checked-command.ts)
set -euo pipefail
: "${HARBOR_VERSION:?}" "${WHEEL_SHA256:?}" "${VENV:?}" "${PYTHON_VERSION:?}" "${WORK_DIR:?}" "${JOBS_DIR:?}" "${UPLOADS_DIR:?}"
FIND_LINKS=${FIND_LINKS:-}
EXTRAS=${EXTRAS:-}
extras_suffix=
[ -z "$EXTRAS" ] || extras_suffix="[$EXTRAS]"
die() { echo "harbor-install: $*" >&2; exit 1; }
PROGRESS_SECS=${PROGRESS_SECS:-30}
# Runs "$@" (a step named $1 first) and says every PROGRESS_SECS how long it has run; returns its status.
with_progress() {
  local step=$1 start=$SECONDS next pid status=0
  shift
  echo "harbor-install: progress: $step" >&2
  "$@" &
  pid=$!
  next=$((SECONDS + PROGRESS_SECS))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$next" ]; then
      echo "harbor-install: progress: $step ($((SECONDS - start))s)" >&2
      next=$((SECONDS + PROGRESS_SECS))
    fi
    sleep 1
  done
  wait "$pid" || status=$?
  return "$status"
}
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=true
mkdir -p "$WORK_DIR/logs" "$JOBS_DIR" "$(dirname "$VENV")" "$(dirname "$UPLOADS_DIR")"
# install -d also sets owner and mode of a directory that exists (e.g. after the login changed).
install -d -m 0700 -o "${SUDO_UID:-$(id -u)}" -g "${SUDO_GID:-$(id -g)}" "$UPLOADS_DIR"
wheel_name="harbor-$HARBOR_VERSION-py3-none-any.whl"
stamp="$VENV/.reprobench-wheel-sha256"

check_sha() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$WHEEL_SHA256" ] || die "harbor wheel sha256 mismatch for $1: expected $WHEEL_SHA256 (harbor.wheelSha256), got $got"
}

installed_version() { "$VENV/bin/harbor" --version 2>/dev/null | tail -n 1 | tr -d '[:space:]' || true; }

# The stamp names the wheel and the extras: a changed extra reinstalls.
stamp_text="$WHEEL_SHA256$extras_suffix"
if [ -x "$VENV/bin/harbor" ] && [ "$(installed_version)" = "$HARBOR_VERSION" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$stamp_text" ]; then
  echo "harbor-install: $VENV already has harbor$extras_suffix $HARBOR_VERSION from the pinned wheel" >&2
else
  rm -rf "$VENV"
  if [ -n "$FIND_LINKS" ]; then
    [ -d "$FIND_LINKS" ] || die "harbor.pipFindLinks $FIND_LINKS is not a directory on this host"
    wheel="$FIND_LINKS/$wheel_name"
    [ -f "$wheel" ] || die "$wheel not found (harbor.pipFindLinks must hold harbor $HARBOR_VERSION and its dependencies; see sim/wheelhouse.sh)"
    check_sha "$wheel"
    python="python$PYTHON_VERSION"
    command -v "$python" >/dev/null || die "'$python' is not installed on this host (offline install needs it; harbor.pythonVersion)"
    "$python" -m venv "$VENV"
    # By requirement, not by file: the only candidate is the wheel checked above, and freeze then reads harbor==X.
    with_progress "installing harbor$extras_suffix $HARBOR_VERSION offline from $FIND_LINKS" \
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$FIND_LINKS" "harbor$extras_suffix==$HARBOR_VERSION" >&2 ||
      die "pip could not install $wheel_name from $FIND_LINKS (a dependency wheel is missing?)"
  else
    command -v uv >/dev/null || die "uv is not installed on this host (install uv as in the manual, or set harbor.pipFindLinks for an offline install)"
    for tool in curl jq; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
    wheel="$WORK_DIR/$wheel_name"
    if [ ! -f "$wheel" ] || ! [ "$(sha256sum "$wheel" | cut -d' ' -f1)" = "$WHEEL_SHA256" ]; then
      url=$(curl -fsSL --retry 3 "https://pypi.org/pypi/harbor/$HARBOR_VERSION/json" |
        jq -r --arg f "$wheel_name" '.urls[] | select(.filename == $f) | .url') || die "cannot query PyPI for harbor $HARBOR_VERSION"
      [ -n "$url" ] || die "PyPI lists no $wheel_name"
      curl -fsSL --retry 3 "$url" -o "$wheel.part" || die "cannot download $url"
      mv "$wheel.part" "$wheel"
    fi
    check_sha "$wheel"
    uv venv --quiet --python "$PYTHON_VERSION" "$VENV" >&2
    with_progress "installing harbor$extras_suffix $HARBOR_VERSION with uv" uv pip install --quiet --python "$VENV/bin/python" "$wheel$extras_suffix" >&2
  fi
  echo "$stamp_text" >"$stamp"
fi

freeze="$WORK_DIR/logs/harbor-$HARBOR_VERSION-freeze.txt"
if [ -x "$VENV/bin/pip" ]; then
  "$VENV/bin/python" -m pip freeze --disable-pip-version-check >"$freeze"
else
  uv pip freeze --python "$VENV/bin/python" >"$freeze"
fi
python_version=$("$VENV/bin/python" --version | cut -d' ' -f2)
case "$python_version" in "$PYTHON_VERSION" | "$PYTHON_VERSION".*) ;; *) die "venv python is $python_version, expected $PYTHON_VERSION";; esac
got_version=$(installed_version)
[ "$got_version" = "$HARBOR_VERSION" ] || die "harbor --version printed '$got_version', expected $HARBOR_VERSION"
grep -Eq "^harbor(==$HARBOR_VERSION\$| @ .*/$wheel_name)" "$freeze" || die "$freeze does not list harbor $HARBOR_VERSION"
echo "harbor-install: harbor $got_version on Python $python_version in $VENV; freeze: $freeze ($(wc -l <"$freeze") packages)" >&2
printf '{"version":"%s","wheelSha256":"%s","python":"%s","venv":"%s","freeze":"%s"}\n' \
  "$got_version" "$WHEEL_SHA256" "$python_version" "$VENV" "$freeze"

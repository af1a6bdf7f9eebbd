#!/usr/bin/env bash
# Build the read-only tmux/asciinema bundle that is mounted into every task container (seed 000
# "为 task containers 准备 tmux 和 asciinema"): the host's tmux and python3 with every shared library
# they load (ldd) and the host's dynamic loader, plus the asciinema wheel checked against its sha256.
# Wrappers start both through the bundled loader, so they run in images whose libc differs or that
# lack them. Verified on the host and inside a canary image without tmux/asciinema.
# Inputs (env):
#   TOOLS_DIR            bundle directory on the host
#   MOUNT_PATH           where containers see it (/opt/harbor-tools)
#   WHEEL_URL            asciinema wheel (https://… or file:///…)
#   WHEEL_SHA256         its sha256
#   CANARY_IMAGE         a task image (pulled if missing, through the daemon's proxy settings)
#   ATTEMPTS             attempts for the download and the pull (default 5)
# curl reads the proxy from the standard environment (never printed: errors name only its host:port).
# Run with retry.sh prepended (scriptWithEnv(["retry", "tool-bundle"], env)); run from its file, it sources
# retry.sh beside itself.
set -euo pipefail
: "${TOOLS_DIR:?}" "${MOUNT_PATH:?}" "${WHEEL_URL:?}" "${WHEEL_SHA256:?}" "${CANARY_IMAGE:?}"
ATTEMPTS=${ATTEMPTS:-5}
# shellcheck disable=SC2034 # read by retry()
RETRY_NAME="tool-bundle"
die() { echo "tool-bundle: $*" >&2; exit 1; }
if ! declare -F retry >/dev/null; then
  # shellcheck source=/dev/null
  . "$(dirname "${BASH_SOURCE[0]:-.}")/retry.sh" 2>/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"tool-bundle\"], env))"
fi
for tool in tmux python3 ldd curl sha256sum docker; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

host_tmux=$(command -v tmux)
host_python=$(readlink -f "$(command -v python3)")
py_version=$("$host_python" -c 'import sys; print(f"python{sys.version_info.major}.{sys.version_info.minor}")')
py_stdlib=$("$host_python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')

# The download first: a proxy or mirror problem shows before any work on the host.
mkdir -p "$(dirname "$TOOLS_DIR")"
wheel="$TOOLS_DIR.asciinema.whl"
wheel_shown=$(redact_url "$WHEEL_URL")
case "$WHEEL_URL" in
  file://*) curl --fail --silent --show-error --output "$wheel" "$WHEEL_URL" || die "cannot read the asciinema wheel $wheel_shown (toolBundle.asciinemaWheelUrl)" ;;
  *) RETRY_ATTEMPTS=$ATTEMPTS http_fetch "$WHEEL_URL" "$wheel" || die "cannot download the asciinema wheel (toolBundle.asciinemaWheelUrl): $HTTP_FETCH_ERROR" ;;
esac
got=$(sha256sum "$wheel" | cut -d' ' -f1)
[ "$got" = "$WHEEL_SHA256" ] || { rm -f "$wheel"; die "asciinema wheel sha256 mismatch: expected $WHEEL_SHA256, got $got ($wheel_shown)"; }

# Build into a fresh directory and swap it in at the end: a half-built bundle is never mounted.
build="$TOOLS_DIR.building"
rm -rf "$build"
mkdir -p "$build/bin" "$build/lib" "$build/python/bin" "$build/python/lib/$py_version" "$build/python/site-packages"
install -m 755 "$host_tmux" "$build/bin/tmux.real"
install -m 755 "$host_python" "$build/python/bin/python3"
cp -a "$py_stdlib/." "$build/python/lib/$py_version/"
rm -rf "$build/python/lib/$py_version/dist-packages" "$build/python/lib/$py_version/site-packages"
find "$build/python/lib/$py_version" -name __pycache__ -type d -prune -exec rm -rf {} +

{
  ldd "$host_tmux"
  ldd "$host_python"
  find "$py_stdlib/lib-dynload" -type f -name '*.so' -exec ldd {} \;
} | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while IFS= read -r library; do install -m 644 "$(readlink -f "$library")" "$build/lib/$(basename "$library")"; done
loader=$(find "$build/lib" -maxdepth 1 -name 'ld-linux*.so*' | head -n 1)
[ -n "$loader" ] || die "no dynamic loader among tmux's and python's libraries"
chmod 755 "$loader"
loader_name=$(basename "$loader")

"$host_python" -m zipfile -e "$wheel" "$build/python/site-packages"
rm -f "$wheel"

cat >"$build/bin/tmux" <<WRAP
#!/bin/sh
set -eu
bundle_root=\${HARBOR_TMUX_ROOT:-$MOUNT_PATH}
exec "\$bundle_root/lib/$loader_name" --library-path "\$bundle_root/lib" "\$bundle_root/bin/tmux.real" "\$@"
WRAP
cat >"$build/bin/asciinema" <<WRAP
#!/bin/sh
set -eu
bundle_root=\${HARBOR_TOOLS_ROOT:-$MOUNT_PATH}
export PYTHONHOME="\$bundle_root/python"
export PYTHONPATH="\$bundle_root/python/site-packages"
exec "\$bundle_root/lib/$loader_name" --library-path "\$bundle_root/lib" "\$bundle_root/python/bin/python3" -m asciinema "\$@"
WRAP
chmod 755 "$build/bin/tmux" "$build/bin/asciinema"

# Verify on the host, then inside the canary image, before swapping the bundle in.
host_tmux_v=$(HARBOR_TMUX_ROOT="$build" "$build/bin/tmux" -V)
host_asc_v=$(HARBOR_TOOLS_ROOT="$build" "$build/bin/asciinema" --version)
if ! docker image inspect "$CANARY_IMAGE" >/dev/null 2>&1; then
  retry "$ATTEMPTS" 2 "docker pull $CANARY_IMAGE" -- docker pull --quiet "$CANARY_IMAGE" >&2 ||
    die "cannot pull the canary image $CANARY_IMAGE (toolBundle.canaryImage; dockerd pulls through its own proxy settings): $RETRY_LAST_ERROR"
fi
for t in tmux asciinema; do
  if docker run --rm --entrypoint sh "$CANARY_IMAGE" -c "command -v $t" >/dev/null 2>&1; then
    echo "tool-bundle: note: $CANARY_IMAGE already has $t; the check proves less" >&2
  fi
done
in_tmux=$(docker run --rm --volume "$build:$MOUNT_PATH:ro" --entrypoint "$MOUNT_PATH/bin/tmux" "$CANARY_IMAGE" -V) ||
  die "bundled tmux does not start inside $CANARY_IMAGE"
in_asc=$(docker run --rm --volume "$build:$MOUNT_PATH:ro" --entrypoint "$MOUNT_PATH/bin/asciinema" "$CANARY_IMAGE" --version) ||
  die "bundled asciinema does not start inside $CANARY_IMAGE"
rm -rf "$TOOLS_DIR.old"
[ ! -e "$TOOLS_DIR" ] || mv "$TOOLS_DIR" "$TOOLS_DIR.old"
mv "$build" "$TOOLS_DIR"
rm -rf "$TOOLS_DIR.old"
echo "tool-bundle: host: $host_tmux_v, $host_asc_v; in $CANARY_IMAGE: $in_tmux, $in_asc" >&2
printf '{"tmux":"%s","asciinema":"%s","canary":"%s"}\n' "$in_tmux" "$in_asc" "$CANARY_IMAGE"

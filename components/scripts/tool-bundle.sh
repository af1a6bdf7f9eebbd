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
#   PROC_DIR             where the processes' mountinfo is read (default /proc; tests point it elsewhere)
#   SETTLE_SECS          wait between the swap and reading what running containers mount (default 3)
# curl reads the proxy from the standard environment (never printed: errors name only its host:port).
#
# Layout, so that a rebuild never changes a bundle a running trial has mounted: every build is a version
# directory in the store $TOOLS_DIR.bundles/, and TOOLS_DIR itself is a symlink to the current one. A new
# bundle is built and verified in the store, then the symlink is replaced by one rename(2) (`mv -T`):
# containers started afterwards mount the new version (docker resolves the symlink when it mounts), the
# ones already running keep the version they mounted, complete and unchanged. Versions no running
# container has mounted (read from each container's mountinfo) are removed; when that cannot be read,
# none is. A TOOLS_DIR that is still the plain directory of an earlier release is moved into the store
# (a rename: its mounts stay valid) and replaced by the symlink.
# Run with retry.sh, registry.sh and owned-dir.sh prepended (scriptWithEnv(["retry", "registry", "owned-dir", "tool-bundle"], env));
# run from its file, it sources them beside itself.
set -euo pipefail
: "${TOOLS_DIR:?}" "${MOUNT_PATH:?}" "${WHEEL_URL:?}" "${WHEEL_SHA256:?}" "${CANARY_IMAGE:?}"
ATTEMPTS=${ATTEMPTS:-5}
PROC_DIR=${PROC_DIR:-/proc}
SETTLE_SECS=${SETTLE_SECS:-3}
# shellcheck disable=SC2034 # read by retry() and remove_owned_dir()
RETRY_NAME="tool-bundle" OWNED_DIR_NAME="tool-bundle"
die() { echo "tool-bundle: $*" >&2; exit 1; }
here=$(dirname "${BASH_SOURCE[0]:-.}")
if ! declare -F retry >/dev/null; then
  # shellcheck source=/dev/null
  . "$here/retry.sh" 2>/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"owned-dir\", \"tool-bundle\"], env))"
fi
if ! declare -F remove_owned_dir >/dev/null; then
  # shellcheck source=/dev/null
  . "$here/owned-dir.sh" 2>/dev/null || die "owned-dir.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"owned-dir\", \"tool-bundle\"], env))"
fi
if ! declare -F registry_setup >/dev/null; then
  # shellcheck source=/dev/null
  . "$here/registry.sh" 2>/dev/null || die "registry.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"owned-dir\", \"tool-bundle\"], env))"
fi
problem=$(owned_path_problem "$TOOLS_DIR")
[ -z "$problem" ] || die "toolBundle.hostDir '$TOOLS_DIR': $problem"
# What marks a directory as a bundle of ours (in the store and in every version).
MARKER=.reprobench-tool-bundle
store="$TOOLS_DIR.bundles"
for tool in tmux python3 ldd curl sha256sum docker; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

host_tmux=$(command -v tmux)
host_python=$(readlink -f "$(command -v python3)")
py_version=$("$host_python" -c 'import sys; print(f"python{sys.version_info.major}.{sys.version_info.minor}")')
py_stdlib=$("$host_python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')

# The download first: a proxy or mirror problem shows before any work on the host.
mkdir -p "$store"
[ -e "$store/$MARKER" ] || echo "reprobench tool bundle store" >"$store/$MARKER"
wheel="$store/asciinema.whl"
wheel_shown=$(redact_url "$WHEEL_URL")
case "$WHEEL_URL" in
  file://*) curl --fail --silent --show-error --output "$wheel" "$WHEEL_URL" || die "cannot read the asciinema wheel $wheel_shown (toolBundle.asciinemaWheelUrl)" ;;
  *) RETRY_ATTEMPTS=$ATTEMPTS http_fetch "$WHEEL_URL" "$wheel" || die "cannot download the asciinema wheel (toolBundle.asciinemaWheelUrl): $HTTP_FETCH_ERROR" ;;
esac
got=$(sha256sum "$wheel" | cut -d' ' -f1)
[ "$got" = "$WHEEL_SHA256" ] || { rm -f "$wheel"; die "asciinema wheel sha256 mismatch: expected $WHEEL_SHA256, got $got ($wheel_shown)"; }

# Build into a fresh version directory of the store; a half-built one is never linked, and the leftovers
# of a build that failed are removed first.
version="$(date -u +%Y%m%dT%H%M%SZ)-$$"
for partial in "$store"/*.partial; do
  [ ! -d "$partial" ] || remove_owned_dir "$partial" "$MARKER"
done
build="$store/$version.partial"
mkdir -p "$build"
echo "reprobench tool bundle" >"$build/$MARKER"
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
# The pull uses the stack's registry credentials (REGISTRY_AUTH_JSON in the secret environment, written
# for this pull only by registry.sh's registry_setup and removed after it).
pull_canary() {
  local status=0
  registry_setup || return 1
  retry "$ATTEMPTS" 2 "docker pull $CANARY_IMAGE" -- docker pull --quiet "$CANARY_IMAGE" >&2 || status=$?
  registry_cleanup
  return "$status"
}
if ! docker image inspect "$CANARY_IMAGE" >/dev/null 2>&1; then
  pull_canary ||
    die "cannot pull the canary image $CANARY_IMAGE (toolBundle.canaryImage; dockerd pulls through its own proxy settings, with reprobench:registries credentials when set): $RETRY_LAST_ERROR"
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
mv -T "$build" "$store/$version"

# An earlier release's bundle is a plain directory at TOOLS_DIR: move it into the store (trials that
# mounted it keep it) so that the symlink can take its place. Once, for a moment, TOOLS_DIR is missing.
if [ -d "$TOOLS_DIR" ] && [ ! -L "$TOOLS_DIR" ]; then
  [ -e "$TOOLS_DIR/bin/tmux.real" ] || [ -e "$TOOLS_DIR/$MARKER" ] ||
    die "refusing to replace $TOOLS_DIR (toolBundle.hostDir): it is a directory, and not a tool bundle"
  echo "reprobench tool bundle" >"$TOOLS_DIR/$MARKER"
  mv -T "$TOOLS_DIR" "$store/$version-earlier"
elif [ -e "$TOOLS_DIR" ] && [ ! -L "$TOOLS_DIR" ]; then
  die "refusing to replace $TOOLS_DIR (toolBundle.hostDir): it is not a directory"
fi
# The swap: one rename of a new symlink over the old.
ln -sfn "$(basename "$store")/$version" "$TOOLS_DIR.swap"
mv -T "$TOOLS_DIR.swap" "$TOOLS_DIR"
[ "$(readlink "$TOOLS_DIR")" = "$(basename "$store")/$version" ] || die "$TOOLS_DIR does not point at the new bundle after the swap"

# A trial that was starting while the link moved has mounted the old version by now, and shows in `docker ps`.
sleep "$SETTLE_SECS"

# The versions running containers have mounted, one name per line: a bind mount's root in
# /proc/<pid>/mountinfo (field 4, octal-escaped) runs through the store. Fails when it cannot tell.
versions_in_use() {
  local ids pids pid needle
  ids=$(docker ps --quiet) || return 1
  [ -n "$ids" ] || return 0
  # shellcheck disable=SC2086 # one id per word
  pids=$(docker inspect --format '{{.State.Pid}}' $ids) || return 1
  needle="/$(basename "$store")/"
  needle=${needle//\\/\\134} needle=${needle// /\\040} needle=${needle//$'\t'/\\011}
  for pid in $pids; do
    [ "$pid" -gt 0 ] 2>/dev/null || continue
    if [ ! -r "$PROC_DIR/$pid/mountinfo" ]; then
      [ -e "$PROC_DIR/$pid" ] || continue # exited meanwhile
      return 1
    fi
    NEEDLE=$needle awk '{ i = index($4, ENVIRON["NEEDLE"]); if (i) { rest = substr($4, i + length(ENVIRON["NEEDLE"])); sub(/\/.*/, "", rest); print rest } }' "$PROC_DIR/$pid/mountinfo" || return 1
  done
}
kept=()
if in_use=$(versions_in_use); then
  for old in "$store"/*/; do
    old=${old%/} name=${old##*/}
    if [ ! -d "$old" ] || [ "$name" = "$version" ]; then continue; fi
    if grep -qxF -- "$name" <<<"$in_use"; then
      kept+=("$name")
    else
      remove_owned_dir "$old" "$MARKER"
    fi
  done
  [ ${#kept[@]} -eq 0 ] || echo "tool-bundle: kept ${kept[*]} in $store: running containers have it mounted (removed by a later build)" >&2
else
  echo "tool-bundle: note: cannot tell which bundles running containers have mounted; every earlier one is kept in $store" >&2
fi
# What an earlier release left beside TOOLS_DIR.
for leftover in "$TOOLS_DIR.building" "$TOOLS_DIR.old"; do
  [ ! -e "$leftover" ] || remove_owned_dir "$leftover" bin/tmux.real "$MARKER"
done
rm -f "$TOOLS_DIR.asciinema.whl"
echo "tool-bundle: host: $host_tmux_v, $host_asc_v; in $CANARY_IMAGE: $in_tmux, $in_asc" >&2
printf '{"tmux":"%s","asciinema":"%s","canary":"%s"}\n' "$in_tmux" "$in_asc" "$CANARY_IMAGE"

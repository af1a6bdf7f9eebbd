#!/usr/bin/env bash
# Make (or check) the virtualenv of a Python Pulumi project, idempotently: <project-dir>/venv with the
# Python Pulumi SDK pinned to the version of this checkout's Node.js SDK (pulumi==3.270.0; unpinned, a
# fresh install takes a newer one), plus the project's requirements.txt when it has one. One virtualenv per
# project: a shared one made `pulumi install` try to download the other project's packages.
#
#   scripts/python-venv.sh <project-dir> [--print]
#
# Point the project at it in its Pulumi.yaml (`runtime: {name: python, options: {toolchain: pip,
# virtualenv: venv}}`). --print prints the virtualenv's path on stdout. Uses python3 on PATH (or
# REPROBENCH_PYTHON3) and PyPI (or pip's configured index). The Python language host itself comes from
# `REPROBENCH_PYTHON=1 source scripts/env.sh`.
set -euo pipefail
shopt -s inherit_errexit

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
log() { printf '[python-venv %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[python-venv] error: %s\n' "$*" >&2; exit 1; }

{ [ $# -ge 1 ] && [ $# -le 2 ]; } || die "usage: scripts/python-venv.sh <project-dir> [--print]"
project=$1
print=0
if [ $# -eq 2 ]; then
  [ "$2" = --print ] || die "unknown argument '$2' (usage: scripts/python-venv.sh <project-dir> [--print])"
  print=1
fi
[ -d "$project" ] || die "$project is not a directory"
project=$(cd "$project" && pwd)

# The SDK version: the Node.js SDK this checkout pins (package.json), overridable.
sdk_version() {
  local v
  v=${REPROBENCH_PYTHON_SDK_VERSION:-}
  if [ -z "$v" ]; then
    v=$(sed -n 's/^ *"@pulumi\/pulumi": *"\([0-9][0-9.]*\)".*/\1/p' "$repo/package.json" | head -n 1)
  fi
  [ -n "$v" ] || die "cannot read the @pulumi/pulumi version from $repo/package.json (set REPROBENCH_PYTHON_SDK_VERSION)"
  echo "$v"
}
want=$(sdk_version)
py=${REPROBENCH_PYTHON3:-python3}
command -v "$py" >/dev/null || die "no $py on PATH (set REPROBENCH_PYTHON3)"

venv="$project/venv"
vpy="$venv/bin/python"
stamp="$venv/.reprobench-stamp"
req="$project/requirements.txt"

# What the venv was made from: the SDK pin and the requirements file's content.
fingerprint() {
  local r=none
  [ -f "$req" ] && r=$(sha256sum <"$req")
  printf 'pulumi==%s requirements=%s\n' "$want" "${r%% *}"
}

installed_sdk() { "$vpy" -c 'import importlib.metadata as m; print(m.version("pulumi"))' 2>/dev/null || true; }

if [ -x "$vpy" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(fingerprint)" ] && [ "$(installed_sdk)" = "$want" ]; then
  [ "$print" = 0 ] || echo "$venv"
  exit 0
fi

if [ ! -x "$vpy" ]; then
  log "creating $venv ($("$py" --version 2>&1))"
  "$py" -m venv "$venv"
fi
rm -f "$stamp"
# The pin goes in as a constraint too, so a requirement without a version cannot pull a newer SDK.
cons=$(mktemp)
trap 'rm -f "$cons"' EXIT
printf 'pulumi==%s\n' "$want" >"$cons"
args=(--disable-pip-version-check --no-input -q -c "$cons" "pulumi==$want")
what="pulumi==$want"
if [ -f "$req" ]; then
  args+=(-r "$req")
  what+=" and $req"
fi
log "installing $what into $venv"
(cd "$project" && "$vpy" -m pip install "${args[@]}") >&2
got=$(installed_sdk)
[ "$got" = "$want" ] || die "$venv has pulumi $got after the install, not $want"
fingerprint >"$stamp"
log "ready: $venv (pulumi $got)"
[ "$print" = 0 ] || echo "$venv"

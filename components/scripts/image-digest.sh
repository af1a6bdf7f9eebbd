#!/usr/bin/env bash
# The digest an image reference resolves to in its registry now, as one line "digest=sha256:…": what the
# host's pull should match. A tag moved to another build reads as drift on refresh, so `preview` shows the
# server's image (and container) changing. A pinned reference (name@sha256:…) is its own digest. When the
# registry cannot be asked (down, no skopeo), the digest of the image already pulled stands in, so an
# unreachable registry is never mistaken for a moved tag.
# With PULL=1 (the create step) the image is also pulled into dockerd at that digest (repo@sha256:…), each
# step retried with backoff (retry.sh, prepended by scriptWithEnv(["retry", "image-digest"], …)), so the
# Docker provider's own pull, which never retries, finds it present. A registry that keeps failing (429,
# 5xx, a proxy resetting connections) ends in one message naming the host, the image and the last error.
# Inputs (env): IMAGE; PULL (1 = pull too, default 0); ATTEMPTS (default 8); BACKOFF_SECONDS (first wait,
# doubled each time up to 60 s, default 2). HTTP(S)_PROXY / NO_PROXY (secret environment) are what skopeo goes
# through; dockerd pulls through its own daemon.json "proxies".
set -euo pipefail
: "${IMAGE:?}"
PULL=${PULL:-0}
ATTEMPTS=${ATTEMPTS:-8}
BACKOFF_SECONDS=${BACKOFF_SECONDS:-2}
export RETRY_NAME=image-digest
host=$(hostname)
warn() { echo "image-digest[$host]: $*" >&2; }
die() { echo "image-digest[$host]: $*" >&2; exit 1; }
if [ "$PULL" = 1 ] && ! declare -F retry >/dev/null; then die "retry.sh is not loaded (scriptWithEnv([\"retry\", \"image-digest\"], …))"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The last line of a failed step's stderr (what the final message quotes).
last_error() { tr '\r' '\n' <"$1" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 || true; }

repo=${IMAGE%@*}
case "${repo##*/}" in *:*) repo=${repo%:*} ;; esac

# skopeo inspect, its stderr kept for the final message and passed on (retry quotes its last line).
inspect() {
  skopeo inspect --retry-times 2 "${tls[@]}" --format '{{.Digest}}' "docker://$IMAGE" 2>"$work/inspect.err" ||
    { local s=$?; cat "$work/inspect.err" >&2; return "$s"; }
}

# docker pull with retries, unless the reference is present already.
pull() { docker pull -q "$1" >/dev/null 2>"$work/pull.err" || { local s=$?; cat "$work/pull.err" >&2; return "$s"; }; }
pull_with_retries() {
  if docker image inspect "$1" >/dev/null 2>&1; then
    echo "image-digest: $1 already present" >&2
    return 0
  fi
  retry "$ATTEMPTS" "$BACKOFF_SECONDS" "docker pull $1" -- pull "$1" ||
    die "docker pull $1 failed $ATTEMPTS times (last: $(last_error "$work/pull.err")); dockerd pulls through its daemon.json proxies and insecure-registries"
  echo "image-digest: pulled $1" >&2
}

digest=""
case "$IMAGE" in
  *@sha256:*) digest=${IMAGE##*@} ;;
  *)
    registry=${IMAGE%%/*}
    tls=(--tls-verify=true)
    # The registries the host's dockerd pulls from over plain HTTP (daemon.json insecure-registries).
    for insecure in $(docker info --format '{{range .RegistryConfig.IndexConfigs}}{{if not .Secure}}{{.Name}} {{end}}{{end}}' 2>/dev/null); do
      [ "$insecure" = "$registry" ] && tls=(--tls-verify=false)
    done
    if ! command -v skopeo >/dev/null; then
      echo "skopeo is not installed" >"$work/inspect.err"
    elif [ "$PULL" = 1 ]; then
      digest=$(retry "$ATTEMPTS" "$BACKOFF_SECONDS" "skopeo inspect $IMAGE" -- inspect) || digest=""
    else
      digest=$(inspect 2>/dev/null) || digest=""
    fi
    if [ -z "$digest" ]; then
      reason=$(last_error "$work/inspect.err")
      pulled=$(docker image inspect --format '{{json .RepoDigests}}' "$IMAGE" 2>/dev/null | jq -r --arg repo "$repo" '[.[] | select(startswith($repo + "@"))][0] // empty' || true)
      if [ -n "$pulled" ]; then
        warn "cannot ask the registry for $IMAGE ($reason); keeping the pulled digest ${pulled##*@}"
        digest=${pulled##*@}
      elif [ "$PULL" = 1 ] && command -v skopeo >/dev/null; then
        die "cannot resolve $IMAGE to a digest: registry $registry failed $ATTEMPTS times (last: ${reason:-no error text}); is it up, and does the host's proxy reach it?"
      else
        warn "cannot resolve $IMAGE to a digest ($reason), and it is not pulled yet"
        [ "$PULL" != 1 ] || pull_with_retries "$IMAGE"
        echo "digest=unresolved"
        exit 0
      fi
    fi
    ;;
esac

# The build the digest names, into dockerd (the Docker provider then finds it present).
[ "$PULL" != 1 ] || pull_with_retries "$repo@$digest"
echo "digest=$digest"

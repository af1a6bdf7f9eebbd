#!/usr/bin/env bash
# The build an image reference stands for on this host, as "image=<ref>" then "digest=sha256:…".
# With PULL=1 (create, update): a pinned reference (name@sha256:…) is its own digest; a tag is resolved in
# its registry the first time only, and that digest is kept (PREVIOUS_STDOUT, what this step printed last)
# until the reference itself changes — a tag that moved upstream changes nothing on the host — unless
# FOLLOW_TAGS=1. Digests are read with a HEAD (free on Docker Hub, which counts manifest GETs as pulls); the
# only counted pull is dockerd's own, once per build. The build is pulled into dockerd at that digest (repo@sha256:…), each step retried with
# backoff (retry.sh, prepended by scriptWithEnv(["retry", "image-digest"], …)), so the Docker provider's
# own pull, which never retries, finds it present. A registry that keeps failing (429, 5xx, a proxy
# resetting connections) ends in one message naming the host, the image and the last error.
# With PULL=0 (the check, on every refresh): "digest=<kept digest>" while the host has that build,
# "digest=<kept digest> missing" when it is gone (drift: the next up pulls it again), and for a tag an
# "info: upstream=sha256:…" line with what the registry says now (never drift), and when it differs a
# "warning:" line on stderr naming the tag and both digests (the resource's warning in preview --refresh). With FOLLOW_TAGS=1 the check prints the registry's digest instead, so a moved tag is drift.
# When the registry cannot be asked (down, refusing), the digest of the image already pulled stands in,
# so an unreachable registry is never mistaken for a moved tag.
# Credentials and mirrors (REGISTRY_AUTH_JSON, REGISTRIES_CONF in the secret environment) are written for this
# step only (registry.sh, prepended: scriptWithEnv(["retry", "registry", "image-digest"], …)); docker pull
# reads the credentials through DOCKER_CONFIG.
# Inputs (env): IMAGE; PULL (1 = pull too, default 0); FOLLOW_TAGS (default 0); WHAT (who keeps the build, for
# the warning); PREVIOUS_STDOUT (set by
# CheckedCommand); ATTEMPTS (default 8); BACKOFF_SECONDS (first wait, doubled each time up to 60 s,
# default 2). HTTP(S)_PROXY / NO_PROXY (secret environment) are what the HEAD goes through; dockerd pulls
# through its own daemon.json "proxies".
set -euo pipefail
: "${IMAGE:?}"
PULL=${PULL:-0}
FOLLOW_TAGS=${FOLLOW_TAGS:-0}
PREVIOUS_STDOUT=${PREVIOUS_STDOUT:-}
ATTEMPTS=${ATTEMPTS:-8}
BACKOFF_SECONDS=${BACKOFF_SECONDS:-2}
export RETRY_NAME=image-digest
host=$(hostname)
warn() { echo "image-digest[$host]: $*" >&2; }
die() { echo "image-digest[$host]: $*" >&2; exit 1; }
if [ "$PULL" = 1 ] && ! declare -F retry >/dev/null; then die "retry.sh is not loaded (scriptWithEnv([\"retry\", \"registry\", \"image-digest\"], …))"; fi
declare -F registry_head >/dev/null || die "registry.sh is not loaded (scriptWithEnv([\"registry\", \"image-digest\"], …))"
work=$(mktemp -d)
# Credentials and mirrors for this step only (REGISTRY_AUTH_JSON, REGISTRIES_CONF: registry.sh).
registry_setup || die "cannot set up the registry credentials"
trap 'registry_cleanup; rm -rf "$work"' EXIT
# The last line of a failed step's stderr (what the final message quotes).
last_error() { tr '\r' '\n' <"$1" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 || true; }

repo=${IMAGE%@*}
case "${repo##*/}" in *:*) repo=${repo%:*} ;; esac

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

# The digest this step settled on before, for this very reference (older releases printed no image= line).
kept=""
previous_image=$(printf '%s\n' "$PREVIOUS_STDOUT" | sed -n 's/^image=//p' | tail -n 1)
if [ -z "$previous_image" ] || [ "$previous_image" = "$IMAGE" ]; then
  kept=$(printf '%s\n' "$PREVIOUS_STDOUT" | sed -n 's/^digest=\(sha256:[0-9a-f]\{64\}\)$/\1/p' | tail -n 1)
fi

# The registry's digest for the tag now (empty when it cannot be asked), read with a HEAD: Docker Hub
# counts a manifest GET as a pull, a HEAD is free (registry.sh). Its error in $work/inspect.err.
registry=$(registry_of "$IMAGE")
upstream_digest() {
  # The registries the host's dockerd pulls from over plain HTTP (daemon.json insecure-registries).
  REGISTRY_INSECURE=",$(docker info --format '{{range .RegistryConfig.IndexConfigs}}{{if not .Secure}}{{.Name}},{{end}}{{end}}' 2>/dev/null || true)"
  export REGISTRY_INSECURE
  head_reporting() { registry_head "$IMAGE" || { local s=$?; echo "$REGISTRY_ERROR" >&2; return "$s"; }; }
  if [ "$PULL" = 1 ]; then
    retry "$ATTEMPTS" "$BACKOFF_SECONDS" "HEAD $IMAGE" -- head_reporting || printf '%s\n' "$RETRY_LAST_ERROR" >"$work/inspect.err"
  else
    head_reporting 2>"$work/inspect.err" || true
  fi
  printf '%s' "$REGISTRY_DIGEST"
}

if [ "$PULL" != 1 ] && [ "$FOLLOW_TAGS" != 1 ] && [ -n "$kept" ]; then
  # The check: what this host has, and (for a tag) what upstream says, which is no drift.
  state="digest=$kept"
  docker image inspect "$repo@$kept" >/dev/null 2>&1 || state="$state missing"
  echo "$state"
  case "$IMAGE" in
    *@sha256:*) ;;
    *)
      now=$(upstream_digest)
      if [ -n "$now" ]; then echo "info: upstream=$now"; else echo "info: upstream=unknown ($(last_error "$work/inspect.err"))"; fi
      if [ -n "$now" ] && [ "$now" != "$kept" ]; then
        # Shown by `preview --refresh` / `up --refresh` as the resource's warning (CheckedCommand).
        echo "image-digest: warning: $IMAGE has moved upstream: the registry now names $now, ${WHAT:-this host} keeps running $kept. Nothing changes until you pin the new build ($repo@$now) in the stack's config, or set reprobench:followImageTags: true to follow tags." >&2
      fi
      ;;
  esac
  exit 0
fi

digest=""
case "$IMAGE" in
  *@sha256:*) digest=${IMAGE##*@} ;;
  *)
    if [ "$PULL" = 1 ] && [ "$FOLLOW_TAGS" != 1 ] && [ -n "$kept" ]; then
      # Kept: a tag that moved upstream since is no reason to change what the host runs.
      pull_with_retries "$repo@$kept"
      echo "image=$IMAGE"
      echo "digest=$kept"
      exit 0
    fi
    digest=$(upstream_digest)
    if [ -z "$digest" ]; then
      reason=$(last_error "$work/inspect.err")
      pulled=$(docker image inspect --format '{{json .RepoDigests}}' "$IMAGE" 2>/dev/null | jq -r --arg repo "$repo" '[.[] | select(startswith($repo + "@"))][0] // empty' || true)
      if [ -n "$pulled" ]; then
        warn "cannot ask the registry for $IMAGE ($reason); keeping the pulled digest ${pulled##*@}"
        digest=${pulled##*@}
      elif [ "$PULL" = 1 ]; then
        case "$reason" in
          *" 429 "* | *"401 "*) die "cannot resolve $IMAGE to a digest: registry $registry refused ($reason); set credentials for $registry (reprobench:registries[].username and the secret registryPasswords) or a mirror" ;;
        esac
        die "cannot resolve $IMAGE to a digest: registry $registry failed $ATTEMPTS times (last: ${reason:-no error text}); is it up, and does the host's proxy reach it?"
      else
        warn "cannot resolve $IMAGE to a digest ($reason), and it is not pulled yet"
        [ "$PULL" != 1 ] || pull_with_retries "$IMAGE"
        [ "$PULL" != 1 ] || echo "image=$IMAGE"
        echo "digest=unresolved"
        exit 0
      fi
    fi
    ;;
esac

# The build the digest names, into dockerd (the Docker provider then finds it present).
[ "$PULL" != 1 ] || pull_with_retries "$repo@$digest"
[ "$PULL" != 1 ] || echo "image=$IMAGE"
echo "digest=$digest"

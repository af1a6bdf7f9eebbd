#!/usr/bin/env bash
# `reprobench check`: the task images' registries, seen from the runner host, changing nothing. Which of
# IMAGES the runner's Docker does not have yet (the images a pre-pull still pulls, as task-images-check.sh
# counts them), and for each registry they come from, except those pulled through a mirror, one HEAD of the
# first such image (registry.sh registry_head: free on Docker Hub, with this stack's credentials when it has
# them), for the status and the pull quota the registry announces (ratelimit-limit / ratelimit-remaining).
# No manifest GET, no pull. Prints one JSON line (components/preflight/runner.ts parseRegistryFacts):
#   {"docker":true,"missing":["<ref>",…],"registries":[{"registry","image","status","limit","remaining",
#    "window","error","credentials"}]}
# Inputs (env):
#   IMAGES               newline-separated image references the run pulls
#   HEAD_PRESENT         1: HEAD a registry also when the runner has all of its images (default 0)
#   INSECURE_REGISTRIES  comma-separated host[:port] list (optional)
#   DAEMON_JSON          daemon config read for insecure-registries (default /etc/docker/daemon.json)
#   MIRRORED_REGISTRIES  comma-separated registries pulled through a mirror (their quota is the mirror's)
#   REGISTRY_AUTH_JSON   see registry.sh (secret; optional)
#   HTTP(S)_PROXY, NO_PROXY and lower case: the runner's hosts[].proxy (secret; optional)
# Run with retry.sh and registry.sh prepended (scriptWithEnv(["retry", "registry", "check-registry"], env)).
set -euo pipefail
: "${IMAGES:?}"
HEAD_PRESENT=${HEAD_PRESENT:-0} INSECURE_REGISTRIES=${INSECURE_REGISTRIES:-} MIRRORED_REGISTRIES=${MIRRORED_REGISTRIES:-}
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
die() { echo "check-registry: $*" >&2; exit 1; }
declare -F registry_head >/dev/null || die "registry.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"check-registry\"], env))"
command -v jq >/dev/null || die "'jq' is required on this host"
command -v curl >/dev/null || die "'curl' is required on this host"

REGISTRY_INSECURE=",$INSECURE_REGISTRIES,"
if [ -f "$DAEMON_JSON" ]; then
  REGISTRY_INSECURE="$REGISTRY_INSECURE$(jq -r '(."insecure-registries" // []) | join(",")' "$DAEMON_JSON" 2>/dev/null || true),"
fi
export REGISTRY_INSECURE
registry_setup || die "cannot set up the registry credentials"
work=$(mktemp -d "${TMPDIR:-/tmp}/check-registry.XXXXXX")
trap 'registry_cleanup; rm -rf "$work"' EXIT

docker=true
command -v docker >/dev/null || docker=false
: >"$work/missing"
: >"$work/all"
while IFS= read -r image; do
  [ -n "$image" ] || continue
  printf '%s %s\n' "$(registry_of "$image")" "$image" >>"$work/all"
  if [ "$docker" = false ] || ! docker image inspect "$image" >/dev/null 2>&1; then
    printf '%s %s\n' "$(registry_of "$image")" "$image" >>"$work/missing"
  fi
done < <(printf '%s\n' "$IMAGES" | sed '/^[[:space:]]*$/d' | sort -u)

: >"$work/registries"
while IFS= read -r registry; do
  case ",$MIRRORED_REGISTRIES," in *",$registry,"*) continue ;; esac
  image=$(awk -v r="$registry" '$1 == r { print $2; exit }' "$work/missing")
  if [ -z "$image" ]; then
    [ "$HEAD_PRESENT" = 1 ] || continue
    image=$(awk -v r="$registry" '$1 == r { print $2; exit }' "$work/all")
  fi
  registry_head "$image" || true
  credentials=false
  if registry_has_auth "$registry"; then credentials=true; fi
  jq -cn --arg registry "$registry" --arg image "$image" --arg status "$REGISTRY_STATUS" --arg limit "$REGISTRY_LIMIT" \
    --arg remaining "$REGISTRY_REMAINING" --arg window "$REGISTRY_WINDOW" --arg error "$REGISTRY_ERROR" --argjson credentials "$credentials" \
    '{registry: $registry, image: $image, status: $status, limit: $limit, remaining: $remaining, window: $window, error: $error, credentials: $credentials}' >>"$work/registries"
done < <(cut -d' ' -f1 "$work/all" | sort -u)

cut -d' ' -f2- "$work/missing" | jq -R . >"$work/missing.json"
jq -cn --argjson docker "$docker" --slurpfile missing "$work/missing.json" --slurpfile registries "$work/registries" \
  '{docker: $docker, missing: $missing, registries: $registries}'

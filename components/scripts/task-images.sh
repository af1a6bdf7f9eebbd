#!/usr/bin/env bash
# Pre-pull every task image into the runner's Docker (seed 000 "拉取 89 个 task images"), CONCURRENCY at a
# time, spending at most one counted registry pull per image: images already present are skipped; for the
# rest the tag's digest is read with a HEAD (free on Docker Hub, and it carries the registry's
# ratelimit-limit / ratelimit-remaining), then exactly that build is copied with skopeo (linux/amd64) into
# the daemon through an OCI layout (a retry refetches only missing blobs), and must report Architecture
# amd64. The copy is the one manifest GET a registry counts.
# The pull quota: when a registry announces a limit, no more copies start than it has left. When it runs
# out, a progress line says so; the step waits for the window to reopen when TIME_BUDGET_SECONDS allows it,
# and otherwise fails saying what the limit is, how many images are left, when the window reopens, and to
# set credentials or a mirror. A 429 (TOOMANYREQUESTS) is never retried blindly: it is the quota.
# Credentials (REGISTRY_AUTH_JSON) and mirrors (REGISTRIES_CONF) come from the secret environment and are
# written for this step only (registry.sh). Registries in the daemon's "insecure-registries" (or
# INSECURE_REGISTRIES) are read over plain HTTP. skopeo and curl go through HTTP(S)_PROXY / NO_PROXY.
# Each digest is recorded under DIGESTS_DIR, so the run manifest names exactly the build that ran. Ends with
# the manual's "N/N images ready" and fails naming every missing image. Last stdout line:
# {"ready":N,"total":N,"images":{"<ref>":"<repo>@sha256:… (or the local image id, for an image no pull recorded)"}}.
# Inputs (env):
#   IMAGES               newline-separated image references
#   CONCURRENCY          parallel pulls (xargs -P)
#   ATTEMPTS             attempts per image
#   INSECURE_REGISTRIES  comma-separated host[:port] list (optional)
#   DAEMON_JSON          daemon config read for insecure-registries (default /etc/docker/daemon.json)
#   BACKOFF_SECONDS      first retry delay, doubled each time up to 60 s (default 5)
#   DIGESTS_DIR          where each pulled image's registry digest is kept (default /var/lib/reprobench/task-image-digests)
#   TIME_BUDGET_SECONDS  how long this step may wait for a registry's pull window (default 0: never wait)
#   MIRRORED_REGISTRIES  comma-separated registries pulled through a mirror (REGISTRIES_CONF): their quota is the mirror's
#   REGISTRY_AUTH_JSON, REGISTRIES_CONF  see registry.sh (secret environment; optional)
set -euo pipefail
: "${IMAGES:?}" "${CONCURRENCY:?}" "${ATTEMPTS:?}"
INSECURE_REGISTRIES=${INSECURE_REGISTRIES:-}
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
BACKOFF_SECONDS=${BACKOFF_SECONDS:-5}
DIGESTS_DIR=${DIGESTS_DIR:-/var/lib/reprobench/task-image-digests}
TIME_BUDGET_SECONDS=${TIME_BUDGET_SECONDS:-0}
MIRRORED_REGISTRIES=${MIRRORED_REGISTRIES:-}
started=$(date +%s)
die() { echo "task-images: $*" >&2; exit 1; }
# Run with retry.sh and registry.sh prepended (scriptWithEnv(["retry", "registry", "task-images"], env)); run
# from its file, it sources them beside itself.
here=$(dirname "${BASH_SOURCE[0]:-.}")
for lib in retry registry; do
  fn=$([ "$lib" = retry ] && echo retry || echo registry_head)
  if ! declare -F "$fn" >/dev/null; then
    # shellcheck source=/dev/null
    . "$here/$lib.sh" 2>/dev/null || die "$lib.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"task-images\"], env))"
  fi
done
for tool in docker skopeo jq xargs flock curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

REGISTRY_INSECURE=",$INSECURE_REGISTRIES,"
if [ -f "$DAEMON_JSON" ]; then
  REGISTRY_INSECURE="$REGISTRY_INSECURE$(jq -r '(."insecure-registries" // []) | join(",")' "$DAEMON_JSON"),"
fi
export REGISTRY_INSECURE
mkdir -p "$DIGESTS_DIR"
work=$(mktemp -d)
registry_setup || die "cannot set up the registry credentials"
trap 'registry_cleanup; rm -rf "$work"' EXIT
mkdir -p "$work/quota" "$work/digest"
: >"$work/lock"
export work ATTEMPTS BACKOFF_SECONDS DIGESTS_DIR

key_of() { printf %s "$1" | sha256sum | cut -c1-32; }
# The file that keeps an image reference's registry digest.
digest_file() { printf '%s/%s' "$DIGESTS_DIR" "$(key_of "$1")"; }
repo_of() { local r=${1%@*}; case "${r##*/}" in *:*) r=${r%:*} ;; esac; printf %s "$r"; }
export -f key_of digest_file repo_of

list=$(mktemp -p "$work")
printf '%s\n' "$IMAGES" | sed '/^[[:space:]]*$/d' | sort -u >"$list"
total=$(wc -l <"$list")
[ "$total" -gt 0 ] || die "no images to pull"
export total

# One "progress: N/T" line per image that is done (pulled, cached or given up), counted under a lock.
report_done() {
  # shellcheck disable=SC2016 # expanded by the locked bash
  flock "$work/lock" bash -c 'n=$(($(cat "$1" 2>/dev/null || echo 0) + 1)); echo "$n" >"$1"
    printf "task-images: progress: %d/%d images ready or tried\n" "$n" "$2" >&2' _ "$work/count" "$total"
}
export -f report_done
export RETRY_NAME=task-images
export -f retry

# A registry's quota as this step knows it, in $work/quota/<key>: "limit window remaining" ("-" unknown),
# written from the headers of the last HEAD; copies started since are subtracted from "remaining".
# quota_first/<key> holds when this step made its first counted pull there (the window reopens W after).
quota_record() { # registry limit window remaining
  printf '%s %s %s\n' "${2:--}" "${3:--}" "${4:--}" >"$work/quota/$(key_of "$1")"
  printf '%s\n' "$1" >"$work/quota/$(key_of "$1").name"
}
quota_read() { cat "$work/quota/$(key_of "$1")" 2>/dev/null || echo "- - -"; }
# Takes one pull from the registry's quota: 0 = go ahead, 1 = none left (the image waits for the window).
quota_take() {
  local registry=$1 key
  key=$(key_of "$registry")
  # shellcheck disable=SC2016 # expanded by the locked bash
  flock "$work/lock" bash -c '
    f=$1 first=$2
    read -r limit window remaining <"$f" 2>/dev/null || { limit=- window=- remaining=-; }
    if [ "${remaining:--}" != - ]; then
      [ "$remaining" -gt 0 ] || exit 1
      remaining=$((remaining - 1))
      printf "%s %s %s\n" "$limit" "$window" "$remaining" >"$f"
    fi
    [ -s "$first" ] || date +%s >"$first"' _ "$work/quota/$key" "$work/quota/$key.first"
}
quota_exhausted() { # registry: the registry answered 429
  local f
  f="$work/quota/$(key_of "$1")"
  # shellcheck disable=SC2016 # expanded by the locked bash
  flock "$work/lock" bash -c 'read -r l w _ <"$1" 2>/dev/null || { l=- w=-; }; printf "%s %s 0\n" "$l" "$w" >"$1"' _ "$f"
}
# An image that waits for its registry's window.
defer_image() {
  # shellcheck disable=SC2016 # expanded by the locked bash
  flock "$work/lock" bash -c 'printf "%s\n" "$1" >>"$2"' _ "$1" "$work/deferred"
}
export -f quota_record quota_read quota_take quota_exhausted defer_image registry_of
export RETRY_GIVE_UP

# skopeo, with a 429 turned into "do not retry" (97) so that retry.sh gives up at once.
skopeo_copy() {
  local status=0
  # skopeo 1.18 reads no CONTAINERS_REGISTRIES_CONF: the mirrors' file is passed as its global flag.
  skopeo ${CONTAINERS_REGISTRIES_CONF:+--registries-conf "$CONTAINERS_REGISTRIES_CONF"} copy --quiet "$@" 2>"$work/skopeo.$$.err" >/dev/null || status=$?
  cat "$work/skopeo.$$.err" >&2
  if [ "$status" -ne 0 ] && grep -qiE 'toomanyrequests|429 Too Many Requests|rate limit' "$work/skopeo.$$.err"; then
    rm -f "$work/skopeo.$$.err"
    return "$RETRY_GIVE_UP"
  fi
  rm -f "$work/skopeo.$$.err"
  return "$status"
}
export -f skopeo_copy

# The tag's digest by HEAD (free), retried on transient failures; records the registry's quota.
resolve_one() {
  local image=$1 registry status=0
  registry=$(registry_of "$image")
  case "$image" in
    *@sha256:*) printf '%s\n' "${image##*@}" >"$work/digest/$(key_of "$image")"; return 0 ;;
  esac
  retry "$ATTEMPTS" "$BACKOFF_SECONDS" "HEAD $image" -- registry_head_reporting "$image" || status=$?
  # A mirrored registry's images come through the mirror, which spends the upstream's quota on its own.
  case ",$MIRRORED_REGISTRIES," in *",$registry,"*) ;; *) [ -z "$REGISTRY_LIMIT$REGISTRY_REMAINING" ] || quota_record "$registry" "$REGISTRY_LIMIT" "$REGISTRY_WINDOW" "$REGISTRY_REMAINING" ;; esac
  if [ "$status" -eq 0 ]; then
    printf '%s\n' "$REGISTRY_DIGEST" >"$work/digest/$(key_of "$image")"
  else
    printf '%s\n' "$REGISTRY_ERROR" >"$work/digest/$(key_of "$image").error"
  fi
}
registry_head_reporting() {
  local status=0
  registry_head "$1" || status=$?
  [ "$status" -eq 0 ] || echo "$REGISTRY_ERROR" >&2
  return "$status"
}

# One image whose digest is known: take a pull from its registry's quota (or defer it), copy it at that
# digest, load it, check the architecture. Deferred images are listed in $work/deferred.
pull_one() {
  local image=$1 registry digest tls=() layout status=0
  registry=$(registry_of "$image")
  digest=$(cat "$work/digest/$(key_of "$image")" 2>/dev/null || true)
  if [ -z "$digest" ]; then
    printf 'task-images: FAILED %s: cannot read its digest (registry %s): %s\n' "$image" "$registry" "$(cat "$work/digest/$(key_of "$image").error" 2>/dev/null || echo unknown)" >&2
    report_done
    return 0
  fi
  if ! quota_take "$registry"; then
    defer_image "$image"
    return 0
  fi
  case "$REGISTRY_INSECURE" in *",$registry,"*) tls=(--src-tls-verify=false) ;; esac
  layout="$DIGESTS_DIR/.oci-$(printf %s "$image" | sha256sum | cut -c1-16)"
  # skopeo retries some failed requests itself (--retry-times: a reset connection, not a 502 or a 429).
  retry "$ATTEMPTS" "$BACKOFF_SECONDS" "skopeo copy $(repo_of "$image")@$digest" -- skopeo_copy --override-os linux --override-arch amd64 "${tls[@]}" --retry-times 3 "docker://$(repo_of "$image")@$digest" "oci:$layout:image" || status=$?
  if [ "$status" -eq "$RETRY_GIVE_UP" ]; then # skopeo_copy saw a 429 (RETRY_LAST_ERROR is cut at 300 characters, often before the word)
    # The registry counts differently than it announced (or someone else pulled meanwhile): wait for it.
    quota_exhausted "$registry"
    defer_image "$image"
    rm -rf "$layout"
    return 0
  fi
  if [ "$status" -eq 0 ] && retry "$ATTEMPTS" "$BACKOFF_SECONDS" "loading $image into docker" -- skopeo copy --quiet "oci:$layout:image" "docker-daemon:$image" >/dev/null; then
    printf '%s\n' "$digest" >"$(digest_file "$image")"
    printf 'task-images: pulled %s at %s\n' "$image" "$digest" >&2
  else
    printf 'task-images: FAILED %s after %d attempts (registry %s, through the host proxy when one is set): %s\n' "$image" "$ATTEMPTS" "$registry" "$RETRY_LAST_ERROR" >&2
  fi
  rm -rf "$layout"
  if docker image inspect "$image" >/dev/null 2>&1; then
    arch=$(docker image inspect --format '{{.Architecture}}' "$image")
    if [ "$arch" != amd64 ]; then
      printf 'task-images: %s has architecture %s, expected amd64; removing it\n' "$image" "$arch" >&2
      docker image rm "$image" >/dev/null 2>&1 || true
    fi
  fi
  report_done
}
export -f pull_one

# "anonymous" or "as <user>": whose quota a registry counts.
whose() { if registry_has_auth "$1"; then echo "with this stack's credentials"; else echo anonymous; fi; }
utc() { date -u -d "@$1" '+%H:%M:%S UTC'; }

echo "task-images: $total images, $CONCURRENCY at a time" >&2
pending=$(mktemp -p "$work")
while IFS= read -r image; do
  if docker image inspect "$image" >/dev/null 2>&1; then
    printf 'task-images: cached %s\n' "$image" >&2
    report_done
  else
    printf '%s\n' "$image" >>"$pending"
  fi
done <"$list"

# Digests first, by HEAD: no pull is counted, and every registry's quota is known before the first copy.
while IFS= read -r image; do resolve_one "$image"; done <"$pending"
for f in "$work"/quota/*.name; do
  [ -e "$f" ] || continue
  registry=$(cat "$f")
  read -r limit window remaining <<<"$(quota_read "$registry")"
  need=$(while IFS= read -r image; do [ "$(registry_of "$image")" != "$registry" ] || echo; done <"$pending" | wc -l)
  echo "task-images: progress: registry $registry allows $remaining more pulls now (limit $limit per ${window}s, $(whose "$registry")); $need images to pull from it" >&2
  if [ "$remaining" != - ] && [ "$need" -gt "$remaining" ] && [ "$limit" != - ] && [ "$window" != - ] && [ "$limit" -gt 0 ]; then
    windows=$(((need - remaining + limit - 1) / limit))
    wait_needed=$((windows * window))
    if [ "$wait_needed" -gt "$TIME_BUDGET_SECONDS" ]; then
      echo "task-images: warning: the $need images from $registry need $windows more pull window(s) of ${window}s ($wait_needed s) beyond the $remaining pulls left, more than this step may wait (${TIME_BUDGET_SECONDS}s); set credentials for $registry (reprobench:registries) or a mirror" >&2
    fi
  fi
done

# Passes over the pending images: each pass pulls what the quotas allow; between passes the step waits for
# the earliest window that reopens, as long as the time budget allows.
passes=0
while [ -s "$pending" ]; do
  passes=$((passes + 1))
  : >"$work/deferred"
  # shellcheck disable=SC2016 # $1 is expanded by the child bash, not here
  xargs -d '\n' -P "$CONCURRENCY" -I{} bash -c 'pull_one "$1"' _ {} <"$pending"
  sort -u "$work/deferred" >"$pending"
  [ -s "$pending" ] || break
  left=$(wc -l <"$pending")
  now=$(date +%s)
  # When the window reopens: W after this step's first counted pull there (or now, when it made none).
  reopen=0 why=''
  while IFS= read -r registry; do
    read -r limit window _ <<<"$(quota_read "$registry")"
    [ "$window" != - ] || window=3600
    first=$(cat "$work/quota/$(key_of "$registry").first" 2>/dev/null || echo "$now")
    # 2 s after W: the registry stamped that pull a moment after this step took it from the quota, and a
    # pass that wakes too early pulls nothing and waits again (measured: 15 waits instead of 8 for 89 images).
    at=$((first + window + 2))
    [ "$at" -gt "$now" ] || at=$((now + 1))
    if [ "$reopen" -eq 0 ] || [ "$at" -lt "$reopen" ]; then reopen=$at; fi
    n=$(while IFS= read -r image; do [ "$(registry_of "$image")" != "$registry" ] || echo; done <"$pending" | wc -l)
    why="$why${why:+; }registry $registry's pull limit is used up ($(whose "$registry"): ${limit} pulls per ${window}s): $n images left, the window reopens by $(utc "$at")"
  done < <(while IFS= read -r image; do registry_of "$image"; echo; done <"$pending" | sed '/^$/d' | sort -u)
  deadline=$((started + TIME_BUDGET_SECONDS))
  if [ "$reopen" -gt "$deadline" ]; then
    while IFS= read -r image; do printf 'task-images: not pulled (quota) %s\n' "$image" >&2; done <"$pending"
    die "$why; that is after this step's time budget (${TIME_BUDGET_SECONDS}s, until $(utc "$deadline")), so $left of $total images are not pulled. Set credentials for the registry (reprobench:registries[].username and the secret reprobench:registryPasswords) or a pull-through mirror (reprobench:registries[].mirror), then run up again"
  fi
  echo "task-images: progress: $why; waiting until then ($left images left, pass $passes)" >&2
  sleep $((reopen - now))
  # The quota as the registry states it now (a HEAD is free).
  while IFS= read -r registry; do
    image=$(while IFS= read -r i; do [ "$(registry_of "$i")" != "$registry" ] || { echo "$i"; break; }; done <"$pending")
    rm -f "$work/quota/$(key_of "$registry").first"
    if retry "$ATTEMPTS" "$BACKOFF_SECONDS" "HEAD $image" -- registry_head_reporting "$image"; then quota_record "$registry" "$REGISTRY_LIMIT" "$REGISTRY_WINDOW" "$REGISTRY_REMAINING"; fi
  done < <(while IFS= read -r image; do registry_of "$image"; echo; done <"$pending" | sed '/^$/d' | sort -u)
done

ready=0
missing=()
ids='{}'
while IFS= read -r image; do
  if id=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null) &&
    [ "$(docker image inspect --format '{{.Architecture}}' "$image")" = amd64 ]; then
    ready=$((ready + 1))
    # The registry digest this image was pulled at (recorded by pull_one, or docker's own RepoDigests);
    # the local id for an image no pull recorded.
    repo=$(repo_of "$image")
    digest=$(cat "$(digest_file "$image")" 2>/dev/null || true)
    if [ -n "$digest" ]; then
      digest="$repo@$digest"
    else
      digest=$(docker image inspect --format '{{json .RepoDigests}}' "$image" | jq -r --arg repo "$repo" '[.[] | select(startswith($repo + "@"))][0] // empty')
    fi
    ids=$(jq -c --arg k "$image" --arg v "${digest:-$id}" '. + {($k): $v}' <<<"$ids")
  else
    missing+=("$image")
  fi
done <"$list"
echo "task-images: $ready/$total images ready" >&2
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'task-images: missing: %s\n' "${missing[@]}" >&2
  exit 1
fi
jq -cn --argjson ready "$ready" --argjson total "$total" --argjson images "$ids" '{ready: $ready, total: $total, images: $images}'

#!/usr/bin/env bash
# Pre-pull every task image into the runner's Docker (seed 000 "拉取 89 个 task images"), CONCURRENCY at a
# time: images already present are skipped; the rest are copied with skopeo (linux/amd64) into the daemon
# through an OCI layout (a retry refetches only missing blobs), each step retried ATTEMPTS times with
# exponential backoff, and must report Architecture amd64.
# Registries in the daemon's "insecure-registries" (or INSECURE_REGISTRIES) are read over plain HTTP.
# skopeo goes through HTTP(S)_PROXY / NO_PROXY when the CheckedCommand's (secret) environment sets them.
# Each tag is resolved to its registry digest first and that digest is what is copied (and recorded under
# DIGESTS_DIR), so the run manifest names exactly the build that ran. Ends with the manual's "N/N images
# ready" and fails naming every missing image. Last stdout line:
# {"ready":N,"total":N,"images":{"<ref>":"<repo>@sha256:… (or the local image id, for an image no pull recorded)"}}.
# Inputs (env):
#   IMAGES               newline-separated image references
#   CONCURRENCY          parallel pulls (xargs -P)
#   ATTEMPTS             attempts per image
#   INSECURE_REGISTRIES  comma-separated host[:port] list (optional)
#   DAEMON_JSON          daemon config read for insecure-registries (default /etc/docker/daemon.json)
#   BACKOFF_SECONDS      first retry delay, doubled each time up to 60 s (default 5)
#   DIGESTS_DIR          where each pulled image's registry digest is kept (default /var/lib/reprobench/task-image-digests)
set -euo pipefail
: "${IMAGES:?}" "${CONCURRENCY:?}" "${ATTEMPTS:?}"
INSECURE_REGISTRIES=${INSECURE_REGISTRIES:-}
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
BACKOFF_SECONDS=${BACKOFF_SECONDS:-5}
DIGESTS_DIR=${DIGESTS_DIR:-/var/lib/reprobench/task-image-digests}
die() { echo "task-images: $*" >&2; exit 1; }
# Run with retry.sh prepended (scriptWithEnv(["retry", "task-images"], env)); run from its file, it sources
# retry.sh beside itself.
if ! declare -F retry >/dev/null; then
  # shellcheck source=/dev/null
  . "$(dirname "${BASH_SOURCE[0]:-.}")/retry.sh" 2>/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"task-images\"], env))"
fi
for tool in docker skopeo jq xargs flock; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

insecure=",$INSECURE_REGISTRIES,"
if [ -f "$DAEMON_JSON" ]; then
  insecure="$insecure$(jq -r '(."insecure-registries" // []) | join(",")' "$DAEMON_JSON"),"
fi
mkdir -p "$DIGESTS_DIR"
export insecure ATTEMPTS BACKOFF_SECONDS DIGESTS_DIR

# The file that keeps an image reference's registry digest.
digest_file() { printf '%s/%s' "$DIGESTS_DIR" "$(printf %s "$1" | sha256sum | cut -c1-32)"; }
# The repository of a reference (no tag, no digest; a registry port is not a tag).
repo_of() { local r=${1%@*}; case "${r##*/}" in *:*) r=${r%:*} ;; esac; printf %s "$r"; }
export -f digest_file repo_of

list=$(mktemp)
trap 'rm -f "$list"' EXIT
printf '%s\n' "$IMAGES" | sed '/^[[:space:]]*$/d' | sort -u >"$list"
total=$(wc -l <"$list")
[ "$total" -gt 0 ] || die "no images to pull"
export total

# After each image one "progress: N/T" line, which `pulumi up` shows as it comes
# (components/checked-command.ts). xargs runs pulls in parallel processes: the count and its line are
# updated under a lock, so the lines count up one by one.
done_dir=$(mktemp -d)
trap 'rm -f "$list"; rm -rf "$done_dir"' EXIT
export done_dir
report_done() {
  # shellcheck disable=SC2016 # expanded by the locked bash
  flock "$done_dir/lock" bash -c 'n=$(($(cat "$1" 2>/dev/null || echo 0) + 1)); echo "$n" >"$1"
    printf "task-images: progress: %d/%d images ready or tried\n" "$n" "$2" >&2' _ "$done_dir/count" "$total"
}
export -f report_done

# Each step is retried by retry.sh's retry (progress lines name what was retried); xargs runs pull_one in
# child shells, so the function and its name go to them through the environment.
export RETRY_NAME=task-images
export -f retry

# One image: cached → skip; else resolve its digest and copy it, each step retried on its own, then the
# architecture check. The copy goes through an OCI layout first: a retry after a failed request (a flaky
# proxy fails one connection of many) fetches only the blobs still missing instead of the whole image.
# One line of progress per image (xargs runs several at once, each line is written whole).
pull_one() {
  local image=$1 registry tls=() inspect_tls=() digest='' layout out
  if docker image inspect "$image" >/dev/null 2>&1; then
    printf 'task-images: cached %s\n' "$image" >&2
  else
    registry=${image%%/*}
    # A first component without '.' or ':' is a Docker Hub namespace, not a registry.
    [ "$registry" != "$image" ] && case "$registry" in *.* | *:* | localhost) true ;; *) false ;; esac || registry=docker.io
    if case "$insecure" in *",$registry,"*) true ;; *) false ;; esac; then
      tls=(--src-tls-verify=false)
      inspect_tls=(--tls-verify=false)
    fi
    out=$(mktemp)
    layout="$DIGESTS_DIR/.oci-$(printf %s "$image" | sha256sum | cut -c1-16)"
    # skopeo retries some failed requests itself too (--retry-times: a reset connection, not a 502).
    # The tag's digest for linux/amd64 now, then exactly that build.
    if retry "$ATTEMPTS" "$BACKOFF_SECONDS" "skopeo inspect $image" -- skopeo inspect --override-os linux --override-arch amd64 "${inspect_tls[@]}" --retry-times 3 --format '{{.Digest}}' "docker://$image" >"$out" &&
      digest=$(cat "$out") &&
      retry "$ATTEMPTS" "$BACKOFF_SECONDS" "skopeo copy $(repo_of "$image")@$digest" -- skopeo copy --quiet --override-os linux --override-arch amd64 "${tls[@]}" --retry-times 3 "docker://$(repo_of "$image")@$digest" "oci:$layout:image" >/dev/null &&
      retry "$ATTEMPTS" "$BACKOFF_SECONDS" "loading $image into docker" -- skopeo copy --quiet "oci:$layout:image" "docker-daemon:$image" >/dev/null; then
      printf '%s\n' "$digest" >"$(digest_file "$image")"
      printf 'task-images: pulled %s at %s\n' "$image" "$digest" >&2
    else
      printf 'task-images: FAILED %s after %d attempts (registry %s, through the host proxy when one is set): %s\n' "$image" "$ATTEMPTS" "$registry" "$RETRY_LAST_ERROR" >&2
    fi
    rm -rf "$layout" "$out"
    if ! docker image inspect "$image" >/dev/null 2>&1; then
      report_done
      return 0 # reported by the final count, which names every missing image
    fi
  fi
  arch=$(docker image inspect --format '{{.Architecture}}' "$image")
  if [ "$arch" != amd64 ]; then
    printf 'task-images: %s has architecture %s, expected amd64; removing it\n' "$image" "$arch" >&2
    docker image rm "$image" >/dev/null 2>&1 || true
  fi
  report_done
}
export -f pull_one

echo "task-images: $total images, $CONCURRENCY at a time" >&2
# shellcheck disable=SC2016 # $1 is expanded by the child bash, not here
xargs -d '\n' -P "$CONCURRENCY" -I{} bash -c 'pull_one "$1"' _ {} <"$list"

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

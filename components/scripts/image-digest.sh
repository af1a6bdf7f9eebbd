#!/usr/bin/env bash
# The digest an image reference resolves to in its registry now, as one line "digest=sha256:…": what the
# host's pull should match. A tag moved to another build reads as drift on refresh, so `preview` shows the
# server's image (and container) changing. A pinned reference (name@sha256:…) is its own digest. When the
# registry cannot be asked (down, no skopeo), the digest of the image already pulled stands in, so an
# unreachable registry is never mistaken for a moved tag.
# Inputs (env): IMAGE.
set -euo pipefail
: "${IMAGE:?}"
warn() { echo "image-digest[$(hostname)]: $*" >&2; }
case "$IMAGE" in
  *@sha256:*) echo "digest=${IMAGE##*@}"; exit 0 ;;
esac
registry=${IMAGE%%/*}
tls=(--tls-verify=true)
# The registries the host's dockerd pulls from over plain HTTP (daemon.json insecure-registries).
for insecure in $(docker info --format '{{range .RegistryConfig.IndexConfigs}}{{if not .Secure}}{{.Name}} {{end}}{{end}}' 2>/dev/null); do
  [ "$insecure" = "$registry" ] && tls=(--tls-verify=false)
done
if command -v skopeo >/dev/null && digest=$(skopeo inspect "${tls[@]}" --format '{{.Digest}}' "docker://$IMAGE" 2>/tmp/image-digest.$$.err); then
  rm -f /tmp/image-digest.$$.err
  echo "digest=$digest"
  exit 0
fi
reason=$( [ -f /tmp/image-digest.$$.err ] && tail -n 1 /tmp/image-digest.$$.err || echo "skopeo is not installed")
rm -f /tmp/image-digest.$$.err
repo=$IMAGE
case "${repo##*/}" in *:*) repo=${repo%:*} ;; esac
pulled=$(docker image inspect --format '{{json .RepoDigests}}' "$IMAGE" 2>/dev/null | jq -r --arg repo "$repo" '[.[] | select(startswith($repo + "@"))][0] // empty' || true)
if [ -n "$pulled" ]; then
  warn "cannot ask the registry for $IMAGE ($reason); keeping the pulled digest ${pulled##*@}"
  echo "digest=${pulled##*@}"
  exit 0
fi
warn "cannot resolve $IMAGE to a digest ($reason), and it is not pulled yet"
echo "digest=unresolved"

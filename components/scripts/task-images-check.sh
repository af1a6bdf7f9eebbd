#!/usr/bin/env bash
# "N/M images ready" for the task images: changes when one is removed (e.g. by docker image prune).
# Inputs (env): IMAGES (newline-separated)
set -euo pipefail
: "${IMAGES:?}"
ready=0 total=0
while IFS= read -r image; do
  [ -n "$image" ] || continue
  total=$((total + 1))
  if docker image inspect "$image" >/dev/null 2>&1; then ready=$((ready + 1)); fi
done < <(printf '%s\n' "$IMAGES" | sort -u)
echo "$ready/$total images ready"

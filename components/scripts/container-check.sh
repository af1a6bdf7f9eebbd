#!/usr/bin/env bash
# Prints what a refresh compares: the container's spec label, whether it runs, and its id.
# Inputs (env): CONTAINER_NAME.
set -euo pipefail
: "${CONTAINER_NAME:?}"
docker inspect --format '{{index .Config.Labels "io.reprobench.spec"}} running={{.State.Running}} id={{printf "%.12s" .Id}}' \
  "$CONTAINER_NAME" 2>/dev/null || echo "absent"

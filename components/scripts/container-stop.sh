#!/usr/bin/env bash
# Stops and removes one of our containers, giving it STOP_TIMEOUT seconds to drain. Only containers
# carrying our label are touched.
# Inputs (env): CONTAINER_NAME, STOP_TIMEOUT.
set -euo pipefail
: "${CONTAINER_NAME:?}" "${STOP_TIMEOUT:?}"
label=$(docker inspect --format '{{index .Config.Labels "io.reprobench.managed"}}' "$CONTAINER_NAME" 2>/dev/null || true)
if [ -z "$label" ]; then
  if docker inspect "$CONTAINER_NAME" >/dev/null 2>&1; then
    echo "container $CONTAINER_NAME exists but is not ours (no io.reprobench.managed label); leaving it" >&2
  fi
  exit 0
fi
docker stop --time "$STOP_TIMEOUT" "$CONTAINER_NAME" >/dev/null 2>&1 || true
docker rm -f "$CONTAINER_NAME" >/dev/null 2>&1 || true
echo "stopped and removed $CONTAINER_NAME"

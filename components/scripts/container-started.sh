#!/usr/bin/env bash
# What a refresh compares for a gated container: its id, whether it runs and when it last started. A
# container that died, was restarted (by hand or by its restart policy) or replaced reads as drift, and
# the next `up` runs its gate again.
# Inputs (env): CONTAINER_NAME.
set -euo pipefail
: "${CONTAINER_NAME:?}"
docker inspect --format 'id={{printf "%.12s" .Id}} running={{.State.Running}} started={{.State.StartedAt}}' \
  "$CONTAINER_NAME" 2>/dev/null || echo "absent"

#!/usr/bin/env bash
# Destroy side of host-facts.sh: give the host up, but only when this stack is the one that claimed it.
# Inputs (env): OWNER_JSON, OWNER_FILE.
set -euo pipefail
: "${OWNER_JSON:?}" "${OWNER_FILE:?}"
if [ ! -f "$OWNER_FILE" ]; then exit 0; fi
if jq -e --argjson want "$OWNER_JSON" '.project == $want.project and .stack == $want.stack and .token == $want.token' "$OWNER_FILE" >/dev/null 2>&1; then
  rm -f "$OWNER_FILE"
  echo "host-release[$(hostname)]: released"
else
  echo "host-release[$(hostname)]: owned by stack $(jq -r .stack "$OWNER_FILE" 2>/dev/null || echo '?'), not this one; left as it is" >&2
fi

#!/usr/bin/env bash
# One line describing the Harbor install: changes when the venv is gone, broken or holds another version.
# Inputs (env): VENV, WORK_DIR, HARBOR_VERSION
set -euo pipefail
: "${VENV:?}" "${WORK_DIR:?}" "${HARBOR_VERSION:?}"
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=true
version=$("$VENV/bin/harbor" --version 2>/dev/null | tail -n 1 | tr -d '[:space:]' || true)
wheel=$(cat "$VENV/.reprobench-wheel-sha256" 2>/dev/null || true)
freeze=missing
[ -s "$WORK_DIR/logs/harbor-$HARBOR_VERSION-freeze.txt" ] && freeze=present
echo "harbor=${version:-missing} wheel=${wheel:-unknown} freeze=$freeze"

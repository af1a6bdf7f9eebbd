#!/usr/bin/env bash
# Removes a bridge unit (the proxy bridge or the model bridge). Inputs (env): UNIT.
set -euo pipefail
: "${UNIT:?}"
systemctl disable --now "$UNIT" >/dev/null 2>&1 || true
rm -f "/etc/systemd/system/$UNIT.service"
systemctl daemon-reload
echo "bridge: removed $UNIT"

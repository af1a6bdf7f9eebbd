#!/usr/bin/env bash
# Removes the proxy bridge unit. Inputs (env): UNIT.
set -euo pipefail
: "${UNIT:?}"
systemctl disable --now "$UNIT" >/dev/null 2>&1 || true
rm -f "/etc/systemd/system/$UNIT.service"
systemctl daemon-reload
echo "proxy-bridge: removed $UNIT"

#!/usr/bin/env bash
# What a refresh compares for a bridge unit (proxy or model): unit content hash and whether it is active.
# Inputs (env): UNIT.
set -euo pipefail
: "${UNIT:?}"
f="/etc/systemd/system/$UNIT.service"
if [ -f "$f" ]; then
  echo "$(sha256sum "$f" | cut -c1-16) $(systemctl is-active "$UNIT" 2>/dev/null || true)"
else
  echo absent
fi

#!/usr/bin/env bash
# What a refresh compares for the managed part of daemon.json: the address pools as the file has them
# now (keys sorted), or "absent"/"none". Pools removed or edited by hand show up as drift, and the next
# `up` runs docker-daemon.sh again (with its restart guard).
# Inputs (env): DAEMON_JSON (default /etc/docker/daemon.json).
set -euo pipefail
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
if [ ! -f "$DAEMON_JSON" ]; then echo "daemon.json absent"; exit 0; fi
pools=$(jq -cS '."default-address-pools" // "none"' "$DAEMON_JSON" 2>/dev/null) || { echo "daemon.json is not valid JSON"; exit 0; }
echo "default-address-pools=$pools"

#!/usr/bin/env bash
# What a refresh compares for the managed part of daemon.json: the address pools as the file has them
# now (keys sorted), or "absent"/"none", and the proxies as the sha256 of their canonical JSON (never the
# URL, which may carry credentials), or "none". Pools or proxies removed or edited by hand show up as
# drift, and the next `up` runs docker-daemon.sh again (with its restart guard).
# Inputs (env): DAEMON_JSON (default /etc/docker/daemon.json).
set -euo pipefail
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
if [ ! -f "$DAEMON_JSON" ]; then echo "daemon.json absent"; exit 0; fi
pools=$(jq -cS '."default-address-pools" // "none"' "$DAEMON_JSON" 2>/dev/null) || { echo "daemon.json is not valid JSON"; exit 0; }
proxies=$(jq -cS '.proxies // empty' "$DAEMON_JSON" | sha256sum | cut -d' ' -f1)
# sha256 of nothing: no proxies.
[ "$proxies" != e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ] || proxies=none
# registry-mirrors only when the file has them (a host without any reads as it always did).
mirrors=$(jq -c '."registry-mirrors" // empty' "$DAEMON_JSON")
echo "default-address-pools=$pools proxies=$proxies${mirrors:+ registry-mirrors=$mirrors}"

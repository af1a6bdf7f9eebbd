#!/usr/bin/env bash
# Destroy side of docker-daemon.sh: put back the daemon.json the host had before reprobench.
# Inputs (env): STATE_DIR, DAEMON_JSON (default /etc/docker/daemon.json), FORCE_RESTART.
set -euo pipefail
: "${STATE_DIR:?}"
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
FORCE_RESTART=${FORCE_RESTART:-0}

if [ -f "$STATE_DIR/original.json" ]; then
  if cmp -s "$STATE_DIR/original.json" "$DAEMON_JSON"; then echo "docker-daemon: already original"; exit 0; fi
elif [ -e "$STATE_DIR/original.absent" ]; then
  [ -e "$DAEMON_JSON" ] || { echo "docker-daemon: already original (no daemon.json)"; exit 0; }
else
  echo "docker-daemon: no recorded original; leaving $DAEMON_JSON as it is"
  exit 0
fi
running=$(docker ps --format '{{.Names}}' | paste -sd, -)
if [ -n "$running" ] && [ "$FORCE_RESTART" != 1 ]; then
  echo "docker-daemon: refusing to restore daemon.json while containers run ($running)" >&2
  exit 1
fi
if [ -f "$STATE_DIR/original.json" ]; then
  # The original's own mode (0600 when it held credentials).
  install -m "$(stat -c %a "$STATE_DIR/original.json")" "$STATE_DIR/original.json" "$DAEMON_JSON"
else
  rm -f "$DAEMON_JSON"
fi
systemctl restart docker
for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
docker info >/dev/null
rm -f "$STATE_DIR/original.json" "$STATE_DIR/original.absent" "$STATE_DIR/proxies.managed"
echo "docker-daemon: restored the original daemon.json and restarted docker"

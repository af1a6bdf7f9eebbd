#!/usr/bin/env bash
# Expose a service on the host to task containers (seed 000 "准备 task container 网络"): socat bound ONLY
# to the docker bridge gateway, supervised by systemd (restarted on failure) instead of a tmux session,
# then proven by a real HTTP request from a container. Two uses: the host's loopback proxy (CHECK_MODE
# proxy: CHECK_URL is fetched THROUGH the bridge as an HTTP proxy) and the model endpoint for agents that
# run inside the task container (CHECK_MODE direct: CHECK_URL is the bridge's own URL).
# Inputs (env):
#   UNIT                 systemd unit name (without .service)
#   BRIDGE_PORT          port on the gateway
#   UPSTREAM_HOST, UPSTREAM_PORT   the service as the host sees it (e.g. 127.0.0.1 27890)
#   CONTAINER_HOST       name containers use for the host (host.docker.internal)
#   CHECK_IMAGE          image with python3 used for the check
#   CHECK_URL            URL fetched from the container
#   CHECK_MODE           proxy (default) or direct
#   ATTEMPTS             attempts for pulling CHECK_IMAGE when the host lacks it (default 5)
# Run with retry.sh prepended (scriptWithEnv(["retry", "proxy-bridge"], env)); run from its file, it
# sources it beside itself.
set -euo pipefail
: "${UNIT:?}" "${BRIDGE_PORT:?}" "${UPSTREAM_HOST:?}" "${UPSTREAM_PORT:?}" "${CONTAINER_HOST:?}" "${CHECK_IMAGE:?}" "${CHECK_URL:?}"
CHECK_MODE=${CHECK_MODE:-proxy}
ATTEMPTS=${ATTEMPTS:-5}
# shellcheck disable=SC2034 # read by retry()
RETRY_NAME=$UNIT
die() { echo "$UNIT: $*" >&2; exit 1; }
if ! declare -F retry >/dev/null; then
  # shellcheck source=/dev/null
  . "$(dirname "${BASH_SOURCE[0]:-.}")/retry.sh" 2>/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"proxy-bridge\"], env))"
fi
for tool in socat docker systemctl ss; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

gateway=$(docker network inspect bridge --format '{{(index .IPAM.Config 0).Gateway}}')
[ -n "$gateway" ] || die "cannot read the docker bridge gateway address"
unit_file="/etc/systemd/system/$UNIT.service"
cat >"$unit_file.new" <<UNIT
[Unit]
Description=reprobench bridge $gateway:$BRIDGE_PORT -> $UPSTREAM_HOST:$UPSTREAM_PORT
After=docker.service
Wants=docker.service

[Service]
ExecStart=$(command -v socat) -d TCP-LISTEN:$BRIDGE_PORT,bind=$gateway,reuseaddr,fork TCP:$UPSTREAM_HOST:$UPSTREAM_PORT
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
UNIT
if ! cmp -s "$unit_file.new" "$unit_file"; then
  mv "$unit_file.new" "$unit_file"
  systemctl daemon-reload
  systemctl enable "$UNIT" >/dev/null 2>&1
  systemctl restart "$UNIT"
  echo "$UNIT: installed ($gateway:$BRIDGE_PORT -> $UPSTREAM_HOST:$UPSTREAM_PORT)" >&2
else
  rm -f "$unit_file.new"
  systemctl is-active --quiet "$UNIT" || systemctl restart "$UNIT"
fi

for _ in $(seq 1 20); do ss -ltnH "( sport = :$BRIDGE_PORT )" | grep -qF "$gateway:$BRIDGE_PORT" && break; sleep 0.5; done
listeners=$(ss -ltnH "( sport = :$BRIDGE_PORT )" | awk '{print $4}')
[ "$listeners" = "$gateway:$BRIDGE_PORT" ] || die "expected one listener on $gateway:$BRIDGE_PORT, found: ${listeners:-none}"

proxy_env=()
if [ "$CHECK_MODE" = proxy ]; then
  proxy="http://$CONTAINER_HOST:$BRIDGE_PORT"
  proxy_env=(--env "HTTP_PROXY=$proxy" --env "HTTPS_PROXY=$proxy" --env "http_proxy=$proxy" --env "https_proxy=$proxy")
fi
# The check image comes from a registry that may be behind a proxy that drops connections: pull it with
# retry first (docker run's own pull fails at the first 502).
if ! docker image inspect "$CHECK_IMAGE" >/dev/null 2>&1; then
  retry "$ATTEMPTS" 2 "docker pull $CHECK_IMAGE" -- docker pull --quiet "$CHECK_IMAGE" >/dev/null ||
    die "cannot pull the check image $CHECK_IMAGE: $RETRY_LAST_ERROR"
fi
docker run --rm --network bridge --add-host "$CONTAINER_HOST:host-gateway" \
  "${proxy_env[@]}" --env "CHECK_URL=$CHECK_URL" --entrypoint python3 "$CHECK_IMAGE" -c '
import os, urllib.request
with urllib.request.urlopen(os.environ["CHECK_URL"], timeout=20) as response:
    assert response.status == 200, response.status
print("bridge check: fetched", os.environ["CHECK_URL"], "from a container:", response.status)
' || die "a container could not fetch $CHECK_URL ($CHECK_MODE, bridge $gateway:$BRIDGE_PORT)"
echo "$gateway:$BRIDGE_PORT"

#!/usr/bin/env bash
# What reprobench needs to know about a host before it places anything there, as one JSON line: the
# SSH login's uid:gid (the manual's $(id -u):$(id -g), used as the containers' user), the hostname and
# the Docker engine's version. Also the host's refresh probe: a host that cannot be reached fails it.
# Inputs (env): none.
set -euo pipefail
die() { echo "host-facts: $*" >&2; exit 1; }
for tool in docker jq; do command -v "$tool" >/dev/null || die "'$tool' is required on $(hostname)"; done
engine=$(docker version --format '{{.Server.Version}}' 2>/dev/null) ||
  die "the Docker engine on $(hostname) does not answer to $(id -un) (is dockerd running, may this user use it?)"
jq -nc --arg user "$(id -un)" --arg uid "$(id -u)" --arg gid "$(id -g)" --arg hostname "$(hostname)" --arg engine "$engine" \
  '{user: $user, uid: ($uid | tonumber), gid: ($gid | tonumber), hostname: $hostname, dockerEngine: $engine}'

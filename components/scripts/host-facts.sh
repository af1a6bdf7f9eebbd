#!/usr/bin/env bash
# What reprobench needs to know about a host before it places anything there, as one JSON line: the
# SSH login's uid:gid (the manual's $(id -u):$(id -g), used as the containers' user; under sudo, the
# login's, from SUDO_UID/SUDO_GID, not root's), the hostname, the
# Docker engine's version and which stack owns the host. Also the host's refresh probe: a host that cannot
# be reached fails it, and a host another stack has claimed since reads as drift.
# Inputs (env):
#   OWNER_JSON   {"project","stack","token"} of the stack that owns the cluster
#   OWNER_FILE   where the claim is kept (/var/lib/reprobench/owner.json)
#   CLAIM        1 = claim the host (refused when another stack owns it) and print the facts;
#                0 = the refresh probe: one line of what must not change under the stack (the login's
#                    uid:gid and the owner), so an engine upgrade alone is no drift
set -euo pipefail
: "${OWNER_JSON:?}" "${OWNER_FILE:?}"
CLAIM=${CLAIM:-0}
die() { echo "host-facts[$(hostname)]: $*" >&2; exit 1; }
# Runs as root; a sudo login is who sudo says it is.
login_user=${SUDO_USER:-$(id -un)} login_uid=${SUDO_UID:-$(id -u)} login_gid=${SUDO_GID:-$(id -g)}
for tool in docker jq; do command -v "$tool" >/dev/null || die "'$tool' is required on $(hostname)"; done

same_owner() { # $1 = owner file; compares project, stack and token with OWNER_JSON
  jq -e --argjson want "$OWNER_JSON" '.project == $want.project and .stack == $want.stack and .token == $want.token' "$1" >/dev/null 2>&1
}
if [ "$CLAIM" = 1 ]; then
  if [ -f "$OWNER_FILE" ] && ! same_owner "$OWNER_FILE"; then
    owner=$(jq -r '"stack \(.stack) of project \(.project) (claimed \(.claimedAt // "at an unknown time"))"' "$OWNER_FILE" 2>/dev/null || echo "an unreadable $OWNER_FILE")
    die "this host belongs to $owner; nothing was changed. To run on its cluster, reference it from this stack (reprobench:cluster: <that stack>); to move the cluster to this stack, destroy that stack first (if that stack no longer exists, remove $OWNER_FILE on this host by hand)."
  fi
  if [ ! -f "$OWNER_FILE" ]; then
    mkdir -p "$(dirname "$OWNER_FILE")"
    jq -c --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '. + {claimedAt: $at}' <<<"$OWNER_JSON" >"$OWNER_FILE.tmp"
    mv "$OWNER_FILE.tmp" "$OWNER_FILE"
    echo "host-facts[$(hostname)]: claimed for stack $(jq -r .stack <<<"$OWNER_JSON")" >&2
  fi
fi
owner=$(jq -c '{project, stack, token}' "$OWNER_FILE" 2>/dev/null || echo null)
if [ "$CLAIM" != 1 ]; then
  echo "login=$login_uid:$login_gid owner=$owner"
  exit 0
fi
engine=$(docker version --format '{{.Server.Version}}' 2>/dev/null) ||
  die "the Docker engine does not answer to $(id -un) (is dockerd running?)"
jq -nc --arg user "$login_user" --arg uid "$login_uid" --arg gid "$login_gid" --arg hostname "$(hostname)" --arg engine "$engine" --argjson owner "$owner" \
  '{user: $user, uid: ($uid | tonumber), gid: ($gid | tonumber), hostname: $hostname, dockerEngine: $engine, owner: $owner}'

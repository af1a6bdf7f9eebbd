#!/usr/bin/env bash
# Start one of our long-running containers, or keep it when it already runs with the wanted spec.
# The model servers and the router share this; their own scripts then gate on the service.
# Inputs (env):
#   CONTAINER_NAME, IMAGE          container and pinned image
#   SPEC                           hash of everything below (the label that tells the container is current)
#   DOCKER_ARGS_JSON, COMMAND_JSON JSON arrays: docker run options, the server's argv
#   CONTAINER_USER                 "ssh-user" = this login's uid:gid (the seed's $(id -u):$(id -g))
#   API_KEY                        appended as --api-key (secret)
#   REQUIRED_DIRS                  host directories that must exist first, one per line (docker would
#                                  otherwise create a missing bind-mount source as an empty directory)
set -euo pipefail
: "${CONTAINER_NAME:?}" "${IMAGE:?}" "${SPEC:?}" "${DOCKER_ARGS_JSON:?}" "${COMMAND_JSON:?}" "${API_KEY:?}"
say() { echo "container[$CONTAINER_NAME]: $*" >&2; }
for tool in docker jq sha256sum; do command -v "$tool" >/dev/null || { say "'$tool' is required on this host"; exit 1; }; done
while IFS= read -r dir; do
  [ -z "$dir" ] || [ -d "$dir" ] || { say "directory $dir does not exist on $(hostname)"; exit 1; }
done <<<"${REQUIRED_DIRS:-}"

# The label also covers the API key (hashed), so a new key restarts the container.
spec="$SPEC-$(printf %s "$API_KEY" | sha256sum | cut -c1-8)"
current=$(docker inspect --format '{{index .Config.Labels "io.reprobench.spec"}} {{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null || true)
if [ "$current" = "$spec true" ]; then
  say "container is current (spec $spec)"
else
  if [ -n "$current" ]; then
    say "replacing container (was: $current)"
    docker stop --time "$(docker inspect --format '{{.Config.StopTimeout}}' "$CONTAINER_NAME" 2>/dev/null || echo 30)" "$CONTAINER_NAME" >/dev/null 2>&1 || true
    docker rm -f "$CONTAINER_NAME" >/dev/null
  fi
  mapfile -t docker_args < <(jq -r '.[]' <<<"$DOCKER_ARGS_JSON")
  mapfile -t command < <(jq -r '.[]' <<<"$COMMAND_JSON")
  if [ "${CONTAINER_USER:-ssh-user}" = ssh-user ]; then docker_args+=(--user "$(id -u):$(id -g)"); else docker_args+=(--user "$CONTAINER_USER"); fi
  docker image inspect "$IMAGE" >/dev/null 2>&1 || docker pull --quiet "$IMAGE" >&2
  docker run --detach --name "$CONTAINER_NAME" \
    --label io.reprobench.managed=1 --label "io.reprobench.spec=$spec" \
    "${docker_args[@]}" "$IMAGE" "${command[@]}" --api-key "$API_KEY" >/dev/null
  say "started container"
fi

#!/usr/bin/env bash
# Start (or keep) one SGLang server container and gate on it, as seed 000 does by hand: wait for
# /health = 200 within a model-load budget, then assert /server_info field by field. Prints the
# /server_info JSON on stdout (the run manifest records it).
# Inputs (env):
#   CONTAINER_NAME, IMAGE, SPEC       container, pinned image, hash of everything below
#   DOCKER_ARGS_JSON, COMMAND_JSON    JSON arrays: docker run options, server argv
#   CONTAINER_USER                    "ssh-user" = this login's uid:gid (the seed's $(id -u):$(id -g))
#   MODEL_PATH                        host checkpoint dir (must exist)
#   BASE_URL                          http://<ip>:<port> of the server
#   API_KEY                           the --api-key value (secret)
#   READY_TIMEOUT_SECONDS             /health budget
#   EXPECTED_JSON                     {"tp_size": 4, …}: /server_info must carry exactly these values
set -euo pipefail
: "${CONTAINER_NAME:?}" "${IMAGE:?}" "${SPEC:?}" "${DOCKER_ARGS_JSON:?}" "${COMMAND_JSON:?}" "${BASE_URL:?}"
: "${API_KEY:?}" "${READY_TIMEOUT_SECONDS:?}" "${EXPECTED_JSON:?}" "${MODEL_PATH:?}"

die() { echo "sglang-worker[$CONTAINER_NAME]: $*" >&2; exit 1; }
log() { echo "sglang-worker[$CONTAINER_NAME]: $*" >&2; }
for tool in docker jq curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
[ -d "$MODEL_PATH" ] || die "model directory $MODEL_PATH does not exist on $(hostname)"

# The label also covers the API key (hashed), so a new key restarts the container.
SPEC="$SPEC-$(printf %s "$API_KEY" | sha256sum | cut -c1-8)"
current=$(docker inspect --format '{{index .Config.Labels "io.reprobench.spec"}} {{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null || true)
if [ "$current" = "$SPEC true" ]; then
  log "container is current (spec $SPEC)"
else
  if [ -n "$current" ]; then
    log "replacing container (was: $current)"
    docker stop --time "$(docker inspect --format '{{.Config.StopTimeout}}' "$CONTAINER_NAME" 2>/dev/null || echo 30)" "$CONTAINER_NAME" >/dev/null 2>&1 || true
    docker rm -f "$CONTAINER_NAME" >/dev/null
  fi
  mapfile -t docker_args < <(jq -r '.[]' <<<"$DOCKER_ARGS_JSON")
  mapfile -t command < <(jq -r '.[]' <<<"$COMMAND_JSON")
  if [ "${CONTAINER_USER:-ssh-user}" = ssh-user ]; then docker_args+=(--user "$(id -u):$(id -g)"); else docker_args+=(--user "$CONTAINER_USER"); fi
  docker image inspect "$IMAGE" >/dev/null 2>&1 || docker pull --quiet "$IMAGE" >&2
  docker run --detach --name "$CONTAINER_NAME" \
    --label io.reprobench.managed=1 --label "io.reprobench.spec=$SPEC" \
    "${docker_args[@]}" "$IMAGE" "${command[@]}" --api-key "$API_KEY" >/dev/null
  log "started container"
fi

# Gate 1: /health within the budget; fail at once if the container dies (its log tail says why).
deadline=$(( $(date +%s) + READY_TIMEOUT_SECONDS ))
until curl -fsS --max-time 10 -o /dev/null -H "Authorization: Bearer $API_KEY" "$BASE_URL/health" 2>/dev/null; do
  if [ "$(docker inspect --format '{{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null)" != true ]; then
    docker logs --tail 40 "$CONTAINER_NAME" >&2 2>&1 || true
    die "container exited before /health answered 200"
  fi
  [ "$(date +%s)" -lt "$deadline" ] || die "/health not 200 after ${READY_TIMEOUT_SECONDS}s"
  sleep 5
done
log "/health is 200"

# Gate 2: /server_info (or the older /get_server_info) must match the config field by field.
info=$(curl -fsS --max-time 60 -H "Authorization: Bearer $API_KEY" "$BASE_URL/server_info" 2>/dev/null ||
  curl -fsS --max-time 60 -H "Authorization: Bearer $API_KEY" "$BASE_URL/get_server_info") ||
  die "/server_info did not answer"
mismatches=$(jq -r --argjson want "$EXPECTED_JSON" '
  . as $got | $want | to_entries[]
  | select(($got[.key]) != .value)
  | "\(.key): expected \(.value | tojson), server reports \($got[.key] | tojson)"' <<<"$info")
[ -z "$mismatches" ] || die "/server_info disagrees with the config:
$mismatches"
ranks=$(jq '.internal_states | length' <<<"$info")
want_dp=$(jq '.dp_size' <<<"$EXPECTED_JSON")
[ "$ranks" = "$want_dp" ] || die "/server_info has $ranks internal_states, expected one per DP rank ($want_dp)"
log "/server_info matches the config ($ranks DP ranks)"
jq -c 'del(.internal_states)' <<<"$info"

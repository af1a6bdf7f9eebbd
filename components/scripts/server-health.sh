#!/usr/bin/env bash
# Wait for a model server container (SGLang or vLLM, a docker.Container of SglangWorker) to answer /health = 200
# within its model-load budget, as seed 000 does by hand; fail at once with the log tail if the container
# dies. The engine's own gate (sglang-worker.sh, vllm-worker.sh) runs next and checks what it serves.
# Inputs (env):
#   CONTAINER_NAME          the container
#   BASE_URL                http://<ip>:<port> of the server
#   API_KEY                 the --api-key value (secret; SGLang and vLLM both let /health through without it)
#   READY_TIMEOUT_SECONDS   the budget
set -euo pipefail
: "${CONTAINER_NAME:?}" "${BASE_URL:?}" "${API_KEY:?}" "${READY_TIMEOUT_SECONDS:?}"
die() { echo "server-health[$CONTAINER_NAME]: $*" >&2; exit 1; }
for tool in docker curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

deadline=$(( $(date +%s) + READY_TIMEOUT_SECONDS ))
until curl -fsS --max-time 10 -o /dev/null -H "Authorization: Bearer $API_KEY" "$BASE_URL/health" 2>/dev/null; do
  if [ "$(docker inspect --format '{{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null)" != true ]; then
    docker logs --tail 40 "$CONTAINER_NAME" >&2 2>&1 || true
    die "container exited before /health answered 200"
  fi
  [ "$(date +%s)" -lt "$deadline" ] || die "/health not 200 after ${READY_TIMEOUT_SECONDS}s"
  sleep 5
done
echo "server-health[$CONTAINER_NAME]: /health is 200" >&2

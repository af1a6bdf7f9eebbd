#!/usr/bin/env bash
# Wait for a model server container (SGLang or vLLM, a docker.Container of SglangWorker) to answer /health = 200
# within its model-load budget, as seed 000 does by hand; fail at once with the log tail if the container
# dies. The engine's own gate (sglang-worker.sh, vllm-worker.sh) runs next and checks what it serves.
# Inputs (env):
#   CONTAINER_NAME          the container
#   BASE_URL                http://<ip>:<port> of the server
#   API_KEY                 the --api-key value (secret; SGLang and vLLM both let /health through without it)
#   READY_TIMEOUT_SECONDS   the budget
#   PROGRESS_SECS           how often to say how long it has waited (default 30; "progress:" lines on stderr,
#                           which `pulumi up` shows as they come, see components/checked-command.ts)
set -euo pipefail
: "${CONTAINER_NAME:?}" "${BASE_URL:?}" "${API_KEY:?}" "${READY_TIMEOUT_SECONDS:?}"
PROGRESS_SECS=${PROGRESS_SECS:-30}
die() { echo "server-health[$CONTAINER_NAME]: $*" >&2; exit 1; }
for tool in docker curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

start=$(date +%s)
deadline=$((start + READY_TIMEOUT_SECONDS))
next_progress=$((start + PROGRESS_SECS))
until curl -fsS --max-time 10 -o /dev/null -H "Authorization: Bearer $API_KEY" "$BASE_URL/health" 2>/dev/null; do
  if [ "$(docker inspect --format '{{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null)" != true ]; then
    docker logs --tail 40 "$CONTAINER_NAME" >&2 2>&1 || true
    die "container exited before /health answered 200"
  fi
  now=$(date +%s)
  [ "$now" -lt "$deadline" ] || die "/health not 200 after ${READY_TIMEOUT_SECONDS}s"
  if [ "$now" -ge "$next_progress" ]; then
    echo "server-health[$CONTAINER_NAME]: progress: loading, $(mmss $((now - start))) of $(mmss "$READY_TIMEOUT_SECONDS") budget (/health not 200 yet)" >&2
    next_progress=$((now + PROGRESS_SECS))
  fi
  sleep 5
done
echo "server-health[$CONTAINER_NAME]: progress: /health is 200 after $(mmss $(($(date +%s) - start)))" >&2

#!/usr/bin/env bash
# Prove the sglang-router container (a docker.Container of SglangRouter) routes, as seed 000 checks by hand
# — but with the router's real readiness signals (its /health is liveness only): /readiness, /workers
# listing every DP rank and /v1/models. The real completion of "Reply with exactly READY." through the
# router is ready-probe.sh, which the gate runs right after this script in the same shell (thinking off
# per request, a budget a reasoning model cannot exhaust, READY required in the answer, not the thinking).
# Inputs (env):
#   CONTAINER_NAME       the container (its log tail is shown if it dies)
#   ROUTER_URL           http://<bind>:<port>
#   API_KEY              the workers' key (secret)
#   EXPECTED_WORKERS     JSON array of worker URLs as the router names them (http://ip:port@rank)
#   SERVED_MODEL_NAME    the model id /v1/models must list
#   MODEL_LISTED         1 = the router's /v1/models must list it (SGLang workers: the router reads it from
#                        /model_info); 0 = vLLM workers, which have no /model_info, so the 0.3.2 router lists
#                        "unknown" — the completion with the model's name (which vLLM checks) proves the path
#   READY_TIMEOUT_SECONDS
set -euo pipefail
: "${CONTAINER_NAME:?}" "${ROUTER_URL:?}"
: "${API_KEY:?}" "${EXPECTED_WORKERS:?}" "${SERVED_MODEL_NAME:?}" "${READY_TIMEOUT_SECONDS:?}"

die() { echo "sglang-router[$CONTAINER_NAME]: $*" >&2; exit 1; }
log() { echo "sglang-router[$CONTAINER_NAME]: $*" >&2; }
for tool in docker jq curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
auth=(-H "Authorization: Bearer $API_KEY")

want=$(jq -c 'sort' <<<"$EXPECTED_WORKERS")
deadline=$(( $(date +%s) + READY_TIMEOUT_SECONDS ))
while :; do
  if [ "$(docker inspect --format '{{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null)" != true ]; then
    docker logs --tail 40 "$CONTAINER_NAME" >&2 2>&1 || true
    die "router container exited"
  fi
  ready=$(curl -sS --max-time 10 "$ROUTER_URL/readiness" 2>/dev/null || true)
  workers=$(curl -fsS --max-time 10 "${auth[@]}" "$ROUTER_URL/workers" 2>/dev/null || echo '{}')
  have=$(jq -c '[.workers[]?.url] | sort' <<<"$workers")
  healthy=$(jq -r '.healthy_workers // 0' 2>/dev/null <<<"${ready:-null}" || echo 0)
  if [ "$have" = "$want" ] && [ "$healthy" = "$(jq length <<<"$want")" ]; then break; fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    die "router not ready after ${READY_TIMEOUT_SECONDS}s: /readiness=${ready:-none}; /workers lists $have, expected $want"
  fi
  sleep 3
done
log "/readiness: $healthy healthy workers; /workers lists every DP rank"

models=$(curl -fsS --max-time 30 "${auth[@]}" "$ROUTER_URL/v1/models") || die "/v1/models failed"
if [ "${MODEL_LISTED:-1}" = 1 ]; then
  jq -e --arg m "$SERVED_MODEL_NAME" 'any(.data[]; .id == $m)' <<<"$models" >/dev/null ||
    die "/v1/models does not list $SERVED_MODEL_NAME: $models"
fi

jq -nc --argjson workers "$have" --argjson models "$models" '{workers: $workers, models: [$models.data[].id]}'

#!/usr/bin/env bash
# Gate on a vLLM server container (started by container-run.sh; seed 002 Run 2's `vllm serve`): wait for
# /health = 200 within a model-load budget (vLLM binds its port only once the engine is up), then assert
# through /v1/models — vLLM has no /server_info — that it serves the configured model, as vLLM, with the
# configured context length. Prints {"engine","version","model"} on stdout (the run manifest records it).
# Inputs (env):
#   CONTAINER_NAME                    the container (its log tail is shown if it dies)
#   BASE_URL                          http://<ip>:<port> of the server
#   API_KEY                           the --api-key value (secret)
#   READY_TIMEOUT_SECONDS             /health budget
#   EXPECTED_JSON                     {"id": …, "owned_by": "vllm", "max_model_len": …}: the /v1/models entry
set -euo pipefail
: "${CONTAINER_NAME:?}" "${BASE_URL:?}" "${API_KEY:?}" "${READY_TIMEOUT_SECONDS:?}" "${EXPECTED_JSON:?}"

die() { echo "vllm-worker[$CONTAINER_NAME]: $*" >&2; exit 1; }
log() { echo "vllm-worker[$CONTAINER_NAME]: $*" >&2; }
for tool in docker jq curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done

deadline=$(( $(date +%s) + READY_TIMEOUT_SECONDS ))
until curl -fsS --max-time 10 -o /dev/null "$BASE_URL/health" 2>/dev/null; do
  if [ "$(docker inspect --format '{{.State.Running}}' "$CONTAINER_NAME" 2>/dev/null)" != true ]; then
    docker logs --tail 40 "$CONTAINER_NAME" >&2 2>&1 || true
    die "container exited before /health answered 200"
  fi
  [ "$(date +%s)" -lt "$deadline" ] || die "/health not 200 after ${READY_TIMEOUT_SECONDS}s"
  sleep 5
done
log "/health is 200"

models=$(curl -fsS --max-time 60 -H "Authorization: Bearer $API_KEY" "$BASE_URL/v1/models") || die "/v1/models did not answer"
model=$(jq -c --argjson want "$EXPECTED_JSON" '[.data[]? | select(.id == $want.id)] | first // empty' <<<"$models")
[ -n "$model" ] || die "/v1/models does not list $(jq -r .id <<<"$EXPECTED_JSON"): $(jq -c '[.data[]?.id]' <<<"$models")"
mismatches=$(jq -r --argjson want "$EXPECTED_JSON" '
  . as $got | $want | to_entries[]
  | select(($got[.key]) != .value)
  | "\(.key): expected \(.value | tojson), server reports \($got[.key] | tojson)"' <<<"$model")
[ -z "$mismatches" ] || die "/v1/models disagrees with the config:
$mismatches"
# A server that answers /server_info is SGLang, not vLLM: the wrong image for sglang.engine vllm.
if curl -fsS --max-time 10 -o /dev/null -H "Authorization: Bearer $API_KEY" "$BASE_URL/server_info" 2>/dev/null; then
  die "the server answers /server_info like SGLang; sglang.engine is vllm (check sglang.image)"
fi
version=$(curl -fsS --max-time 10 -H "Authorization: Bearer $API_KEY" "$BASE_URL/version" 2>/dev/null | jq -r '.version // empty' || true)
log "/v1/models matches the config (vLLM ${version:-version unknown})"
jq -nc --arg version "$version" --argjson model "$model" '{engine: "vllm", version: $version, model: $model}'

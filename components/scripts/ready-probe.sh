#!/usr/bin/env bash
# A real completion of seed 000's smoke request "Reply with exactly READY." against an OpenAI-compatible
# endpoint (the router's gate runs it right after sglang-router.sh, in the same shell), made so that a
# reasoning model passes it for the right reason:
#   - thinking is switched off for this request (chat_template_kwargs {"enable_thinking": false}, which
#     SGLang and vLLM honour for Qwen3 templates; a request key wins over --default-chat-template-kwargs);
#   - the budget (READY_MAX_TOKENS) covers a model that thinks anyway (DeepSeek-R1, Qwen3-Thinking,
#     gpt-oss ignore enable_thinking): max_tokens caps thinking and answer together;
#   - READY must be in the answer (message.content after any </think>), never just in the thinking;
#   - finish_reason "length" with no answer is reported as a budget spent on thinking, with the counts.
# Prints nothing on stdout (the caller's last JSON line stays its result); messages go to stderr.
# Inputs (env):
#   PROBE_URL              http://<host>:<port> of the router or server (no /v1)
#   API_KEY                Bearer key (secret)
#   SERVED_MODEL_NAME      the completion's model
#   PROBE_NAME             names the messages (default: ready-probe)
#   READY_MAX_TOKENS       token budget for thinking + answer (default: 2048)
#   PROBE_TIMEOUT_SECONDS  curl timeout (default: 600)
set -euo pipefail
: "${PROBE_URL:?}" "${API_KEY:?}" "${SERVED_MODEL_NAME:?}"
name=${PROBE_NAME:-ready-probe}
max_tokens=${READY_MAX_TOKENS:-2048}
timeout=${PROBE_TIMEOUT_SECONDS:-600}

die() { echo "$name: $*" >&2; exit 1; }
log() { echo "$name: $*" >&2; }
for tool in jq curl; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
[[ "$max_tokens" =~ ^[1-9][0-9]*$ ]] || die "READY_MAX_TOKENS must be a positive integer, got '$max_tokens'"

body=$(jq -nc --arg m "$SERVED_MODEL_NAME" --argjson max "$max_tokens" '{model: $m, max_tokens: $max, temperature: 0,
  chat_template_kwargs: {enable_thinking: false},
  messages: [{role: "user", content: "Reply with exactly READY."}]}')
response=$(curl -sS --max-time "$timeout" -w '\n%{http_code}' -H "Authorization: Bearer $API_KEY" \
  -H 'Content-Type: application/json' -d "$body" "$PROBE_URL/v1/chat/completions") ||
  die "chat completion at $PROBE_URL failed (no HTTP answer within ${timeout}s)"
status=${response##*$'\n'}
reply=${response%$'\n'*}
[ "$status" = 200 ] || die "chat completion at $PROBE_URL answered HTTP $status: ${reply:0:500}"
jq -e '.choices[0].message | type == "object"' <<<"$reply" >/dev/null 2>&1 ||
  die "chat completion at $PROBE_URL returned no choices[0].message: ${reply:0:500}"

finish=$(jq -r '.choices[0].finish_reason // "none"' <<<"$reply")
content=$(jq -r '.choices[0].message.content // ""' <<<"$reply")
# SGLang: message.reasoning_content; newer vLLM: message.reasoning.
reasoning=$(jq -r '.choices[0].message | .reasoning_content // .reasoning // ""' <<<"$reply")
completion_tokens=$(jq -r '.usage.completion_tokens // 0' <<<"$reply")
reasoning_tokens=$(jq -r '.usage.reasoning_tokens // 0' <<<"$reply")
# Without a reasoning parser the thinking stays inline: the answer is what follows the last </think>,
# and an unclosed <think> means the output ended while thinking.
answer=$content
if [[ "$answer" == *"<think>"* ]]; then
  if [[ "$answer" == *"</think>"* ]]; then answer=${answer##*</think>}; else reasoning+=$answer; answer=""; fi
fi
# Some SGLang builds report usage.reasoning_tokens 0 even when the model thought (vLLM never reports it):
# then every completion token of an answerless reply went to the thinking.
if [ "$reasoning_tokens" = 0 ] && [ -n "$reasoning" ] && [ -z "${answer//[[:space:]]/}" ]; then
  thought="all $completion_tokens completion tokens"
else
  thought="$reasoning_tokens reasoning tokens"
fi

if [[ "$answer" == *READY* ]]; then
  if [ -n "$reasoning" ]; then
    log "completion answered READY (finish_reason $finish) after thinking ($reasoning_tokens reasoning of $completion_tokens completion tokens; this model thinks although the probe asked for enable_thinking=false)"
  else
    log "completion answered READY (finish_reason $finish, $completion_tokens completion tokens, no thinking)"
  fi
  exit 0
fi
if [ "$finish" = length ] && [ -n "$reasoning" ] && [ -z "${answer//[[:space:]]/}" ]; then
  die "the model spent its whole budget thinking: max_tokens=$max_tokens ran out after $thought in reasoning_content, before any answer (finish_reason \"length\", content empty), although the probe asked for enable_thinking=false. The model thinks regardless (an always-thinking reasoning parser?): raise READY_MAX_TOKENS, or check that the chat template honours enable_thinking"
fi
if [ "$finish" = length ]; then
  die "the answer was cut at max_tokens=$max_tokens (finish_reason \"length\", $completion_tokens completion tokens, $reasoning_tokens reasoning) without READY: content $(jq -c '.choices[0].message.content' <<<"$reply")"
fi
die "completion did not answer READY (finish_reason $finish): $(jq -c '.choices[0].message | {content, reasoning_content: ((.reasoning_content // .reasoning // "") | .[0:200])}' <<<"$reply")"

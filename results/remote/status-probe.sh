#!/usr/bin/env bash
# What `reprobench status` reads on one host, as one JSON line on stdout (runs over SSH, inputs on stdin
# before the script; nothing is changed on the host). Each part is optional:
#   job     JOB_DIR (or CURRENT_FILE: the runner's runs/current.d/<stack> line "job unit dir env", for a
#           stack whose outputs are gone), UNIT, LOG_FILE (or LOG_DIR/<job>.log), LOG_LINES:
#           the unit's state and PID, the job's config.json and result.json, every trial dir (its
#           config.json time and a few fields, its result.json minus the bulky parts), the running
#           trials' task agent and verifier timeouts, every task of the job's local datasets with its
#           agent and verifier timeouts (the pending trials' budgets), the log tail; and the newest
#           EARLIER_JOBS (default 3) other jobs beside it with the same agents, model and datasets, each
#           with its config.json and its trials' times and outcomes (the ETA learns from them)
#   worker  WORKER_URL [API_KEY]: the server's Prometheus /metrics (SGLang with --enable-metrics), else
#           its /get_load (the key goes to curl on stdin, never on a command line)
#   router  ROUTER_METRICS_URL: the router's Prometheus listener
# Output: {"now": <epoch ms on this host>, "job": {...}|null, "worker": {...}|null, "router": {...}|null}
set -euo pipefail
JOB_DIR=${JOB_DIR:-} UNIT=${UNIT:-} LOG_FILE=${LOG_FILE:-} LOG_DIR=${LOG_DIR:-} LOG_LINES=${LOG_LINES:-8}
EARLIER_JOBS=${EARLIER_JOBS:-3} CURRENT_FILE=${CURRENT_FILE:-} WORKER_URL=${WORKER_URL:-} API_KEY=${API_KEY:-} ROUTER_METRICS_URL=${ROUTER_METRICS_URL:-}
die() { echo "status-probe: $*" >&2; exit 1; }
[[ "$EARLIER_JOBS" =~ ^[0-9]+$ ]] || die "EARLIER_JOBS must be a whole number, got '$EARLIER_JOBS'"
command -v jq >/dev/null || die "'jq' is required on this host"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now=$(date +%s%3N)

# A task.toml's [<section>] timeout_sec as a JSON number, or null (no file, no such key, not a number).
toml_timeout() {
  local value=''
  [ -f "$2" ] && value=$(awk -v want="[$1]" '/^\[/{s=$0} s==want && /^[[:space:]]*timeout_sec[[:space:]]*=/{sub(/^[^=]*=[[:space:]]*/,""); sub(/[[:space:]]*(#.*)?$/,""); print; exit}' "$2")
  if [[ "$value" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then echo "$value"; else echo null; fi
}

# The newest $EARLIER_JOBS job dirs beside $JOB_DIR whose config.json runs the same agents (name and
# model) on the same datasets and tasks, as a JSON array of {jobName, config, trials}: each trial's
# task, times, exception type and rewards (what the ETA needs of a finished trial).
earlier_json() {
  local same='{agents: [(.agents // [])[] | {name, model_name}], datasets, tasks}'
  local want cfg dir n=0
  want=$(jq -c "$same" "$JOB_DIR/config.json" 2>/dev/null) || { echo '[]'; return; }
  local trim='{dir: (input_filename | split("/") | .[-2]), result: {task_name, started_at, finished_at,
    exception_info: (.exception_info | if type == "object" then {exception_type} else null end),
    verifier_result: (.verifier_result | if type == "object" then {rewards} else null end)}}'
  local -a configs=() results=()
  # Newest first by their config.json's time (when Harbor began the job).
  mapfile -t configs < <(find "$(dirname "$JOB_DIR")" -mindepth 2 -maxdepth 2 -name config.json -printf '%T@\t%p\n' | sort -rn | cut -f2-)
  for cfg in "${configs[@]}"; do
    [ "$n" -lt "$EARLIER_JOBS" ] || break
    dir=$(dirname "$cfg")
    [ "$dir" != "$JOB_DIR" ] || continue
    [ "$(jq -c "$same" "$cfg" 2>/dev/null || true)" = "$want" ] || continue
    mapfile -t results < <(find "$dir" -mindepth 2 -maxdepth 2 -name result.json | sort)
    [ "${#results[@]}" -gt 0 ] || continue
    # A file Harbor is rewriting fails the bulk read: then one by one, skipping it.
    if ! jq -c -n "[inputs | $trim]" "${results[@]}" >"$tmp/earlier-trials" 2>/dev/null; then
      for f in "${results[@]}"; do jq -c "$trim" "$f" 2>/dev/null || true; done | jq -c -s . >"$tmp/earlier-trials"
    fi
    jq -c --arg jobName "$(basename "$dir")" --slurpfile trials "$tmp/earlier-trials" '{jobName: $jobName, config: ., trials: $trials[0]}' "$cfg"
    n=$((n + 1))
  done | jq -c -s .
}

job_json() {
  local job_name='' from_current=false
  if [ -z "$JOB_DIR" ] && [ -n "$CURRENT_FILE" ]; then
    [ -f "$CURRENT_FILE" ] || { echo null; return; }
    local env_file
    read -r job_name UNIT JOB_DIR env_file <"$CURRENT_FILE" || true
    : "${env_file:=}"
    [ -n "$JOB_DIR" ] || { echo null; return; }
    [ -n "$LOG_FILE" ] || LOG_FILE="$LOG_DIR/$job_name.log"
    from_current=true
  fi
  [ -n "$JOB_DIR" ] || { echo null; return; }
  [ -n "$job_name" ] || job_name=$(basename "$JOB_DIR")
  local active='' sub='' pid=0 result=''
  if [ -n "$UNIT" ]; then
    while IFS='=' read -r k v; do
      case "$k" in ActiveState) active=$v ;; SubState) sub=$v ;; MainPID) pid=$v ;; Result) result=$v ;; esac
    done < <(systemctl show --property ActiveState,SubState,MainPID,Result "$UNIT" 2>/dev/null || true)
  fi
  local exists=false
  [ -d "$JOB_DIR" ] && exists=true
  echo null >"$tmp/config"
  echo null >"$tmp/result"
  echo '[]' >"$tmp/trials"
  echo '[]' >"$tmp/results"
  echo '[]' >"$tmp/timeouts"
  echo '[]' >"$tmp/tasks"
  echo '[]' >"$tmp/earlier"
  if [ "$exists" = true ]; then
    [ -f "$JOB_DIR/config.json" ] && { jq -c . "$JOB_DIR/config.json" >"$tmp/config" 2>/dev/null || echo null >"$tmp/config"; }
    # Harbor rewrites result.json in place (write_text): a read can catch it half written. Read it again
    # (bounded: 5 tries, 0.2 s apart) rather than report a job without its totals.
    if [ -f "$JOB_DIR/result.json" ]; then
      for try in 1 2 3 4 5; do
        jq -c 'del(.trial_results)' "$JOB_DIR/result.json" >"$tmp/result" 2>/dev/null && break
        echo null >"$tmp/result"
        [ "$try" = 5 ] || sleep 0.2
      done
    fi
    # Trial dirs are the ones with a config.json (Harbor writes it first); its time is when the trial began.
    find "$JOB_DIR" -mindepth 2 -maxdepth 2 -name config.json -printf '%h\t%T@\n' |
      jq -R -s -c '[split("\n")[] | select(length > 0) | split("\t") | {dir: (.[0] | split("/") | last), configTime: ((.[1] | tonumber) * 1000 | floor)}]' >"$tmp/trials"
    local trim='{dir: (input_filename | split("/") | .[-2]), result: del(.config, .agent_result.rollout_details, .agent_result.metadata, .exception_info.exception_traceback, .step_results)}'
    local -a results=()
    mapfile -t results < <(find "$JOB_DIR" -mindepth 2 -maxdepth 2 -name result.json | sort)
    if [ "${#results[@]}" -gt 0 ]; then
      # One jq for all; a file Harbor is rewriting right now fails the bulk read, so then one by one.
      if ! jq -c -n "[inputs | $trim]" "${results[@]}" >"$tmp/results" 2>/dev/null; then
        for f in "${results[@]}"; do jq -c "$trim" "$f" 2>/dev/null || true; done | jq -c -s . >"$tmp/results"
      fi
    fi
    # Running trials (a config.json, no result.json): the task's [agent] and [verifier] timeout_sec and
    # the trial's timeout settings, from which the caller computes Harbor's agent timeout and the budget.
    local d cfg task_toml base verifier
    for d in "$JOB_DIR"/*/; do
      d=${d%/}
      cfg="$d/config.json"
      if [ ! -f "$cfg" ] || [ -f "$d/result.json" ]; then continue; fi
      task_toml="$(jq -r '.task.path // empty' "$cfg" 2>/dev/null || true)/task.toml"
      base=$(toml_timeout agent "$task_toml")
      verifier=$(toml_timeout verifier "$task_toml")
      jq -c --arg dir "$(basename "$d")" --argjson base "$base" --argjson verifier "$verifier" \
        '{dir: $dir, taskTimeoutSec: $base, verifierTimeoutSec: $verifier, overrideTimeoutSec: .agent.override_timeout_sec, maxTimeoutSec: .agent.max_timeout_sec,
          agentTimeoutMultiplier: .agent_timeout_multiplier, verifierTimeoutMultiplier: .verifier_timeout_multiplier, timeoutMultiplier: .timeout_multiplier}' "$cfg" 2>/dev/null || true
    done | jq -c -s . >"$tmp/timeouts"
    # Every task of the job (local datasets: each child of datasets[].path with a task.toml, and
    # tasks[].path) with its agent and verifier timeout_sec, so the ETA knows the pending trials' tiers.
    # In Harbor's order: it lists a local dataset with Path.iterdir(), the directory's own order (find's,
    # not a sorted glob's), and starts the trials in that order.
    local dir
    {
      { jq -r '(.datasets // [])[] | .path // empty' "$JOB_DIR/config.json" 2>/dev/null || true; } | while IFS= read -r dir; do
        { find "$dir" -mindepth 1 -maxdepth 1 2>/dev/null || true; } | while IFS= read -r d; do if [ -f "$d/task.toml" ]; then printf '%s\n' "$d"; fi; done
      done
      jq -r '(.tasks // [])[] | .path // empty' "$JOB_DIR/config.json" 2>/dev/null || true
    } | while IFS= read -r d; do
      [ -f "$d/task.toml" ] || continue
      printf '%s\t%s\t%s\n' "$(basename "$d")" "$(toml_timeout agent "$d/task.toml")" "$(toml_timeout verifier "$d/task.toml")"
    done | jq -R -s -c '[split("\n")[] | select(length > 0) | split("\t") | {task: .[0], agentTimeoutSec: (.[1] | fromjson), verifierTimeoutSec: (.[2] | fromjson)}]' >"$tmp/tasks"
  fi
  if [ "$exists" = true ] && [ -f "$JOB_DIR/config.json" ]; then earlier_json >"$tmp/earlier"; fi
  : >"$tmp/log"
  if [ -n "$LOG_FILE" ] && [ -f "$LOG_FILE" ]; then tail -n "$LOG_LINES" "$LOG_FILE" >"$tmp/log" 2>/dev/null || true; fi
  jq -c -n --arg jobName "$job_name" --arg dir "$JOB_DIR" --arg unit "$UNIT" --arg active "$active" --arg sub "$sub" \
    --arg result "$result" --arg pid "${pid:-0}" --argjson exists "$exists" --argjson fromCurrent "$from_current" --arg log "$LOG_FILE" \
    --slurpfile config "$tmp/config" --slurpfile jobResult "$tmp/result" --slurpfile trials "$tmp/trials" \
    --slurpfile results "$tmp/results" --slurpfile timeouts "$tmp/timeouts" --slurpfile tasks "$tmp/tasks" --slurpfile earlier "$tmp/earlier" --rawfile logTail "$tmp/log" \
    '{jobName: $jobName, dir: $dir, exists: $exists, fromCurrentFile: $fromCurrent, log: $log,
      unit: {name: $unit, activeState: $active, subState: $sub, result: $result, mainPid: ($pid | tonumber? // 0)},
      config: $config[0], result: $jobResult[0], trials: $trials[0], results: $results[0], timeouts: $timeouts[0], tasks: $tasks[0], earlier: $earlier[0],
      logTail: ($logTail | split("\n") | map(select(length > 0)))}'
}

worker_json() {
  [ -n "$WORKER_URL" ] || { echo null; return; }
  local code
  code=$(curl -s -m 5 -o "$tmp/metrics" -w '%{http_code}' "$WORKER_URL/metrics" 2>/dev/null || true)
  if [ "$code" = 200 ] && [ -s "$tmp/metrics" ]; then
    jq -c -n --arg url "$WORKER_URL" --rawfile text "$tmp/metrics" '{url: $url, source: "metrics", metrics: $text}'
    return
  fi
  local load_code
  load_code=$(printf 'Authorization: Bearer %s\n' "$API_KEY" | curl -s -m 5 -H @- -o "$tmp/load" -w '%{http_code}' "$WORKER_URL/get_load" 2>/dev/null || true)
  if [ "$load_code" = 200 ] && jq -e . "$tmp/load" >/dev/null 2>&1; then
    jq -c -n --arg url "$WORKER_URL" --arg metricsCode "$code" --slurpfile load "$tmp/load" '{url: $url, source: "get_load", metricsStatus: $metricsCode, load: $load[0]}'
  else
    jq -c -n --arg url "$WORKER_URL" --arg metricsCode "$code" --arg loadCode "$load_code" '{url: $url, source: "unavailable", metricsStatus: $metricsCode, loadStatus: $loadCode}'
  fi
}

router_json() {
  [ -n "$ROUTER_METRICS_URL" ] || { echo null; return; }
  local code
  code=$(curl -s -m 5 -o "$tmp/router" -w '%{http_code}' "$ROUTER_METRICS_URL" 2>/dev/null || true)
  if [ "$code" = 200 ]; then
    jq -c -n --arg url "$ROUTER_METRICS_URL" --rawfile text "$tmp/router" '{url: $url, source: "metrics", metrics: $text}'
  else
    jq -c -n --arg url "$ROUTER_METRICS_URL" --arg code "$code" '{url: $url, source: "unavailable", metricsStatus: $code}'
  fi
}

job_json >"$tmp/job.json"
worker_json >"$tmp/worker.json"
router_json >"$tmp/router.json"
jq -c -n --argjson now "$now" --slurpfile job "$tmp/job.json" --slurpfile worker "$tmp/worker.json" --slurpfile router "$tmp/router.json" \
  '{now: $now, job: $job[0], worker: $worker[0], router: $router[0]}'

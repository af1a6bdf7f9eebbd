#!/usr/bin/env bash
# Start the benchmark (seed 000 "启动 89-task 6× full run"): `harbor run` with the preflighted config, an
# absolute --jobs-dir and the job name fixed in Pulumi state, output appended to a log file (never a pipe:
# Harbor has no BrokenPipe handling), supervised by a transient systemd unit so its PID is known. Writes
# the run manifest beside the job dir first. Idempotent: a job that runs is left alone, a finished one is
# reported, an interrupted one is started again under the same name (Harbor then resumes it). Another job
# of this work dir that still runs is stopped gracefully first (one benchmark per runner).
# With WAIT=1 it follows the job until result.json has finished_at, printing progress.
# Last stdout line: {"jobName","jobDir","log","unit","pid","state","result"} (result = Harbor's job result.json).
# Inputs (env):
#   VENV JOB_NAME JOBS_DIR JOB_DIR JOB_CONFIG COMPOSE_OVERRIDE LOG_FILE ENV_FILE MANIFEST_FILE UNIT CURRENT_FILE WORK_DIR
#   MANIFEST_JSON      the run manifest (no secrets)
#   API_KEY            the router's API key, handed to harbor as OPENAI_API_KEY via a 0600 EnvironmentFile
#                      that is removed as soon as the unit has started
#   HF_TOKEN           optional: Hugging Face token for hf-sandbox runs, same path as the key
#   USE_OVERRIDE       1 = pass --extra-docker-compose (Docker environment), 0 = not (hf-sandbox)
#   STOP_TIMEOUT_SECS  graceful-stop budget (systemd TimeoutStopSec, and for stopping a previous job)
#   WAIT               1 = wait for completion;  WAIT_TIMEOUT_SECS  its budget;  PROGRESS_SECS  progress interval
#   STOP_SCRIPT        text of harbor-stop.sh (to stop a previous job)
set -euo pipefail
: "${VENV:?}" "${JOB_NAME:?}" "${JOBS_DIR:?}" "${JOB_DIR:?}" "${JOB_CONFIG:?}" "${COMPOSE_OVERRIDE:?}" "${LOG_FILE:?}"
: "${ENV_FILE:?}" "${MANIFEST_FILE:?}" "${UNIT:?}" "${CURRENT_FILE:?}" "${WORK_DIR:?}" "${MANIFEST_JSON:?}" "${API_KEY:?}"
: "${STOP_TIMEOUT_SECS:?}" "${WAIT:?}" "${WAIT_TIMEOUT_SECS:?}" "${STOP_SCRIPT:?}"
PROGRESS_SECS=${PROGRESS_SECS:-30}
die() { echo "harbor-launch: $*" >&2; exit 1; }
say() { echo "harbor-launch: $*" >&2; }
for tool in systemd-run systemctl jq docker; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
USE_OVERRIDE=${USE_OVERRIDE:-1}
override_args=()
[ "$USE_OVERRIDE" = 1 ] && override_args=(--extra-docker-compose "$COMPOSE_OVERRIDE")
for f in "$JOB_CONFIG" "$VENV/bin/harbor" "${override_args[@]:1}"; do [ -e "$f" ] || die "$f is missing (preflight writes it)"; done
case "$JOBS_DIR" in /*) ;; *) die "jobs dir must be absolute, got $JOBS_DIR";; esac

is_active() { local s; s=$(systemctl is-active "$1" 2>/dev/null || true); [ "$s" = active ] || [ "$s" = activating ] || [ "$s" = deactivating ]; }
finished() { [ -f "$JOB_DIR/result.json" ] && jq -e '.finished_at != null' "$JOB_DIR/result.json" >/dev/null 2>&1; }
log_tail() { tail -n 20 "$LOG_FILE" 2>/dev/null | sed 's/^/  | /' >&2 || true; }

# A different job of ours still running? Stop it gracefully first (its directory stays).
if [ -f "$CURRENT_FILE" ]; then
  read -r previous_job previous_unit previous_dir previous_env <"$CURRENT_FILE" || true
  if [ -n "${previous_job:-}" ] && [ "$previous_job" != "$JOB_NAME" ] && is_active "$previous_unit"; then
    say "job $previous_job is still running: stopping it before starting $JOB_NAME"
    UNIT=$previous_unit JOB_DIR=$previous_dir ENV_FILE=${previous_env:-} bash -c "$STOP_SCRIPT" harbor-stop
  fi
fi

mkdir -p "$JOBS_DIR" "$(dirname "$LOG_FILE")" "$(dirname "$ENV_FILE")" "$(dirname "$CURRENT_FILE")"
pid_file="$(dirname "$ENV_FILE")/harbor.pid"
state=
if is_active "$UNIT"; then
  state=running
  say "$JOB_NAME is already running ($UNIT)"
elif finished; then
  state=finished
  say "$JOB_NAME already finished; not starting it again"
else
  if [ -d "$JOB_DIR" ]; then say "$JOB_DIR exists without finished_at: starting harbor again under the same name (it resumes the job)"; fi
  (umask 077 && printf 'OPENAI_API_KEY=%s\n' "$API_KEY" >"$ENV_FILE" && if [ -n "${HF_TOKEN:-}" ]; then printf 'HF_TOKEN=%s\n' "$HF_TOKEN" >>"$ENV_FILE"; fi)
  chmod 600 "$ENV_FILE"
  printf '%s\n' "$MANIFEST_JSON" >"$MANIFEST_FILE.part" && mv "$MANIFEST_FILE.part" "$MANIFEST_FILE"
  printf '=== %s reprobench: harbor run --job-name %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$JOB_NAME" >>"$LOG_FILE"
  systemctl reset-failed "$UNIT" >/dev/null 2>&1 || true
  # systemd rather than tmux (seed 000): the unit knows harbor's PID and every child's (cgroup), survives
  # the SSH session, takes the key from a root-only EnvironmentFile instead of a shell's environment, and
  # KillMode=mixed makes `systemctl stop` send SIGTERM to harbor alone (its docker compose children must
  # finish tearing trials down) and SIGKILL the rest only after TimeoutStopSec.
  systemd-run --quiet --unit "$UNIT" --collect \
    --property=Type=exec \
    --property=KillMode=mixed --property=KillSignal=SIGTERM --property="TimeoutStopSec=$STOP_TIMEOUT_SECS" \
    --property="EnvironmentFile=$ENV_FILE" \
    --property="StandardOutput=append:$LOG_FILE" --property="StandardError=append:$LOG_FILE" \
    --property="WorkingDirectory=$WORK_DIR" --property=LimitNOFILE=65536 \
    --setenv=HARBOR_TELEMETRY=0 --setenv=LITELLM_LOCAL_MODEL_COST_MAP=true --setenv=PYTHONUNBUFFERED=1 \
    --setenv="HOME=${HOME:-/root}" --setenv="PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    -- "$VENV/bin/harbor" run --config "$JOB_CONFIG" "${override_args[@]}" \
    --job-name "$JOB_NAME" --jobs-dir "$JOBS_DIR" --yes ||
    die "systemd-run could not start $UNIT"
  # systemd read the EnvironmentFile when it started harbor (Type=exec: systemd-run returned after the
  # exec); the key need not stay on disk. A relaunch writes it again.
  rm -f "$ENV_FILE"
  state=running
  # Harbor writes config.json and result.json at the start of the run: wait for them (bounded).
  for _ in $(seq 1 120); do
    [ -f "$JOB_DIR/config.json" ] && [ -f "$JOB_DIR/result.json" ] && break
    if ! is_active "$UNIT"; then
      finished && break
      say "harbor exited before creating $JOB_DIR; log tail:"; log_tail; exit 1
    fi
    sleep 1
  done
  [ -f "$JOB_DIR/config.json" ] || { say "harbor did not create $JOB_DIR/config.json within 120s; log tail:"; log_tail; exit 1; }
  printf '%s %s %s %s\n' "$JOB_NAME" "$UNIT" "$JOB_DIR" "$ENV_FILE" >"$CURRENT_FILE"
  systemctl show --property MainPID --value "$UNIT" >"$pid_file"
  say "started $JOB_NAME: unit $UNIT, pid $(cat "$pid_file"), log $LOG_FILE"
fi

if [ "$WAIT" = 1 ] && [ "$state" = running ]; then
  deadline=$((SECONDS + WAIT_TIMEOUT_SECS))
  next=0
  while is_active "$UNIT" && ! finished; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      die "job $JOB_NAME still running after ${WAIT_TIMEOUT_SECS}s (run.waitTimeoutMinutes); it keeps running — log $LOG_FILE"
    fi
    if [ "$SECONDS" -ge "$next" ] && [ -f "$JOB_DIR/result.json" ]; then
      jq -r '"harbor-launch: progress: \(.stats.n_completed_trials // 0)/\(.n_total_trials // "?") trials done, \(.stats.n_running_trials // 0) running, \(.stats.n_errored_trials // 0) errored"' "$JOB_DIR/result.json" >&2 || true
      next=$((SECONDS + PROGRESS_SECS))
    fi
    sleep 2
  done
  # harbor writes finished_at just before exiting: give the unit a bounded moment to end.
  for _ in $(seq 1 60); do is_active "$UNIT" || break; sleep 1; done
  if finished; then state=finished; else say "harbor exited without finishing the job; log tail:"; log_tail; exit 1; fi
  say "job $JOB_NAME finished"
fi

# The PID harbor had (the unit is collected once it exits, so remember it).
pid=$(cat "$pid_file" 2>/dev/null || echo 0)
result='null'
[ -f "$JOB_DIR/result.json" ] && result=$(jq -c 'del(.trial_results)' "$JOB_DIR/result.json")
jq -cn --arg job "$JOB_NAME" --arg dir "$JOB_DIR" --arg log "$LOG_FILE" --arg unit "$UNIT" --arg pid "${pid:-0}" --arg state "$state" \
  --argjson result "$result" '{jobName: $job, jobDir: $dir, log: $log, unit: $unit, pid: ($pid | tonumber), state: $state, result: $result}'

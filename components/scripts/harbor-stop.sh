#!/usr/bin/env bash
# Stop a Harbor job gracefully (seed 000 "正确停止实验"): SIGTERM to the `harbor run` process only (its
# docker compose children must live on to tear the trial containers down), wait up to STOP_TIMEOUT_SECS
# for it to exit after writing every trial's result.json; only then SIGKILL the unit and remove the
# compose projects of this job's trials that are left. The job directory is never removed.
# Inputs (env):
#   UNIT                transient systemd unit running harbor
#   JOB_DIR             <jobs dir>/<job name>
#   STOP_TIMEOUT_SECS   how long harbor gets after SIGTERM
#   ENV_FILE            the key file to remove once harbor is gone (optional)
set -euo pipefail
: "${UNIT:?}" "${JOB_DIR:?}" "${STOP_TIMEOUT_SECS:?}"
ENV_FILE=${ENV_FILE:-}
say() { echo "harbor-stop: $*" >&2; }

active() { [ "$(systemctl is-active "$UNIT" 2>/dev/null || true)" = active ] || [ "$(systemctl is-active "$UNIT" 2>/dev/null || true)" = deactivating ]; }

if active; then
  pid=$(systemctl show --property MainPID --value "$UNIT")
  say "sending SIGTERM to harbor (pid $pid, $UNIT); waiting up to ${STOP_TIMEOUT_SECS}s"
  systemctl kill --kill-whom=main --signal=SIGTERM "$UNIT"
  deadline=$((SECONDS + STOP_TIMEOUT_SECS))
  while active && [ "$SECONDS" -lt "$deadline" ]; do sleep 2; done
  if active; then
    say "harbor still running after ${STOP_TIMEOUT_SECS}s: SIGKILL to $UNIT"
    systemctl kill --signal=SIGKILL "$UNIT" || true
    for _ in $(seq 1 30); do active || break; sleep 1; done
  else
    say "harbor exited"
  fi
else
  say "$UNIT is not running"
fi

# Compose projects left behind (only after a hard kill): project = lower-cased "<trial>__env" with
# characters outside [a-z0-9_-] replaced by '-', as Harbor names them.
left=0
if [ -d "$JOB_DIR" ] && command -v docker >/dev/null; then
  for trial in "$JOB_DIR"/*/; do
    [ -d "$trial" ] || continue
    name=$(basename "$trial")
    project=$(printf '%s__env' "$name" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_-]/-/g')
    containers=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
    if [ -n "$containers" ]; then
      left=$((left + 1))
      say "removing leftover compose project $project"
      # shellcheck disable=SC2086 # container ids, one per word
      docker rm -f $containers >/dev/null || true
      docker network rm "${project}_default" >/dev/null 2>&1 || true
    fi
  done
fi
[ -z "$ENV_FILE" ] || rm -f "$ENV_FILE"

trials=0 with_result=0
if [ -d "$JOB_DIR" ]; then
  for trial in "$JOB_DIR"/*/; do
    [ -d "$trial" ] || continue
    trials=$((trials + 1))
    [ -f "$trial/result.json" ] && with_result=$((with_result + 1))
  done
fi
finished=null
[ -f "$JOB_DIR/result.json" ] && finished=$(jq -c '.finished_at' "$JOB_DIR/result.json" 2>/dev/null || echo null)
say "job $JOB_DIR: $with_result/$trials trial directories have result.json; finished_at=$finished; leftover compose projects removed: $left (the job directory is kept)"

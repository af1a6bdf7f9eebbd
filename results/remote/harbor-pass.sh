#!/usr/bin/env bash
# Runs one Harbor pass over an existing job on the runner (`harbor job resume`, or `harbor run` of a rerun
# job), for `reprobench resume|rerun --stack`: writes the planned files (backing up the ones it replaces),
# starts Harbor under a transient systemd unit the way harbor-launch.sh starts a job (API key in a 0600
# environment file, log appended), and with WAIT=1 waits for it to exit.
# Inputs: WORK_DIR (Harbor's cwd), UNIT, LOG_FILE, API_KEY, ARGV_B64 (base64 of the NUL-separated argv; a
# relative argv[0] is looked up in VENV/bin), VENV, FILES_B64 (base64 of lines "<path>\t<base64 content>",
# may be empty), MOVES_B64 (base64 of lines "<from dir>\t<to dir>", absolute, moved before Harbor starts;
# may be empty), STAMP (backup suffix), WAIT (0|1), WAIT_TIMEOUT_SECS, STOP_TIMEOUT_SECS; optional JOB_DIR
# and CURRENT_FILE: the stack's runs/current.d/ entry, pointed at this pass so `reprobench status` follows it.
set -euo pipefail
: "${WORK_DIR:?}" "${UNIT:?}" "${LOG_FILE:?}" "${API_KEY:?}" "${ARGV_B64:?}" "${VENV:?}" "${STAMP:?}"
WAIT=${WAIT:-0}
WAIT_TIMEOUT_SECS=${WAIT_TIMEOUT_SECS:-43200}
STOP_TIMEOUT_SECS=${STOP_TIMEOUT_SECS:-900}
die() { echo "harbor-pass: $*" >&2; exit 1; }
say() { echo "harbor-pass: $*" >&2; }
for tool in systemd-run systemctl base64 jq; do command -v "$tool" >/dev/null || die "'$tool' is required on this host"; done
is_active() { local s; s=$(systemctl is-active "$1" 2>/dev/null || true); [ "$s" = active ] || [ "$s" = activating ] || [ "$s" = deactivating ]; }
is_active "$UNIT" && die "$UNIT is already running: one pass at a time per job (systemctl status $UNIT)"

mapfile -d '' argv < <(printf '%s' "$ARGV_B64" | base64 -d)
[ "${#argv[@]}" -gt 0 ] || die "ARGV_B64 holds no command"
case "${argv[0]}" in /*) ;; *) argv[0]="$VENV/bin/${argv[0]}";; esac
[ -x "${argv[0]}" ] || die "${argv[0]} is not an executable on this host (Harbor's venv: harbor.venv)"
[ -d "$WORK_DIR" ] || die "working directory $WORK_DIR does not exist"

if [ -n "${FILES_B64:-}" ]; then
  while IFS=$'\t' read -r file content; do
    [ -n "$file" ] || continue
    case "$file" in /*) ;; *) die "planned file $file is not an absolute path";; esac
    if [ -f "$file" ]; then cp -p -- "$file" "$file.bak-$STAMP"; say "backup $file.bak-$STAMP"; fi
    printf '%s' "$content" | base64 -d >"$file.part" && mv -- "$file.part" "$file"
    say "wrote $file"
  done < <(printf '%s' "$FILES_B64" | base64 -d)
fi

if [ -n "${MOVES_B64:-}" ]; then
  moves_from=() moves_to=()
  while IFS=$'\t' read -r from to || [ -n "$from" ]; do
    [ -n "$from" ] || continue
    moves_from+=("$from") moves_to+=("$to")
  done < <(printf '%s' "$MOVES_B64" | base64 -d)
  # Every move is checked before the first is made: a refused pass moves nothing.
  for i in "${!moves_from[@]}"; do
    from=${moves_from[$i]} to=${moves_to[$i]}
    case "$from" in /*) ;; *) die "planned move $from -> $to is not between absolute paths";; esac
    case "$to" in /*) ;; *) die "planned move $from -> $to is not between absolute paths";; esac
    [ -d "$from" ] || die "planned move: $from is not a directory"
    [ ! -e "$to" ] || die "planned move: $to already exists (set aside by an earlier pass?); move it away and run again"
  done
  for i in "${!moves_from[@]}"; do
    from=${moves_from[$i]} to=${moves_to[$i]}
    mkdir -p -- "$(dirname "$to")"
    mv -- "$from" "$to"
    if [ ! -d "$to" ] || [ -e "$from" ]; then die "moving $from to $to did not complete"; fi
    say "moved $from to $to"
  done
fi

env_file=$(mktemp /run/reprobench-pass-XXXXXX.env)
(umask 077 && printf 'OPENAI_API_KEY=%s\n' "$API_KEY" >"$env_file")
mkdir -p "$(dirname "$LOG_FILE")"
printf '=== %s reprobench: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${argv[*]}" >>"$LOG_FILE"
systemctl reset-failed "$UNIT" >/dev/null 2>&1 || true
systemd-run --quiet --unit "$UNIT" \
  --property=Type=exec --property=KillMode=mixed --property=KillSignal=SIGTERM --property="TimeoutStopSec=$STOP_TIMEOUT_SECS" \
  --property="EnvironmentFile=$env_file" \
  --property="StandardOutput=append:$LOG_FILE" --property="StandardError=append:$LOG_FILE" \
  --property="WorkingDirectory=$WORK_DIR" --property=LimitNOFILE=65536 \
  --setenv=HARBOR_TELEMETRY=0 --setenv=LITELLM_LOCAL_MODEL_COST_MAP=true --setenv=PYTHONUNBUFFERED=1 \
  --setenv="HOME=${HOME:-/root}" --setenv="PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  -- "${argv[@]}" || { rm -f "$env_file"; die "systemd-run could not start $UNIT"; }
# systemd has read the environment file when the unit started: the key does not stay on disk.
for _ in $(seq 1 50); do is_active "$UNIT" && break; sleep 0.1; done
rm -f "$env_file"
say "started $UNIT (log $LOG_FILE)"
if [ -n "${CURRENT_FILE:-}" ] && [ -n "${JOB_DIR:-}" ]; then
  mkdir -p "$(dirname "$CURRENT_FILE")"
  printf '%s %s %s %s\n' "$(basename "$JOB_DIR")" "$UNIT" "$JOB_DIR" "$env_file" >"$CURRENT_FILE.part" && mv "$CURRENT_FILE.part" "$CURRENT_FILE"
fi

if [ "$WAIT" = 1 ]; then
  deadline=$((SECONDS + WAIT_TIMEOUT_SECS))
  while is_active "$UNIT"; do
    [ "$SECONDS" -lt "$deadline" ] || die "$UNIT still running after ${WAIT_TIMEOUT_SECS}s; it keeps running (log $LOG_FILE)"
    sleep 2
  done
  # A unit that exited 0 is unloaded at once (no status left to read); a failed one stays, with its status.
  result=$(systemctl show "$UNIT" --property=ExecMainStatus --value 2>/dev/null || true)
  say "$UNIT exited${result:+ with status $result}"
  tail_text=
  [ "${result:-0}" = 0 ] || tail_text=$(tail -n 25 "$LOG_FILE" 2>/dev/null || true)
  jq -cn --arg unit "$UNIT" --arg status "${result:-0}" --arg tail "$tail_text" '{unit: $unit, exitStatus: $status, logTail: $tail}'
else
  jq -cn --arg unit "$UNIT" '{unit: $unit, exitStatus: null, logTail: ""}'
fi

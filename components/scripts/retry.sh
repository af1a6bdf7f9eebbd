#!/usr/bin/env bash
# shellcheck shell=bash
# A function file, not a script: prepended to a host script with scriptWithEnv(["retry", "<script>"], env)
# (components/host-script.ts), or sourced by a script run from a file. Defines one function:
#
#   retry <attempts> <first-backoff-seconds> <what> -- cmd args…
#
# Runs cmd; when it fails and attempts are left, prints on stderr
#   <name>: progress: retrying <what> (attempt k/N in Ss): <the failed attempt's last stderr line>
# (CheckedCommand forwards "NAME: progress: TEXT" lines to `pulumi up`'s output), waits S seconds and runs
# it again, doubling the wait each time. Returns 0 on the first success, else the last attempt's status, so
# the caller can `die` with a clear message. cmd's stdout passes through untouched (capture it with $(…));
# its stderr is kept and forwarded after each attempt. Prints no environment values.
#   <name>          RETRY_NAME, else the running script's file name without .sh
#   RETRY_BACKOFF_SCALE  multiplies every wait (default 1; 0 = no waiting, for tests)
retry() {
  local attempts=$1 backoff=$2 what=$3 k=1 status=0 err last wait name
  shift 3
  [ "${1:-}" != -- ] || shift
  case "$attempts" in '' | *[!0-9]*) echo "retry: attempts must be a number, got '$attempts'" >&2; return 2;; esac
  case "$backoff" in '' | *[!0-9]*) echo "retry: backoff must be whole seconds, got '$backoff'" >&2; return 2;; esac
  [ "$attempts" -ge 1 ] || attempts=1
  [ "$#" -gt 0 ] || { echo "retry: no command for '$what'" >&2; return 2; }
  name=${RETRY_NAME:-$(basename "${0%.sh}")}
  err=$(mktemp "${TMPDIR:-/tmp}/retry.XXXXXX")
  while :; do
    status=0
    "$@" 2>"$err" || status=$?
    cat "$err" >&2
    if [ "$status" -eq 0 ]; then
      rm -f "$err"
      return 0
    fi
    if [ "$k" -ge "$attempts" ]; then
      rm -f "$err"
      return "$status"
    fi
    # The last non-empty line (curl and pip redraw lines with \r: keep what follows the last one).
    last=$(tr '\r' '\n' <"$err" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 || true)
    [ -n "$last" ] || last="exit status $status"
    wait=$((backoff * ${RETRY_BACKOFF_SCALE:-1}))
    k=$((k + 1))
    echo "$name: progress: retrying $what (attempt $k/$attempts in ${wait}s): $last" >&2
    [ "$wait" -eq 0 ] || sleep "$wait"
    backoff=$((backoff * 2))
  done
}

#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine (idempotent). CI and fresh developer machines have
# only a docker client and no daemon, and no systemd to start one, so we install Debian's docker.io if
# dockerd is missing and run it in the background ourselves.
#
# Env: REPROBENCH_DOCKERD_LOG (default /var/log/reprobench-dockerd.log),
#      REPROBENCH_DOCKERD_PIDFILE (default /run/reprobench-dockerd.pid),
#      REPROBENCH_DOCKERD_WAIT_SECONDS (default 60): how long to wait for `docker info`.
set -euo pipefail

log_file=${REPROBENCH_DOCKERD_LOG:-/var/log/reprobench-dockerd.log}
pid_file=${REPROBENCH_DOCKERD_PIDFILE:-/run/reprobench-dockerd.pid}
wait_seconds=${REPROBENCH_DOCKERD_WAIT_SECONDS:-60}

say() { echo "dockerd.sh: $*" >&2; }

if docker info >/dev/null 2>&1; then
  say "docker engine already answers"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  say "dockerd missing: installing Debian's docker.io"
  export DEBIAN_FRONTEND=noninteractive
  # A stale package list makes the install fail with 404s; refresh once.
  apt-get update -q >/dev/null
  apt-get install -y -q docker.io >/dev/null
fi

# A pid file from a daemon that is still alive means it is starting (or wedged): do not start a second.
if [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  say "dockerd (pid $(cat "$pid_file")) is running; waiting for it to answer"
else
  say "starting dockerd (log: $log_file)"
  mkdir -p "$(dirname "$log_file")" "$(dirname "$pid_file")"
  # setsid detaches it from our session so it outlives this script and the caller's process group.
  setsid dockerd --pidfile "$pid_file" >>"$log_file" 2>&1 </dev/null &
fi

deadline=$((SECONDS + wait_seconds))
until docker info >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "docker engine did not answer within ${wait_seconds}s; last lines of $log_file:"
    tail -n 20 "$log_file" >&2 || true
    exit 1
  fi
  sleep 0.5
done
say "docker engine ready ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo unknown))"

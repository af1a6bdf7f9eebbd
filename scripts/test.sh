#!/usr/bin/env bash
# The whole test suite, from a fresh clone: toolchain (Node 22, pulumi, plugins), typecheck, lint,
# lint of the shell scripts, unit tests, then the integration tests against dockerd and the simulated cluster.
#   scripts/test.sh            everything
#   scripts/test.sh --unit     toolchain + static checks + unit tests only
# Ends with each phase's time and each integration suite's wall time (scripts/test-report.mjs).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
unit_only=0
[ "${1:-}" = "--unit" ] && unit_only=1

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

results=$(mktemp -d)
# Each phase's start and end (epoch seconds) for the table at the end (scripts/test-report.mjs).
phase_start() { phase_name=$1 phase_t0=$(date +%s); step "$1"; }
phase_end() { printf '%s\t%s\t%s\n' "$phase_name" "$phase_t0" "$(date +%s)" >>"$results/phases.tsv"; }
# shellcheck disable=SC2317 # called from the EXIT trap
report() { node scripts/test-report.mjs "$results"; }

# Node and node_modules first: typecheck, lint and the unit tests need nothing else, so they (and the sim
# images) run while the Pulumi CLI and plugins build in the background (10-20 min cold, seconds warm).
phase_start "node"
node_env=$(bash scripts/toolchain.sh --node-only --print-env)
eval "$node_env"
node --version
phase_end

toolchain_t0=$(date +%s)
# With the Python language host (test/integration/examples.test.ts runs a Python program): built here, in
# the overlap, rather than inside that suite beside the others.
# In a process group of its own (setsid), so that stopping it stops its go builds too, which would else
# keep the toolchain lock for the rest of their build.
REPROBENCH_PYTHON=1 setsid bash scripts/toolchain.sh --print-env >"$results/toolchain.env" 2>"$results/toolchain.log" &
toolchain_pid=$!
# Whatever ends this script, the background build does not outlive it, and the tables of what ran are printed
# (the script's exit status stays the failing step's). The pid is cleared once reaped: it may be reused later.
trap '[ -z "${toolchain_pid:-}" ] || kill -TERM -- "-$toolchain_pid" 2>/dev/null || true; report || true' EXIT
wait_toolchain() {
  step "toolchain (built in the background since $(date -d "@$toolchain_t0" +%H:%M:%S))"
  local rc=0
  wait "$toolchain_pid" || rc=$?
  toolchain_pid=
  printf '%s\t%s\t%s\n' "toolchain" "$toolchain_t0" "$(date +%s)" >>"$results/phases.tsv"
  cat "$results/toolchain.log"
  [ "$rc" = 0 ] || { echo "scripts/toolchain.sh failed (exit $rc); its log is above" >&2; exit "$rc"; }
  # shellcheck source-path=SCRIPTDIR source=env.sh
  source scripts/env.sh
  pulumi version
}

phase_start "static"
echo "--- typecheck"
npx tsc --noEmit -p .
echo "--- lint"
npx eslint .
echo "--- shellcheck"
command -v shellcheck >/dev/null || { apt-get update -qq && apt-get install -y -qq shellcheck >/dev/null; }
git ls-files '*.sh' bin/reprobench | xargs shellcheck -x
phase_end

# The SSH tests run against a real loopback sshd and a real sudo (test/helpers/sshd.ts): a skipped test
# must not count as passing, so install them rather than skip.
command -v /usr/sbin/sshd >/dev/null || { apt-get update -qq && apt-get install -y -qq openssh-server >/dev/null; }
command -v sudo >/dev/null || { apt-get update -qq && apt-get install -y -qq sudo >/dev/null; }
# The tool bundle's scripts are tested with the host's own tmux, as they bundle it on a real runner.
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux >/dev/null; }
# The Python example (test/integration/examples.test.ts) makes a virtualenv with the host's python3.
python3 -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }

vitest_run() { # $1 = project, then more vitest flags
  local project=$1
  shift
  REPROBENCH_SUITE_TIMES="$results/suite-times.jsonl" npx vitest run --project "$project" --reporter=default --reporter=json \
    --reporter=./test/helpers/suite-times-reporter.ts --outputFile.json="$results/$project.json" "$@"
}

if [ "$unit_only" = 1 ]; then
  phase_start "unit"
  vitest_run unit --maxWorkers="${REPROBENCH_UNIT_PARALLEL:-2}" --minWorkers=1
  phase_end
  wait_toolchain
  exit 0
fi

# Before the images and inside the toolchain build's overlap: the unit files need Node only (those about the
# toolchain fake one in a throw-away checkout), so a cold run does not wait for them after the build.
# Two workers: Vitest's default on two cores is one, and the unit files mostly wait on the processes they
# start (bash, sshd, the doubles), which left the machine 40 % idle.
phase_start "unit"
vitest_run unit --maxWorkers="${REPROBENCH_UNIT_PARALLEL:-2}" --minWorkers=1
phase_end

# The docker engine and every sim image (debootstrap, the hosts, the doubles, Harbor's wheelhouse), the
# integration project's global setup run on its own, beside the toolchain build.
phase_start "images"
node --import tsx test/helpers/integration-setup.ts
phase_end

wait_toolchain

phase_start "integration"
# Side by side, each suite on a sim instance of its own: they mostly wait on their hosts (docker, model
# loads, Harbor), so three at a time on two cores take about half the serial time.
parallel=${REPROBENCH_ITEST_PARALLEL:-3}
case "$parallel" in ''|*[!0-9]*|0) echo "REPROBENCH_ITEST_PARALLEL: got '$parallel'; expected a positive integer" >&2; exit 2;; esac
integration_rc=0
vitest_run integration --maxWorkers="$parallel" --minWorkers=1 || integration_rc=$?
phase_end
exit "$integration_rc"

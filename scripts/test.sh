#!/usr/bin/env bash
# The whole test suite, from a fresh clone: toolchain (Node 22, pulumi, plugins), typecheck, lint,
# lint of the shell scripts, unit tests, then the integration tests against dockerd and the simulated cluster.
#   scripts/test.sh            everything
#   scripts/test.sh --unit     toolchain + static checks + unit tests only
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
unit_only=0
[ "${1:-}" = "--unit" ] && unit_only=1

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

step "toolchain"
# shellcheck source-path=SCRIPTDIR source=env.sh
source scripts/env.sh
pulumi version

step "typecheck"
npx tsc --noEmit -p .
step "lint"
npx eslint .
step "shellcheck"
command -v shellcheck >/dev/null || { apt-get update -qq && apt-get install -y -qq shellcheck >/dev/null; }
git ls-files '*.sh' bin/reprobench | xargs shellcheck -x

# The SSH tests run against a real loopback sshd and a real sudo (test/helpers/sshd.ts): a skipped test
# must not count as passing, so install them rather than skip.
command -v /usr/sbin/sshd >/dev/null || { apt-get update -qq && apt-get install -y -qq openssh-server >/dev/null; }
command -v sudo >/dev/null || { apt-get update -qq && apt-get install -y -qq sudo >/dev/null; }
# The tool bundle's scripts are tested with the host's own tmux, as they bundle it on a real runner.
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux >/dev/null; }
# The Python example (test/integration/examples.test.ts) makes a virtualenv with the host's python3.
python3 -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }

results=$(mktemp -d)
# Vitest's summary plus one plain "N passed, N failed" line for the whole suite at the end.
vitest_run() { # $1 = project, then more vitest flags
  local project=$1
  shift
  npx vitest run --project "$project" --reporter=default --reporter=json --outputFile.json="$results/$project.json" "$@"
}
summary() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const fs = require("fs"); let passed = 0, failed = 0, skipped = 0;
    for (const f of fs.readdirSync(process.argv[1])) {
      const r = JSON.parse(fs.readFileSync(`${process.argv[1]}/${f}`, "utf8"));
      passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
    }
    console.log(`tests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));' "$results"
}

step "unit tests"
vitest_run unit

if [ "$unit_only" = 1 ]; then summary; exit 0; fi

step "docker engine"
bash scripts/dockerd.sh
step "integration tests"
# Side by side, each suite on a sim instance of its own: they mostly wait on their hosts (docker, model
# loads, Harbor), so three at a time on two cores take about half the serial time.
parallel=${REPROBENCH_ITEST_PARALLEL:-3}
case "$parallel" in ''|*[!0-9]*|0) echo "REPROBENCH_ITEST_PARALLEL: got '$parallel'; expected a positive integer" >&2; exit 2;; esac
vitest_run integration --maxWorkers="$parallel" --minWorkers=1
summary

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

step "unit tests"
# The offline command plugin's tests run a real sshd on loopback.
[ -x /usr/sbin/sshd ] || { apt-get update -qq && apt-get install -y -qq openssh-server >/dev/null; }
npx vitest run --project unit

[ "$unit_only" = 1 ] && exit 0

step "docker engine"
bash scripts/dockerd.sh
step "integration tests"
npx vitest run --project integration

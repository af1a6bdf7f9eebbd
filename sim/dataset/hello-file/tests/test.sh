#!/usr/bin/env bash
# Verifier: reward 1 when /app/hello.txt is exactly "Hello from reprobench!\n", else 0.
set -euo pipefail

mkdir -p /logs/verifier
expected=$'Hello from reprobench!\n'
if [[ -f /app/hello.txt ]] && [[ "$(cat /app/hello.txt; printf x)" == "${expected}x" ]]; then
  echo "PASS: /app/hello.txt has the expected line"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/hello.txt is missing or differs from the expected line"
  echo 0 > /logs/verifier/reward.txt
fi

#!/usr/bin/env bash
# Verifier: reward 1 when /app/sum.txt holds the sum of the shipped numbers, else 0.
# The expected value is fixed here (not recomputed from /app/numbers.txt, which the agent could edit).
set -euo pipefail

mkdir -p /logs/verifier
expected=84030
actual="$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null || true)"
if [[ "$actual" == "$expected" ]]; then
  echo "PASS: sum is $expected"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: expected $expected in /app/sum.txt, got '${actual}'"
  echo 0 > /logs/verifier/reward.txt
fi

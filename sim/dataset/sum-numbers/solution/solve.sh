#!/usr/bin/env bash
# Oracle solution for sum-numbers.
set -euo pipefail

python3 -c 'import sys; print(sum(int(line) for line in open(sys.argv[1]) if line.strip()))' \
  /app/numbers.txt > /app/sum.txt

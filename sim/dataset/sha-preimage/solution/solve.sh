#!/usr/bin/env bash
# "Oracle" for sha-preimage: there is no feasible solution, so it writes its best short attempt and
# the task scores 0. This task exists so that reward 0 occurs in every sim run.
set -euo pipefail

printf 'reprobench-no-preimage\n' > /app/preimage.txt

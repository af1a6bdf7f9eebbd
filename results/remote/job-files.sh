#!/usr/bin/env bash
# Prints, base64-encoded, a gzipped tar of a job dir's JSON files (the job's config.json, lock.json and
# result.json, each trial's config.json and result.json): what `reprobench resume|rerun --stack` plans from,
# without copying logs or artifacts. Inputs: JOB_DIR.
set -euo pipefail
: "${JOB_DIR:?}"
[ -d "$JOB_DIR" ] || { echo "job-files: $JOB_DIR is not a directory on this host" >&2; exit 3; }
cd "$JOB_DIR"
# Trial dirs without a result.json still have their config.json: the plan counts them as incomplete.
find . -maxdepth 2 -type f \( -name config.json -o -name lock.json -o -name result.json \) -print0 |
  tar --null -czf - -T - | base64 -w0
echo

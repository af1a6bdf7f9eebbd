#!/usr/bin/env bash
# Prints, base64-encoded, a gzipped tar of a job dir's JSON files (the job's config.json, lock.json and
# result.json, each trial's config.json and result.json) and of each trial.log only Harbor's cancel line:
# what `reprobench resume|rerun --stack` plans from, without copying logs or artifacts. Inputs: JOB_DIR.
set -euo pipefail
: "${JOB_DIR:?}"
[ -d "$JOB_DIR" ] || { echo "job-files: $JOB_DIR is not a directory on this host" >&2; exit 3; }
cd "$JOB_DIR"
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
# Trial dirs without a result.json still have their config.json: the plan counts them as incomplete.
find . -maxdepth 2 -type f \( -name config.json -o -name lock.json -o -name result.json \) -print0 |
  xargs -0 -r cp --parents -t "$copy" --
# Of each trial.log only Harbor's cancel line, which tells a trial cancelled after an earlier exception.
find . -mindepth 2 -maxdepth 2 -type f -name trial.log -print0 |
  while IFS= read -r -d '' log; do
    if lines=$(grep -x 'Trial .* cancelled' "$log"); then
      mkdir -p "$copy/$(dirname "$log")"
      printf '%s\n' "$lines" >"$copy/$log"
    fi
  done
tar -czf - -C "$copy" . | base64 -w0
echo

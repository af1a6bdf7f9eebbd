#!/usr/bin/env bash
# One line for the drift check: "ok" while harbor runs or once the job finished; "interrupted" when
# harbor is gone without finished_at (the next `up` after a refresh relaunches the same job name,
# which resumes it); "missing" when the job directory is gone.
# Inputs (env): UNIT, JOB_NAME, JOB_DIR
set -euo pipefail
: "${UNIT:?}" "${JOB_NAME:?}" "${JOB_DIR:?}"
state=missing
if [ "$(systemctl is-active "$UNIT" 2>/dev/null || true)" = active ]; then
  state=ok
elif [ -f "$JOB_DIR/result.json" ]; then
  if jq -e '.finished_at != null' "$JOB_DIR/result.json" >/dev/null 2>&1; then state=ok; else state=interrupted; fi
elif [ -d "$JOB_DIR" ]; then
  state=interrupted
fi
echo "job=$JOB_NAME $state"

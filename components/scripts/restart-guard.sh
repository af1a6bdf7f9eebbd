#!/usr/bin/env bash
# Runs on the runner before a change that restarts a model server, the router, dockerd or a bridge: while
# any stack's Harbor job runs there, refuse (naming the job and its running trials) unless the stack
# allows it; when allowed, print the trials at risk. Jobs are the ones named in runs/current.d.
# Inputs (env):
#   WHAT          what would restart, for the messages ("worker-a's model server")
#   CURRENT_DIR   <workDir>/runs/current.d (one file per stack: "job unit jobdir envfile")
#   ALLOW         1 = allowed by the stack config (reprobench:allowRestartsDuringJobs)
set -euo pipefail
: "${WHAT:?}" "${CURRENT_DIR:?}"
ALLOW=${ALLOW:-0}
jobs=()
at_risk=()
if [ -d "$CURRENT_DIR" ]; then
  for f in "$CURRENT_DIR"/*; do
    [ -f "$f" ] || continue
    read -r job unit dir _ <"$f" || continue
    [ "$(systemctl is-active "$unit" 2>/dev/null || true)" = active ] || continue
    jobs+=("$job (stack $(basename "$f"))")
    # Trials that started and have no result yet.
    for t in "$dir"/*/; do
      [ -d "$t" ] && [ ! -f "$t/result.json" ] && at_risk+=("$job/$(basename "$t")")
    done
  done
fi
if [ ${#jobs[@]} -eq 0 ]; then
  echo "restart-guard: no job runs; $WHAT may restart"
  exit 0
fi
if [ "$ALLOW" != 1 ]; then
  {
    echo "restart-guard: refusing to restart $WHAT while a Harbor job runs on this cluster: ${jobs[*]}"
    echo "  trials that would lose their model server: ${#at_risk[@]}${at_risk[*]:+ (${at_risk[*]})}"
    echo "  wait for the job to finish, stop it (destroy its stack), or set reprobench:allowRestartsDuringJobs: true"
  } >&2
  exit 1
fi
echo "restart-guard: restarting $WHAT under ${jobs[*]} (allowed by reprobench:allowRestartsDuringJobs); trials at risk: ${#at_risk[@]}${at_risk[*]:+ (${at_risk[*]})}"

#!/usr/bin/env bash
# Destroy guard of a cluster-owning stack, run on the runner before anything of the cluster goes: while
# another stack of this project still runs a Harbor job on the cluster, refuse (naming that stack and its
# job) so its trials are not cut off under it. The owner's own job is stopped by its own destroy step.
# Inputs (env):
#   CURRENT_DIR   <workDir>/runs/current.d: one file per stack, "job unit jobdir envfile"
#   OWN_STACK     this stack's id (project.stack)
#   MODE          check = the refresh probe (a constant line); guard = refuse when another stack runs a job
set -euo pipefail
: "${CURRENT_DIR:?}" "${OWN_STACK:?}" "${MODE:?}"
if [ "$MODE" = check ]; then
  echo "guard for $OWN_STACK"
  exit 0
fi
running=()
if [ -d "$CURRENT_DIR" ]; then
  for f in "$CURRENT_DIR"/*; do
    [ -f "$f" ] || continue
    stack=$(basename "$f")
    [ "$stack" != "$OWN_STACK" ] || continue
    read -r job unit _ <"$f" || continue
    if [ "$(systemctl is-active "$unit" 2>/dev/null || true)" = active ]; then running+=("stack $stack runs job $job ($unit)"); fi
  done
fi
if [ ${#running[@]} -gt 0 ]; then
  printf 'cluster-guard: refusing to take the cluster down while other stacks run jobs on it:\n' >&2
  printf '  %s\n' "${running[@]}" >&2
  echo "cluster-guard: destroy those stacks first (their jobs stop gracefully and keep their results), or wait until the jobs finish" >&2
  exit 1
fi
echo "cluster-guard: no other stack runs a job on this cluster"

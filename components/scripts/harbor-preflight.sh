#!/usr/bin/env bash
# Write the job's Harbor config and docker compose override and run the manual's preflight (seed 000
# "执行 full-run preflight"): the real `harbor run --config … --extra-docker-compose … --print-config`,
# saved as resolved-config.json, with the key fields asserted. --print-config omits fields equal to
# Harbor's defaults, so those are asserted on the rendered file instead (read with the venv's PyYAML).
# --print-config checks no dataset (it exits 0 for a path that does not exist), so the resolved config's
# datasets are then expanded by Harbor's own loader in the venv (harbor-resolve-dataset.sh): a missing
# path, a task count other than harbor.expectedTaskCount (each skipped task directory named with what it
# lacks) and a run.taskFilter.include name that matches no task fail here, before anything is launched.
# Inputs (env):
#   VENV               Harbor venv
#   RUN_DIR            directory for this job's files
#   JOB_CONFIG         path of the job config;  JOB_CONFIG_YAML its text
#   COMPOSE_OVERRIDE   path of the override;    COMPOSE_OVERRIDE_YAML its text
#   RESOLVED_CONFIG    where --print-config output goes
#   PRINTED_CHECKS     JSON [{path, expected}] that --print-config must show
#   RENDERED_CHECKS    JSON [{path, expected}] that the rendered file must hold
#   TOOLS_DIR          tool bundle directory whose bin/tmux and bin/asciinema the override binds (or empty)
#   USE_OVERRIDE       1 = the run passes the override (Docker), 0 = not (hf-sandbox)
#   EXPECTED_COUNT     tasks Harbor must resolve the dataset to before the filter (harbor.expectedTaskCount)
#   RESOLVE_SCRIPT     text of harbor-resolve-dataset.sh (run from its file: the one beside this script)
set -euo pipefail
: "${VENV:?}" "${RUN_DIR:?}" "${JOB_CONFIG:?}" "${JOB_CONFIG_YAML:?}" "${COMPOSE_OVERRIDE:?}" "${COMPOSE_OVERRIDE_YAML:?}"
: "${RESOLVED_CONFIG:?}" "${PRINTED_CHECKS:?}" "${RENDERED_CHECKS:?}" "${EXPECTED_COUNT:?}"
TOOLS_DIR=${TOOLS_DIR:-}
die() { echo "harbor-preflight: $*" >&2; exit 1; }
command -v jq >/dev/null || die "'jq' is required on this host"
[ -x "$VENV/bin/harbor" ] || die "$VENV/bin/harbor is missing (HarborRunner installs it)"
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=true
# --print-config needs no key; the real run gets the router's key from its EnvironmentFile.
export OPENAI_API_KEY=EMPTY

mkdir -p "$RUN_DIR"
printf '%s' "$JOB_CONFIG_YAML" >"$JOB_CONFIG"
printf '%s' "$COMPOSE_OVERRIDE_YAML" >"$COMPOSE_OVERRIDE"
if [ -n "$TOOLS_DIR" ]; then
  for tool in tmux asciinema; do [ -x "$TOOLS_DIR/bin/$tool" ] || die "$TOOLS_DIR/bin/$tool is missing (the override binds it over /usr/bin/$tool)"; done
fi

USE_OVERRIDE=${USE_OVERRIDE:-1}
override_args=()
[ "$USE_OVERRIDE" = 1 ] && override_args=(--extra-docker-compose "$COMPOSE_OVERRIDE")
"$VENV/bin/harbor" run --config "$JOB_CONFIG" "${override_args[@]}" --print-config >"$RESOLVED_CONFIG.part" 2>"$RUN_DIR/preflight.stderr" ||
  die "harbor run --print-config failed: $(tail -n 5 "$RUN_DIR/preflight.stderr")"
mv "$RESOLVED_CONFIG.part" "$RESOLVED_CONFIG"

# Reports every mismatch as "path: expected X, got Y" (jq -e over one big "and" would not say which).
mismatches() {
  jq -r --argjson checks "$2" '. as $doc | $checks[] | .path as $p | ($doc | getpath($p)) as $got
    | select($got != .expected) | "\($p | map(tostring) | join(".")): expected \(.expected | tojson), got \($got | tojson)"' "$1"
}
rendered_json="$RUN_DIR/job-config.json"
"$VENV/bin/python" -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' "$JOB_CONFIG" >"$rendered_json"
bad_printed=$(mismatches "$RESOLVED_CONFIG" "$PRINTED_CHECKS")
bad_rendered=$(mismatches "$rendered_json" "$RENDERED_CHECKS")
[ -z "$bad_printed" ] || die "harbor --print-config disagrees with the stack config:
$bad_printed"
[ -z "$bad_rendered" ] || die "the rendered job config disagrees with the stack config:
$bad_rendered"
# The override must be listed too (absolute path, as the lock file pins its digest).
if [ "$USE_OVERRIDE" = 1 ]; then
  jq -e --arg o "$COMPOSE_OVERRIDE" '(.environment.extra_docker_compose // []) | index($o) != null' "$RESOLVED_CONFIG" >/dev/null ||
    die "--print-config does not list $COMPOSE_OVERRIDE under environment.extra_docker_compose"
fi
n_printed=$(jq 'length' <<<"$PRINTED_CHECKS")
n_rendered=$(jq 'length' <<<"$RENDERED_CHECKS")
echo "harbor-preflight: $n_printed fields match in $RESOLVED_CONFIG, $n_rendered default-valued fields match in $JOB_CONFIG" >&2

# The tasks Harbor will run, as its own loader resolves them (prints "harbor-preflight: Harbor resolves N tasks …").
if [ -z "${RESOLVE_SCRIPT:-}" ]; then
  resolve_file="$(dirname "${BASH_SOURCE[0]:-.}")/harbor-resolve-dataset.sh"
  [ -f "$resolve_file" ] || die "RESOLVE_SCRIPT is empty and $resolve_file is missing (preflightScriptEnv passes the script)"
  RESOLVE_SCRIPT=$(<"$resolve_file")
fi
resolved_tasks=$(VENV="$VENV" RESOLVED_CONFIG="$RESOLVED_CONFIG" EXPECTED_COUNT="$EXPECTED_COUNT" LOG_NAME=harbor-preflight \
  bash -c "$RESOLVE_SCRIPT" harbor-resolve-dataset) || exit 1
resolved_tasks=$(tail -n 1 <<<"$resolved_tasks")
jq -c --argjson resolved "$resolved_tasks" \
  '{n_concurrent_trials, agent_timeout_multiplier, agent_setup_timeout_multiplier, agents: [.agents[] | {name, model_name, n_concurrent}], datasets,
    tasks: [$resolved.datasets[] | {path, tasks, selected: (.selected | length)}]}' "$RESOLVED_CONFIG"

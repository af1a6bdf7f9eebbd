#!/usr/bin/env bash
# `reprobench check`: what a run needs from the outside, seen from the runner host, changing nothing.
#   - the proxy: one bounded HEAD to each destination the run reaches (PROBE_URLS: the dataset repository's
#     host; PROBE_REGISTRIES: the task images' registries at their /v2/ endpoint, plain HTTP for the ones in
#     daemon.json's "insecure-registries" or INSECURE_REGISTRIES), through the standard proxy variables as
#     curl, git and skopeo read them: the HTTP status that came back, the proxy's answer to a CONNECT, curl's
#     exit status;
#   - the dataset (DATASET_REPO a git URL): the checkout on the runner (harbor-dataset-check.sh, whose text is
#     DATASET_STATE_SCRIPT), whether the repository answers `git ls-remote`, and whether it has the pinned
#     commit: the checkout's HEAD, a ref's tip, or a fetch of that one commit without its trees into a
#     temporary repository (removed on exit); nothing is written under DATASET_DIR;
#   - when the checkout is at the pinned commit, every task.toml's text (the image list, computed by
#     components/run-config.ts imageManifest).
# Prints one JSON line (components/preflight/runner.ts parseRunnerFacts). The proxy URL is never printed:
# only its host:port (retry.sh proxy_hostport); URLs and tool messages lose any user:password@.
# Inputs (env):
#   PROBE_URLS            newline-separated URLs requested through the proxy (optional)
#   PROBE_REGISTRIES      newline-separated registries (docker.io, host[:port]) whose /v2/ is requested (optional)
#   INSECURE_REGISTRIES   comma-separated host[:port] list (optional)
#   DAEMON_JSON           daemon config read for insecure-registries (default /etc/docker/daemon.json)
#   DATASET_REPO          git URL of the dataset (empty: a project directory `up` uploads; nothing to reach)
#   DATASET_COMMIT        the pinned commit (with DATASET_REPO)
#   DATASET_DIR, TASKS_DIR  where the dataset lives on the runner
#   DATASET_STATE_SCRIPT  the text of harbor-dataset-check.sh
#   TIMEOUT_SECONDS       bound of each request and git command (default 15)
#   HTTP(S)_PROXY, NO_PROXY and lower case: the runner's hosts[].proxy (secret; optional)
# Run with retry.sh and registry.sh prepended (scriptWithEnv(["retry", "registry", "check-runner"], env)).
set -euo pipefail
: "${DATASET_DIR:?}" "${TASKS_DIR:?}" "${DATASET_STATE_SCRIPT:?}"
PROBE_URLS=${PROBE_URLS:-} PROBE_REGISTRIES=${PROBE_REGISTRIES:-} INSECURE_REGISTRIES=${INSECURE_REGISTRIES:-}
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
DATASET_REPO=${DATASET_REPO:-} DATASET_COMMIT=${DATASET_COMMIT:-}
TIMEOUT_SECONDS=${TIMEOUT_SECONDS:-15}
die() { echo "check-runner: $*" >&2; exit 1; }
declare -F redact_url >/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"check-runner\"], env))"
declare -F registry_endpoint >/dev/null || die "registry.sh must be prepended (scriptWithEnv([\"retry\", \"registry\", \"check-runner\"], env))"
command -v jq >/dev/null || die "'jq' is required on this host"
work=$(mktemp -d "${TMPDIR:-/tmp}/check-runner.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Text without any URL's user:password@ (tools may quote a URL they were given).
scrub() { sed -E 's#(://)[^/@[:space:]]*@#\1#g'; }
# The last non-empty line of a file, scrubbed, at most 300 characters.
last_line() { tr '\r' '\n' <"$1" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 | scrub || true; }

# One HEAD through the environment's proxy: {"url","proxy","code","connect","exit","error"}.
probe() {
  local url=$1 out status=0 code connect
  out=$(curl -sS --head -o /dev/null --connect-timeout "$TIMEOUT_SECONDS" --max-time "$TIMEOUT_SECONDS" -w '%{http_code} %{http_connect}' "$url" 2>"$work/probe.err") || status=$?
  read -r code connect <<<"$out" || true
  jq -cn --arg url "$(redact_url "$url")" --arg proxy "$(proxy_hostport "$url")" --arg code "${code:-000}" --arg connect "${connect:-000}" \
    --argjson exit "$status" --arg error "$(last_line "$work/probe.err")" \
    '{url: $url, proxy: $proxy, code: $code, connect: $connect, exit: $exit, error: $error}'
}

REGISTRY_INSECURE=",$INSECURE_REGISTRIES,"
if [ -f "$DAEMON_JSON" ]; then
  REGISTRY_INSECURE="$REGISTRY_INSECURE$(jq -r '(."insecure-registries" // []) | join(",")' "$DAEMON_JSON" 2>/dev/null || true),"
fi
: >"$work/probes"
while IFS= read -r url; do
  [ -z "$url" ] || probe "$url" >>"$work/probes"
done <<<"$PROBE_URLS"
while IFS= read -r registry; do
  [ -z "$registry" ] || probe "$(registry_endpoint "$registry")/v2/" >>"$work/probes"
done <<<"$PROBE_REGISTRIES"

dataset=null
: >"$work/tomls"
if [ -n "$DATASET_REPO" ]; then
  command -v git >/dev/null || die "'git' is required on this host"
  state=$(DATASET_DIR=$DATASET_DIR TASKS_DIR=$TASKS_DIR GIT=1 bash -c "$DATASET_STATE_SCRIPT" 2>/dev/null || echo "dataset=unknown")
  at_commit=0
  case "$state" in "dataset=$DATASET_COMMIT "*) [ -z "$DATASET_COMMIT" ] || at_commit=1 ;; esac
  # No prompt and no stored credentials: a repository that asks for them says so in its error.
  export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=true
  ls_status=0
  timeout "$TIMEOUT_SECONDS" git -c credential.helper= ls-remote "$DATASET_REPO" >"$work/refs" 2>"$work/ls.err" || ls_status=$?
  # The ref whose tip the commit is (a branch or tag before HEAD).
  tip=$(awk -v c="$DATASET_COMMIT" '$1 == c { if ($2 == "HEAD") h = $2; else if (r == "") r = $2 } END { print (r != "" ? r : h) }' "$work/refs")
  head=$(awk '$2 == "HEAD" { print $1; exit }' "$work/refs")
  fetch_status=-1
  : >"$work/fetch.err"
  if [ "$ls_status" -eq 0 ] && [ -z "$tip" ] && [ "$at_commit" = 0 ]; then
    # The commit alone, without trees or blobs (servers that filter), into a repository of this step's own.
    git init -q --bare "$work/probe.git"
    fetch_status=0
    timeout "$TIMEOUT_SECONDS" git -C "$work/probe.git" -c credential.helper= fetch -q --depth=1 --filter=tree:0 "$DATASET_REPO" "$DATASET_COMMIT" \
      >/dev/null 2>"$work/fetch.all" || fetch_status=$?
    # A server without filters sends the commit's trees too (git warns, and goes on).
    grep -v '^warning: filtering not recognized' "$work/fetch.all" >"$work/fetch.err" || true
  fi
  dataset=$(jq -cn --arg repo "$(redact_url "$DATASET_REPO")" --arg proxy "$(proxy_hostport "$DATASET_REPO")" --arg state "$state" \
    --argjson ls "$ls_status" --arg lsError "$(last_line "$work/ls.err")" --arg tip "$tip" --arg head "$head" \
    --argjson fetch "$fetch_status" --arg fetchError "$(last_line "$work/fetch.err")" \
    '{repo: $repo, proxy: $proxy, state: $state, lsRemote: $ls, lsRemoteError: $lsError, tip: $tip, head: $head, fetch: $fetch, fetchError: $fetchError}')
  if [ "$at_commit" = 1 ] && [ -d "$TASKS_DIR" ]; then
    for f in "$TASKS_DIR"/*/task.toml; do
      [ -f "$f" ] || continue
      jq -cn --arg k "${f#"$TASKS_DIR"/}" --rawfile v "$f" '{($k): $v}' >>"$work/tomls"
    done
  fi
fi
# Files, not arguments: 89 task.toml texts are more than one argument may hold.
printf '%s\n' "$dataset" >"$work/dataset"
jq -cn --slurpfile probes "$work/probes" --slurpfile dataset "$work/dataset" --slurpfile tomls "$work/tomls" \
  '{probes: $probes, dataset: $dataset[0], taskTomls: (if ($tomls | length) > 0 then ($tomls | add) else null end)}'

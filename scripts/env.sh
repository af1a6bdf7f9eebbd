# shellcheck shell=bash
# Source this to get the project's toolchain and defaults on PATH: Node >= 22, pulumi, plugins, a local
# file backend under .pulumi-state/ and no Pulumi Cloud. Runs scripts/toolchain.sh (seconds when cached).
_reprobench_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# A toolchain that cannot be installed stops here (its error is above): `eval "$(…)"` alone would go on
# without pulumi. `return` keeps an interactive shell that sources this file; bin/reprobench exits.
if ! _reprobench_env=$(bash "$_reprobench_repo/scripts/toolchain.sh" --print-env); then
  echo "reprobench: the Pulumi toolchain is not installed (scripts/toolchain.sh failed; its error is above)" >&2
  unset _reprobench_repo _reprobench_env
  return 1
fi
eval "$_reprobench_env"
export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$_reprobench_repo/.pulumi-state}
mkdir -p "${PULUMI_BACKEND_URL#file://}" 2>/dev/null || true
# The passphrase protects secrets in the stack files. Set PULUMI_CONFIG_PASSPHRASE or
# PULUMI_CONFIG_PASSPHRASE_FILE yourself for real clusters; the file below is a per-checkout default.
if [ -z "${PULUMI_CONFIG_PASSPHRASE+x}" ] && [ -z "${PULUMI_CONFIG_PASSPHRASE_FILE:-}" ]; then
  _pp="$_reprobench_repo/.pulumi-state/passphrase"
  [ -s "$_pp" ] || (umask 077 && head -c 24 /dev/urandom | base64 >"$_pp")
  export PULUMI_CONFIG_PASSPHRASE_FILE="$_pp"
fi
unset _reprobench_repo _reprobench_env _pp

# Plain `pulumi` keeps the tracked Pulumi.<stack>.yaml files as committed, as `reprobench` does
# (cli/pulumi-stack.ts). Pulumi rewrites the stack file of every preview/up/refresh/destroy when the file
# has no `encryptionsalt`: it saves the salt it took from the stack's state (or minted) into it, and
# re-serialises the YAML (comments and `1.0` become `"1"`); PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER makes
# it take the state's salt, but it saves it all the same (pkg/cmd/pulumi/config/io.go,
# getAndSaveSecretsManager). So in this checkout the function below runs those commands with
# `--config-file` on a copy under .pulumi-state/stack-config/ (ignored by git, the copies `reprobench` uses),
# refreshed from the tracked file first, and `pulumi stack init` in that directory, where the new stack's
# salt is written beside the copy of Pulumi.yaml (the state keeps it too). Everything else — `pulumi config
# set` included, which edits the tracked file as asked — and any other project, or a command given its own
# --config-file, runs as it is (`command pulumi …` always does).
export PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER=${PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER:-true}
pulumi() {
  local root project dir copies stack="" sub="" sub2="" cwd=$PWD i=0 arg
  local -a args=("$@") before=() after=()
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
  while [ "$i" -lt "${#args[@]}" ]; do
    arg=${args[i]}
    case "$arg" in
      --) break ;;
      --config-file | --config-file=*) command pulumi "$@"; return ;;
      -s | --stack) stack=${args[i + 1]:-}; i=$((i + 1)) ;;
      --stack=*) stack=${arg#--stack=} ;;
      -s?*) stack=${arg#-s} stack=${stack#=} ;;
      -C | --cwd) cwd=${args[i + 1]:-}; i=$((i + 1)) ;;
      --cwd=*) cwd=${arg#--cwd=} ;;
      -C?*) cwd=${arg#-C} cwd=${cwd#=} ;;
      # Global flags that take a value before the command's name.
      --color | --tracing | --profiling | --memprofilerate | -v | --verbose) [ -n "$sub" ] || i=$((i + 1)) ;;
      -*) ;;
      *) if [ -z "$sub" ]; then sub=$arg; elif [ -z "$sub2" ]; then sub2=$arg; fi ;;
    esac
    i=$((i + 1))
  done
  case "$sub" in
    preview | pre | up | update | refresh | destroy | down | import) ;;
    stack) [ "$sub2" = init ] || { command pulumi "$@"; return; } ;;
    *) command pulumi "$@"; return ;;
  esac
  # The project the command runs in: the nearest Pulumi.yaml at or above its directory.
  dir=$(cd "$cwd" 2>/dev/null && pwd -P) || { command pulumi "$@"; return; }
  project=
  while :; do
    if [ -f "$dir/Pulumi.yaml" ] || [ -f "$dir/Pulumi.yml" ]; then project=$dir; break; fi
    [ "$dir" != / ] || break
    dir=$(dirname "$dir")
  done
  [ "$project" = "$root" ] || { command pulumi "$@"; return; }
  copies="$project/.pulumi-state/stack-config"
  mkdir -p "$copies" && cp "$project/Pulumi.yaml" "$copies/Pulumi.yaml" || return
  if [ "$sub" = stack ]; then
    # `stack init NAME` writes the salt into Pulumi.NAME.yaml of its directory: the copies'.
    command pulumi "$@" --cwd "$copies"
    return
  fi
  if [ -z "$stack" ]; then
    stack=$(command pulumi --cwd "$project" stack --show-name 2>/dev/null) || { command pulumi "$@"; return; }
  fi
  stack=${stack##*/}
  if [ -f "$project/Pulumi.$stack.yaml" ]; then
    cp "$project/Pulumi.$stack.yaml" "$copies/Pulumi.$stack.yaml" || return
  else
    rm -f "$copies/Pulumi.$stack.yaml"
  fi
  # --config-file before a `--`, if there is one.
  before=("$@") after=()
  for i in "${!args[@]}"; do
    if [ "${args[i]}" = -- ]; then before=("${args[@]:0:i}") after=("${args[@]:i}"); break; fi
  done
  # A destroy runs the program, as `reprobench down` does: the restart guards are delete hooks, and the
  # engine refuses to destroy resources with delete hooks without their program.
  case "$sub" in
    destroy | down) case " ${before[*]} " in *" --run-program"*) ;; *) before+=(--run-program) ;; esac ;;
  esac
  command pulumi "${before[@]}" --config-file "$copies/Pulumi.$stack.yaml" "${after[@]}"
}

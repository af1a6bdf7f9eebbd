# shellcheck shell=bash
# Source this to get the project's toolchain and defaults on PATH: Node >= 22, pulumi, plugins, a local
# file backend under .pulumi-state/ and no Pulumi Cloud. Runs scripts/toolchain.sh (seconds when cached).
_reprobench_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
eval "$(bash "$_reprobench_repo/scripts/toolchain.sh" --print-env)"
export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$_reprobench_repo/.pulumi-state}
mkdir -p "${PULUMI_BACKEND_URL#file://}" 2>/dev/null || true
# The passphrase protects secrets in the stack files. Set PULUMI_CONFIG_PASSPHRASE or
# PULUMI_CONFIG_PASSPHRASE_FILE yourself for real clusters; the file below is a per-checkout default.
if [ -z "${PULUMI_CONFIG_PASSPHRASE+x}" ] && [ -z "${PULUMI_CONFIG_PASSPHRASE_FILE:-}" ]; then
  _pp="$_reprobench_repo/.pulumi-state/passphrase"
  [ -s "$_pp" ] || (umask 077 && head -c 24 /dev/urandom | base64 >"$_pp")
  export PULUMI_CONFIG_PASSPHRASE_FILE="$_pp"
fi
unset _reprobench_repo _pp

# shellcheck shell=bash
# Source this for the reprobench commands that need only Node.js >= 22 and node_modules — everything but
# the Pulumi operations (those source env.sh, which also builds the Pulumi CLI and plugins). Node comes
# from PATH when new enough, else from the copies scripts/toolchain.sh caches (fetched once when there is
# none); nothing is built here.
_rb_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_rb_node_ok() { [ -n "$1" ] && [ -x "$1" ] && [ "$("$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 22 ]; }
_rb_node=$(command -v node || true)
if ! _rb_node_ok "$_rb_node"; then
  _rb_found=$_rb_node
  _rb_node=
  for _rb_candidate in "${REPROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reprobench}"/node-*/bin/node; do
    if _rb_node_ok "$_rb_candidate"; then _rb_node=$_rb_candidate; fi
  done
  if [ -z "$_rb_node" ]; then
    if [ -n "$_rb_found" ]; then _rb_found="$_rb_found $("$_rb_found" --version 2>/dev/null || true)"; else _rb_found="no node on PATH"; fi
    # A fresh machine's Node is often older: fetch Node 22 from the npm registry (a download, no build),
    # with the npm that is on PATH. Without npm there is nothing to fetch it with.
    if ! command -v npm >/dev/null 2>&1; then
      printf 'reprobench: needs Node.js >= 22 (found: %s) and npm to fetch it; put Node.js 22 on PATH\n' "$_rb_found" >&2
      return 1
    fi
    printf 'reprobench: Node.js >= 22 needed (found: %s); fetching it once (scripts/toolchain.sh --node-only)\n' "$_rb_found" >&2
    _rb_env=$(bash "$_rb_repo/scripts/toolchain.sh" --node-only --print-env) || {
      printf 'reprobench: could not install Node.js 22 (scripts/toolchain.sh --node-only failed above); put Node.js 22 on PATH\n' >&2
      return 1
    }
    eval "$_rb_env"
    _rb_node=$(command -v node)
    _rb_node_ok "$_rb_node" || { printf 'reprobench: %s is still older than Node.js 22\n' "$_rb_node" >&2; return 1; }
  fi
  PATH="$(dirname "$_rb_node"):$PATH"
  export PATH
fi
# Same rule as scripts/toolchain.sh: install when missing or older than the lock file. Never through a
# symlinked node_modules: npm ci empties the directory it points to (another checkout's) before installing.
if [ ! -f "$_rb_repo/node_modules/tsx/package.json" ] || [ "$_rb_repo/package-lock.json" -nt "$_rb_repo/node_modules/.package-lock.json" ]; then
  if [ -L "$_rb_repo/node_modules" ]; then
    printf 'reprobench: warning: %s/node_modules is a symlink and may not match package-lock.json; not running npm ci through it\n' "$_rb_repo" >&2
  else
    printf 'reprobench: installing node_modules (npm ci)\n' >&2
    (cd "$_rb_repo" && npm ci --ignore-scripts --no-audit --no-fund >&2)
  fi
fi
unset _rb_repo _rb_node _rb_found _rb_candidate _rb_env
unset -f _rb_node_ok

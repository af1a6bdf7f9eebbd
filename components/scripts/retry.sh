#!/usr/bin/env bash
# shellcheck shell=bash
# A function file, not a script: prepended to a host script with scriptWithEnv(["retry", "<script>"], env)
# (components/host-script.ts), or sourced by a script run from a file. Defines one function:
#
#   retry <attempts> <first-backoff-seconds> <what> -- cmd args…
#
# Runs cmd; when it fails and attempts are left, prints on stderr
#   <name>: progress: retrying <what> (attempt k/N in Ss): <the failed attempt's last stderr line>
# (CheckedCommand forwards "NAME: progress: TEXT" lines to `pulumi up`'s output), waits S seconds and runs
# it again, doubling the wait each time (at most 60 s). Returns 0 on the first success, else the last attempt's status, so
# the caller can `die` with a clear message. cmd's stdout passes through untouched (capture it with $(…));
# its stderr is kept and forwarded after each attempt. Prints no environment values. A command that exits
# with status 97 ($RETRY_GIVE_UP: e.g. a proxy refusing with 403/407, an index answering 404) says retrying
# is pointless: retry returns 97 at once. After a failure, RETRY_LAST_ERROR holds the last attempt's last
# stderr line (or "exit status N"), for the caller's message.
#   <name>          RETRY_NAME, else the running script's file name without .sh
#   RETRY_BACKOFF_SCALE  multiplies every wait (default 1; 0 = no waiting, for tests)
#
# Also defines, for scripts that fetch through the environment's proxy (HTTP(S)_PROXY, NO_PROXY and
# lower case, as curl, git, pip and uv read them):
#   redact_url URL       URL without user:password@
#   proxy_hostport URL   host:port of the proxy curl would use for URL (credentials removed), or empty
#   http_fetch URL OUT [curl args…]
#                        GET URL into OUT with retry (RETRY_ATTEMPTS, default 5; first wait 2 s). On failure
#                        returns non-zero with HTTP_FETCH_ERROR set to one line naming the URL and, when one
#                        is used, the proxy (host:port only), and HTTP_FETCH_CODE to the HTTP status (000: none).
RETRY_GIVE_UP=97
# shellcheck disable=SC2034 # RETRY_LAST_ERROR is for the caller
retry() {
  local attempts=$1 backoff=$2 what=$3 k=1 status=0 err last wait name
  RETRY_LAST_ERROR=''
  shift 3
  [ "${1:-}" != -- ] || shift
  case "$attempts" in '' | *[!0-9]*) echo "retry: attempts must be a number, got '$attempts'" >&2; return 2;; esac
  case "$backoff" in '' | *[!0-9]*) echo "retry: backoff must be whole seconds, got '$backoff'" >&2; return 2;; esac
  [ "$attempts" -ge 1 ] || attempts=1
  [ "$#" -gt 0 ] || { echo "retry: no command for '$what'" >&2; return 2; }
  name=${RETRY_NAME:-$(basename "${0%.sh}")}
  err=$(mktemp "${TMPDIR:-/tmp}/retry.XXXXXX")
  while :; do
    status=0
    "$@" 2>"$err" || status=$?
    cat "$err" >&2
    if [ "$status" -eq 0 ]; then
      rm -f "$err"
      return 0
    fi
    # The last non-empty line (curl and pip redraw lines with \r: keep what follows the last one).
    last=$(tr '\r' '\n' <"$err" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 || true)
    [ -n "$last" ] || last="exit status $status"
    RETRY_LAST_ERROR=$last
    if [ "$k" -ge "$attempts" ] || [ "$status" -eq "$RETRY_GIVE_UP" ]; then
      rm -f "$err"
      return "$status"
    fi
    wait=$((backoff * ${RETRY_BACKOFF_SCALE:-1}))
    k=$((k + 1))
    echo "$name: progress: retrying $what (attempt $k/$attempts in ${wait}s): $last" >&2
    [ "$wait" -eq 0 ] || sleep "$wait"
    # Doubling, but never more than a minute between attempts.
    backoff=$((backoff * 2 > 60 ? 60 : backoff * 2))
  done
}

redact_url() {
  local url=$1 scheme rest
  case "$url" in
    *://*@*)
      scheme=${url%%://*} rest=${url#*://}
      case "${rest%%/*}" in *@*) printf '%s://%s' "$scheme" "${rest#*@}"; return;; esac ;;
  esac
  printf '%s' "$url"
}

proxy_hostport() {
  local url=$1 proxy host entry
  case "$url" in
    https://*) proxy=${https_proxy:-${HTTPS_PROXY:-${all_proxy:-${ALL_PROXY:-}}}} ;;
    http://*) proxy=${http_proxy:-${all_proxy:-${ALL_PROXY:-}}} ;;
    *) proxy= ;;
  esac
  [ -n "$proxy" ] || return 0
  host=${url#*://} host=${host%%/*} host=${host##*@} host=${host%:*}
  local IFS=,
  for entry in ${no_proxy:-${NO_PROXY:-}}; do
    entry=${entry// /} entry=${entry#.}
    [ -n "$entry" ] || continue
    if [ "$entry" = '*' ] || [ "$host" = "$entry" ] || [[ "$host" == *."$entry" ]]; then return 0; fi
  done
  proxy=${proxy#*://} proxy=${proxy%%/*} proxy=${proxy##*@}
  printf '%s' "$proxy"
}

# One GET; status 97 when retrying cannot help (the proxy or server refused, or the page is missing).
http_fetch_once() {
  local url=$1 out=$2 meta=$3 status=0 code connect
  shift 3
  curl --fail --silent --show-error --location --connect-timeout 30 --write-out '%{http_code} %{http_connect}' \
    --output "$out" "$@" "$url" >"$meta" 2>"$meta.err" || status=$?
  cat "$meta.err" >&2
  [ "$status" -ne 0 ] || return 0
  read -r code connect <"$meta" || true
  case "${connect:-000}:${code:-000}" in 40[1347]:* | *:40[1347] | *:410) return "$RETRY_GIVE_UP" ;; esac
  return "$status"
}

# shellcheck disable=SC2034 # HTTP_FETCH_ERROR and HTTP_FETCH_CODE are for the caller
http_fetch() {
  local url=$1 out=$2 status=0 meta code connect proxy shown last how
  shift 2
  meta=$(mktemp "${TMPDIR:-/tmp}/http-fetch.XXXXXX")
  shown=$(redact_url "$url")
  retry "${RETRY_ATTEMPTS:-5}" 2 "GET $shown" -- http_fetch_once "$url" "$out" "$meta" "$@" || status=$?
  HTTP_FETCH_ERROR='' HTTP_FETCH_CODE=000
  if [ "$status" -eq 0 ]; then rm -f "$meta" "$meta.err"; return 0; fi
  code=000 connect=000
  read -r code connect <"$meta" || true
  last=$(tr '\r' '\n' <"$meta.err" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-300 || true)
  rm -f "$meta" "$meta.err"
  HTTP_FETCH_CODE=${code:-000}
  proxy=$(proxy_hostport "$url")
  how="after ${RETRY_ATTEMPTS:-5} attempts"
  [ "$status" -ne "$RETRY_GIVE_UP" ] || how="(not retried)"
  if [ -n "$proxy" ] && { [ "${connect:-000}" = 407 ] || [ "$HTTP_FETCH_CODE" = 407 ]; }; then
    HTTP_FETCH_ERROR="proxy $proxy refused $shown: 407 Proxy Authentication Required (check the credentials in the proxy URL)"
  elif [ -n "$proxy" ] && [ "${connect:-000}" != 000 ] && [ "${connect:-000}" != 200 ]; then
    HTTP_FETCH_ERROR="proxy $proxy refused the tunnel (CONNECT) for $shown: HTTP $connect $how"
  elif [ -n "$proxy" ] && [ "$HTTP_FETCH_CODE" = 403 ]; then
    HTTP_FETCH_ERROR="proxy $proxy (or the server behind it) refused $shown: HTTP 403"
  elif [ "$HTTP_FETCH_CODE" != 000 ]; then
    HTTP_FETCH_ERROR="$shown answered HTTP $HTTP_FETCH_CODE${proxy:+ (through proxy $proxy)} $how"
  else
    HTTP_FETCH_ERROR="cannot fetch $shown${proxy:+ through proxy $proxy} $how: ${last:-curl exit status $status}"
  fi
  return "$status"
}

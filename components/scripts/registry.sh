#!/usr/bin/env bash
# shellcheck shell=bash
# shellcheck disable=SC2034 # the REGISTRY_* results are read by the calling script
# A function file, not a script: prepended to a host script with scriptWithEnv(["registry", "<script>"], env)
# (components/host-script.ts), after retry.sh. How host scripts talk to image registries: credentials,
# mirrors, and the pull quota a registry announces (Docker Hub counts every manifest GET as a pull and
# answers 429 TOOMANYREQUESTS over the limit; a HEAD is free and carries the same ratelimit-* headers).
#
#   registry_setup       writes the step's registry files into a private directory (mode 0700):
#                          REGISTRY_AUTH_JSON (secret environment; {"auths":{"<registry>":{"auth":"<base64 user:password>"}}})
#                            → config.json, 0600, exported as DOCKER_CONFIG (docker pull) and REGISTRY_AUTH_FILE (skopeo);
#                          REGISTRIES_CONF (registries.conf text: mirrors for skopeo) → exported as CONTAINERS_REGISTRIES_CONF.
#                        Sets REGISTRY_DIR; call registry_cleanup when done (the caller's EXIT trap).
#   registry_of REF      the registry a reference names (docker.io for Docker Hub names and Docker Hub's other host names)
#   registry_repo REF    the repository path inside that registry (library/x for a Docker Hub official image)
#   registry_ref REF     the tag or digest (latest when none)
#   registry_has_auth REGISTRY   0 when the step has credentials for it
#   registry_head REF    HEAD of the reference's manifest (free on Docker Hub), with credentials when the step has
#                        them (Basic, or a Bearer token fetched from the registry's realm). Sets REGISTRY_STATUS
#                        (HTTP code, 000: no answer), REGISTRY_DIGEST (Docker-Content-Digest), REGISTRY_LIMIT,
#                        REGISTRY_REMAINING, REGISTRY_WINDOW (from ratelimit-limit / ratelimit-remaining "N;w=S";
#                        empty when the registry announces none), REGISTRY_ERROR (one line). Returns 0 on 200 with a
#                        digest, 97 ($RETRY_GIVE_UP) when retrying cannot help (401, 403, 404, 429), else 1.
# Plain HTTP for registries listed in REGISTRY_INSECURE (",host:port,…,"; the caller fills it from daemon.json).
# Nothing here prints a credential or passes one on a command line: curl reads them from files in REGISTRY_DIR.
REGISTRY_INSECURE=${REGISTRY_INSECURE:-,}
REGISTRY_DIR=''
REGISTRY_STATUS='' REGISTRY_DIGEST='' REGISTRY_LIMIT='' REGISTRY_REMAINING='' REGISTRY_WINDOW='' REGISTRY_ERROR=''

registry_setup() {
  REGISTRY_DIR=$(mktemp -d "${TMPDIR:-/tmp}/registry.XXXXXX")
  chmod 0700 "$REGISTRY_DIR"
  if [ -n "${REGISTRY_AUTH_JSON:-}" ]; then
    jq -e '.auths | type == "object"' <<<"$REGISTRY_AUTH_JSON" >/dev/null 2>&1 || { echo "registry: REGISTRY_AUTH_JSON is not {\"auths\":{…}} (value not shown)" >&2; return 1; }
    (umask 077 && printf '%s\n' "$REGISTRY_AUTH_JSON" >"$REGISTRY_DIR/config.json")
    export DOCKER_CONFIG=$REGISTRY_DIR REGISTRY_AUTH_FILE=$REGISTRY_DIR/config.json
  fi
  if [ -n "${REGISTRIES_CONF:-}" ]; then
    printf '%s\n' "$REGISTRIES_CONF" >"$REGISTRY_DIR/registries.conf"
    export CONTAINERS_REGISTRIES_CONF=$REGISTRY_DIR/registries.conf
  fi
  export REGISTRY_DIR
}

registry_cleanup() {
  [ -z "$REGISTRY_DIR" ] || rm -rf "$REGISTRY_DIR"
}

registry_of() {
  local first=${1%%/*}
  if [ "$first" != "$1" ] && case "$first" in index.docker.io | registry-1.docker.io) false ;; *.* | *:* | localhost) true ;; *) false ;; esac; then
    printf '%s' "$first"
  else
    printf docker.io
  fi
}

registry_repo() {
  local ref=${1%@*} registry path
  case "${ref##*/}" in *:*) ref=${ref%:*} ;; esac
  registry=$(registry_of "$1")
  path=$ref
  case "$ref" in "$registry"/* | index.docker.io/* | registry-1.docker.io/*) path=${ref#*/} ;; esac
  case "$registry:$path" in docker.io:*/*) ;; docker.io:*) path=library/$path ;; esac
  printf '%s' "$path"
}

registry_ref() {
  case "$1" in
    *@*) printf '%s' "${1##*@}" ;;
    *) case "${1##*/}" in *:*) printf '%s' "${1##*:}" ;; *) printf latest ;; esac ;;
  esac
}

registry_endpoint() {
  case "$1" in
    docker.io) printf https://registry-1.docker.io ;;
    *) case "$REGISTRY_INSECURE" in *",$1,"*) printf 'http://%s' "$1" ;; *) printf 'https://%s' "$1" ;; esac ;;
  esac
}

# The credentials for a registry as a curl config file (user = "…"), or nothing.
registry_curl_auth() {
  local registry=$1 file auth
  [ -n "$REGISTRY_DIR" ] && [ -f "$REGISTRY_DIR/config.json" ] || return 1
  # Docker Hub's key is docker.io for skopeo and https://index.docker.io/v1/ for the docker CLI.
  auth=$(jq -r --arg k "$registry" '(.auths[$k].auth // (if $k == "docker.io" then .auths["https://index.docker.io/v1/"].auth else null end)) // empty' "$REGISTRY_DIR/config.json" 2>/dev/null || true)
  [ -n "$auth" ] || return 1
  file=$REGISTRY_DIR/curl-auth-$(printf %s "$registry" | sha256sum | cut -c1-12)
  # curl config syntax: user = "name:password", with \ and " escaped.
  (umask 077 && printf 'user = "%s"\n' "$(printf %s "$auth" | base64 -d | sed 's/[\\"]/\\&/g')" >"$file")
  printf '%s' "$file"
}

registry_has_auth() {
  registry_curl_auth "$1" >/dev/null
}

# "N;w=S" → N and S (a header may list several policies; the first counts).
registry_quota_field() {
  local value number window
  value=$(sed -n "s/^$1:[[:space:]]*//Ip" "$2" | tr -d '\r' | tail -n 1)
  number=${value%%[;,]*} number=${number// /}
  window=$(printf %s "${value%%,*}" | sed -n 's/.*w=\([0-9]*\).*/\1/p')
  case "$number" in '' | *[!0-9]*) number='' ;; esac
  printf '%s %s' "${number:--}" "${window:--}"
}

registry_head() {
  local ref=$1 registry repo tag endpoint url auth hdr code challenge realm service scope token_json token limit remaining
  registry=$(registry_of "$ref") repo=$(registry_repo "$ref") tag=$(registry_ref "$ref")
  endpoint=$(registry_endpoint "$registry")
  url="$endpoint/v2/$repo/manifests/$tag"
  hdr=$(mktemp "${TMPDIR:-/tmp}/registry-head.XXXXXX")
  REGISTRY_STATUS=000 REGISTRY_DIGEST='' REGISTRY_LIMIT='' REGISTRY_REMAINING='' REGISTRY_WINDOW='' REGISTRY_ERROR=''
  auth=$(registry_curl_auth "$registry" || true)
  local accept=(
    -H 'Accept: application/vnd.oci.image.index.v1+json'
    -H 'Accept: application/vnd.docker.distribution.manifest.list.v2+json'
    -H 'Accept: application/vnd.docker.distribution.manifest.v2+json'
    -H 'Accept: application/vnd.oci.image.manifest.v1+json'
  )
  head_once() {
    code=$(curl -sS --head --connect-timeout 20 --max-time 60 -o /dev/null -D "$hdr" -w '%{http_code}' "$@" "${accept[@]}" "$url" 2>"$hdr.err") || code=000
  }
  if [ -n "$auth" ]; then head_once -K "$auth"; else head_once; fi
  if [ "$code" = 401 ]; then
    challenge=$(sed -n 's/^www-authenticate:[[:space:]]*//Ip' "$hdr" | tr -d '\r' | tail -n 1)
    case "$challenge" in
      [Bb]earer\ *)
        realm=$(printf %s "$challenge" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')
        service=$(printf %s "$challenge" | sed -n 's/.*service="\([^"]*\)".*/\1/p')
        scope="repository:$repo:pull"
        token_json=$(curl -sS --fail --connect-timeout 20 --max-time 60 -G ${auth:+-K "$auth"} --data-urlencode "service=$service" --data-urlencode "scope=$scope" "$realm" 2>>"$hdr.err" || true)
        token=$(jq -r '.token // .access_token // empty' <<<"$token_json" 2>/dev/null || true)
        if [ -n "$token" ]; then
          (umask 077 && printf 'Authorization: Bearer %s\n' "$token" >"$hdr.token")
          head_once -H "@$hdr.token"
          rm -f "$hdr.token"
        fi
        ;;
    esac
  fi
  REGISTRY_STATUS=$code
  REGISTRY_DIGEST=$(sed -n 's/^docker-content-digest:[[:space:]]*//Ip' "$hdr" | tr -d '\r' | tail -n 1)
  read -r limit REGISTRY_WINDOW <<<"$(registry_quota_field ratelimit-limit "$hdr")"
  read -r remaining _ <<<"$(registry_quota_field ratelimit-remaining "$hdr")"
  [ "$limit" != - ] || limit=''
  [ "$remaining" != - ] || remaining=''
  [ "$REGISTRY_WINDOW" != - ] || REGISTRY_WINDOW=''
  REGISTRY_LIMIT=$limit REGISTRY_REMAINING=$remaining
  case "$code" in
    200) [ -n "$REGISTRY_DIGEST" ] || REGISTRY_ERROR="HEAD $url answered without a Docker-Content-Digest" ;;
    000) REGISTRY_ERROR="no answer from $url: $(tr '\r' '\n' <"$hdr.err" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-200)" ;;
    401) REGISTRY_ERROR="HEAD $url: 401 Unauthorized${auth:+ (sent with credentials)}" ;;
    429) REGISTRY_ERROR="HEAD $url: 429 Too Many Requests" ;;
    *) REGISTRY_ERROR="HEAD $url: HTTP $code" ;;
  esac
  rm -f "$hdr" "$hdr.err"
  [ -n "$REGISTRY_ERROR" ] || return 0
  case "$code" in 401 | 403 | 404 | 429) return "${RETRY_GIVE_UP:-97}" ;; esac
  return 1
}

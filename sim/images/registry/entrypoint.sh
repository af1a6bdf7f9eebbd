#!/usr/bin/env bash
# The sim registry container's two roles (same image):
#   entrypoint.sh registry   (default) docker-registry on 127.0.0.1:5001 behind registry-gate.py on :5000
#                            (Docker Hub's pull limits; see registry-gate.py). Files, bind-mounted by `sim up`:
#                            /etc/reprobench/registry-password (ro) and /etc/reprobench/registry/ (quota.json
#                            read, requests.jsonl appended).
#   entrypoint.sh mirror USER REMOTE_URL
#                            a pull-through cache (mirror.sim:5000) of REMOTE_URL that pulls as USER with the
#                            password of /etc/reprobench/registry-password, written into its config file (0600)
#                            here, never onto a command line; its access log goes to stdout (`docker logs`).
set -euo pipefail

mode=${1:-registry}
password_file=/etc/reprobench/registry-password
state=/etc/reprobench/registry

case $mode in
  registry)
    pids=()
    # PID 1 gets docker stop's SIGTERM: pass it on to both servers.
    trap 'kill -TERM "${pids[@]}" 2>/dev/null || true' TERM INT
    /usr/bin/docker-registry serve /etc/docker/registry/config.yml &
    pids+=($!)
    python3 -u /usr/local/lib/reprobench/registry-gate.py --listen 0.0.0.0 --port 5000 --upstream 127.0.0.1:5001 \
      --password-file "$password_file" --quota "$state/quota.json" --log "$state/requests.jsonl" &
    pids+=($!)
    # Either one ending ends the container (docker's restart policy brings both back).
    status=0
    wait -n "${pids[@]}" || status=$?
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait || true
    exit "$status"
    ;;
  mirror)
    user=${2:?mirror: the pull user}
    remote=${3:?mirror: the remote registry URL}
    password=$(<"$password_file")
    [[ $password =~ ^[0-9a-f]+$ ]] || { echo "mirror: $password_file: expected the hex password sim up writes" >&2; exit 1; }
    config=/etc/docker/registry/mirror.yml
    umask 077
    cat >"$config.new" <<YAML
version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: /var/lib/docker-registry
  delete:
    enabled: true
http:
  addr: :5000
proxy:
  remoteurl: $remote
  username: $user
  password: $password
YAML
    mv "$config.new" "$config"
    exec /usr/bin/docker-registry serve "$config"
    ;;
  *)
    echo "entrypoint.sh: unknown mode '$mode' (expected registry or mirror)" >&2
    exit 2
    ;;
esac

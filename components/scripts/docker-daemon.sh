#!/usr/bin/env bash
# Merge default-address-pools (and the host's proxies) into /etc/docker/daemon.json (other keys kept), as
# seed 000 does by hand: refuse overlapping pools, validate, back up, install, restart docker only when the
# content changed and no container runs (unless forced), then prove the pool by allocating test networks.
# daemon.json "proxies" (Docker ≥ 23) is what dockerd pulls images through; a file holding them is written
# mode 0600 (the URL may carry credentials). They come from the secret environment, never the script text,
# and are never printed.
# Inputs (env):
#   POOLS_JSON        JSON array [{"base": "172.18.0.0/15", "size": 24}, …]
#   FORCE_RESTART     1 to restart docker even while containers run
#   RESTART_POLICY    when-idle (default) or never (only write the file; the pools apply at the next restart)
#   VERIFY_NETWORKS   number of test networks to create and check (0 skips)
#   STATE_DIR         where backups and the pre-reprobench original are kept
#   DAEMON_JSON       the file to manage (default /etc/docker/daemon.json)
#   PROXIES_JSON      optional, secret: {"http-proxy": …, "https-proxy": …, "no-proxy": …}. Unset or empty:
#                     proxies reprobench set earlier are removed; proxies set by someone else are left alone.
#   MIRRORS_JSON      optional: daemon.json "registry-mirrors" (Docker Hub pull-through caches), e.g.
#                     ["http://mirror.internal:5000"]; unset: mirrors reprobench set earlier are removed. A change
#                     of the mirrors alone is applied with a reload (SIGHUP), which stops no container.
set -euo pipefail

: "${POOLS_JSON:?}" "${STATE_DIR:?}"
FORCE_RESTART=${FORCE_RESTART:-0}
RESTART_POLICY=${RESTART_POLICY:-when-idle}
VERIFY_NETWORKS=${VERIFY_NETWORKS:-4}
DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
PROXIES_JSON=${PROXIES_JSON:-}
export PROXIES_JSON

die() { echo "docker-daemon: $*" >&2; exit 1; }
for tool in jq python3 docker systemctl ip; do
  command -v "$tool" >/dev/null || die "'$tool' is required on this host"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$STATE_DIR"

if [ -f "$DAEMON_JSON" ]; then
  jq -e . "$DAEMON_JSON" >/dev/null 2>&1 || die "$DAEMON_JSON is not valid JSON; fix it by hand first"
  cp "$DAEMON_JSON" "$work/current.json"
else
  printf '{}\n' >"$work/current.json"
fi
# Remember what the host had before reprobench touched it, once, for destroy.
if [ ! -e "$STATE_DIR/original.json" ] && [ ! -e "$STATE_DIR/original.absent" ]; then
  if [ -f "$DAEMON_JSON" ]; then cp -a "$DAEMON_JSON" "$STATE_DIR/original.json"; else : >"$STATE_DIR/original.absent"; fi
fi

# The proxies travel in the environment ($ENV), never on a command line (ps shows those).
if [ -n "$PROXIES_JSON" ]; then
  jq -e '$ENV.PROXIES_JSON | fromjson | type == "object"' -n >/dev/null 2>&1 || die "PROXIES_JSON is not a JSON object (value not shown)"
  # shellcheck disable=SC2016 # $ENV is jq's
  proxies_filter='.proxies = ($ENV.PROXIES_JSON | fromjson)'
elif [ -e "$STATE_DIR/proxies.managed" ]; then
  proxies_filter='del(.proxies)' # ours, and no longer configured
else
  proxies_filter='.' # none configured: whatever the host has stays
fi
# registry-mirrors (Docker Hub's pull-through caches) likewise: ours when set, removed when no longer
# configured, anyone else's left alone.
if [ -n "${MIRRORS_JSON:-}" ]; then
  jq -e 'type == "array"' <<<"$MIRRORS_JSON" >/dev/null 2>&1 || die "MIRRORS_JSON is not a JSON array: $MIRRORS_JSON"
  mirrors_filter=".\"registry-mirrors\" = $MIRRORS_JSON"
elif [ -e "$STATE_DIR/mirrors.managed" ]; then
  mirrors_filter='del(."registry-mirrors")'
else
  mirrors_filter='.'
fi
jq --argjson pools "$POOLS_JSON" "(.\"default-address-pools\" = \$pools) | $proxies_filter | $mirrors_filter" "$work/current.json" >"$work/merged.json"
# sha256 of the canonical proxies (what docker-daemon-check.sh reports), "none" without.
proxies_digest() { jq -cS '.proxies // empty' "$1" | sha256sum | cut -d' ' -f1 | sed 's/^e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855$/none/'; }
wanted_proxies=$(proxies_digest "$work/merged.json")
# A daemon.json with proxies may hold credentials: root only.
file_mode=0644
[ "$wanted_proxies" = none ] || file_mode=0600
chmod "$file_mode" "$work/merged.json"
install_merged() {
  mkdir -p "$(dirname "$DAEMON_JSON")"
  install -m "$file_mode" "$work/merged.json" "$DAEMON_JSON"
  if [ -n "$PROXIES_JSON" ]; then : >"$STATE_DIR/proxies.managed"; else rm -f "$STATE_DIR/proxies.managed"; fi
  if [ -n "${MIRRORS_JSON:-}" ]; then : >"$STATE_DIR/mirrors.managed"; else rm -f "$STATE_DIR/mirrors.managed"; fi
}
# A backup keeps the mode of the file it copies; one that holds proxies is root's only.
backup_current() {
  [ -f "$DAEMON_JSON" ] || return 0
  cp -a "$DAEMON_JSON" "$STATE_DIR/daemon.json.backup-$stamp"
  [ "$(proxies_digest "$DAEMON_JSON")" = none ] || chmod 0600 "$STATE_DIR/daemon.json.backup-$stamp"
}

current_pools=$(jq -cS '."default-address-pools" // []' "$work/current.json")
wanted_pools=$(jq -cS '.' <<<"$POOLS_JSON")
changed=1
if [ "$(jq -cS . "$work/current.json")" = "$(jq -cS . "$work/merged.json")" ]; then changed=0; fi

# A new pool must not overlap a route of this host or an existing docker network (those would be
# shadowed or collide). When the pools are already in effect, networks inside them are ours. A docker
# network (or its docker0/br-* route) that is exactly one /size block of a pool was allocated from
# that pool earlier (docker keeps docker0's subnet across restarts): not a conflict.
if [ "$current_pools" != "$wanted_pools" ]; then
  ip -j route show table all >"$work/routes.json"
  docker network ls -q | xargs -r docker network inspect \
    --format '{{.Name}} {{range .IPAM.Config}}{{.Subnet}} {{end}}' >"$work/networks.txt"
  python3 - "$work/routes.json" "$work/networks.txt" <<'PY' || exit 1
import ipaddress, json, os, sys
pools = json.loads(os.environ["POOLS_JSON"])
routes = json.load(open(sys.argv[1]))
taken = []
for r in routes:
    dst = r.get("dst", "")
    if dst in ("", "default") or ":" in dst or r.get("type") in ("broadcast", "local"):
        continue
    dev = r.get("dev", "?")
    try:
        taken.append((ipaddress.ip_network(dst, strict=False), f"route {dst} dev {dev}", dev == "docker0" or dev.startswith("br-")))
    except ValueError:
        pass
for line in open(sys.argv[2]):
    name, *subnets = line.split()
    for s in subnets:
        if ":" not in s:
            taken.append((ipaddress.ip_network(s, strict=False), f"docker network {name} ({s})", True))
problems = []
for p in pools:
    base = ipaddress.ip_network(p["base"], strict=False)
    for net, what, from_docker in taken:
        if from_docker and net.prefixlen == p["size"] and net.subnet_of(base):
            continue
        if base.overlaps(net):
            problems.append(f"pool {p['base']} overlaps {what}")
if problems:
    print("docker-daemon: refusing address pools:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
PY
fi

# dockerd's current start (monotonic, so clock changes do not matter); "" without systemd's record.
docker_started() { systemctl show docker --property ActiveEnterTimestampMonotonic --value 2>/dev/null || true; }
# Records that the running dockerd started with these pools: a later repair of the file alone (pools
# removed by hand, docker not restarted since) then needs no restart.
record_applied() { jq -nc --argjson pools "$wanted_pools" --arg proxies "$wanted_proxies" --arg started "$(docker_started)" '{pools: $pools, proxies: $proxies, dockerStarted: $started}' >"$STATE_DIR/applied.json"; }
running_with_wanted_pools() {
  [ -f "$STATE_DIR/applied.json" ] &&
    [ "$(jq -cS .pools "$STATE_DIR/applied.json")" = "$wanted_pools" ] &&
    [ "$(jq -r '.proxies // "none"' "$STATE_DIR/applied.json")" = "$wanted_proxies" ] &&
    [ -n "$(docker_started)" ] && [ "$(jq -r .dockerStarted "$STATE_DIR/applied.json")" = "$(docker_started)" ]
}

# Only registry-mirrors changed: dockerd reloads it on SIGHUP (systemctl reload), no container stops.
mirrors_only=0
if [ "$changed" = 1 ] && [ "$(jq -cS 'del(."registry-mirrors")' "$work/current.json")" = "$(jq -cS 'del(."registry-mirrors")' "$work/merged.json")" ]; then mirrors_only=1; fi

if [ "$mirrors_only" = 1 ]; then
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  backup_current
  install_merged
  wanted_mirrors=$(jq -c '."registry-mirrors" // [] | map(sub("/$"; "") + "/")' "$work/merged.json")
  if [ "$RESTART_POLICY" != never ]; then
    systemctl reload docker || die "systemctl reload docker failed: registry-mirrors are written to $DAEMON_JSON but not in effect"
    for _ in $(seq 1 30); do
      [ "$(docker info --format '{{json .RegistryConfig.Mirrors}}' 2>/dev/null | jq -c '. // []')" = "$wanted_mirrors" ] && break
      sleep 1
    done
    [ "$(docker info --format '{{json .RegistryConfig.Mirrors}}' | jq -c '. // []')" = "$wanted_mirrors" ] ||
      die "dockerd reloaded but docker info shows registry mirrors $(docker info --format '{{json .RegistryConfig.Mirrors}}'), expected $wanted_mirrors"
  fi
  echo "docker-daemon: registry-mirrors set to $wanted_mirrors (backup daemon.json.backup-$stamp); docker reloaded, nothing restarted"
elif [ "$changed" = 1 ] && running_with_wanted_pools; then
  # The file drifted but dockerd has run with the wanted pools since reprobench applied them: put the
  # file back, no restart (a restart would stop every container for nothing).
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  backup_current
  install_merged
  echo "docker-daemon: restored the address pools and proxies in daemon.json (backup daemon.json.backup-$stamp); docker already runs with them, no restart"
elif [ "$changed" = 1 ]; then
  if dockerd --help 2>&1 | grep -q -- '--validate'; then
    dockerd --validate --config-file "$work/merged.json" >/dev/null 2>"$work/validate.err" ||
      die "dockerd --validate rejected the merged config: $(cat "$work/validate.err")"
  else
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/merged.json" ||
      die "merged config is not valid JSON"
  fi
  running=$(docker ps --format '{{.Names}}' | paste -sd, -)
  if [ -n "$running" ] && [ "$FORCE_RESTART" != 1 ] && [ "$RESTART_POLICY" != never ]; then
    die "refusing to restart docker while containers run ($running); stop them or set docker.forceRestart"
  fi
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  backup_current
  install_merged
  if [ "$RESTART_POLICY" = never ]; then
    echo "docker-daemon: wrote daemon.json (backup daemon.json.backup-$stamp); restartPolicy=never, so the pools and proxies apply at the next docker restart"
    exit 0
  fi
  systemctl restart docker
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null || die "docker did not come back after the restart"
  if [ -n "$PROXIES_JSON" ] && [ -z "$(docker info --format '{{.HTTPProxy}}{{.HTTPSProxy}}' 2>/dev/null)" ]; then
    die "dockerd came back without the proxies of daemon.json (docker info shows no HTTP/HTTPS proxy); is it older than Docker 23?"
  fi
  record_applied
  echo "docker-daemon: installed new daemon.json (backup daemon.json.backup-$stamp), docker restarted"
else
  # Up to date; when dockerd started after the file was last written, it runs with these pools.
  started_us=$(docker_started)
  if [ -n "$started_us" ] && [ -f "$DAEMON_JSON" ]; then
    uptime_us=$(awk '{printf "%d", $1 * 1000000}' /proc/uptime)
    file_age_us=$(( ($(date +%s) - $(stat -c %Y "$DAEMON_JSON")) * 1000000 ))
    if [ $((uptime_us - file_age_us)) -le "$started_us" ]; then record_applied; fi
  fi
  # The file's mode follows whether it holds proxies (a file written before, or by hand, may be 0644).
  [ ! -f "$DAEMON_JSON" ] || [ "$(stat -c %a "$DAEMON_JSON")" = "${file_mode#0}" ] || chmod "$file_mode" "$DAEMON_JSON"
  [ -n "$PROXIES_JSON" ] || rm -f "$STATE_DIR/proxies.managed"
  [ -n "${MIRRORS_JSON:-}" ] || rm -f "$STATE_DIR/mirrors.managed"
  echo "docker-daemon: daemon.json already up to date"
fi

# Verification from the manual: allocate networks and check they come from the pools.
if [ "$VERIFY_NETWORKS" -gt 0 ]; then
  names=()
  cleanup() { [ ${#names[@]} -eq 0 ] || docker network rm "${names[@]}" >/dev/null 2>&1 || true; rm -rf "$work"; }
  trap cleanup EXIT
  for i in $(seq 1 "$VERIFY_NETWORKS"); do
    n="reprobench-pool-test-$$-$i"
    docker network create --label io.reprobench.managed=1 "$n" >/dev/null
    names+=("$n")
  done
  for n in "${names[@]}"; do
    docker network inspect "$n" --format '{{(index .IPAM.Config 0).Subnet}}'
  done >"$work/subnets.txt"
  python3 - "$work/subnets.txt" <<'PY'
import ipaddress, json, os, sys
pools = json.loads(os.environ["POOLS_JSON"])
for line in open(sys.argv[1]):
    net = ipaddress.ip_network(line.strip())
    fits = [p for p in pools if net.subnet_of(ipaddress.ip_network(p["base"])) and net.prefixlen == p["size"]]
    if not fits:
        sys.exit(f"docker-daemon: test network {net} is not a /size subnet of any configured pool")
print(f"docker-daemon: {sum(1 for _ in open(sys.argv[1]))} test networks allocated from the pools")
PY
fi

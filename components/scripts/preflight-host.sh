#!/usr/bin/env bash
# The preflight's facts about one host, read-only (components/preflight.ts; `reprobench check`): the GPUs
# as the host's nvidia-smi reports them, the server image itself listing the GPUs it sees with the server's
# --gpus (the decisive check: toolkit, driver against the image's CUDA requirement, devices), a CUDA probe
# in the image when it has torch (fabric manager, driver too old), the model directory
# (preflight_weights of preflight-weights.sh, loaded first), the host tools the host scripts call and who listens on the stack's ports. It
# judges nothing: it prints the raw outputs as ONE JSON line and exits 0 whatever it found, and
# components/preflight/ turns them into problems (one source of truth for `up` and `check`). Exits 1 only
# when it cannot report at all. Changes nothing: no pull (docker run --pull never), no file written.
# Inputs (env):
#   HOST_NAME               the host's name in the stack (messages name it)
#   TOOLS                   space-separated commands the host scripts of this host's roles run
#   PORTS                   space-separated TCP ports the stack binds on this host (empty: none)
#   OWN_CONTAINERS          space-separated names of this stack's containers on this host (their processes
#                           and listeners are ours, e.g. the server being replaced)
#   OWN_UNITS               space-separated systemd units of this stack on this host (the bridges)
#   CHECK_GPUS              1 = a model server with --gpus runs here: read the GPUs and run the image
#   GPUS_FLAG               the server's docker --gpus value (all)
#   IMAGE                   the server image (as the server's container names it)
#   IMAGE_OF_CONTAINER      a container whose image stands in when IMAGE is not on the host by that name
#                           (`check` names the config's tag; `up` pulled it by digest)
#   CUDA_PROBE              1 = also run python3 + torch in the image (skipped when the image has no torch)
#   TOOLKIT_TIMEOUT_SECONDS upper bound for each container run (default 120)
#   MODEL_PATH              the weights directory (empty: no weights on this host)
#   CONTAINER_USER          docker --user of the server: ssh-user (the login's uid:gid) or uid[:gid]
#   WEIGHTS_SHA256_JSON     {"file": "sha256"} to verify (optional; reads those files whole)
# Output: one JSON line, the contract of components/preflight/facts.ts (HostFactsReport).
set -euo pipefail
: "${HOST_NAME:?}"
TOOLS=${TOOLS:-} PORTS=${PORTS:-} OWN_CONTAINERS=${OWN_CONTAINERS:-} OWN_UNITS=${OWN_UNITS:-}
CHECK_GPUS=${CHECK_GPUS:-0} GPUS_FLAG=${GPUS_FLAG:-all} IMAGE=${IMAGE:-} CUDA_PROBE=${CUDA_PROBE:-1}
TOOLKIT_TIMEOUT_SECONDS=${TOOLKIT_TIMEOUT_SECONDS:-120} MODEL_PATH=${MODEL_PATH:-} CONTAINER_USER=${CONTAINER_USER:-ssh-user}
WEIGHTS_SHA256_JSON=${WEIGHTS_SHA256_JSON:-"{}"}
export LC_ALL=C
# The report is built without jq or python3: both are among the tools it reports on.

# A JSON string of $1 (control characters other than \n \t \r dropped).
js() {
  local s
  s=$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037')
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}
# A JSON array of strings from the arguments.
jarr() {
  local out="" x
  for x in "$@"; do out+="${out:+,}$(js "$x")"; done
  printf '[%s]' "$out"
}
# Runs "$@" with a time bound; sets OUT, ERR and RC (124: timed out).
capture() {
  local o e
  o=$(mktemp) e=$(mktemp)
  set +e
  if command -v timeout >/dev/null; then timeout "$TOOLKIT_TIMEOUT_SECONDS" "$@" >"$o" 2>"$e" </dev/null; else "$@" >"$o" 2>"$e" </dev/null; fi
  RC=$?
  set -e
  OUT=$(head -c 200000 "$o") ERR=$(tail -c 8000 "$e")
  rm -f "$o" "$e"
}

# ---- the login (the containers' user when CONTAINER_USER is ssh-user: host-facts.sh's rule)
login_uid=${SUDO_UID:-$(id -u)} login_gid=${SUDO_GID:-$(id -g)}
if [ "$CONTAINER_USER" = ssh-user ]; then
  c_uid=$login_uid c_gid=$login_gid
else
  c_uid=${CONTAINER_USER%%:*} c_gid=0
  [[ $CONTAINER_USER == *:* ]] && c_gid=${CONTAINER_USER#*:}
  [[ $c_uid =~ ^[0-9]+$ ]] || c_uid=$(id -u "$c_uid" 2>/dev/null || echo "$c_uid")
  [[ $c_gid =~ ^[0-9]+$ ]] || c_gid=$(getent group "$c_gid" 2>/dev/null | cut -d: -f3 || echo "$c_gid")
fi

# ---- host tools
tools_json=""
for t in $TOOLS; do
  p=$(command -v "$t" 2>/dev/null || true)
  tools_json+="${tools_json:+,}$(js "$t"):$(if [ -n "$p" ]; then js "$p"; else printf null; fi)"
done

# ---- this stack's containers and units: their ids and host PIDs (a process of theirs is ours). The PIDs
# are one docker top snapshot; a process's cgroup naming one of the ids is the stronger word (below).
have_docker=0
command -v docker >/dev/null && docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && have_docker=1
own_ids=() own_pids=() own_json=""
for c in $OWN_CONTAINERS; do
  id="" running=false
  if [ "$have_docker" = 1 ] && id=$(docker inspect --format '{{.Id}}' "$c" 2>/dev/null); then
    running=$(docker inspect --format '{{.State.Running}}' "$c" 2>/dev/null || echo false)
    own_ids+=("$id")
    if [ "$running" = true ]; then
      while read -r pid; do [[ $pid =~ ^[0-9]+$ ]] && own_pids+=("$pid"); done < <(docker top "$c" -eo pid 2>/dev/null | tail -n +2)
    fi
  fi
  own_json+="${own_json:+,}{\"name\":$(js "$c"),\"id\":$(js "$id"),\"running\":$([ "$running" = true ] && echo true || echo false)}"
done
for u in $OWN_UNITS; do
  if command -v systemctl >/dev/null; then
    while read -r pid; do [[ $pid =~ ^[0-9]+$ ]] && [ "$pid" != 0 ] && own_pids+=("$pid"); done < <(systemctl show --property MainPID --value "$u" 2>/dev/null || true)
  fi
done

# ---- listeners on the stack's ports (ss), with each listener's cgroup (whose it is)
ports_json=""
if [ -n "$PORTS" ]; then
  if command -v ss >/dev/null; then
    for port in $PORTS; do
      lines=$(ss -Hltnp "sport = :$port" 2>/dev/null || true)
      cg=""
      while read -r pid; do
        [ -n "$pid" ] && cg+="${cg:+,}$(js "$pid"):$(js "$(head -c 2000 "/proc/$pid/cgroup" 2>/dev/null || true)")"
      done < <(grep -o 'pid=[0-9]*' <<<"$lines" | cut -d= -f2 | sort -u || true)
      ports_json+="${ports_json:+,}{\"port\":$port,\"ss\":$(js "$lines"),\"cgroups\":{$cg}}"
    done
    ports_state="read"
  else
    ports_state="no-ss"
  fi
else
  ports_state="none"
fi

# ---- GPUs: the host's nvidia-smi, and the image with the server's --gpus
gpu_json=null toolkit_json=null probe_json=null
if [ "$CHECK_GPUS" = 1 ]; then
  smi=$(command -v nvidia-smi 2>/dev/null || true)
  q_rc=-1 q_out="" q_err="" a_rc=-1 a_out="" a_err="" app_cg="" x_out="" fm=""
  if [ -n "$smi" ]; then
    capture nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,driver_version,compute_mode,mig.mode.current,persistence_mode,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits
    q_rc=$RC q_out=$OUT q_err=$ERR
    capture nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits
    a_rc=$RC a_out=$OUT a_err=$ERR
    # Each app's cgroup, as for the listeners: it names our container even when docker top missed the pid
    # (a server child started after it, the container not running at the inspect, no ps on the host). A
    # pid already gone has no entry.
    if [ "$a_rc" = 0 ]; then
      while read -r pid; do
        [[ $pid =~ ^[0-9]+$ ]] && cg=$(head -c 2000 "/proc/$pid/cgroup" 2>/dev/null) &&
          app_cg+="${app_cg:+,}$(js "$pid"):$(js "$cg")"
      done < <(cut -d, -f2 <<<"$a_out" | tr -d ' ' | sort -u)
    fi
    # The CUDA version the driver supports and the fabric state, from the full report (lines only).
    capture nvidia-smi -q
    x_out=$(grep -E '^\s*(CUDA Version|Driver Version)\s*:|^\s*Fabric\s*$|^\s*(State|Status)\s*:' <<<"$OUT" | head -n 40 || true)
  fi
  if command -v systemctl >/dev/null; then
    fm=$(systemctl is-active nvidia-fabricmanager 2>/dev/null || true)
    # Read whole, not piped into grep -q: under pipefail systemctl's SIGPIPE would fail the pipeline and
    # call an installed unit missing.
    if [ "$fm" != active ]; then
      fm_units=$(systemctl list-unit-files nvidia-fabricmanager.service 2>/dev/null || true)
      case "$fm_units" in *nvidia-fabricmanager.service*) ;; *) fm=not-installed ;; esac
    fi
  fi
  # moby registers --gpus when nvidia-container-runtime-hook is on dockerd's PATH (reference 2c): where it is.
  hooks=()
  for h in nvidia-container-runtime-hook nvidia-cdi-hook nvidia-ctk; do
    p=$(command -v "$h" 2>/dev/null || true)
    [ -n "$p" ] && hooks+=("$p")
  done
  gpu_json="{\"nvidiaSmi\":$(js "$smi"),\"query\":{\"rc\":$q_rc,\"out\":$(js "$q_out"),\"err\":$(js "$q_err")},\"apps\":{\"rc\":$a_rc,\"out\":$(js "$a_out"),\"err\":$(js "$a_err")},\"cgroups\":{$app_cg},\"report\":$(js "$x_out"),\"fabricManager\":$(js "$fm"),\"hooks\":$(jarr "${hooks[@]+"${hooks[@]}"}")}"

  image_present=false
  if [ "$have_docker" = 1 ] && [ -n "$IMAGE" ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then image_present=true; fi
  if [ "$image_present" = false ] && [ "$have_docker" = 1 ] && [ -n "${IMAGE_OF_CONTAINER:-}" ] &&
    img=$(docker inspect --format '{{.Image}}' "$IMAGE_OF_CONTAINER" 2>/dev/null) && [ -n "$img" ]; then
    IMAGE=$img image_present=true
  fi
  if [ "$image_present" = true ]; then
    # The decisive check: the server image itself, with the server's --gpus, lists what it sees.
    capture docker run --rm --pull never --network none --gpus "$GPUS_FLAG" --entrypoint nvidia-smi "$IMAGE" -L
    toolkit_json="{\"ran\":true,\"image\":$(js "$IMAGE"),\"rc\":$RC,\"out\":$(js "$OUT"),\"err\":$(js "$ERR")}"
    if [ "$CUDA_PROBE" = 1 ] && [ "$RC" = 0 ]; then
      # CUDA itself (a first call fails with error 802 when the fabric manager is down, or says the driver
      # is too old): only in an image that has torch; one without it says so and is not judged.
      probe='import json, warnings
r = {"torch": None}
try:
    import torch
except Exception as e:
    print(json.dumps({"torch": None, "error": "no torch: %s" % e})); raise SystemExit(0)
r["torch"] = torch.__version__; r["cuda"] = torch.version.cuda
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    try:
        r["available"] = torch.cuda.is_available(); r["count"] = torch.cuda.device_count()
        if r["available"]:
            torch.zeros(1).cuda(); r["free"] = [torch.cuda.mem_get_info(i)[0] for i in range(r["count"])]
    except Exception as e:
        r["error"] = "%s: %s" % (type(e).__name__, e)
    r["warnings"] = [str(x.message) for x in w][:5]
print(json.dumps(r))'
      capture docker run --rm --pull never --network none --ipc host --gpus "$GPUS_FLAG" --entrypoint python3 "$IMAGE" -c "$probe"
      probe_json="{\"rc\":$RC,\"out\":$(js "$(tail -n 1 <<<"$OUT")"),\"err\":$(js "$(tail -n 5 <<<"$ERR")")}"
    fi
  else
    toolkit_json="{\"ran\":false,\"image\":$(js "$IMAGE"),\"reason\":$(js "$([ "$have_docker" = 1 ] && echo "image not on this host" || echo "docker does not answer")")}"
  fi
fi

# ---- the weights
weights_json=null
if [ -n "$MODEL_PATH" ]; then
  if ! command -v python3 >/dev/null; then
    weights_json="{\"path\":$(js "$MODEL_PATH"),\"error\":\"python3 is not installed: the weights cannot be read\"}"
  elif ! declare -F preflight_weights >/dev/null; then
    weights_json="{\"path\":$(js "$MODEL_PATH"),\"error\":$(js "preflight-weights.sh is not loaded before preflight-host.sh")}"
  else
    w=$(preflight_weights "$MODEL_PATH" "$c_uid" "$c_gid" "$WEIGHTS_SHA256_JSON" 2>/dev/null | tail -n 1 || true)
    case "$w" in
      "{"*"}") weights_json=$w ;;
      *) weights_json="{\"path\":$(js "$MODEL_PATH"),\"error\":$(js "preflight_weights printed no report: ${w:0:200}")}" ;;
    esac
  fi
fi

report="{\"host\":$(js "$HOST_NAME"),\"hostname\":$(js "$(hostname)"),\"containerUser\":$(js "$c_uid:$c_gid"),\"tools\":{$tools_json},\"own\":{\"containers\":[$own_json],\"pids\":[$(IFS=,; echo "${own_pids[*]+"${own_pids[*]}"}")]},\"ports\":{\"state\":\"$ports_state\",\"listeners\":[$ports_json]},\"gpus\":$gpu_json,\"toolkit\":$toolkit_json,\"cudaProbe\":$probe_json,\"weights\":$weights_json}"
# Verify before printing: a report that is not one JSON object is no report.
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$report" || { echo "preflight-host[$HOST_NAME]: built a report that is not JSON" >&2; exit 1; }
fi
printf '%s\n' "$report"

#!/usr/bin/env bash
# End-to-end proof on THIS machine that Harbor's `mini-swe-agent` agent installs offline inside a sim
# task container and solves sim/dataset against the SGLang test double (tool-call protocol).
#
# What it does (every wait bounded; nothing leaves the machine):
#   1. fills ~/.cache/reprobench/{wheelhouse,agent-wheelhouse} (sim/wheelhouse.sh, sim/agent-wheelhouse.sh)
#   2. a Harbor venv from the wheelhouse (offline)
#   3. builds sim/images/task-base and the task images under a private local tag prefix (a copy of the
#      dataset points at them), so the sim's own registry.sim tags are not touched
#   4. `harbor run` with a job config carrying exactly what the sim runner must give a task container:
#      environment.env (uv and litellm offline) and environment.mounts (wheel dir + uv binary). An extra
#      compose file puts the double (sim-default.json, from the source tree) next to each task container
#      as service `model` and makes the trial's network `internal`: the agent reaches the double and
#      nothing else, so an install or agent step that tried the internet would fail the run.
#   5. prints one line per trial (task, reward, exception) and exits 0 only when every reward equals the
#      task's [metadata].expected_reward.
# Inputs (env, all optional):
#   TASKS            space-separated task dirs of sim/dataset (default: hello-file sum-numbers sha-preimage)
#   PYTHON313        CPython 3.13 for the Harbor venv (default: python3.13, else pyenv's 3.13.*)
#   HARBOR_VENV      default ~/.cache/reprobench/mswea-harbor-venv
#   WORK_DIR         jobs, logs and the dataset copy (default: a new mktemp -d; kept for inspection)
#   N_CONCURRENT     harbor --n-concurrent (default 3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
TASKS=${TASKS:-hello-file sum-numbers sha-preimage}
HARBOR_VENV=${HARBOR_VENV:-$HOME/.cache/reprobench/mswea-harbor-venv}
N_CONCURRENT=${N_CONCURRENT:-3}
WORK_DIR=${WORK_DIR:-$(mktemp -d /tmp/mswea-local.XXXXXX)}
AGENT_WHEELHOUSE=${AGENT_WHEELHOUSE:-$HOME/.cache/reprobench/agent-wheelhouse}
WHEELHOUSE=${WHEELHOUSE:-$HOME/.cache/reprobench/wheelhouse}
TAG_PREFIX=reprobench-mswea-local
die() { echo "mswea-local: $*" >&2; exit 1; }
say() { echo "mswea-local: $*" >&2; }
started=$SECONDS

docker info >/dev/null 2>&1 || die "no docker engine answers (start one with scripts/dockerd.sh)"
if [ -z "${PYTHON313:-}" ]; then
  if command -v python3.13 >/dev/null 2>&1 && python3.13 -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
    PYTHON313=python3.13
  else
    PYTHON313=$(find "${PYENV_ROOT:-$HOME/.pyenv}/versions" -maxdepth 3 -path '*/3.13.*/bin/python3.13' 2>/dev/null | sort | tail -n1)
  fi
fi
if [ -z "$PYTHON313" ] || ! "$PYTHON313" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
  die "no CPython 3.13 found (the wheelhouse is for 3.13); set PYTHON313"
fi
mkdir -p "$WORK_DIR"
say "work dir $WORK_DIR"

# Harbor drives `docker compose` (v2). Debian bookworm ships only v1; without a plugin, borrow the one
# in the sim host image (Debian trixie's docker-compose 2.26, links only libc) through a private
# DOCKER_CONFIG, so the machine's docker setup is left alone.
if ! docker compose version >/dev/null 2>&1; then
  compose_config=$HOME/.cache/reprobench/compose-v2
  if [ ! -x "$compose_config/cli-plugins/docker-compose" ]; then
    host_image=$(docker images reprobench/sim-host --format '{{.Repository}}:{{.Tag}}' | head -n1)
    [ -n "$host_image" ] || die "no 'docker compose' v2 and no reprobench/sim-host image to take it from (bin/reprobench sim up builds one)"
    mkdir -p "$compose_config/cli-plugins"
    cid=$(docker create "$host_image")
    docker cp "$cid:/usr/libexec/docker/cli-plugins/docker-compose" "$compose_config/cli-plugins/docker-compose"
    docker rm "$cid" >/dev/null
  fi
  export DOCKER_CONFIG=$compose_config
  docker compose version >/dev/null 2>&1 || die "$compose_config/cli-plugins/docker-compose does not run here"
fi

# 1. wheelhouses
bash "$here/wheelhouse.sh" >&2
bash "$here/agent-wheelhouse.sh" >&2

# 2. Harbor from the wheelhouse, offline
if ! "$HARBOR_VENV/bin/harbor" --version >/dev/null 2>&1; then
  "$PYTHON313" -m venv "$HARBOR_VENV"
  "$HARBOR_VENV/bin/pip" install --quiet --no-index --find-links "$WHEELHOUSE" harbor==0.21.0
fi
say "harbor $("$HARBOR_VENV/bin/harbor" --version | tail -n1)"

# 3. images under a private tag prefix, and a dataset copy that names them
docker image inspect reprobench/debian-base:trixie >/dev/null 2>&1 \
  || die "reprobench/debian-base:trixie is missing (bin/reprobench sim up builds it)"
docker build -q -t "$TAG_PREFIX/task-base:dev" "$here/images/task-base" >/dev/null 2>"$WORK_DIR/build.log" \
  || die "task-base build failed: $(tail -n 5 "$WORK_DIR/build.log")"
mkdir -p "$WORK_DIR/dataset"
for task in $TASKS; do
  [ -d "$root/sim/dataset/$task" ] || die "no task sim/dataset/$task"
  rm -rf "${WORK_DIR:?}/dataset/$task"
  cp -r "$root/sim/dataset/$task" "$WORK_DIR/dataset/$task"
  sed -i "s#^FROM registry.sim:5000/reprobench/task-base:latest#FROM $TAG_PREFIX/task-base:dev#" "$WORK_DIR/dataset/$task/environment/Dockerfile"
  sed -i "s#^docker_image = .*#docker_image = \"$TAG_PREFIX/task-$task:dev\"#" "$WORK_DIR/dataset/$task/task.toml"
  docker build -q -t "$TAG_PREFIX/task-$task:dev" "$WORK_DIR/dataset/$task/environment" >/dev/null 2>"$WORK_DIR/build.log" \
    || die "task-$task build failed: $(tail -n 5 "$WORK_DIR/build.log")"
done
say "images built ($((SECONDS - started)) s)"

# 4. harbor run. The key is the double's placeholder; a real run passes its own through the host env.
wheels_mount=/var/cache/reprobench/agent-wheels
job_name=mswea-local
cat >"$WORK_DIR/model-service.yaml" <<EOF
services:
  model:
    image: reprobench/debian-base:trixie
    command: [python3, -m, sglang.launch_server, --model-path, /double/tiny-model, --served-model-name, Qwen/Qwen3.8-27B,
              --host, 0.0.0.0, --port, "30000", --dp-size, "2", --reasoning-parser, qwen3, --tool-call-parser, qwen3_coder]
    environment:
      PYTHONPATH: /double
      PYTHONDONTWRITEBYTECODE: "1"
      SGLANG_DOUBLE_SCENARIO: /scenarios/sim-default.json
      SGLANG_DOUBLE_LOAD_SECONDS: "0"
      SGLANG_DOUBLE_HOST_TAG: model
    volumes:
      - $root/sim/sglang-double:/double:ro
      - $root/sim/scenarios:/scenarios:ro
networks:
  default:
    internal: true
EOF
cat >"$WORK_DIR/job.yaml" <<EOF
job_name: $job_name
jobs_dir: $WORK_DIR/jobs
n_attempts: 1
n_concurrent_trials: $N_CONCURRENT
quiet: true
agents:
  - name: mini-swe-agent
    model_name: openai/Qwen/Qwen3.8-27B
    env:
      OPENAI_API_KEY: "\${OPENAI_API_KEY}"
      OPENAI_BASE_URL: http://model:30000/v1
environment:
  type: docker
  delete: true
  env:
    UV_FIND_LINKS: $wheels_mount
    UV_OFFLINE: "1"
    UV_PYTHON_DOWNLOADS: never
    LITELLM_LOCAL_MODEL_COST_MAP: "True"
  mounts:
    - {type: bind, source: $AGENT_WHEELHOUSE, target: $wheels_mount, read_only: true}
    - {type: bind, source: $AGENT_WHEELHOUSE/bin/uv, target: /usr/local/bin/uv, read_only: true}
  extra_docker_compose:
    - $WORK_DIR/model-service.yaml
datasets:
  - path: $WORK_DIR/dataset
EOF
say "harbor run (job config $WORK_DIR/job.yaml)"
harbor_started=$SECONDS
set +e
OPENAI_API_KEY=sk-sim-double timeout 900 "$HARBOR_VENV/bin/harbor" run -c "$WORK_DIR/job.yaml" >"$WORK_DIR/harbor.log" 2>&1
harbor_rc=$?
set -e
say "harbor exited $harbor_rc after $((SECONDS - harbor_started)) s (log $WORK_DIR/harbor.log)"

# 5. rewards vs expected_reward
# shellcheck disable=SC2086  # TASKS is a list of words
"$PYTHON313" - "$WORK_DIR/jobs/$job_name" "$root/sim/dataset" $TASKS <<'PY'
import json, pathlib, sys, tomllib
job, dataset, tasks = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
seen, ok = {}, True
for result in sorted(job.glob("*/result.json")):
    r = json.loads(result.read_text())
    task = r.get("task_name", "").split("/")[-1]
    rewards = ((r.get("verifier_result") or {}).get("rewards") or {})
    reward = rewards.get("reward")
    exc = (r.get("exception_info") or {}).get("exception_type")
    seen[task] = reward
    expected = tomllib.loads((dataset / task / "task.toml").read_text())["metadata"]["expected_reward"]
    good = reward is not None and float(reward) == float(expected)
    ok &= good
    print(f"{task}: reward {reward} (expected {expected}){' exception ' + exc if exc else ''} {'OK' if good else 'MISMATCH'}")
missing = [t for t in tasks if t not in seen]
if missing:
    print(f"no result for: {' '.join(missing)}")
sys.exit(0 if ok and not missing else 1)
PY
status=$?
say "total $((SECONDS - started)) s"
exit $status

#!/usr/bin/env bash
# Download a worker's weights from a Hugging Face hub (modelServer.download) into modelServer.modelPath, with
# the REAL huggingface_hub client, then verify every file against the hub's own listing:
#   1. a venv ($VENV) with huggingface_hub and its dependencies exactly as $REQUIREMENTS pins them (the text
#      of components/weights/requirements.txt: every wheel's sha256), installed from $INDEX_URL with
#      `pip install --require-hashes --no-deps --only-binary=:all:`; reused while its stamp names the same
#      pins. hf_xet must not be in it (see "Xet" below).
#   2. $REVISION resolved to its commit, and the file tree of that commit listed (size, git blob id, LFS
#      sha256), through the hub's API; a missing repo or revision, a gated repo without access, a refused
#      token or a proxy refusing us is said in one line and not retried.
#   3. `hf download $REPO --revision <commit> --local-dir $MODEL_PATH`, retried (retry.sh): a cut download
#      resumes, since huggingface_hub 1.17.0 keeps <local_dir>/.cache/huggingface/download/*.incomplete and
#      asks for the rest with `Range: bytes=N-` on the next run. "progress:" lines say how far it is.
#   4. every file of the tree checked: its size, and the sha256 of an LFS file against lfs.oid, the git blob
#      sha1 of any other file against its oid. A file that differs is removed (the next `up` downloads it
#      again) and the run fails naming it; files of an earlier revision that the new one lacks are removed.
#   5. a marker, $MODEL_PATH/.reprobench-weights.json (repo, revision, commit, files with sizes), written
#      last: a re-run with the same repo and revision whose files are all there with their sizes does no
#      network at all. weights-download-check.sh reads it on refresh.
# MODEL_PATH is written only when it is absent, empty or carries this script's stamp
# (.reprobench-weights-download, left before anything is downloaded): a directory of someone else's files is
# refused, never written into. The venv is replaced only when it is one (pyvenv.cfg) or ours (owned-dir.sh).
# Nothing is removed on destroy (the weights are tens of GB and outlive the stack, like the server images).
# The token (HF_TOKEN) comes from the environment only: never on a command line, never printed. Proxies come
# from the standard environment (HTTP(S)_PROXY, NO_PROXY and lower case): pip and huggingface_hub (httpx)
# read them; messages name only the proxy's host:port.
# Xet: hf_xet is left out and HF_HUB_DISABLE_XET=1 is set, so the client downloads over plain HTTP(S) from
# HF_ENDPOINT (HEAD resolve + ranged GET), which the host's proxy can carry. On huggingface.co itself the
# resolve of an LFS/Xet file still redirects to a download host (cas-bridge.xethub.hf.co, cdn-lfs*.hf.co):
# a proxy with an allow-list must allow those too (shared reference gpus.md, section 4).
# Run with retry.sh and owned-dir.sh prepended (scriptWithEnv(["retry", "owned-dir", "weights-download"],
# env)); run from its file, it sources them beside itself. The last stdout line is one JSON object.
# Inputs (env):
#   REPO            the hub repo, org/name
#   REVISION        a commit (40 hex) or a branch/tag; a branch is resolved once and the commit kept
#   MODEL_PATH      modelServer.modelPath of this worker
#   ENDPOINT        the hub (HF_ENDPOINT; default https://huggingface.co)
#   VENV            the client's venv directory
#   REQUIREMENTS    the pinned requirements (text)
#   INDEX_URL       PEP 503 simple index the wheels come from (default https://pypi.org/simple/)
#   PYTHON          interpreter the venv is made with (default python3; 3.11-3.13, as the pins need)
#   HF_TOKEN        the hub token (secret; optional: a public repo needs none)
#   ATTEMPTS        attempts per network step (default 5)
#   PROGRESS_SECS   how often the download says how far it is (default 30)
set -euo pipefail
: "${REPO:?}" "${REVISION:?}" "${MODEL_PATH:?}" "${VENV:?}" "${REQUIREMENTS:?}"
ENDPOINT=${ENDPOINT:-https://huggingface.co}
ENDPOINT=${ENDPOINT%/}
INDEX_URL=${INDEX_URL:-https://pypi.org/simple/}
PYTHON=${PYTHON:-python3}
ATTEMPTS=${ATTEMPTS:-5}
PROGRESS_SECS=${PROGRESS_SECS:-30}
# shellcheck disable=SC2034 # read by retry() and remove_owned_dir()
RETRY_NAME=weights-download OWNED_DIR_NAME=weights-download
die() { echo "weights-download: $*" >&2; exit 1; }
here=$(dirname "${BASH_SOURCE[0]:-.}")
if ! declare -F retry >/dev/null; then
  # shellcheck source=/dev/null
  . "$here/retry.sh" 2>/dev/null || die "retry.sh must be prepended (scriptWithEnv([\"retry\", \"owned-dir\", \"weights-download\"], env))"
fi
if ! declare -F remove_owned_dir >/dev/null; then
  # shellcheck source=/dev/null
  . "$here/owned-dir.sh" 2>/dev/null || die "owned-dir.sh must be prepended (scriptWithEnv([\"retry\", \"owned-dir\", \"weights-download\"], env))"
fi
command -v python3 >/dev/null || die "'python3' is required on this host"
# Everything written here is read by the server's container as another user.
umask 022
problem=$(owned_path_problem "$MODEL_PATH")
[ -z "$problem" ] || die "modelServer.modelPath '$MODEL_PATH': $problem"
problem=$(owned_path_problem "$VENV")
[ -z "$problem" ] || die "modelServer.download.venv '$VENV': $problem"
stamp="$MODEL_PATH/.reprobench-weights-download"
marker="$MODEL_PATH/.reprobench-weights.json"
what="$REPO@$REVISION"

# The one helper for what bash cannot do well (JSON, hashing, the hub's API); its first argument says what.
helper=$(cat <<'PY'
import hashlib, json, os, sys, time


def say(line):
    sys.stderr.write("weights-download: %s\n" % line)
    sys.stderr.flush()


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def inside(root, rel):
    """The file's path under root, or None for a path that would leave it."""
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in rel.split("/")):
        return None
    return os.path.join(root, rel)


def complete(marker, root, repo, revision):
    """Prints the marker's report and exits 0 when it names repo@revision and every file has its size."""
    m = load(marker)
    if not m or m.get("repo") != repo or m.get("revision") != revision:
        sys.exit(1)
    for f in m.get("files", []):
        p = inside(root, f.get("path", ""))
        if p is None or not os.path.isfile(p) or os.path.getsize(p) != f.get("size"):
            sys.exit(1)
    print(json.dumps({"repo": repo, "revision": revision, "commit": m["commit"], "modelPath": root, "files": len(m["files"]),
                      "bytes": sum(f["size"] for f in m["files"]), "changed": False}))


def resolve(out, repo, revision):
    """The commit revision names and its file tree, from the hub (the venv's huggingface_hub)."""
    import httpx
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError
    endpoint = os.environ["HF_ENDPOINT"]
    token_note = "the token (reprobench:hfToken)" if os.environ.get("HF_TOKEN") else "no token (reprobench:hfToken is not set)"
    give_up = 97
    try:
        api = HfApi()
        commit = api.model_info(repo, revision=revision).sha
        files = []
        for e in api.list_repo_tree(repo, revision=commit, recursive=True):
            if not hasattr(e, "blob_id"):
                continue
            files.append({"path": e.path, "size": e.size, "gitOid": e.blob_id, "sha256": e.lfs.sha256 if e.lfs else None})
    except GatedRepoError:
        say("%s at %s is gated and %s gives no access: accept its terms on the hub with the token's account, then set the token: pulumi config set --secret reprobench:hfToken TOKEN" % (repo, endpoint, token_note))
        sys.exit(give_up)
    except RepositoryNotFoundError:
        say("%s is not a model repo at %s (or it is private and %s cannot see it): check modelServer.download.repo" % (repo, endpoint, token_note))
        sys.exit(give_up)
    except RevisionNotFoundError:
        say("%s at %s has no revision %s: check modelServer.download.revision" % (repo, endpoint, revision))
        sys.exit(give_up)
    except HfHubHTTPError as e:
        status = getattr(getattr(e, "response", None), "status_code", None)
        first = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        if status == 407:
            say("the host's proxy refused the request to %s: 407 Proxy Authentication Required (check the credentials of hosts[].proxy)" % endpoint)
            sys.exit(give_up)
        if status in (401, 403):
            say("%s refused %s for %s (HTTP %d): %s" % (endpoint, token_note, repo, status, first))
            sys.exit(give_up)
        say("cannot list %s at %s: %s" % (repo, endpoint, first))
        sys.exit(1)
    except httpx.ProxyError as e:
        say("the host's proxy refused the connection to %s: %s" % (endpoint, str(e)[:200]))
        sys.exit(give_up if "407" in str(e) or "403" in str(e) else 1)
    except (httpx.HTTPError, OSError) as e:
        say("cannot reach %s: %s: %s" % (endpoint, type(e).__name__, str(e)[:200]))
        sys.exit(1)
    if not files:
        say("%s@%s (%s) has no files" % (repo, revision, commit))
        sys.exit(give_up)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"repo": repo, "revision": revision, "commit": commit, "files": sorted(files, key=lambda x: x["path"])}, f)


def digest(path, size, lfs):
    h = hashlib.sha256() if lfs else hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(manifest, root):
    """Every file against the tree; a file that differs is removed (with the client's metadata for it)."""
    m = load(manifest)
    bad, n, last = [], len(m["files"]), time.monotonic()
    for i, f in enumerate(m["files"], 1):
        p = inside(root, f["path"])
        if p is None:
            bad.append("%s: not a path inside the model directory" % f["path"])
            continue
        if time.monotonic() - last >= 10 or f["sha256"]:
            say("progress: verifying %d/%d %s" % (i, n, f["path"]))
            last = time.monotonic()
        if not os.path.isfile(p):
            bad.append("%s: missing after the download" % f["path"])
            continue
        size = os.path.getsize(p)
        want = f["sha256"] or f["gitOid"]
        kind = "sha256 (the hub's lfs.oid)" if f["sha256"] else "git blob sha1 (the hub's oid)"
        got = digest(p, size, bool(f["sha256"])) if size == f["size"] else None
        if size != f["size"]:
            bad.append("%s: %d bytes, the hub lists %d" % (f["path"], size, f["size"]))
        elif got != want:
            bad.append("%s: %s %s, the hub lists %s" % (f["path"], kind, got, want))
        else:
            continue
        os.remove(p)
        meta = os.path.join(root, ".cache", "huggingface", "download", f["path"] + ".metadata")
        if os.path.isfile(meta):
            os.remove(meta)
    if bad:
        for b in bad[:20]:
            say("refused: " + b)
        say("%d of %d files of %s@%s (%s) do not match the hub's listing; removed them, so the next `up` downloads them again" % (len(bad), n, m["repo"], m["revision"], m["commit"]))
        sys.exit(1)


def finish(manifest, root, marker, previous):
    """Files only an earlier revision had are removed; the marker is written last; prints the report."""
    m = load(manifest)
    old = load(previous) or {}
    keep = {f["path"] for f in m["files"]}
    for f in old.get("files", []):
        p = inside(root, f.get("path", ""))
        if p is not None and f["path"] not in keep and os.path.isfile(p):
            os.remove(p)
            say("removed %s (of %s, not in %s)" % (f["path"], old.get("commit"), m["commit"]))
    record = {"repo": m["repo"], "revision": m["revision"], "commit": m["commit"], "endpoint": os.environ["HF_ENDPOINT"],
              "files": [{"path": f["path"], "size": f["size"]} for f in m["files"]]}
    tmp = marker + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, marker)
    print(json.dumps({"repo": m["repo"], "revision": m["revision"], "commit": m["commit"], "modelPath": root, "files": len(m["files"]),
                      "bytes": sum(f["size"] for f in m["files"]), "changed": True}))


def total(manifest):
    print(sum(f["size"] for f in load(manifest)["files"]))


{"complete": complete, "resolve": resolve, "verify": verify, "finish": finish, "total": total}[sys.argv[1]](*sys.argv[2:])
PY
)

# Converged: the marker names this repo and revision and every file it lists has its size.
if [ -f "$stamp" ] && report=$(python3 -c "$helper" complete "$marker" "$MODEL_PATH" "$REPO" "$REVISION" 2>/dev/null); then
  echo "weights-download: $MODEL_PATH already holds $what (nothing downloaded)" >&2
  echo "$report"
  exit 0
fi

# Ours to write: absent, empty, or stamped by an earlier run of this script.
if [ -e "$MODEL_PATH" ] && [ ! -d "$MODEL_PATH" ]; then
  die "modelServer.modelPath $MODEL_PATH is not a directory"
fi
if [ -d "$MODEL_PATH" ] && [ ! -e "$stamp" ] && [ -n "$(ls -A "$MODEL_PATH")" ]; then
  die "modelServer.modelPath $MODEL_PATH holds files reprobench did not download (no $(basename "$stamp") in it), so nothing is written there: empty it or point modelServer.modelPath elsewhere to download $what, or remove modelServer.download to serve the files as they are"
fi
mkdir -p "$MODEL_PATH"
[ -e "$stamp" ] || printf 'modelServer.download by reprobench (weights-download.sh): %s\n' "$what" >"$stamp"

index=${INDEX_URL%/}/
index_shown=$(redact_url "$index")
index_hostport=${index#*://} index_hostport=${index_hostport%%/*} index_hostport=${index_hostport##*@}
pip_trusted=()
# A plain HTTP index (a mirror inside the network, the sim's pypi.sim) must be trusted explicitly.
case "$index" in http://*) pip_trusted=(--trusted-host "$index_hostport") ;; esac
proxy_note() { local p; p=$(proxy_hostport "$1"); [ -z "$p" ] || echo " through proxy $p"; }

# 1. The client, exactly as pinned.
pins=$(printf '%s\n' "$REQUIREMENTS" | sha256sum | cut -c1-16)
venv_stamp="$VENV/.reprobench-hf-hub-$pins"
venv_ok() { [ -f "$venv_stamp" ] && "$VENV/bin/python" -c "import huggingface_hub" 2>/dev/null; }
if venv_ok; then
  echo "weights-download: $VENV already has the pinned huggingface_hub" >&2
else
  command -v "$PYTHON" >/dev/null || die "'$PYTHON' is not installed on this host (the huggingface_hub venv needs it)"
  pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  case "$pyver" in 3.11 | 3.12 | 3.13) ;; *) die "$PYTHON is Python $pyver; the pinned wheels (components/weights/requirements.txt) need 3.11, 3.12 or 3.13" ;; esac
  remove_owned_dir "$VENV" pyvenv.cfg || die "cannot replace modelServer.download.venv $VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv $VENV' failed (is the python3-venv package installed?)"
  printf '%s\n' "$REQUIREMENTS" >"$VENV/requirements.txt"
  retry "$ATTEMPTS" 2 "installing huggingface_hub from $index_shown" -- \
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --retries 2 --index-url "$index" \
    ${pip_trusted[@]+"${pip_trusted[@]}"} --require-hashes --no-deps --only-binary=:all: -r "$VENV/requirements.txt" >&2 ||
    die "pip could not install the pinned huggingface_hub from $index_shown$(proxy_note "$index") (see the lines above)"
  # With hf_xet the client would send large files to Xet hosts that HF_ENDPOINT and the proxy do not cover.
  if "$VENV/bin/python" -c "import hf_xet" 2>/dev/null; then die "hf_xet is installed in $VENV; it must not be"; fi
  "$VENV/bin/python" -c "import huggingface_hub.cli.hf" >&2 || die "the installed huggingface_hub has no hf CLI"
  touch "$venv_stamp"
  echo "weights-download: installed the pinned huggingface_hub in $VENV" >&2
fi

# The client's settings: this endpoint, no telemetry, no token file, no Xet, plain log lines.
export HF_ENDPOINT="$ENDPOINT" HF_HOME="$VENV/hf-home" HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1 \
  HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HUB_DISABLE_UPDATE_CHECK=1 HF_HUB_DOWNLOAD_TIMEOUT=60 HF_HUB_ETAG_TIMEOUT=60 NO_COLOR=1
[ -n "${HF_TOKEN:-}" ] || unset HF_TOKEN
work=$(mktemp -d "${TMPDIR:-/tmp}/weights-download.XXXXXX")
trap 'rm -rf "$work"' EXIT
manifest="$work/manifest.json"
# The previous marker: which files an earlier revision had. Gone until this run has verified everything.
previous="$work/previous.json"
if [ -f "$marker" ]; then cp "$marker" "$previous"; rm -f "$marker"; fi

# 2. The commit and its files.
retry "$ATTEMPTS" 2 "listing $what at $ENDPOINT" -- "$VENV/bin/python" -c "$helper" resolve "$manifest" "$REPO" "$REVISION" ||
  die "cannot list $what at $ENDPOINT$(proxy_note "$ENDPOINT/"): ${RETRY_LAST_ERROR#weights-download: }"
commit=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["commit"])' "$manifest")
want=$(python3 -c "$helper" total "$manifest")
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }

# 3. The download, resumed by each retry; says every PROGRESS_SECS how much is on disk.
download() {
  local start=$SECONDS next pid status=0 have
  echo "weights-download: progress: downloading $REPO@$commit ($(gib "$want")) from $ENDPOINT$(proxy_note "$ENDPOINT/")" >&2
  retry "$ATTEMPTS" 5 "hf download $REPO@$commit" -- "$VENV/bin/hf" download "$REPO" --revision "$commit" --local-dir "$MODEL_PATH" >&2 &
  pid=$!
  next=$((SECONDS + PROGRESS_SECS))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$next" ]; then
      have=$(du -sb "$MODEL_PATH" 2>/dev/null | cut -f1 || echo 0)
      echo "weights-download: progress: downloading $REPO@$commit: $(gib "${have:-0}") of $(gib "$want") ($((SECONDS - start))s)" >&2
      next=$((SECONDS + PROGRESS_SECS))
    fi
    sleep 1
  done
  wait "$pid" || status=$?
  return "$status"
}
download || die "hf download of $REPO@$commit into $MODEL_PATH failed after $ATTEMPTS attempts$(proxy_note "$ENDPOINT/"): ${RETRY_LAST_ERROR:-see the lines above} (what it has is kept: the next \`up\` resumes; through a proxy with an allow-list, huggingface.co's download hosts must be allowed too)"

# 4. Every file against the hub's listing; 5. the marker.
python3 -c "$helper" verify "$manifest" "$MODEL_PATH" || exit 1
chmod -R a+rX "$MODEL_PATH"
python3 -c "$helper" finish "$manifest" "$MODEL_PATH" "$marker" "$previous"

#!/usr/bin/env bash
# One line describing a worker's downloaded weights (modelServer.download), for CheckedCommand's drift check:
# the marker weights-download.sh writes last ($MODEL_PATH/.reprobench-weights.json) and how many of the files
# it lists are there with their size. Changes when the marker is gone (a cut or refused download, a
# directory emptied by hand) or a file went missing or changed size; the next `up` then downloads again
# (resuming) and verifies. Quick: sizes only, no hashing (weights-download.sh hashes after each download).
# Inputs (env): MODEL_PATH
set -euo pipefail
: "${MODEL_PATH:?}"
python3 - "$MODEL_PATH" <<'PY'
import json, os, sys

root = sys.argv[1]
try:
    with open(os.path.join(root, ".reprobench-weights.json"), encoding="utf-8") as f:
        m = json.load(f)
    files = m["files"]
except (OSError, ValueError, KeyError, TypeError):
    print("weights=missing")
    sys.exit(0)
ok = 0
for entry in files:
    p = os.path.join(root, entry["path"])
    if os.path.isfile(p) and os.path.getsize(p) == entry["size"]:
        ok += 1
print("weights=%s@%s files=%d/%d" % (m.get("repo"), m.get("commit"), ok, len(files)))
PY

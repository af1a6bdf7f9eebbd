#!/usr/bin/env bash
# What a refresh compares for the tool bundle: a digest of every file in it (path, size, mode), or
# "absent". A bundle deleted or changed on the host reads as drift and the next `up` rebuilds it.
# Inputs (env): TOOLS_DIR.
set -euo pipefail
: "${TOOLS_DIR:?}"
if [ ! -d "$TOOLS_DIR" ]; then echo absent; exit 0; fi
digest=$(cd "$TOOLS_DIR" && find . -printf '%P %s %m %y\n' | LC_ALL=C sort | sha256sum | cut -c1-16)
echo "bundle=$digest"

#!/usr/bin/env bash
# The refresh probe of a preflight (components/preflight.ts): nothing to compare. The preflight is a
# point-in-time check of a host before its model server starts or is replaced; what the host looks like
# later (the server itself holding the GPUs and the port) is no drift, and a refresh must never re-run it.
# Prints one constant line, after checking that it runs on the host at all.
# Inputs (env): HOST_NAME.
set -euo pipefail
: "${HOST_NAME:?}"
[ -d / ] || exit 1
echo "preflight of $HOST_NAME: settled when its server was last created or replaced"

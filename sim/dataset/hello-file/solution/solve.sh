#!/usr/bin/env bash
# Oracle solution for hello-file.
set -euo pipefail

printf 'Hello from reprobench!\n' > /app/hello.txt

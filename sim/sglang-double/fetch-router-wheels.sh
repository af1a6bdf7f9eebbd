#!/usr/bin/env bash
# Download the sglang-router wheel and all its dependencies for the double's image into ./wheels/,
# on the build host, so `docker build` installs them offline (a build container has neither this
# machine's CA bundle nor, in CI, a route to PyPI). Idempotent: skips when the wheels are there.
#   ROUTER_VERSION   sglang-router version (default 0.3.2)
#   TARGET_PYTHON    python version of the image (default 3.13, Debian trixie)
#   TARGET_PLATFORM  wheel platform (default x86_64; use aarch64 on arm hosts)
#   WHEEL_DIR        output (default: wheels/ next to this script)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUTER_VERSION="${ROUTER_VERSION:-0.3.2}"
TARGET_PYTHON="${TARGET_PYTHON:-3.13}"
TARGET_PLATFORM="${TARGET_PLATFORM:-x86_64}"
WHEEL_DIR="${WHEEL_DIR:-$here/wheels}"
marker="$WHEEL_DIR/.complete-sglang-router-$ROUTER_VERSION-py$TARGET_PYTHON-$TARGET_PLATFORM"

if [[ -f "$marker" ]]; then
  echo "wheels for sglang-router $ROUTER_VERSION (python $TARGET_PYTHON, $TARGET_PLATFORM) already in $WHEEL_DIR"
  exit 0
fi
mkdir -p "$WHEEL_DIR"
abi="cp${TARGET_PYTHON/./}"
python3 -m pip download --quiet --no-input --only-binary=:all: \
  --dest "$WHEEL_DIR" \
  --python-version "$TARGET_PYTHON" --implementation cp --abi "$abi" --abi abi3 --abi none \
  --platform "manylinux_2_28_$TARGET_PLATFORM" --platform "manylinux_2_17_$TARGET_PLATFORM" \
  --platform "manylinux2014_$TARGET_PLATFORM" --platform any \
  "sglang-router==$ROUTER_VERSION"
touch "$marker"
echo "downloaded $(find "$WHEEL_DIR" -name '*.whl' | wc -l) wheels to $WHEEL_DIR"

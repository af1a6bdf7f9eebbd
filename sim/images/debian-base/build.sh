#!/usr/bin/env bash
# Builds the Debian base image from debootstrap (there is no Docker Hub here) and imports it into the
# local engine. The caller (sim/images.ts) decides whether a build is needed from the input hash.
#
# Env: IMAGE (required, e.g. reprobench/debian-base:trixie), INPUT_HASH (required; stored as a label so
#      the cache can tell a stale image from a current one), SUITE (default trixie),
#      MIRROR (default http://deb.debian.org/debian), PACKAGES (comma list, default python3,ca-certificates),
#      WORK_DIR (default ~/.cache/reprobench/debootstrap): scratch space, outside the repo.
set -euo pipefail

: "${IMAGE:?set IMAGE to the tag to create, e.g. reprobench/debian-base:trixie}"
: "${INPUT_HASH:?set INPUT_HASH to the content hash of the inputs of this image}"
suite=${SUITE:-trixie}
mirror=${MIRROR:-http://deb.debian.org/debian}
packages=${PACKAGES:-python3,ca-certificates}
work_dir=${WORK_DIR:-$HOME/.cache/reprobench/debootstrap}

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "debian-base: installing debootstrap" >&2
  # A fresh machine may have no package lists yet.
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi

mkdir -p "$work_dir"
rootfs=$(mktemp -d "$work_dir/rootfs.XXXXXX")
trap 'rm -rf "$rootfs"' EXIT

echo "debian-base: debootstrap $suite (minbase + $packages) from $mirror" >&2
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$work_dir/debootstrap.log" 2>&1; then
  echo "debian-base: debootstrap failed; last lines of $work_dir/debootstrap.log:" >&2
  tail -n 20 "$work_dir/debootstrap.log" >&2
  exit 1
fi

# Downloaded .debs and package lists are dead weight in every image built on top of this one.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
# Images built FROM this one run apt-get non-interactively; keep their layers free of caches too.
cat >"$rootfs/etc/apt/apt.conf.d/90reprobench-slim" <<'CONF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
CONF

tar --numeric-owner -C "$rootfs" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
  docker import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    --change 'LABEL io.reprobench.sim=1' \
    --change "LABEL io.reprobench.input-hash=$INPUT_HASH" \
    - "$IMAGE" >/dev/null
echo "debian-base: imported $IMAGE" >&2

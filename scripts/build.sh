#!/usr/bin/env bash
# The package's build (npm run build; prepare runs it): the components compiled to dist/components with
# their type declarations, and the host scripts they read at run time beside them.
# Built in a staging directory and renamed into place: a program or the provider plugin loading
# dist/components meanwhile (another Pulumi run on this checkout) finds the old build or the new one,
# never a half-built or missing one.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# At dist's depth, so the source maps' relative paths hold once it is moved there.
staging=$(mktemp -d "$repo/.dist-build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
npx tsc -p tsconfig.build.json --outDir "$staging"
built=$staging/components
mkdir -p "$built/scripts"
cp components/scripts/*.sh "$built/scripts/"
# The pins of modelServer.download's client, read beside the module (components/weights-download.ts).
mkdir -p "$built/weights"
cp components/weights/requirements.txt "$built/weights/"
# Verification: the entry point loads and names the root component.
node -e 'const m = require(process.argv[1]); if (typeof m.BenchCluster !== "function") { console.error("the build has no BenchCluster"); process.exit(1); }' "$built/index.js"
# Two renames: the old build moves aside, the new one takes its place.
mkdir -p dist
[ ! -e dist/components ] || mv dist/components "$staging/previous"
mv "$built" dist/components
echo "built dist/components ($(find dist/components -name '*.js' | wc -l) modules, $(find dist/components/scripts -name '*.sh' | wc -l) host scripts)"

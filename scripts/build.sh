#!/usr/bin/env bash
# The package's build (npm run build; prepare runs it): the components compiled to dist/components with
# their type declarations, and the host scripts they read at run time beside them.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
rm -rf dist/components
npx tsc -p tsconfig.build.json
mkdir -p dist/components/scripts
cp components/scripts/*.sh dist/components/scripts/
# The pins of modelServer.download's client, read beside the module (components/weights-download.ts).
mkdir -p dist/components/weights
cp components/weights/requirements.txt dist/components/weights/
# Verification: the entry point loads and names the root component.
node -e 'const m = require("./dist/components/index.js"); if (typeof m.BenchCluster !== "function") { console.error("dist/components/index.js has no BenchCluster"); process.exit(1); }'
echo "built dist/components ($(find dist/components -name '*.js' | wc -l) modules, $(find dist/components/scripts -name '*.sh' | wc -l) host scripts)"

#!/usr/bin/env bash
# The plugin's build, run by `npm install` here (prepare), so by `pulumi package add`: the package itself
# (dist/components, scripts/build.sh) when it is missing or older than components/, then index.ts →
# index.js with the checkout's TypeScript. Installs nothing: @pulumi/pulumi, typescript and the
# components resolve from the checkout around this directory, so one copy of each ever loads.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
die() { printf '[plugin build] error: %s\n' "$*" >&2; exit 1; }

{ [ -f "$repo/node_modules/typescript/bin/tsc" ] && [ -d "$repo/node_modules/@pulumi/pulumi" ]; } ||
  die "no node_modules in $repo: run \`npm install\` there first (the plugin uses the checkout's packages)"
[ ! -e "$here/node_modules/@pulumi/pulumi" ] ||
  die "$here/node_modules/@pulumi/pulumi is a second copy of the Pulumi SDK beside $repo/node_modules' (remove $here/node_modules)"
# The schema's version is this package.json's: it must be the toolkit's.
# shellcheck disable=SC2016 # JavaScript, not shell
versions=$(node -e 'console.log(process.argv.slice(1).map((f) => require(f).version).join(" "))' "$here/package.json" "$repo/package.json")
read -r mine theirs <<<"$versions"
[ "$mine" = "$theirs" ] || die "plugin/package.json has version $mine, the toolkit (package.json) $theirs: make them equal"

built=$repo/dist/components/index.js
if [ ! -f "$built" ] || [ -n "$(find "$repo/components" -type f \( -name '*.ts' -o -name '*.sh' \) -newer "$built" -print -quit)" ]; then
  bash "$repo/scripts/build.sh"
fi
# Compiled aside and renamed into place: an engine starting this plugin meanwhile reads a whole index.js.
staging=$(mktemp -d "$here/.build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
node "$repo/node_modules/typescript/bin/tsc" -p "$here/tsconfig.json" --outDir "$staging"
mv "$staging/index.js" "$here/index.js"
echo "built plugin/index.js (reprobench $mine, on $(realpath --relative-to="$here" "$built"))"

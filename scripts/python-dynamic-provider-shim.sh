#!/bin/sh
# pulumi-resource-pulumi-nodejs, the plugin the engine starts for Node.js dynamic resources. scripts/toolchain.sh
# installs this next to the checkout's `pulumi` in place of the shim @pulumi/pulumi ships, which it extends by
# one fallback for Python programs that use our TypeScript components as a package (`pulumi package add`).
#
# Like the shipped shim, it resolves @pulumi/pulumi/cmd/dynamic-provider from its working directory and runs it.
# The engine starts it in the program's directory; a Python program's has no node_modules, so there the shipped
# shim fails with "Cannot find module '@pulumi/pulumi/cmd/dynamic-provider'" (pulumi/pulumi#5455). Then this
# one takes the node_modules of the project's local component packages (`packages:` in its Pulumi.yaml whose
# directory has a PulumiPlugin.yaml), and last this checkout's, and puts them on NODE_PATH: the provider code
# the dynamic resource carries is loaded with require-from-string, which resolves its own requires (e.g.
# @grpc/grpc-js) from the working directory too, so the script's path alone would not do.
# Where the working directory resolves it (any TypeScript program), nothing changes.
resolve() { node -e "console.log(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))" 2>/dev/null; }
if ! script=$(resolve); then
  # The checkout: this file is installed as <checkout>/.toolchain/bin/pulumi-resource-pulumi-nodejs.
  checkout=$(cd "$(dirname "$0")/../.." && pwd)
  # shellcheck disable=SC2016 # JavaScript, not shell
  paths=$(node -e '
    const fs = require("fs"), path = require("path");
    const dirs = [];
    const file = ["Pulumi.yaml", "Pulumi.yml"].find((f) => fs.existsSync(f));
    if (file) {
      try {
        const doc = require(path.join(process.argv[1], "node_modules", "yaml")).parse(fs.readFileSync(file, "utf8")) || {};
        for (const v of Object.values(doc.packages || {})) {
          const src = typeof v === "string" ? v : v && v.source;
          if (typeof src === "string" && fs.existsSync(path.resolve(src, "PulumiPlugin.yaml"))) dirs.push(path.resolve(src));
        }
      } catch {}
    }
    dirs.push(process.argv[1]);
    const out = [], nm = path.sep + "node_modules" + path.sep;
    for (const d of dirs) {
      try {
        const p = require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [d] });
        const dir = p.slice(0, p.lastIndexOf(nm) + nm.length - 1);
        if (!out.includes(dir)) out.push(dir);
      } catch {}
    }
    console.log(out.join(path.delimiter));' "$checkout" 2>/dev/null) || paths=
  if [ -n "$paths" ]; then
    NODE_PATH=$paths${NODE_PATH:+:$NODE_PATH}
    export NODE_PATH
  fi
  script=$(resolve) || {
    echo "pulumi-resource-pulumi-nodejs: cannot find @pulumi/pulumi/cmd/dynamic-provider from $PWD, nor in the node_modules of its Pulumi.yaml's local packages or of $checkout (pulumi/pulumi#5455)" >&2
    exit 1
  }
fi
exec node "$script" "$@"

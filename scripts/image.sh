#!/usr/bin/env bash
# `pnpm image`: builds the Dockerfile into the machine's container storage as animal-store-server (IMAGE to rename):
# with Docker where an engine answers (`docker info`), otherwise with buildah (`--format docker` keeps the
# HEALTHCHECK, which OCI images drop; `--layers` caches every step, so an unchanged tree builds in seconds).
#
# Base image: NODE_IMAGE when set; else the Dockerfile's default (node:26-bookworm-slim) when it is stored or can be
# pulled; else the stand-in that scripts/image-base.sh makes (and keeps until its inputs change), of the same Node line
# (scripts/node-dist.sh's NODE_DIST_VERSION; checked first).
# When NODE_EXTRA_CA_CERTS names a readable file (a TLS-inspecting proxy's CA), it is passed as the build secret
# `extra-ca` for Node and npm inside the build; the Dockerfile says how. Nothing of this machine goes into the image.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${IMAGE:-animal-store-server}
log() { printf 'image: %s\n' "$*" >&2; }
# shellcheck source=node-dist.sh
. "$ROOT/scripts/node-dist.sh"
node_dist_check "$ROOT/Dockerfile"

ARGS=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then
  ARGS+=(--secret "id=extra-ca,src=$NODE_EXTRA_CA_CERTS")
fi
started=$(date +%s)

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  [ -z "${NODE_IMAGE:-}" ] || ARGS+=(--build-arg "NODE_IMAGE=$NODE_IMAGE")
  log "docker build -t $IMAGE"
  DOCKER_BUILDKIT=1 docker build "${ARGS[@]}" -t "$IMAGE" "$ROOT"
else
  command -v buildah >/dev/null || {
    log "no Docker engine answers and buildah is missing (apt-get install buildah)"
    exit 1
  }
  if [ -z "${NODE_IMAGE:-}" ]; then
    default=$(sed -n 's/^ARG NODE_IMAGE=//p' "$ROOT/Dockerfile" | head -n1)
    if buildah inspect --type image "$default" >/dev/null 2>&1 || buildah pull --quiet "docker.io/library/$default" >/dev/null 2>&1; then
      NODE_IMAGE=$default
    else
      log "$default cannot be pulled here: using the stand-in of scripts/image-base.sh"
      NODE_IMAGE=$(bash "$ROOT/scripts/image-base.sh" | tail -n1)
    fi
  fi
  log "buildah bud -t $IMAGE (NODE_IMAGE=$NODE_IMAGE)"
  buildah bud --isolation chroot --format docker --layers --build-arg "NODE_IMAGE=$NODE_IMAGE" "${ARGS[@]}" \
    -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT"
fi
log "built $IMAGE in $(($(date +%s) - started)) s"

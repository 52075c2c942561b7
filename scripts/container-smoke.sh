#!/usr/bin/env bash
# Container smoke test without Docker: runs the Dockerfile's steps ([1] prune, [2a] install, [2b] build, [2c] deploy,
# [2d] check, [3] runtime layout, [4] start) in a temporary directory, then starts the runtime layout the way the
# image's CMD does and exercises it: /healthz and /readyz, the image's HEALTHCHECK command, a key from the key CLI,
# GET and POST /v1/pets, SIGTERM (exit 0), and a restart on the same data folder (the volume).
#
# MIRROR: the Dockerfile at the repository root. Same commands, same order, same step numbers; change both together.
# NODE_IMAGE, PNPM_VERSION, TURBO_VERSION, the HEALTHCHECK command and the CMD are read from the Dockerfile.
# Differences, and why:
#   - Node is the host's, not NODE_IMAGE's (printed below).
#   - The pnpm store is pnpm's default one on this machine (the image build uses a BuildKit cache mount), so packages
#     and better-sqlite3's native build (pnpm's side-effects cache) are reused between runs.
#   - The build context is exported from git (see SMOKE_SOURCE) instead of being sent by `docker build`.
#   - When run as root, the server and the key CLI run as `nobody` (the image's USER is `node`), with the runtime files
#     owned by root, as in the image.
#
# Usage: bash scripts/container-smoke.sh          (CI=true friendly: no input, exit status 0 only if every check passed)
# Environment:
#   SMOKE_SOURCE=worktree  (default) the files of the working tree that git tracks or would track (tracked files as
#                          they are on disk, untracked files .gitignore does not exclude): what `docker build .` sends,
#                          given .dockerignore.
#   SMOKE_SOURCE=head      `git archive HEAD`: the last commit only.
#   SMOKE_STORE_DIR=DIR    use another pnpm store (e.g. an empty one for a cold, image-like run).
#   SMOKE_KEEP=1           keep the temporary directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DOCKERFILE="$ROOT/Dockerfile"
SOURCE=${SMOKE_SOURCE:-worktree}
export CI=true TURBO_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1

started=$(date +%s)
step() { printf '\n== [%3ss] %s\n' "$(($(date +%s) - started))" "$*"; }
ok() { printf '   ok: %s\n' "$*"; }
fail() {
  printf '\ncontainer-smoke: FAILED: %s\n' "$*" >&2
  exit 1
}

[ -f "$DOCKERFILE" ] || fail "no Dockerfile at $DOCKERFILE"
command -v git >/dev/null || fail "git is needed to export the build context"
command -v pnpm >/dev/null || fail "pnpm is needed (npm i -g pnpm@<PNPM_VERSION>)"

# The Dockerfile's ARG defaults.
arg() { sed -n "s/^ARG $1=//p" "$DOCKERFILE" | head -n1; }
NODE_IMAGE=$(arg NODE_IMAGE)
PNPM_VERSION=$(arg PNPM_VERSION)
TURBO_VERSION=$(arg TURBO_VERSION)
[ -n "$NODE_IMAGE" ] && [ -n "$PNPM_VERSION" ] && [ -n "$TURBO_VERSION" ] || fail "cannot read the ARG defaults of the Dockerfile"

# An exec-form instruction of the Dockerfile (HEALTHCHECK ... CMD [..] or CMD [..]) as NUL-separated words.
dockerfile_exec() {
  node -e '
    const text = require("fs").readFileSync(process.argv[1], "utf8").replace(/\\\r?\n/g, " ");
    const line = text.split(/\r?\n/).filter((l) => l.startsWith(process.argv[2] + " ")).pop();
    if (!line) { console.error(`no ${process.argv[2]} in the Dockerfile`); process.exit(1); }
    const json = line.slice(line.indexOf("CMD [") + 4);
    process.stdout.write(JSON.parse(json).join("\0") + "\0");
  ' "$DOCKERFILE" "$1"
}
mapfile -d '' CMD < <(dockerfile_exec CMD)
mapfile -d '' HEALTHCHECK < <(dockerfile_exec HEALTHCHECK)
[ "${#CMD[@]}" -gt 0 ] && [ "${#HEALTHCHECK[@]}" -gt 0 ] || fail "cannot read CMD / HEALTHCHECK from the Dockerfile"

STORE_ARGS=()
[ -n "${SMOKE_STORE_DIR:-}" ] && STORE_ARGS=(--store-dir="$SMOKE_STORE_DIR")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/animal-store-smoke.XXXXXX")
chmod 755 "$WORK"
SERVER_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -s "$WORK/server.log" ]; then
    printf '\n-- last lines of the server log --\n' >&2
    tail -n 30 "$WORK/server.log" >&2 || true
  fi
  if [ "${SMOKE_KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
  if [ "$rc" -eq 0 ]; then
    printf '\ncontainer-smoke: PASSED in %ss\n' "$(($(date +%s) - started))"
  else
    printf '\ncontainer-smoke: FAILED (exit %s) after %ss\n' "$rc" "$(($(date +%s) - started))" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "setup: image $NODE_IMAGE (host node $(node -v)), pnpm $(pnpm -v) (Dockerfile: $PNPM_VERSION), turbo $TURBO_VERSION, source=$SOURCE, work dir $WORK"
[ "$(pnpm -v)" = "$PNPM_VERSION" ] || echo "   note: the host's pnpm is not the Dockerfile's $PNPM_VERSION"

# ---- build context (docker build's `COPY . .` of the prune stage) -------------------------------------------------
step "context: export the sources ($SOURCE)"
CTX="$WORK/context"
mkdir -p "$CTX"
case "$SOURCE" in
  worktree)
    # Tracked files as on disk (deleted ones skipped) plus untracked files not ignored: what `docker build .` sends.
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do if [ -f "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done |
      tar --null -T - -cf -) | tar -xf - -C "$CTX"
    ;;
  head)
    git -C "$ROOT" archive --format=tar HEAD | tar -xf - -C "$CTX"
    ;;
  *) fail "SMOKE_SOURCE must be worktree or head" ;;
esac
ok "$(find "$CTX" -type f | wc -l | tr -d ' ') files"

# ---- [1] prune -----------------------------------------------------------------------------------------------------
step "[1] prune: turbo prune @animal-store/server --docker"
(cd "$CTX" && pnpm dlx "turbo@$TURBO_VERSION" prune @animal-store/server --docker --out-dir="$WORK/out")
OUT="$WORK/out"

# ---- [2a] install --------------------------------------------------------------------------------------------------
step "[2a] install: pnpm install --frozen-lockfile on out/json + out/pnpm-lock.yaml"
REPO="$WORK/repo"
mkdir -p "$REPO"
cp -a "$OUT/json/." "$REPO/"
cp "$OUT/pnpm-lock.yaml" "$REPO/pnpm-lock.yaml"
(cd "$REPO" && pnpm install --frozen-lockfile "${STORE_ARGS[@]}")

# ---- [2b] build ----------------------------------------------------------------------------------------------------
step "[2b] build: out/full + tsconfig.base.json, turbo run build --filter=@animal-store/server..."
cp -a "$OUT/full/." "$REPO/"
cp "$CTX/tsconfig.base.json" "$REPO/tsconfig.base.json"
(cd "$REPO" && pnpm exec turbo run build --filter=@animal-store/server...)

# ---- [2c] deploy ---------------------------------------------------------------------------------------------------
step "[2c] deploy: pnpm deploy --prod (production dependencies only)"
DEPLOY="$WORK/deploy"
(cd "$REPO" && pnpm --filter=@animal-store/server --prod --config.inject-workspace-packages=true deploy "${STORE_ARGS[@]}" "$DEPLOY")

# ---- [2d] check ----------------------------------------------------------------------------------------------------
step "[2d] check the deployed layout"
test -f "$DEPLOY/dist/main.js" &&
  test -f "$DEPLOY/dist/cli/keys.js" &&
  test -d "$DEPLOY/prisma/sqlite/migrations" &&
  test -d "$DEPLOY/prisma/postgresql/migrations" &&
  test -f "$DEPLOY/node_modules/@animal-store/contract/dist/index.js" &&
  test -f "$DEPLOY/node_modules/@animal-store/rate-limit/dist/index.js" &&
  (cd "$DEPLOY" && node -e "new (require('better-sqlite3'))(':memory:').close()") ||
  fail "the deployed layout is incomplete"
if [ -d "$DEPLOY/node_modules/typescript" ] || [ -d "$DEPLOY/node_modules/vitest" ]; then fail "dev dependencies in the deployed layout"; fi
ok "dist, migrations, built workspace packages, better-sqlite3 loads; no dev dependencies at the top level"

# ---- [3] runtime ---------------------------------------------------------------------------------------------------
step "[3] runtime: /app = package.json, node_modules, dist, prisma; /data for SQLite"
APP="$WORK/app"
DATA="$WORK/data"
mkdir -p "$APP" "$DATA"
cp -a "$DEPLOY/package.json" "$APP/package.json"
cp -a "$DEPLOY/node_modules" "$APP/node_modules"
cp -a "$DEPLOY/dist" "$APP/dist"
cp -a "$DEPLOY/prisma" "$APP/prisma"
ok "$(du -sh "$APP" | cut -f1) in $APP"

# The image's USER: when root here, run as nobody, with the app files root-owned and only /data writable.
AS_USER=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chown -R root:root "$APP"
  chown 65534:65534 "$DATA"
  AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  ok "the server and the key CLI run as uid 65534 (nobody)"
fi

PORT=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")
BASE="http://127.0.0.1:$PORT"
# The image's ENV, with /data and the port moved for this machine.
RUN_ENV=(NODE_ENV=production "PORT=$PORT" HOST=127.0.0.1 "DATABASE_URL=file:$DATA/animal-store.db" LOG_LEVEL=info)

# HTTP request with node's fetch: prints the status, then the body.
http() { # METHOD PATH [BEARER] [JSON BODY]
  node -e '
    const [method, url, key, body] = process.argv.slice(1);
    const headers = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (body) headers["content-type"] = "application/json";
    fetch(url, { method, headers, body: body || undefined, signal: AbortSignal.timeout(5000) })
      .then(async (r) => { console.log(r.status); console.log(await r.text()); })
      .catch((e) => { console.log(0); console.log(e.cause?.code ?? e.message); });
  ' "$1" "$BASE$2" "${3:-}" "${4:-}"
}
expect() { # STATUS METHOD PATH [BEARER] [BODY]
  local want=$1 got
  shift
  got=$(http "$@")
  [ "$(head -n1 <<<"$got")" = "$want" ] || fail "$1 $2 answered $(head -n1 <<<"$got"), wanted $want: $(tail -n +2 <<<"$got" | head -c 300)"
  ok "$1 $2 -> $want $(tail -n +2 <<<"$got" | head -c 120)"
}
wait_ready() { # bounded: 30 s
  local deadline=$(($(date +%s) + 30)) path status
  for path in /healthz /readyz; do
    while :; do
      kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited during start-up"
      status=$(http GET "$path" | head -n1)
      [ "$status" = 200 ] && break
      [ "$(date +%s)" -lt "$deadline" ] || fail "$path did not answer 200 within 30 s (last: $status)"
      sleep 0.2
    done
    ok "GET $path -> 200"
  done
}
start_server() {
  # [4] the Dockerfile's CMD, run from WORKDIR /app.
  (cd "$APP" && exec env "${RUN_ENV[@]}" "${AS_USER[@]}" "${CMD[@]}") >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
}
stop_server() { # SIGTERM, expect exit 0 within 15 s
  local deadline=$(($(date +%s) + 15)) rc=0
  kill -TERM "$SERVER_PID"
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "the server did not stop within 15 s of SIGTERM"
    sleep 0.1
  done
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  [ "$rc" = 0 ] || fail "the server exited with $rc after SIGTERM, wanted 0"
  grep -q '"msg":"stopped"' "$WORK/server.log" || fail "no 'stopped' line in the server log"
  ok "SIGTERM -> exit 0, logged 'stopped'"
}

# ---- [4] start -----------------------------------------------------------------------------------------------------
step "[4] start: ${CMD[*]} (cwd $APP, port $PORT)"
start_server
wait_ready
grep -q '"msg":"listening on' "$WORK/server.log" || fail "no JSON 'listening' line in the server log"
test -f "$DATA/animal-store.db" || fail "no SQLite file in the data folder"
ok "JSON logs; migrations applied to $DATA/animal-store.db"

step "HEALTHCHECK: the Dockerfile's probe command"
(cd "$APP" && env "${RUN_ENV[@]}" "${AS_USER[@]}" "${HEALTHCHECK[@]}") || fail "the HEALTHCHECK command failed against a healthy server"
ok "exit 0"

step "key CLI: node dist/cli/keys.js create --plan free"
KEY_OUT=$(cd "$APP" && env "${RUN_ENV[@]}" "${AS_USER[@]}" node dist/cli/keys.js create --plan free --name container-smoke) || fail "the key CLI failed"
KEY=$(tail -n1 <<<"$KEY_OUT")
[ -n "$KEY" ] || fail "the key CLI printed no key"
ok "$(head -n1 <<<"$KEY_OUT")"

step "API: authenticated GET and POST /v1/pets"
expect 401 GET /v1/pets
expect 200 GET /v1/pets "$KEY"
expect 201 POST /v1/pets "$KEY" '{"name":"Smoke","categoryId":1,"status":"available"}'

step "SIGTERM: graceful shutdown"
stop_server

step "restart on the same data folder (the volume): migrations already applied, data kept"
start_server
wait_ready
expect 200 GET /v1/pets "$KEY"
grep -q '"name":"Smoke"' <<<"$(http GET /v1/pets "$KEY")" || fail "the pet created before the restart is gone"
ok "the pet created before the restart is listed"
stop_server

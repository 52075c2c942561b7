#!/usr/bin/env bash
# Smoke test of `pnpm dev` (the workspace in watch mode): starts it on a free port and a temporary SQLite file with the
# memory limiter, changes a description in the contract's source, waits until the running server serves it in
# /v1/openapi.json, puts the source back, waits until the server serves the original again, and stops everything.
# Bounded: each wait gives up after DEV_SMOKE_TIMEOUT seconds (180). Not part of CI: it edits a source file for a
# minute; the original is put back on any exit, and the last wait proves the build is back to it.
#
#   pnpm dev:smoke          (or: bash scripts/dev-smoke.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

timeout_s="${DEV_SMOKE_TIMEOUT:-180}"
source_file=packages/contract/src/contract.ts
original="summary: 'List animals',"
marker="dev-smoke-$$-$RANDOM"
changed="summary: 'List animals ${marker}',"
grep -qF "$original" "$source_file" || { echo "dev-smoke: \"$original\" not found in $source_file" >&2; exit 1; }

work="$(mktemp -d)"
backup="$work/contract.ts"
cp "$source_file" "$backup"
port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
origin="http://127.0.0.1:$port"
dev_pid=""

stop_dev() {
  [ -n "$dev_pid" ] || return 0
  # pnpm, turbo, tsc -w, tsup --watch and node --watch run in one process group of their own: stop them all.
  kill -INT -- "-$dev_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 -- "-$dev_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$dev_pid" 2>/dev/null || true
  dev_pid=""
}
cleanup() {
  cmp -s "$backup" "$source_file" || cp "$backup" "$source_file"
  stop_dev
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# $1: what is waited for; $2: a fixed string the served document must contain (or, with $3 = absent, must not).
wait_for_document() {
  local deadline=$((SECONDS + timeout_s)) doc
  while ((SECONDS < deadline)); do
    if ! kill -0 "$dev_pid" 2>/dev/null; then
      echo "dev-smoke: pnpm dev exited; its output:" >&2
      tail -n 60 "$work/dev.log" >&2
      return 1
    fi
    doc="$(curl -fsS --max-time 5 "$origin/v1/openapi.json" 2>/dev/null || true)"
    if [ -n "$doc" ]; then
      if [ "${3:-}" = absent ]; then
        grep -qF "$2" <<<"$doc" || return 0
      else
        grep -qF "$2" <<<"$doc" && return 0
      fi
    fi
    sleep 1
  done
  cp "$work/dev.log" "/tmp/dev-smoke-$$.log"
  echo "dev-smoke: timed out after ${timeout_s} s waiting for $1; the output of pnpm dev (all of it: /tmp/dev-smoke-$$.log):" >&2
  tail -n 60 "$work/dev.log" >&2
  return 1
}

echo "dev-smoke: pnpm dev on $origin (log: $work/dev.log)"
PORT="$port" HOST=127.0.0.1 DATABASE_URL="file:$work/dev.db" REDIS_URL='' REDIS_CLUSTER_NODES='' LOG_LEVEL=warn \
  setsid pnpm dev >"$work/dev.log" 2>&1 &
dev_pid=$!

started=$SECONDS
wait_for_document "the server to answer" '"openapi"'
echo "dev-smoke: serving after $((SECONDS - started)) s"

started=$SECONDS
sed -i "s/$original/$changed/" "$source_file"
wait_for_document "the changed contract to be served" "$marker"
echo "dev-smoke: the changed contract served after $((SECONDS - started)) s"

started=$SECONDS
cp "$backup" "$source_file"
wait_for_document "the original contract to be served again" "$marker" absent
echo "dev-smoke: the original served again after $((SECONDS - started)) s"

stop_dev
echo "dev-smoke: ok"

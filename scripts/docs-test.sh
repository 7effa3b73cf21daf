#!/usr/bin/env bash
# Runs the shell examples of README.md and docs/*.md against a live service, as a user pastes them
# after scripts/run.sh's export line: every ```sh / ```bash / ```shell block not marked
# `<!-- docs-test: skip (why) -->` on the line before its fence runs, as written, in a fresh
# `bash -euo pipefail`, with QUICKACT_URL, QUICKACT_KEY, QUICKACT_ADMIN_KEY and PATH (the quickact
# CLI first) set. The blocks of one file run in order, each seeing what the earlier ones set.
# A block fails on a non-zero exit, on an HTTP error curl got, or past its time limit
# (DOCS_TEST_TIMEOUT, 60 s); the run then prints the file, the line, the block and its output, and
# exits 1. scripts/test.sh runs it after the cargo tests (docs/testing.md).
#
#   scripts/docs-test.sh [FILE.md ...]        build the binaries (debug), run the blocks (default: README.md docs/*.md)
#   scripts/docs-test.sh --no-build [FILE...] use the binaries already in target/debug
#   scripts/docs-test.sh --verbose [FILE...]  also print every block's output
#   scripts/docs-test.sh --list [FILE...]     which blocks run and which are skipped, and why; starts nothing
#
# The service: quickact-api and quickact-worker (debug) on a throwaway Postgres cluster, the local
# provider (no OPENAI_API_KEY), an admin key, and for each file a user of its own created through
# the admin API as scripts/run.sh creates one. Settings the docs' examples assume are on: private
# webhook receivers allowed (docs/webhooks.md's receiver on 127.0.0.1), an MCP server `rooms` with
# a per-user header and a key to encrypt tokens with (docs/mcp-tools.md).
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
list=""
verbose=()
files=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build="" ;;
    --list) list=1 ;;
    -v | --verbose) verbose=(--verbose) ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "usage: scripts/docs-test.sh [--no-build] [--verbose | --list] [FILE.md ...]" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then files=(README.md docs/*.md); fi

command -v python3 >/dev/null || { echo "scripts/docs-test.sh needs python3" >&2; exit 1; }
if [ -n "$list" ]; then exec python3 scripts/docs-test.py list "${files[@]}"; fi

source scripts/pg.sh
export SQLX_OFFLINE=true
bin=${CARGO_TARGET_DIR:-target}/debug
if [ -n "$build" ]; then
  cargo build --quiet --locked --bin quickact-api --bin quickact-worker --bin quickact
fi
for b in quickact-api quickact-worker quickact; do
  [ -x "$bin/$b" ] || { echo "$bin/$b is missing: run without --no-build" >&2; exit 1; }
done
bin=$(cd "$bin" && pwd)

pg_scratch_service quickact-docs
secrets_key="k1:$(random_hex 32)"

# The service as scripts/run.sh starts it, with nothing of this shell's QUICKACT_*, OPENAI_* or
# OTEL_* settings: the local provider serves every sentence.
start() {
  (
    for v in $(compgen -e); do
      case "$v" in QUICKACT_* | OPENAI_* | OTEL_*) unset "$v" ;; esac
    done
    export QUICKACT_BIND=127.0.0.1:$port QUICKACT_ADMIN_KEY=$admin_key RUST_LOG=warn \
      QUICKACT_WEBHOOK_ALLOW_PRIVATE=true QUICKACT_SECRETS_KEY=$secrets_key \
      QUICKACT_MCP_SERVERS='[{"name": "rooms", "url": "https://rooms.internal/mcp", "header": "Authorization"}]'
    exec "$bin/$1"
  ) >"$work/$1.log" 2>&1 &
}
start quickact-api
api_pid=$!
start quickact-worker
worker_pid=$!
stop_services() { kill "$api_pid" "$worker_pid" 2>/dev/null || true; wait "$api_pid" "$worker_pid" 2>/dev/null || true; }
trap 'stop_services; pg_stop "$work/data"; rm -rf "$work"' EXIT

url=http://127.0.0.1:$port
for _ in $(seq 1 150); do
  curl -sf "$url/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "$url/ready" >/dev/null || { echo "the API did not become ready:"; cat "$work/quickact-api.log"; exit 1; }

echo "docs-test: the service on $url; running the shell blocks of ${files[*]}"
status=0
python3 scripts/docs-test.py run "${verbose[@]}" --url "$url" --admin-key "$admin_key" --bin "$bin" --work "$work/blocks" "${files[@]}" \
  || status=$?
if [ "$status" != 0 ]; then
  for log in quickact-api quickact-worker; do
    echo "--- $log log (errors and warnings, last 40) ---"
    grep -iE "error|warn|panic" "$work/$log.log" | tail -40 || true
  done
fi
exit "$status"

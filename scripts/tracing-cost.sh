#!/usr/bin/env bash
# The cost of trace export (on demand, never in CI): `quickact-bench tracing` on a durable throwaway
# Postgres with the release binaries.
#
#   scripts/tracing-cost.sh [--rounds 3] [--n 3000] [--users 100] [--concurrency 64]
#
# One run, `--rounds` rounds: each round drains `--n` tasks (POSTed first, no worker; then one
# worker, local provider) once with tracing off and once with the API and the worker exporting
# over OTLP to a receiver in the bench process (OTEL_EXPORTER_OTLP_ENDPOINT), in turn first. Prints
# the medians of the drain's tasks/s off and on and their ratio; the JSON line is in
# target/bench/tracing.json.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/bench/common.sh

read_options "rounds=3 n=3000 users=100 concurrency=64" "$@"
build_release_binaries

work=$(mktemp -d -t quickact-tracing-XXXXXX)
chmod 755 "$work"
trap 'pg_stop "$work/data"; rm -rf "$work"' EXIT
PG_EXTRA_OPTS="-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=500 -c shared_buffers=512MB"
server=$(pg_start "$work/data")
psql "$server" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE tracing"

mkdir -p target/bench
DATABASE_URL="${server%/*}/tracing" target/release/quickact-bench tracing --rounds "$rounds" --n "$n" --users "$users" \
  --concurrency "$concurrency" | tee target/bench/tracing.json

#!/usr/bin/env bash
# The soak run (on demand, never in CI): the API and three workers as real processes against one
# durable Postgres, a fake model with random latency (0-2 s), 5% 500s and 1% malformed replies, and a
# worker SIGKILLed every 2 minutes. It ends by checking that every task is final, no item was
# written twice, and the processes' memory stayed flat (see testkit/src/bin/quickact-soak.rs).
#
#   scripts/soak.sh [minutes, default 30] [tasks per second, default 5]
#
# When DATABASE_URL is unset a throwaway cluster is started, with fsync on (a soak measures the
# real thing), and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
export SQLX_OFFLINE=true
minutes=${1:-30}
rate=${2:-5}

if [ -z "${DATABASE_URL:-}" ]; then
  pg_throwaway quickact-soak
fi

cargo build --release --locked -p quickact-api -p quickact-worker -p quickact-testkit --bin quickact-api --bin quickact-worker --bin quickact-soak
target/release/quickact-soak --minutes "$minutes" --rate "$rate" \
  --api-binary target/release/quickact-api --worker-binary target/release/quickact-worker

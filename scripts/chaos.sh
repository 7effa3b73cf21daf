#!/usr/bin/env bash
# The chaos suite, on demand (its short version runs in the test suite: worker/tests/chaos.rs).
# Each scenario starts its own Postgres cluster (durable commits) and runs the API and three
# workers as release binaries under load while it brings its fault: database crashes, purged
# sessions, a paused worker, a pinned snapshot, exhausted connections, skewed clocks, model
# faults. The report goes to target/chaos/report.md (see testkit/src/chaos/mod.rs for what each
# scenario checks).
#
#   scripts/chaos.sh [--short] [scenario ...]     (all seven when none is named; the full run
#                                                  takes about 45 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/faketime.sh
export SQLX_OFFLINE=true

# The clock-skew scenario preloads libfaketime into two workers.
if faketime_install; then faketime_export; else echo "warning: no libfaketime: the clock-skew scenario will fail" >&2; fi

cargo build --release --locked -p quickact-api -p quickact-worker -p quickact-testkit \
  --bin quickact-api --bin quickact-worker --bin quickact-chaos
exec target/release/quickact-chaos --api-binary target/release/quickact-api \
  --worker-binary target/release/quickact-worker --out target/chaos "$@"

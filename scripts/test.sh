#!/usr/bin/env bash
# Runs every test of the workspace. When DATABASE_URL is unset, a throwaway Postgres cluster is
# started from the installed binaries for the run and removed afterwards; each test then creates
# its own database on that server. Extra arguments go to `cargo test` (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/browser.sh
source scripts/faketime.sh

# Build against the committed .sqlx/ query data: no database is needed (or consulted) at build time.
export SQLX_OFFLINE=true

if [ -z "${DATABASE_URL:-}" ]; then
  # Durability is pointless for a throwaway cluster; speed is not.
  export PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  pg_throwaway quickact-test
  echo "test database server: $DATABASE_URL"
fi

# The admin page's browser tests (api/tests/browser.rs) drive headless Chromium through chromedriver:
# installed with apt when missing, started on a free port for this run, stopped when it ends. A
# machine that cannot install them still runs every other test; the browser tests then fail, saying
# why.
if [ -z "${QUICKACT_WEBDRIVER_URL:-}" ]; then
  if browser_install; then
    browser_start
  else
    echo "warning: no chromium/chromedriver: the browser tests will fail" >&2
  fi
fi

# The skewed-clock tests (worker/tests/e2e/robustness.rs) run a worker process with libfaketime
# preloaded: Debian's faketime, installed with apt when missing. Where it cannot be installed, those
# tests fail saying why.
if [ -z "${QUICKACT_LIBFAKETIME:-}" ]; then
  if faketime_install; then
    faketime_export
  else
    echo "warning: no libfaketime: the skewed-clock tests will fail" >&2
  fi
fi

# The chaos tests' reports gather in target/chaos/report-short.md; on a failure it is printed last,
# where a log read from its end shows it (a failed scenario's panic is long past by then).
rm -f target/chaos/report-short.md
status=0
cargo test --workspace --locked "$@" || status=$?
if [ "$status" -ne 0 ]; then
  if [ -f target/chaos/report-short.md ]; then
    echo "=== target/chaos/report-short.md"
    cat target/chaos/report-short.md
  fi
  exit "$status"
fi

# The full run (no filter: the README's command, and CI) also fuzzes the live API from its committed
# OpenAPI description (no 5xx, every answer as described), and upgrades from the previous commit
# with work in flight (scripts/upgrade-test.sh: builds that commit's binaries first).
if [ $# -eq 0 ]; then
  bash scripts/fuzz-api.sh
  bash scripts/upgrade-test.sh
fi

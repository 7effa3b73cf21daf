#!/usr/bin/env bash
# Runs every test of the workspace. When DATABASE_URL is unset, a throwaway Postgres cluster is
# started from the installed binaries for the run and removed afterwards; each test then creates
# its own database on that server. Extra arguments go to `cargo test` (e.g. a test name filter).
# The run's last line says how it went: every suite passed, or the step that failed.
set -euo pipefail

# The steps run in a child of this script, which writes each step's start and end to a file; this
# one prints the last line once the child has exited and cleaned up (clusters, chromedriver), so
# that nothing comes after it.
if [ -z "${QUICKACT_TEST_STEPS:-}" ]; then
  QUICKACT_TEST_STEPS=$(mktemp -t quickact-test-steps-XXXXXX)
  export QUICKACT_TEST_STEPS
  status=0
  bash "${BASH_SOURCE[0]}" "$@" || status=$?
  failed=$(awk '$1 == "start" { sub(/^start /, ""); open = $0 } $1 == "end" || $1 == "ready" { open = "" } END { print open }' "$QUICKACT_TEST_STEPS")
  suites=$(sed -n 's/^end //p' "$QUICKACT_TEST_STEPS" | paste -sd ';' | sed 's/;/; /g')
  count=$(grep -c '^end ' "$QUICKACT_TEST_STEPS" || true)
  rm -f "$QUICKACT_TEST_STEPS"
  echo
  if [ "$status" -eq 0 ]; then
    if [ $# -eq 0 ]; then
      echo "scripts/test.sh: all tests passed, $count suites: $suites"
    else
      echo "scripts/test.sh: all tests passed, $count suite: $suites (the docs' examples, the API fuzzing and the upgrade test run only without arguments)"
    fi
  elif [ "$status" -eq 130 ]; then
    echo "scripts/test.sh: interrupted in ${failed:-its setup}"
  else
    echo "scripts/test.sh: FAILED in ${failed:-its setup} (exit $status); the step's own output above says why"
  fi
  exit "$status"
fi
step_start() { echo "start $1" >>"$QUICKACT_TEST_STEPS"; }
step_end() { echo "end $1" >>"$QUICKACT_TEST_STEPS"; } # a suite passed
setup_end() { echo "ready" >>"$QUICKACT_TEST_STEPS"; } # a setup step done, not a suite

cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/browser.sh
source scripts/faketime.sh

# Build against the committed .sqlx/ query data: no database is needed (or consulted) at build time.
export SQLX_OFFLINE=true

if [ -z "${DATABASE_URL:-}" ]; then
  # Durability is pointless for a throwaway cluster; speed is not.
  step_start "starting the throwaway Postgres cluster"
  export PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  pg_throwaway quickact-test
  echo "test database server: $DATABASE_URL"
  setup_end
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
step_start "cargo test --workspace${*:+ $*}"
cargo test --workspace --locked "$@" || status=$?
if [ "$status" -ne 0 ]; then
  if [ -f target/chaos/report-short.md ]; then
    echo "=== target/chaos/report-short.md"
    cat target/chaos/report-short.md
  fi
  exit "$status"
fi
step_end "cargo test --workspace${*:+ $*}"

# The full run (no filter: the README's command, and CI) also runs the shell examples of README.md
# and docs/ against a live service (scripts/docs-test.sh, on the debug binaries the tests built),
# fuzzes the live API from its committed OpenAPI description (no 5xx, every answer as described),
# and upgrades from the previous commit with work in flight (scripts/upgrade-test.sh: builds that
# commit's binaries first).
if [ $# -eq 0 ]; then
  step_start "docs' examples (scripts/docs-test.sh)"
  bash scripts/docs-test.sh
  step_end "docs' examples (scripts/docs-test.sh)"
  step_start "API fuzzing (scripts/fuzz-api.sh)"
  bash scripts/fuzz-api.sh
  step_end "API fuzzing (scripts/fuzz-api.sh)"
  step_start "upgrade test (scripts/upgrade-test.sh)"
  bash scripts/upgrade-test.sh
  step_end "upgrade test (scripts/upgrade-test.sh)"
fi

#!/usr/bin/env bash
# Fuzzes the HTTP API from its committed OpenAPI description (api/openapi.json) with schemathesis:
# a live API and worker on a throwaway Postgres, every documented operation called with generated
# valid and invalid requests. Fails on any 5xx answer and on any answer the description does not
# allow (status code, content type, headers, body schema). scripts/test.sh runs it after the tests.
#
# schemathesis is installed from PyPI into .local/tools/schemathesis on first use.
# Extra arguments go to `schemathesis run` (e.g. --max-examples 200, --seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh

SCHEMATHESIS_VERSION=4.32.5
venv=.local/tools/schemathesis
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

export SQLX_OFFLINE=true
cargo build --quiet --locked -p quickact-api -p quickact-worker

pg_scratch_service quickact-fuzz

# The local provider serves (no model key); the sweeper, long-polls and streams run as deployed.
# Webhook receivers may be private and MCP tokens can be stored, so that the stateful phase gets past
# the creates to the per-id routes (with scripts/fuzz-hooks.py).
secrets_key="fuzz:$(random_hex 32)"
export QUICKACT_BIND=127.0.0.1:$port QUICKACT_ADMIN_KEY=$admin_key RUST_LOG=warn
export QUICKACT_WEBHOOK_ALLOW_PRIVATE=true QUICKACT_SECRETS_KEY=$secrets_key
export SCHEMATHESIS_HOOKS=scripts/fuzz-hooks.py
unset OPENAI_API_KEY
bin=${CARGO_TARGET_DIR:-target}/debug
"$bin/quickact-api" >"$work/api.log" 2>&1 &
api_pid=$!
"$bin/quickact-worker" >"$work/worker.log" 2>&1 &
worker_pid=$!
stop_services() { kill "$api_pid" "$worker_pid" 2>/dev/null || true; wait "$api_pid" "$worker_pid" 2>/dev/null || true; }
trap 'stop_services; pg_stop "$work/data"; rm -rf "$work"' EXIT

for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { echo "the API did not become ready:"; cat "$work/api.log"; exit 1; }

# The key routes may revoke the key the fuzzer authenticates with (a rotation, or the admin's own key
# id found in a listing), so they run last, in a pass of their own.
key_routes=(--include-name "POST /api/keys" --include-name "DELETE /api/keys/{id}" --include-name "DELETE /api/admin/keys/{id}")
# One worker thread: with two, hypothesis once failed inside CPython's ast module ("AST constructor
# recursion depth mismatch", parsing lambdas from two threads at once), a fault of the tool, not of
# the API, that made a run fail at random.
fuzz() {
  "$venv/bin/schemathesis" run api/openapi.json \
    --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $admin_key" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --max-examples 40 \
    --seed 20261123 \
    --generation-database none \
    --request-timeout 30 \
    --workers 1 \
    --no-color \
    --report junit --report-dir "$work/report" \
    "$@"
}
status=0
fuzz --phases examples,coverage,fuzzing,stateful "${key_routes[@]/--include-/--exclude-}" "$@" || status=$?
fuzz --phases examples,coverage,fuzzing "${key_routes[@]}" "$@" || status=$?

if [ "$status" != 0 ]; then
  echo "--- API log (errors) ---"; grep -iE "error|panic" "$work/api.log" | tail -40 || true
fi
exit "$status"

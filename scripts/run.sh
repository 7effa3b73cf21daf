#!/usr/bin/env bash
# Runs quickact on this machine: the API and one worker, on a local Postgres cluster kept in
# .local/pgdata (started from the installed PostgreSQL binaries) unless DATABASE_URL is set.
# Also builds the `quickact` CLI, so the printed lines can be pasted as they are.
# Creates a local user on first run and prints its API key, a curl line and the CLI lines to try.
# Ctrl-C stops everything cleanly. Every QUICKACT_* / OPENAI_* variable of docs/configuration.md
# is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh

state=${QUICKACT_STATE_DIR:-$PWD/.local}
mkdir -p "$state"

export SQLX_OFFLINE=true
echo "building (release)..."
cargo build --release --locked --bin quickact-api --bin quickact-worker --bin quickact

started_pg=""
if [ -z "${DATABASE_URL:-}" ]; then
  pgdir="$state/pgdata"
  if [ "$(id -u)" = "0" ] && ! runuser -u postgres -- test -x "$state" 2>/dev/null; then
    chmod o+x "$state" 2>/dev/null || true
    if ! runuser -u postgres -- test -x "$state" 2>/dev/null; then
      echo "The postgres user cannot reach $state; set QUICKACT_STATE_DIR to a directory it can reach (e.g. /var/tmp/quickact)." >&2
      exit 1
    fi
  fi
  DATABASE_URL=$(pg_start "$pgdir")
  export DATABASE_URL
  started_pg="$pgdir"
  echo "postgres: $DATABASE_URL (data in $pgdir)"
fi

if [ -z "${QUICKACT_ADMIN_KEY:-}" ]; then
  if [ ! -s "$state/admin-key" ]; then
    (umask 077; echo "qa_admin_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" > "$state/admin-key")
  fi
  QUICKACT_ADMIN_KEY=$(cat "$state/admin-key")
  export QUICKACT_ADMIN_KEY
fi
bind=${QUICKACT_BIND:-127.0.0.1:8080}
export QUICKACT_BIND=$bind

pids=()
shutdown() {
  trap - INT TERM EXIT
  echo
  echo "stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$started_pg" ]; then pg_stop "$started_pg"; fi
  echo "stopped."
}
trap shutdown INT TERM EXIT

target/release/quickact-api & pids+=($!)
target/release/quickact-worker & pids+=($!)

base="http://$bind"
for _ in $(seq 1 300); do
  if curl -fsS "$base/ready" >/dev/null 2>&1; then break; fi
  sleep 0.2
done
curl -fsS "$base/ready" >/dev/null || { echo "the API did not become ready" >&2; exit 1; }

if [ ! -s "$state/user-key" ]; then
  created=$(curl -fsS -X POST "$base/api/admin/users" -H "Authorization: Bearer $QUICKACT_ADMIN_KEY" \
    -H 'Content-Type: application/json' -d '{"name": "local"}')
  (umask 077; echo "$created" | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p' > "$state/user-key")
fi
key=$(cat "$state/user-key")

cat <<MSG

quickact is running on $base
  your API key:  $key   (saved in $state/user-key)
  admin key:     saved in $state/admin-key (or QUICKACT_ADMIN_KEY)
  admin page:    $base/admin (log in with the admin key)
  API reference: $base/api/docs

try:
  curl -s -X POST $base/api/quick-action -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d '{"text": "明天下午3点到4点开会", "wait": true}'

or the quickact CLI, from another terminal (\`cargo install --path api/cli\` puts it on your PATH for good):
  export PATH="$PWD/target/release:\$PATH" QUICKACT_URL=$base QUICKACT_KEY=$key
  quickact "明天下午3点到4点开会"
  quickact history

Ctrl-C stops everything.
MSG
wait -n "${pids[@]}" || true

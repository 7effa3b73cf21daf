#!/usr/bin/env bash
# Regenerates .sqlx/, the offline query data that lets the build check our SQL without a database.
# Run it after changing a query or a migration, and commit the result.
#
# It starts a throwaway Postgres cluster (or uses PREPARE_DATABASE_URL, a server it may create a
# database on), loads our migrations and functions, and rebuilds our crates with the sqlx macros
# online, writing what they learn into .sqlx/ (the macros do that when SQLX_OFFLINE_DIR is set).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh

work=$(mktemp -d)
chmod 755 "$work"
cleanup() { pg_stop "$work/data"; rm -rf "$work"; }
trap cleanup EXIT

server=${PREPARE_DATABASE_URL:-$(pg_start "$work/data")}
db=quickact_sqlx_prepare
psql "$server" -q -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
url="${server%/*}/$db"

# The migrations, then the functions and triggers (shared/src/schema.rs applies them so).
for f in migrations/*.sql migrations/functions/*.sql; do
  psql "$url" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null
done

rm -rf .sqlx && mkdir .sqlx
# Touch our sources so every query macro expands again.
find shared api worker testkit -name '*.rs' -exec touch {} +
SQLX_OFFLINE=false SQLX_OFFLINE_DIR="$PWD/.sqlx" DATABASE_URL="$url" cargo check --workspace --all-targets --quiet
echo "wrote $(ls .sqlx | wc -l) query files to .sqlx/"

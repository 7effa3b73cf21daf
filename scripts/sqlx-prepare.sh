#!/usr/bin/env bash
# Regenerates .sqlx/, the offline query data that lets the build check our SQL without a database.
# Run it after changing a query or a migration, and commit the result.
#
# It starts a throwaway Postgres cluster (or uses PREPARE_DATABASE_URL, a server it may create a
# database on), loads our migrations and the queue's, and rebuilds our crates with the sqlx macros
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

# The queue's schema (apalis-postgres) is needed too: its own query macros may recompile online.
cargo fetch --quiet
apalis_dir=$(cargo metadata --format-version 1 --quiet | python3 -c 'import json,sys; print([p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="apalis-postgres"][0].rsplit("/",1)[0])')
for f in "$apalis_dir"/migrations/*.sql migrations/*.sql; do
  psql "$url" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null
done

rm -rf .sqlx && mkdir .sqlx
# Touch our sources so every query macro expands again.
find shared api worker testkit -name '*.rs' -exec touch {} +
SQLX_OFFLINE=false SQLX_OFFLINE_DIR="$PWD/.sqlx" DATABASE_URL="$url" cargo check --workspace --all-targets --quiet
# Keep only our own queries (apalis-postgres ships its own offline data).
for f in "$apalis_dir"/.sqlx/*.json; do rm -f ".sqlx/$(basename "$f")"; done
echo "wrote $(ls .sqlx | wc -l) query files to .sqlx/"

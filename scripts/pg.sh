#!/usr/bin/env bash
# Starts, stops and describes a local PostgreSQL cluster built from the installed binaries.
# Sourced by the other scripts; usable alone:
#   scripts/pg.sh start DIR      -> prints a DATABASE_URL for the cluster in DIR (created if missing)
#   scripts/pg.sh stop DIR
#   scripts/pg.sh crash DIR      -> stops it in immediate mode: no checkpoint, recovery at the next start
# The cluster listens on 127.0.0.1 on a free port, trusts local connections and keeps its data in
# DIR. PG_PORT picks the port (default: a free one); PG_EXTRA_OPTS adds server options (the tests turn fsync off). As root, the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

pg_bin_dir() {
  local d
  for d in "${PG_BIN_DIR:-}" /usr/lib/postgresql/*/bin; do
    if [ -n "$d" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return 0; fi
  echo "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; install PostgreSQL or set DATABASE_URL" >&2
  return 1
}

# Runs a command as the cluster's owner.
pg_as_owner() {
  if [ "$(id -u)" = "0" ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A port nothing listens on, below the kernel's range of ports for outgoing connections (so no
# connection the tests open takes it between this check and the server's bind).
pg_free_port() {
  local port low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  (( low > 21000 )) || low=32768
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % (low - 20000) ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  echo "no free port found" >&2
  return 1
}

pg_start() {
  local dir=$1 bin port
  bin=$(pg_bin_dir)
  mkdir -p "$dir"
  if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$dir"; fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    pg_as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/../initdb.log" 2>&1 \
      || pg_as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/../initdb.log" 2>&1
  fi
  if pg_as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    port=$(sed -n 4p "$dir/postmaster.pid" | tr -d ' ')
  else
    port=${PG_PORT:-$(pg_free_port)}
    pg_as_owner "$bin/pg_ctl" -D "$dir" -w -t 60 -l "$dir/server.log" \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=400 ${PG_EXTRA_OPTS:-}" \
      start >/dev/null
  fi
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

pg_stop() {
  local dir=$1 bin
  bin=$(pg_bin_dir)
  if [ -f "$dir/postmaster.pid" ]; then
    pg_as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
  fi
}

# Stops the server as a crash would (immediate mode: every process quits at once, nothing is
# flushed; the next start replays the write-ahead log). The chaos suite's database crash.
pg_crash() {
  local dir=$1 bin
  bin=$(pg_bin_dir)
  pg_as_owner "$bin/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null
}

# Starts a throwaway cluster for the calling script, removed when that script exits (also when it is
# interrupted or its output pipe closes), and exports DATABASE_URL for it. $1 names the temp dir.
pg_throwaway() {
  pg_throwaway_dir=$(mktemp -d -t "${1:-quickact}-XXXXXX")
  chmod 755 "$pg_throwaway_dir"
  trap 'pg_stop "$pg_throwaway_dir/data"; rm -rf "$pg_throwaway_dir"' EXIT
  trap 'exit 130' INT TERM HUP PIPE
  DATABASE_URL=$(pg_start "$pg_throwaway_dir/data")
  export DATABASE_URL
}

# $1 random bytes as hex (keys for a throwaway service).
random_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

# A throwaway cluster without durability (a test's data need not survive a crash) for a scratch
# service the calling script starts, with a free port and an admin key for it: sets work (the
# cluster's temp dir), port and admin_key, and exports DATABASE_URL. $1 names the temp dir.
pg_scratch_service() {
  export PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  pg_throwaway "$1"
  work=$pg_throwaway_dir
  port=$(pg_free_port)
  admin_key="qa_admin_$(random_hex 24)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    start) pg_start "$2" ;;
    stop) pg_stop "$2" ;;
    crash) pg_crash "$2" ;;
    *) echo "usage: $0 start|stop|crash DIR" >&2; exit 2 ;;
  esac
fi

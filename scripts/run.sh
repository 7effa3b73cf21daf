#!/usr/bin/env bash
# Runs quickact on this machine: the API and one worker, on a local Postgres cluster kept in the
# state directory (started from the installed PostgreSQL binaries) unless DATABASE_URL is set.
# Also builds the `quickact` CLI, so the printed lines can be pasted as they are.
# Creates a local user on first run and prints its API key, the variables every example of the
# README and docs/ uses, a curl line and the CLI lines to try.
# Ctrl-C (or SIGTERM: `kill <pid>`) stops everything cleanly. Every QUICKACT_* / OPENAI_* variable
# of docs/configuration.md is honoured; the binaries are built in $CARGO_TARGET_DIR (default target/).
#
#   scripts/run.sh           build, start, print how to use it
#   scripts/run.sh --check   only what comes before the build: the checks and the state directory
#
# The state directory (cluster, keys, pid file) is .local/ of the clone, or QUICKACT_STATE_DIR; as
# root, when the postgres user cannot reach .local/, one under /var/tmp (scripts/run-state.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
clone=$PWD
source scripts/pg.sh
source scripts/run-state.sh

check_only=""
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: scripts/run.sh [--check]" >&2; exit 2 ;;
esac

# --- Before the build (minutes the first time): everything that would stop the run after it. ---
cluster=0
if [ -z "${DATABASE_URL:-}" ]; then
  cluster=1
  pg_bin_dir >/dev/null || exit 1
  if [ "$(id -u)" = "0" ] && ! id -u postgres >/dev/null 2>&1; then
    echo "As root, PostgreSQL runs as the postgres user, and there is none: install the PostgreSQL server package (it creates it), or set DATABASE_URL." >&2
    exit 1
  fi
fi
run_state_choose "$clone" "$cluster" || exit 1
state=$run_state

pidfile=$state/run.pid
if [ -s "$pidfile" ]; then
  other=$(cat "$pidfile")
  if [ "$other" != "$$" ] && kill -0 "$other" 2>/dev/null && tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null | grep -q "run.sh"; then
    echo "scripts/run.sh already runs from $state (pid $other); stop it first: kill $other" >&2
    exit 1
  fi
fi

bind=${QUICKACT_BIND:-127.0.0.1:8080}
bind_host=${bind%:*}
bind_host=${bind_host#[}
bind_host=${bind_host%]}
case "$bind_host" in 0.0.0.0 | "::" | "") bind_host=127.0.0.1 ;; esac
if (exec 3<>"/dev/tcp/$bind_host/${bind##*:}") 2>/dev/null; then
  echo "Something already listens on $bind (another scripts/run.sh?): stop it, or set QUICKACT_BIND to another address." >&2
  exit 1
fi

bin=${CARGO_TARGET_DIR:-target}/release
if [ -n "$check_only" ]; then
  echo "state directory: $state${run_state_why:+ ($run_state_why)}"
  if [ "$cluster" = 1 ]; then echo "postgres: a local cluster in $state/pgdata"; else echo "postgres: DATABASE_URL"; fi
  echo "binaries: $bin (cargo build --release)"
  echo "API: http://$bind"
  exit 0
fi

export SQLX_OFFLINE=true
echo "building (release; the first build takes several minutes)..."
cargo build --release --locked --bin quickact-api --bin quickact-worker --bin quickact
bin=$(cd "$bin" && pwd)

# --- Start. ---
echo "$$" >"$pidfile"
started_pg=""
pids=()
shutdown() {
  trap - INT TERM EXIT
  echo
  echo "stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$started_pg" ]; then (cd "$state" && pg_stop "$started_pg"); fi
  rm -f "$pidfile"
  echo "stopped."
}
trap shutdown INT TERM EXIT

if [ "$cluster" = 1 ]; then
  pgdir="$state/pgdata"
  started_pg="$pgdir"
  # From the state directory: the postgres user's commands start where they are run from, and it
  # may not reach the clone.
  DATABASE_URL=$(cd "$state" && pg_start "$pgdir")
  export DATABASE_URL
  echo "postgres: $DATABASE_URL (data in $pgdir)"
fi

# TEXT as it goes between double quotes in a line to paste.
in_quotes() { printf '%s' "$1" | sed 's/[\\"$`]/\\&/g'; }

# The key saved in FILE, made first (PREFIX and BYTES random bytes in hex) when FILE is empty.
state_key() {
  if [ ! -s "$1" ]; then
    run_state_save_key "$1" "$2$(od -An -N"$3" -tx1 /dev/urandom | tr -d ' \n')"
  fi
  run_state_read_key "$1"
}

admin_key_line=""
if [ -z "${QUICKACT_ADMIN_KEY:-}" ]; then
  QUICKACT_ADMIN_KEY=$(state_key "$state/admin-key" qa_admin_ 24)
  export QUICKACT_ADMIN_KEY
  admin_key_line="saved in $state/admin-key (readable by $(id -un) only)"
  admin_export=" QUICKACT_ADMIN_KEY=\"\$(cat \"$(in_quotes "$state/admin-key")\")\""
else
  admin_key_line="the QUICKACT_ADMIN_KEY you set"
  admin_export=""
fi
# Users' MCP tokens are stored encrypted with this key (docs/configuration.md, "Secrets key"): made
# on the first run and kept beside the admin key, so the tokens set in one run decrypt in the next.
if [ -z "${QUICKACT_SECRETS_KEY:-}" ]; then
  QUICKACT_SECRETS_KEY=$(state_key "$state/secrets-key" k1: 32)
  export QUICKACT_SECRETS_KEY
fi
export QUICKACT_BIND=$bind

"$bin/quickact-api" & pids+=($!)
"$bin/quickact-worker" & pids+=($!)

base="http://$bind_host:${bind##*:}"
case "$bind_host" in *:*) base="http://[$bind_host]:${bind##*:}" ;; esac
for _ in $(seq 1 300); do
  if curl -fsS "$base/ready" >/dev/null 2>&1; then break; fi
  sleep 0.2
done
curl -fsS "$base/ready" >/dev/null || { echo "the API did not become ready" >&2; exit 1; }

# The saved key, unless it is missing or this database does not know it (a new cluster, another
# DATABASE_URL): then a new user, in QUICKACT_DEFAULT_TZ.
key=""
if [ -s "$state/user-key" ]; then
  key=$(run_state_read_key "$state/user-key")
  if ! curl -fsS -o /dev/null "$base/api/items?limit=1" -H "Authorization: Bearer $key" 2>/dev/null; then key=""; fi
fi
if [ -z "$key" ]; then
  created=$(curl -fsS -X POST "$base/api/admin/users" -H "Authorization: Bearer $QUICKACT_ADMIN_KEY" \
    -H 'Content-Type: application/json' -d '{"name": "local"}')
  key=$(echo "$created" | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')
  run_state_save_key "$state/user-key" "$key"
fi
zone=$(curl -fsS -X POST "$base/api/parse-time" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d '{"text": ""}' \
  | sed -n 's/.*"tz":"\([^"]*\)".*/\1/p')

cat <<MSG

quickact is running on $base
  state:         $state${run_state_why:+ (there because $run_state_why)}
  your API key:  $key   (saved in $state/user-key; time zone ${zone:-?}, see QUICKACT_DEFAULT_TZ)
  admin key:     $admin_key_line
  admin page:    $base/admin (log in with the admin key)
  API reference: $base/api/docs

in another terminal, set what the examples of README.md and docs/ use:
  export QUICKACT_URL=$base QUICKACT_KEY=$key$admin_export PATH="$(in_quotes "$bin"):\$PATH"

then try:
  curl -s -X POST "\$QUICKACT_URL/api/quick-action" -H "Authorization: Bearer \$QUICKACT_KEY" -H 'Content-Type: application/json' -d '{"text": "明天下午3点到4点开会", "wait": true}'
  quickact "后天上午10点看牙医"
  quickact history
(\`cargo install --path api/cli\` puts the quickact CLI on your PATH for good.)

Ctrl-C here, or \`kill $$\` from elsewhere, stops the API, the worker and the cluster.
MSG
wait -n "${pids[@]}" || true

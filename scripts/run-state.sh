#!/usr/bin/env bash
# Where scripts/run.sh keeps its state (the local cluster in pgdata/, the saved user and admin keys,
# its pid file), and the keys themselves. Sourced by scripts/run.sh, which chooses the directory
# before it builds; tested by scripts/run-state-test.sh.
#
# The state is in .local/ of the clone, or in QUICKACT_STATE_DIR. As root, PostgreSQL runs as the
# `postgres` user (scripts/pg.sh), which must be able to reach the cluster's directory: a clone
# under a 0700 directory (/root, a `mktemp -d`) hides .local/ from it. Then, unless
# QUICKACT_STATE_DIR names a directory, the state goes to /var/tmp/quickact-<hash of the clone's
# path> instead: owned by root, mode 0711 (others may pass through it, not list it), every key in
# it readable by root alone (0600); .local/state-dir names it.
set -euo pipefail

# Whether the cluster's owner can reach DIR: search permission on DIR and on every directory above
# it. Anyone but root runs the cluster as themselves.
run_state_reachable() {
  [ "$(id -u)" = "0" ] || return 0
  runuser -u postgres -- test -x "$1" 2>/dev/null
}

# The directory the state of the clone at CLONE goes to when the postgres user cannot reach CLONE.
run_state_fallback() {
  echo "/var/tmp/quickact-$(printf '%s' "$1" | sha256sum | cut -c1-12)"
}

# Makes DIR a directory of this user's, mode 0711, or checks that an existing one is: /var/tmp is
# everyone's, so a directory (or a link) someone else put there under that name is refused.
run_state_private_dir() {
  local dir=$1
  if [ ! -L "$dir" ] && [ ! -e "$dir" ]; then
    mkdir -m 0711 "$dir" 2>/dev/null || true
  fi
  if [ -L "$dir" ] || [ ! -d "$dir" ] || [ "$(stat -c %u "$dir")" != "$(id -u)" ]; then
    echo "$dir exists and is not a directory of $(id -un)'s; remove it, or set QUICKACT_STATE_DIR" >&2
    return 1
  fi
  chmod 0711 "$dir"
}

# run_state_choose CLONE CLUSTER: chooses the state directory of the clone at CLONE (an absolute
# path) and creates it. CLUSTER is 1 when scripts/run.sh will start a local cluster there (no
# DATABASE_URL), which the postgres user must reach. Sets run_state (the directory, absolute) and
# run_state_why (why it is not the one asked for, or empty). Fails, saying what to do, when no
# directory will do.
run_state_choose() {
  local clone=$1 cluster=$2 default fallback
  run_state_why=""
  if [ -n "${QUICKACT_STATE_DIR:-}" ]; then
    mkdir -p "$QUICKACT_STATE_DIR" || { echo "cannot create QUICKACT_STATE_DIR=$QUICKACT_STATE_DIR" >&2; return 1; }
    run_state=$(cd "$QUICKACT_STATE_DIR" && pwd)
    if [ "$cluster" = 1 ] && ! run_state_reachable "$run_state"; then
      chmod o+x "$run_state" 2>/dev/null || true
      if ! run_state_reachable "$run_state"; then
        echo "The postgres user (PostgreSQL's, as you are root) cannot reach QUICKACT_STATE_DIR=$run_state or a directory above it." >&2
        echo "Unset QUICKACT_STATE_DIR (scripts/run.sh then picks a directory it can reach), choose another, or set DATABASE_URL." >&2
        return 1
      fi
    fi
    return 0
  fi
  default=$clone/.local
  mkdir -p "$default"
  run_state=$default
  if [ "$cluster" != 1 ] || run_state_reachable "$default"; then return 0; fi
  # .local itself may be what shuts it out (a umask of 077); the keys in it stay 0600.
  chmod o+x "$default" 2>/dev/null || true
  if run_state_reachable "$default"; then return 0; fi
  fallback=$(run_state_fallback "$clone")
  run_state_private_dir "$fallback" || return 1
  if ! run_state_reachable "$fallback"; then
    echo "The postgres user cannot reach $default nor $fallback; set QUICKACT_STATE_DIR to a directory it can reach, or DATABASE_URL." >&2
    return 1
  fi
  run_state=$fallback
  run_state_why="the postgres user cannot reach $default"
  printf '%s\n' "$fallback" >"$default/state-dir"
}

# run_state_save_key FILE KEY: writes KEY to FILE, readable by this user alone.
run_state_save_key() {
  (umask 077 && printf '%s\n' "$2" >"$1")
  chmod 600 "$1"
}

# run_state_read_key FILE: prints the key saved in FILE, first making it readable by this user
# alone if an older run left it open.
run_state_read_key() {
  chmod 600 "$1"
  head -n 1 "$1"
}

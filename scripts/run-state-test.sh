#!/usr/bin/env bash
# Checks what scripts/run.sh does before it builds (scripts/run-state.sh): where it keeps its state
# when the postgres user cannot reach the clone, that the keys stay readable by their owner alone,
# and that a directory that will not do stops it before any build. Builds nothing: run.sh runs with
# --check and a `cargo` that records being called. As root it also starts a cluster in the state
# directory it chose, as the postgres user. Run on demand: bash scripts/run-state-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source scripts/pg.sh
source scripts/run-state.sh

failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

top=$(mktemp -d -t quickact-run-state-XXXXXX) # 0700, as mktemp makes it
fallbacks=()
cleanup() {
  local dir
  for dir in "${fallbacks[@]}"; do pg_stop "$dir/pgdata"; rm -rf "$dir"; done
  rm -rf "$top"
}
trap cleanup EXIT

# A clone of the scripts as they are in this work tree (run.sh needs no more before its build),
# with a cargo that only records being called.
make_clone() {
  mkdir -p "$1/scripts"
  cp "$repo"/scripts/{run.sh,pg.sh,run-state.sh} "$1/scripts/"
}
mkdir -p "$top/bin"
printf '#!/bin/sh\ntouch "%s/cargo-called"\nexit 1\n' "$top" >"$top/bin/cargo"
chmod +x "$top/bin/cargo"
port=$(pg_free_port)
run_check() { # run_check CLONE [VAR=value...]: scripts/run.sh --check in CLONE; output in $top/out
  local clone=$1; shift
  env -u QUICKACT_STATE_DIR -u DATABASE_URL PATH="$top/bin:$PATH" QUICKACT_BIND="127.0.0.1:$port" "$@" \
    bash "$clone/scripts/run.sh" --check >"$top/out" 2>&1
}
mode() { stat -c %a "$1"; }
owner() { stat -c %u "$1"; }

hidden=$top/quickact # under a 0700 directory
make_clone "$hidden"
fallback=$(run_state_fallback "$hidden")
fallbacks+=("$fallback")
rm -rf "$fallback"

if [ "$(id -u)" = "0" ]; then
  # 1. The default, unreachable: the state moves to /var/tmp, checked before any build.
  if run_check "$hidden"; then
    check "an unreachable clone's state goes to $fallback" grep -qx "state directory: $fallback (the postgres user cannot reach $hidden/.local)" "$top/out"
    check "the state directory is root's, mode 0711" test "$(mode "$fallback"):$(owner "$fallback")" = "711:0"
    check "the postgres user reaches it" runuser -u postgres -- test -x "$fallback"
    check "the postgres user cannot list it" bash -c "! runuser -u postgres -- ls '$fallback' >/dev/null 2>&1"
    check ".local/state-dir names it" test "$(cat "$hidden/.local/state-dir")" = "$fallback"
  else
    fail "scripts/run.sh --check in a clone under a 0700 directory: $(cat "$top/out")"
  fi
  check "nothing was built" test ! -e "$top/cargo-called"

  # 2. Again: the same directory.
  run_check "$hidden" && check "a second run keeps it" grep -qx "state directory: $fallback (the postgres user cannot reach $hidden/.local)" "$top/out"

  # 3. A cluster starts there, as the postgres user; keys stay root's.
  if PG_EXTRA_OPTS="-c fsync=off" url=$(pg_start "$fallback/pgdata"); then
    pass "a cluster starts in $fallback/pgdata ($url)"
    pg_stop "$fallback/pgdata"
  else
    fail "a cluster starts in $fallback/pgdata"
  fi
  run_state_save_key "$fallback/admin-key" qa_admin_test
  check "a saved key is 0600 and root's" test "$(mode "$fallback/admin-key"):$(owner "$fallback/admin-key")" = "600:0"
  check "the postgres user cannot read it" bash -c "! runuser -u postgres -- cat '$fallback/admin-key' >/dev/null 2>&1"

  # 4. QUICKACT_STATE_DIR that the postgres user cannot reach: refused before the build.
  mkdir -p "$top/chosen"
  if run_check "$hidden" QUICKACT_STATE_DIR="$top/chosen"; then
    fail "an unreachable QUICKACT_STATE_DIR is refused"
  else
    check "an unreachable QUICKACT_STATE_DIR is refused, saying what to do" grep -q "cannot reach QUICKACT_STATE_DIR=$top/chosen" "$top/out"
  fi
  check "nothing was built" test ! -e "$top/cargo-called"

  # 5. A link (or someone else's directory) in the fallback's place is refused.
  other=$top/other-clone
  make_clone "$other"
  other_fallback=$(run_state_fallback "$other")
  fallbacks+=("$other_fallback")
  rm -rf "$other_fallback"
  ln -s "$top" "$other_fallback"
  if run_check "$other"; then fail "a link in the fallback's place is refused"; else
    check "a link in the fallback's place is refused" grep -q "is not a directory of root's" "$top/out"
  fi
  rm -f "$other_fallback"
fi

# 6. With DATABASE_URL there is no cluster: the state (the keys) stays in .local.
run_check "$hidden" DATABASE_URL=postgres://nobody@127.0.0.1:1/none \
  && check "with DATABASE_URL the state stays in .local" grep -qx "state directory: $hidden/.local" "$top/out"

# 7. A clone the postgres user can reach keeps .local.
open_top=$(mktemp -d -t quickact-run-state-open-XXXXXX)
chmod 755 "$open_top"
make_clone "$open_top/quickact"
if run_check "$open_top/quickact"; then
  check "a reachable clone keeps .local" grep -qx "state directory: $open_top/quickact/.local" "$top/out"
else
  fail "scripts/run.sh --check in a reachable clone: $(cat "$top/out")"
fi
rm -rf "$open_top"

# 8. A key an older run left readable by others is closed when read.
printf 'qa_old\n' >"$top/old-key"
chmod 644 "$top/old-key"
check "a read key is the saved one" test "$(run_state_read_key "$top/old-key")" = qa_old
check "and is 0600 after" test "$(mode "$top/old-key")" = 600

if [ "$failures" -ne 0 ]; then
  echo "run-state test: $failures check(s) failed"
  exit 1
fi
echo "run-state test: all checks passed"

#!/usr/bin/env bash
# The upgrade test (worker/tests/upgrade.rs): the previous commit's API and workers serve with work
# in flight while this build's replace them one by one. Builds the previous commit's binaries in a
# git worktree under target/upgrade (a target directory of its own, kept between runs), then runs
# the test with them. QUICKACT_PREVIOUS_COMMIT chooses another commit (default HEAD~1).
# scripts/test.sh runs it after the other tests, against its database server (DATABASE_URL); alone,
# the test starts a throwaway cluster of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
export SQLX_OFFLINE=true
previous=${QUICKACT_PREVIOUS_COMMIT:-HEAD~1}
if ! rev=$(git rev-parse --verify --quiet "$previous^{commit}"); then
  # A shallow clone has no history: fetch the commit before this one.
  git fetch --quiet --deepen=1 >&2 || true
  rev=$(git rev-parse --verify --quiet "$previous^{commit}") || {
    echo "upgrade test: this checkout has no commit $previous to upgrade from (fetch its history)" >&2
    exit 1
  }
fi
tree=target/upgrade/tree
git worktree prune
if [ ! -d "$tree" ]; then
  git worktree add --quiet --detach "$tree" "$rev"
else
  git -C "$tree" checkout --quiet --detach --force "$rev"
fi
echo "== upgrade test: building the previous commit $(git rev-parse --short "$rev") in $tree" >&2
(cd "$tree" && CARGO_TARGET_DIR="$PWD/../target" cargo build --locked --quiet -p quickact-api -p quickact-worker --bins)
cargo build --locked --quiet -p quickact-api -p quickact-worker --bins
QUICKACT_PREVIOUS_BIN_DIR="$PWD/target/upgrade/target/debug" \
  cargo test --locked -p quickact-worker --test upgrade -- --ignored

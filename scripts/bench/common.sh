# What the on-demand benches (scripts/bench.sh, fairness.sh, tracing-cost.sh) share. Sourced after
# scripts/pg.sh, from the repository's root.

# A step's heading, on standard error (standard output carries the results).
say() { printf '\n== %s\n' "$*" >&2; }

# The release binaries the benches run: the API, the worker and quickact-bench.
build_release_binaries() {
  say "building the release binaries"
  SQLX_OFFLINE=true cargo build --release --locked -p quickact-api -p quickact-worker -p quickact-testkit >&2
}

# An option the script does not know: said, with where to look, and exit 2.
unknown_argument() { echo "unknown argument $1 (see --help)" >&2; exit 2; }

#!/usr/bin/env bash
# The fairness bench (on demand, never in CI): `quickact-bench fairness` on a durable throwaway
# Postgres with the release binaries, several runs, then the medians.
#
#   scripts/fairness.sh [--runs 3] [--delay-ms 0] [--concurrency 64] [--heavy-users 100] [--per-user 50]
#                       [--baseline REV | --baseline-binaries DIR]
#
# Each run (a fresh database) lets 100 users each submit 50 tasks at once, starts one worker, and,
# once its first runs ended, has a light user submit 20 sentences one after another with
# `wait: true`: the light user's POST-to-verdict (p50, max), how many heavy tasks still waited, and
# the heavy drain's tasks/s. `--delay-ms 1000` puts a fake model answering after 1 s (two turns a
# task) in place of the local provider. `--baseline REV` builds that revision's API and worker
# (a git worktree under target/baseline) and measures the same drain with them in each run, on a
# database of its own: the throughput ratio of fair turns within one run (`--baseline-binaries DIR`:
# release binaries already built, quickact-api and quickact-worker in DIR). Results in
# target/bench/fairness.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/bench/common.sh

read_options "runs=3 delay_ms=0 concurrency=64 heavy_users=100 per_user=50 baseline= baseline_binaries=" "$@"
build_release_binaries
baseline_flags=()
if [ -n "$baseline" ]; then
  tree=target/baseline/tree
  rev=$(git rev-parse --verify "$baseline^{commit}")
  if [ ! -d "$tree" ]; then
    git worktree add --detach "$tree" "$rev" >&2
  else
    git -C "$tree" checkout -q --detach "$rev"
  fi
  say "building the baseline $(git rev-parse --short "$rev") in $tree"
  (cd "$tree" && SQLX_OFFLINE=true CARGO_TARGET_DIR="$PWD/../target" cargo build --release --locked -p quickact-api -p quickact-worker >&2)
  baseline_binaries=target/baseline/target/release
fi
if [ -n "$baseline_binaries" ]; then
  baseline_flags=(--baseline-api-binary "$baseline_binaries/quickact-api" --baseline-worker-binary "$baseline_binaries/quickact-worker")
fi

work=$(mktemp -d -t quickact-fairness-XXXXXX)
chmod 755 "$work"
trap 'pg_stop "$work/data"; rm -rf "$work"' EXIT
PG_EXTRA_OPTS="-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=500 -c shared_buffers=512MB -c shared_preload_libraries=pg_stat_statements"
server=$(pg_start "$work/data")

mkdir -p target/bench
results=target/bench/fairness.jsonl
: >"$results"
for run in $(seq "$runs"); do
  db=fairness_$run
  psql "$server" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $db"
  psql "${server%/*}/$db" -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
  say "run $run of $runs"
  DATABASE_URL="${server%/*}/$db" target/release/quickact-bench fairness --concurrency "$concurrency" --delay-ms "$delay_ms" \
    --heavy-users "$heavy_users" --per-user "$per_user" "${baseline_flags[@]}" >>"$results"
done

python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def med(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None
fair = [r["fair"] for r in rows]
print(f"model: {rows[0]['model']}; runs: {len(rows)}")
for key in ["light_p50_ms", "light_max_ms", "light_post_to_created_ms_p50", "light_wait_ms_p50", "light_run_ms_p50", "light_verdict_to_answer_ms_p50", "heavy_waiting_at_light_verdicts_min", "drain_tasks_per_s", "fetches", "fetch_mean_ms"]:
    print(f"  {key:40} median {med([f[key] for f in fair])}   runs {[f[key] for f in fair]}")
if all("baseline" in r for r in rows):
    for key in ["drain_tasks_per_s", "fetches", "fetch_mean_ms"]:
        print(f"  {'baseline ' + key:40} median {med([r['baseline'].get(key) for r in rows])}   runs {[r['baseline'].get(key) for r in rows]}")
    print(f"  {'drain_ratio (fair / baseline)':40} median {med([r['drain_ratio'] for r in rows])}   runs {[r['drain_ratio'] for r in rows]}")
EOF

#!/usr/bin/env bash
# The bench (on demand, never in CI): quickact measured beside plain Postgres and River, in one run,
# on one durable throwaway Postgres (fsync on, pg_stat_statements), with the release binaries.
#
#   scripts/bench.sh [--runs 3] [--n 10000] [--users 1] [--burst-users 1] [--concurrency 64] [--secs 15]
#                    [--slow-concurrency 4,64,256,512,1024,2048] [--window 20] [--river-jobs 100000] [--samples 500]
#                    [--river no]   (leave River out: its install compiles a crate for minutes)
#                    [--providers no]   (leave out the provider-limit and provider-pause scenarios, 2.5 min a run)
#                    [--preview-samples 2000]
#                    [--only pgbench,river,enqueue,burst,latency,webhooks,slow,stock,providers,preview]   (just these)
#
# Each run (a fresh database in the cluster) measures, in this order:
#   pgbench     single-row INSERT, 16 clients, --secs                           -> TPS
#   River       `riverqueue bench -n --river-jobs` (riverqueue-cli 0.5.0)       -> jobs/s, commits and WAL per job
#   enqueue     wrk, 16 keep-alive connections of --users users, POST /api/quick-action, --secs  -> req/s, p50, p99 (no worker)
#   burst       quickact-bench burst: N tasks of --burst-users users, N long-polls held (API RSS, statements/s), one worker
#               (local provider, --concurrency) drains them -> tasks/s, statuses, statements/commits/WAL per task, and
#               the WAL by table and record kind (pg_waldump, target/bench/wal-run<N>.txt) and the statements by kind
#               (pg_stat_statements, target/bench/statements-run<N>.txt)
#   latency     quickact-bench latency: instant fake model, POST then long-poll  -> p50, p99
#   webhooks    quickact-bench webhooks: as latency, each verdict delivered to a verifying receiver -> p50, p99
#   slow        quickact-bench slow: fake model answering after 1 s, 2 turns, one worker per
#               --slow-concurrency value, clients always submitting             -> sustained tasks/s
#   stock       quickact-bench stock: an API and 3 workers at their default connection budgets, logged in as a
#               role limited to a stock Postgres's 97 connections, 600 clients of two-turn tasks (fake model,
#               200 ms a turn) for 30 s -> tasks/s, statuses, most connections held
#   providers   quickact-bench provider-limit: 3 workers share 600 model requests a minute, 2 min of
#               more demand than that -> requests the model counted, statuses; provider-pause: the
#               model answers 429 Retry-After 2 for 10 s -> requests while paused, statuses
#   preview     quickact-bench preview: POST /api/quick-action/preview over a mix of sentences, one
#               after another, no worker                                         -> p50, p99
# then prints the median of the runs for each measure beside its comparison, the ratio and the goal,
# and writes it all to target/bench/latest.json. Needs root or the postgres user's rights as
# scripts/pg.sh does; installs wrk (apt) and riverqueue (cargo install into .local/tools) when absent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/bench/common.sh
here=scripts/bench

read_options "runs=3 n=10000 users=1 burst_users=1 concurrency=64 slow_concurrency=4,64,256,512,1024,2048 secs=15 river_jobs=100000 \
  window=20 samples=500 river=yes providers=yes preview_samples=2000 only=all" "$@"

# Whether a measure is to be run: all of them, or those `--only` names.
wanted() { [ "$only" = all ] || [[ ",$only," == *",$1,"* ]]; }
wanted river || river=no
wanted providers || providers=no

# ---- setup: tools and release binaries -------------------------------------------------------
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq >/dev/null; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
! wanted enqueue || command -v wrk >/dev/null || { say "installing wrk"; apt_install wrk; }
command -v pgbench >/dev/null && command -v psql >/dev/null || { say "installing the PostgreSQL client"; apt_install postgresql-client; }
pg_lib=$(dirname "$(pg_bin_dir)")/lib
[ -e "$pg_lib/pg_stat_statements.so" ] || { echo "pg_stat_statements is missing from $pg_lib (install postgresql-contrib)" >&2; exit 1; }

river_bin=.local/tools/bin/riverqueue
if [ "$river" = no ]; then
  river_bin=
elif [ ! -x "$river_bin" ]; then
  say "installing riverqueue-cli 0.5.0 into .local/tools"
  if ! cargo install riverqueue-cli --version 0.5.0 --no-default-features --features postgres --locked --root .local/tools >&2; then
    echo "NOTE: riverqueue-cli could not be installed; the River comparison is left out" >&2
    river_bin=
  fi
fi

build_release_binaries
bench_bin=target/release/quickact-bench

# ---- a durable throwaway cluster -------------------------------------------------------------
work=$(mktemp -d -t quickact-bench-XXXXXX)
chmod 755 "$work"
api_pid=
cleanup() {
  if [ -n "$api_pid" ]; then kill "$api_pid" 2>/dev/null || true; fi
  local pid
  pid=$(head -1 "$work/data/postmaster.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && ! pg_as_owner "$(pg_bin_dir)/pg_ctl" -D "$work/data" -m fast -w -t 120 stop >/dev/null; then
    echo "pg_ctl stop failed; sending the postmaster ($pid) SIGINT" >&2
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
PG_EXTRA_OPTS="-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=500 -c shared_buffers=512MB -c shared_preload_libraries=pg_stat_statements"
server=$(pg_start "$work/data")
port=${server##*:}; port=${port%%/*}
psql_db() { local db=$1; shift; psql -h 127.0.0.1 -p "$port" -U postgres -d "$db" -v ON_ERROR_STOP=1 -Atq "$@"; }
pg_version=$(psql_db postgres -c "SHOW server_version")
say "Postgres $pg_version on port $port: fsync $(psql_db postgres -c 'SHOW fsync'), synchronous_commit $(psql_db postgres -c 'SHOW synchronous_commit'); $(nproc) cores"

out=target/bench
mkdir -p "$out"
results="$out/runs.jsonl"
printf '{"scenario": "meta", "run": 0, "postgres": "%s", "cores": %s, "runs": %s, "n": %s, "users": %s, "burst_users": %s, "concurrency": %s, "slow_concurrency": "%s", "secs": %s, "river_jobs": %s, "window_s": %s, "latency_samples": %s, "preview_samples": %s, "only": "%s", "commit": "%s"}\n' \
  "$pg_version" "$(nproc)" "$runs" "$n" "$users" "$burst_users" "$concurrency" "$slow_concurrency" "$secs" "$river_jobs" "$window" "$samples" "$preview_samples" "$only" "$(git rev-parse --short HEAD)" >"$results"
emit() { echo "$1" >>"$results"; }                   # one JSON object per scenario and run
tagged() { python3 -c 'import json,sys; o=json.loads(sys.argv[1]); o["run"]=int(sys.argv[2]); print(json.dumps(o))' "$@"; }
# Sum of commits and the WAL position in bytes; read after the measured processes have exited, so
# every backend has flushed its statistics.
counters() { psql_db "$1" -F ' ' -c "SELECT (SELECT sum(xact_commit) FROM pg_stat_database), pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"; }

# Runs one quickact-bench scenario and records its JSON line (a failed scenario is noted, the rest go on).
scenario() {
  local json
  if json=$("$bench_bin" "$@") && [ -n "$json" ]; then
    emit "$(tagged "$json" "$run")"
  else
    echo "NOTE: quickact-bench $1 failed; its measures are left out of run $run" >&2
  fi
}

# Where the WAL of a burst went, per task (target/bench/wal-run$run.txt): pg_waldump over its WAL
# range, `wal_breakdown db from_lsn tasks`, summed by table and by relation and record kind.
wal_breakdown() {
  local db=$1 from=$2 tasks=$3 to
  to=$(psql_db "$db" -c "SELECT pg_current_wal_lsn()")
  psql_db "$db" -F ' ' -c "SELECT pg_relation_filenode(c.oid), coalesce(t.relname, c.relname), c.relname
                           FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
                           WHERE pg_relation_filenode(c.oid) IS NOT NULL" >"$work/relmap"
  # pg_waldump reports an error at the range's last, unfinished page: the records before it are read.
  pg_as_owner "$(pg_bin_dir)/pg_waldump" -p "$work/data/pg_wal" -s "$from" -e "$to" >"$work/waldump" 2>"$work/waldump.err" || true
  python3 "$here/wal_breakdown.py" "$work/relmap" "$work/waldump" "$tasks"
}

# The statements of a burst by kind, per task (target/bench/statements-run$run.txt): the calls of
# each statement pg_stat_statements counted since the burst reset it as it began (its setup's
# included: the users it created), `statements_by_kind db tasks`.
statements_by_kind() {
  psql_db "$1" -F ' ' -c "SELECT to_char(calls::numeric / $2, 'FM990.00'), left(regexp_replace(query, '\s+', ' ', 'g'), 120)
                          FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat%' AND calls * 100 >= $2 ORDER BY calls DESC"
}

stop_api() {
  if [ -n "$api_pid" ]; then kill -TERM "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true; api_pid=; fi
}

for run in $(seq 1 "$runs"); do
  db=bench_run$run
  psql_db postgres -c "CREATE DATABASE $db"
  psql_db "$db" -c "CREATE EXTENSION pg_stat_statements"
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db"

  if wanted pgbench; then
    say "run $run/$runs: pgbench, single-row INSERT, 16 clients, $secs s"
    psql_db "$db" -c "CREATE TABLE bench_ins (id bigserial PRIMARY KEY, payload jsonb, created_at timestamptz DEFAULT now())"
    echo 'INSERT INTO bench_ins (payload) VALUES ('"'"'{"text":"明天下午3点开会"}'"'"');' >"$work/ins.sql"
    pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 16 -j 2 -T "$secs" -f "$work/ins.sql" "$db" >"$work/pgbench.out" 2>&1
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/pgbench.out" | tail -1)
    grep -E '^(tps|latency average)' "$work/pgbench.out" >&2
    emit "{\"scenario\": \"pgbench\", \"run\": $run, \"tps\": ${tps:-null}}"
  fi

  if [ -n "$river_bin" ]; then
    say "run $run/$runs: riverqueue bench, $river_jobs jobs inserted, then worked"
    if ! "$river_bin" migrate-up --database-url "$DATABASE_URL" >"$work/river.out" 2>&1; then
      echo "NOTE: riverqueue migrate-up failed; no River figures in run $run:" >&2; tail -5 "$work/river.out" >&2
    else
      psql_db "$db" -c "CHECKPOINT"
      read -r c0 w0 < <(counters "$db")
      # Commits and WAL from before the bench's own truncate to after its last job (its process has
      # exited, so its backends' statistics are in), per completed job.
      if timeout 600 "$river_bin" bench --database-url "$DATABASE_URL" -n "$river_jobs" >"$work/river.out" 2>&1; then
        read -r c1 w1 < <(counters "$db")
        tail -1 "$work/river.out" >&2
        jps=$(sed -n 's/.*overall job\/sec \[ *\([0-9.]*\) *\].*/\1/p' "$work/river.out" | tail -1)
        jobs=$(psql_db "$db" -c "SELECT count(*) FROM river_job WHERE state = 'completed'")
        emit "$(python3 -c 'import json,sys; j,jps,c,w=int(sys.argv[1]),float(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4]); print(json.dumps({"scenario":"river","run":int(sys.argv[5]),"jobs":j,"jobs_per_s":jps,"commits_per_job":round(c/max(j,1),3),"wal_bytes_per_job":round(w/max(j,1),1)}))' \
          "$jobs" "${jps:-0}" "$((c1 - c0))" "$((w1 - w0))" "$run")"
      else
        echo "NOTE: riverqueue bench failed; no River figures in run $run:" >&2; tail -5 "$work/river.out" >&2
      fi
      psql_db "$db" -c "TRUNCATE river_job"
    fi
  fi

  if wanted enqueue; then
    say "run $run/$runs: enqueue, wrk, 16 keep-alive connections ($users users), $secs s, no worker"
    api_port=$(pg_free_port)
    admin="qa_bench_admin_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    DATABASE_URL=$DATABASE_URL QUICKACT_BIND=127.0.0.1:$api_port QUICKACT_ADMIN_KEY=$admin \
      QUICKACT_MAX_ACTIVE_TASKS_PER_USER=100000000 QUICKACT_SUBMIT_RATE_PER_MINUTE=0 RUST_LOG=warn target/release/quickact-api >"$work/api.log" 2>&1 &
    api_pid=$!
    for _ in $(seq 300); do curl -fs "http://127.0.0.1:$api_port/ready" >/dev/null && break; sleep 0.2; done
    keys=
    for u in $(seq "$users"); do
      k=$(curl -fs -X POST "http://127.0.0.1:$api_port/api/admin/users" -H "Authorization: Bearer $admin" \
            -H 'Content-Type: application/json' -d "{\"name\": \"wrk-$u\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')
      keys=${keys:+$keys,}$k
    done
    KEYS=$keys wrk -t2 -c16 -d"${secs}s" --latency -s "$here/post.lua" "http://127.0.0.1:$api_port" >"$work/wrk.out" 2>&1 \
      || { echo "NOTE: wrk failed:" >&2; tail -5 "$work/wrk.out" >&2; }
    grep -E 'Requests/sec|  50%|  99%|Non-2xx' "$work/wrk.out" >&2 || true
    wrk_json=$(sed -n 's/^WRK_JSON //p' "$work/wrk.out")
    emit "$(tagged "$(echo "$wrk_json" | python3 -c 'import json,sys; o=json.load(sys.stdin); o["scenario"]="wrk"; print(json.dumps(o))')" "$run")"
    stop_api
    # Nothing will run those tasks: remove them with their jobs (no worker ran, so nothing else is pending).
    psql_db "$db" -c "BEGIN" -c "DELETE FROM quick_action_tasks WHERE status = 'pending'" -c "COMMIT"
    psql_db "$db" -c "VACUUM ANALYZE" -c "CHECKPOINT"
  fi

  if wanted burst; then
    say "run $run/$runs: burst of $n tasks ($burst_users users), $n long-polls, one worker (concurrency $concurrency, local provider)"
    wal_from=$(psql_db "$db" -c "SELECT pg_current_wal_lsn()")
    scenario burst --n "$n" --users "$burst_users" --concurrency "$concurrency"
    wal_breakdown "$db" "$wal_from" "$n" >"$out/wal-run$run.txt" || echo "NOTE: no WAL breakdown in run $run" >&2
    statements_by_kind "$db" "$n" >"$out/statements-run$run.txt" || echo "NOTE: no statements by kind in run $run" >&2
    head -n 12 "$out/wal-run$run.txt" >&2
  fi

  if wanted latency; then
    say "run $run/$runs: POST-to-verdict latency, instant model, $samples tasks one after another"
    scenario latency --samples "$samples"
  fi

  if wanted webhooks; then
    say "run $run/$runs: webhook delivery, verdict to a verifying receiver, 200 tasks one after another"
    scenario webhooks --samples 200
  fi

  if wanted slow; then
    say "run $run/$runs: slow model (1 s a turn, 2 turns), one worker, concurrency $slow_concurrency"
    scenario slow --concurrency "$slow_concurrency" --window "$window"
  fi

  if wanted stock; then
    say "run $run/$runs: an API and 3 workers at their default connection budgets within a stock Postgres's 97 connections, 600 clients, 30 s"
    (unset QUICKACT_DATABASE_CONNECTIONS; scenario stock)
  fi

  if [ "$providers" = yes ]; then
    say "run $run/$runs: a model limit of 600 requests a minute shared by 3 workers, 2 minutes"
    scenario provider-limit
    say "run $run/$runs: a model answering 429 Retry-After 2 to everything for 10 s, 3 workers"
    scenario provider-pause
  fi

  if wanted preview; then
    say "run $run/$runs: POST /api/quick-action/preview, $preview_samples requests one after another, no worker"
    scenario preview --samples "$preview_samples"
  fi

  # The next run starts on a cluster with nothing of this one left: no tables for autovacuum to
  # work through while it measures, and a checkpoint behind it.
  psql_db postgres -c "DROP DATABASE $db WITH (FORCE)"
  psql_db postgres -c "CHECKPOINT"
done

say "results: median of $runs run(s)"
python3 "$here/summarize.py" "$results" "$out/latest.json"

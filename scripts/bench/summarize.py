#!/usr/bin/env python3
"""Reads the JSON lines every bench run wrote (one object per scenario and run, each with "run")
and prints, for each measure, the median of the runs beside its comparison, the ratio and whether
the goal is met; writes the same as JSON.
Usage: summarize.py RUNS.jsonl OUT.json"""
import json, statistics, sys, time

lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
runs = sorted({l["run"] for l in lines if l.get("scenario") != "meta"})


def values(scenario, path):
    """The value at `path` (keys separated by dots) of `scenario` in every run that has it."""
    out = []
    for l in lines:
        if l.get("scenario") != scenario:
            continue
        v = l
        for k in path.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        if isinstance(v, (int, float)):
            out.append(float(v))
    return out


def median(scenario, path):
    v = values(scenario, path)
    return statistics.median(v) if v else None


def fmt(x, unit="", digits=1):
    if x is None:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}{unit}"
    if 0 < abs(x) < 0.1:
        digits = max(digits, 3)
    return f"{x:.{digits}f}{unit}"


rows = []  # (measure, value, compared with, comparison, ratio, goal, met)


def row(measure, value, shown, comparison=None, compared_shown="-", goal="-", met=None):
    ratio = value / comparison if value is not None and comparison else None
    rows.append({
        "measure": measure, "value": value, "shown": shown,
        "compared_with": compared_shown, "comparison": comparison,
        "ratio": round(ratio, 4) if ratio is not None else None,
        "goal": goal, "met": met,
    })


def check(value, predicate):
    """Whether `value` meets its goal; None (shown as "-") when it was not measured."""
    return None if value is None else bool(predicate(value))


# enqueue vs pgbench
rps, p50, p99 = median("wrk", "rps"), median("wrk", "p50_us"), median("wrk", "p99_us")
tps = median("pgbench", "tps")
non2xx = median("wrk", "non2xx")
ratio = rps / tps if rps is not None and tps else None
meta = next((l for l in lines if l.get("scenario") == "meta"), {})
row(f"enqueue: POST /api/quick-action, wrk, 16 conns, {meta.get('users', 1)} user(s)",
    rps, f"{fmt(rps)} req/s (p50 {fmt(p50 and p50 / 1000, ' ms', 2)}, p99 {fmt(p99 and p99 / 1000, ' ms', 2)}"
         + (f", non-2xx {non2xx:.0f}" if non2xx else "") + ")",
    tps, f"pgbench INSERT 16 clients: {fmt(tps)} TPS", ">= 50% of pgbench", check(ratio, lambda r: r >= 0.5))

# drain vs River
drain = median("burst", "drain_tasks_per_s")
river = median("river", "jobs_per_s")
conc = median("burst", "concurrency")
ratio = drain / river if drain is not None and river else None
row(f"drain: one worker, local provider, concurrency {fmt(conc, '', 0)}",
    drain, f"{fmt(drain)} tasks/s", river,
    f"riverqueue bench: {fmt(river)} jobs/s" if river else "riverqueue bench: not run",
    ">= 30% of River", check(ratio, lambda r: r >= 0.3))

# burst statuses
burst = [l for l in lines if l.get("scenario") == "burst"]
if burst:
    n, users = burst[0].get("n"), burst[0].get("users", 1)
    per_run = [("; ".join(f"{k} {v}" for k, v in sorted(b.get("statuses", {}).items())) or "none")
               + (f" ({b['transport_errors']} transport errors)" if b.get("transport_errors") else "") for b in burst]
    all_success = all(b.get("statuses", {}).get("success") == b.get("n") and b.get("refused", 0) == 0 for b in burst)
    row(f"burst of N={n} tasks, {users} users (timeout 120 s): statuses",
        float(sum(b.get("statuses", {}).get("success", 0) for b in burst)) / len(burst),
        " | ".join(f"run {b['run']}: {s}" for b, s in zip(burst, per_run)),
        goal="all success", met=all_success)

# database work per task vs River per job
st = median("burst", "statements_per_task")
row("per task: statements (pg_stat_statements)", st, fmt(st, "", 1))
commits, rcommits = median("burst", "commits_per_task"), median("river", "commits_per_job")
row("per task: commits (xact_commit delta)", commits, fmt(commits, "", 2), rcommits,
    f"River: {fmt(rcommits, '', 2)} per job" if rcommits is not None else "River: not run",
    "<= 4", check(commits, lambda c: c <= 4))
wal, rwal = median("burst", "wal_bytes_per_task"), median("river", "wal_bytes_per_job")
row("per task: WAL bytes (WAL position delta)", wal, fmt(wal, " B", 0), rwal,
    f"River: {fmt(rwal, ' B', 0)} per job" if rwal is not None else "River: not run",
    "<= 4 kB", check(wal, lambda w: w <= 4096))

# long-polls
rss, rss0 = median("burst", "api_rss_mb_waiting"), median("burst", "api_rss_mb_before")
sps = median("burst", "statements_per_s_waiting")
held = median("burst", "posted")
row(f"{fmt(held, '', 0)} long-polls held: API RSS",
    rss, f"{fmt(rss, ' MB')} (before {fmt(rss0, ' MB')}); {fmt(sps)} statements/s while waiting",
    goal="RSS <= 150 MB", met=check(rss, lambda r: r <= 150))

# latency
lp50, lp99 = median("latency", "p50_ms"), median("latency", "p99_ms")
pp50, over, lmax = median("latency", "post_p50_ms"), median("latency", "over_100_ms"), median("latency", "max_ms")
samples = median("latency", "samples")
row("POST-to-verdict, long-poll, instant model: p50", lp50,
    fmt(lp50, " ms", 2) + (f" (the POST alone {fmt(pp50, ' ms', 2)})" if pp50 is not None else ""),
    goal="<= 5 ms", met=check(lp50, lambda v: v <= 5))
row("POST-to-verdict, long-poll, instant model: p99", lp99,
    fmt(lp99, " ms", 2) + (f" ({over:.0f} of {samples:.0f} over 100 ms, max {fmt(lmax, ' ms', 0)})" if over is not None else ""),
    goal="<= 20 ms", met=check(lp99, lambda v: v <= 20))

# webhook deliveries (issue 33)
wp50, wp99 = median("webhooks", "p50_ms"), median("webhooks", "p99_ms")
hooks = [l for l in lines if l.get("scenario") == "webhooks"]
if hooks:
    unverified = sum(l.get("unverified", 0) for l in hooks)
    row("webhook delivery, verdict to receiver, one task after another: p50 / p99", wp50,
        f"{fmt(wp50, ' ms', 2)} / {fmt(wp99, ' ms', 2)}; {unverified} signatures not verified in all runs",
        goal="every delivery verified", met=check(wp50, lambda v: unverified == 0))

# slow model
slow = [l for l in lines if l.get("scenario") == "slow"]
if slow:
    by_conc = {}
    for s in slow:
        for r in s.get("results", []):
            by_conc.setdefault(r["concurrency"], []).append(r["tasks_per_s"])
    meds = {c: statistics.median(v) for c, v in sorted(by_conc.items())}
    best_c = max(meds, key=meds.get)
    delay = slow[0].get("delay_ms")
    row(f"slow model ({delay} ms a turn, 2 turns), one worker",
        meds[best_c],
        f"{fmt(meds[best_c])} tasks/s at QUICKACT_WORKER_CONCURRENCY={best_c} ("
        + ", ".join(f"{c}: {fmt(v)}" for c, v in meds.items()) + ")",
        goal=">= 500 tasks/s", met=check(meds[best_c], lambda v: v >= 500))

def runs_and_failures(scenario):
    """The runs of `scenario`, and how many of their tasks did not end in success in all of them."""
    runs = [l for l in lines if l.get("scenario") == scenario]
    return runs, sum(sum(v for k, v in l.get("statuses", {}).items() if k != "success") for l in runs)


# the default connection budgets on a stock Postgres (issue 44)
stock_runs, failed = runs_and_failures("stock")
if stock_runs:
    most, limit = median("stock", "most_connections"), median("stock", "connection_limit")
    row("an API and 3 workers at their default connection budgets, a stock Postgres's 97 connections: most held",
        most, f"{fmt(most, '', 0)} of {fmt(limit, '', 0)}; {fmt(median('stock', 'tasks_per_s'))} tasks/s, "
        f"{failed} not success in all runs", limit, f"limit {fmt(limit, '', 0)}", "every task success",
        check(most, lambda v: v < limit and failed == 0))

# provider limits and pauses (issue 32)
inw, allowed = median("provider-limit", "requests_in_window"), median("provider-limit", "allowed")
limit_runs, failed = runs_and_failures("provider-limit")
if limit_runs:
    row("a limit of 600 model requests/min over 3 workers, 2 min: requests the model counted", inw,
        f"{fmt(inw, '', 0)} (busiest minute {fmt(median('provider-limit', 'busiest_minute'), '', 0)}); "
        f"{fmt(median('provider-limit', 'statuses.success'), '', 0)} tasks, {failed} not success in all runs",
        allowed, f"allowed {fmt(allowed, '', 0)}", "<= 1,200 + a minute's burst; every task success",
        check(inw, lambda v: v <= allowed and failed == 0))
pause_runs, failed = runs_and_failures("provider-pause")
if pause_runs:
    paused, allowed_p = median("provider-pause", "requests_while_paused"), median("provider-pause", "allowed_while_paused")
    row("429 Retry-After 2 to everything for 10 s, 3 workers: requests while paused", paused,
        f"{fmt(paused, '', 0)} ({fmt(median('provider-pause', 'requests_in_storm'), '', 0)} in the storm, "
        f"{fmt(median('provider-pause', 'pauses'), '', 0)} pauses); {failed} tasks not success in all runs",
        allowed_p, f"one probe per worker per pause: {fmt(allowed_p, '', 0)}", "no task fails; no request beyond the probes",
        check(paused, lambda v: v <= allowed_p and failed == 0))

# reading previews
prev = [l for l in lines if l.get("scenario") == "preview"]
if prev:
    pv50, pv99, pvmax = median("preview", "p50_ms"), median("preview", "p99_ms"), median("preview", "max_ms")
    not_ok = sum(l.get("not_ok", 0) for l in prev)
    row(f"POST /api/quick-action/preview, {prev[0].get('sentences')} sentences in turn, one after another: p50 / p99",
        pv99, f"{fmt(pv50, ' ms', 3)} / {fmt(pv99, ' ms', 3)} (max {fmt(pvmax, ' ms', 2)}); {not_ok} not 200 in all runs",
        goal="p99 < 2 ms", met=check(pv99, lambda v: v < 2 and not_ok == 0))

# print
def cell(r):
    met = {True: "yes", False: "NO", None: "-"}[r["met"]]
    ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}" if r["ratio"] < 0.1 else f"{r['ratio']:.2f}"
    return [r["measure"], r["shown"], r["compared_with"], ratio, r["goal"], met]

# A run of some measures only (`bench.sh --only`) shows those, not a row of n/a for each of the rest.
if meta.get("only", "all") != "all":
    rows = [r for r in rows if r["value"] is not None]

header = ["measure", f"median of {len(runs)} run(s)", "compared with", "ratio", "goal", "met"]
table = [header] + [cell(r) for r in rows]
widths = [max(len(t[i]) for t in table) for i in range(len(header))]
widths[1] = min(widths[1], 70)
for i, t in enumerate(table):
    print("  ".join(c.ljust(w) if len(c) <= w else c for c, w in zip(t, widths)).rstrip())
    if i == 0:
        print("  ".join("-" * w for w in widths))

meta = {}
for l in lines:
    if l.get("scenario") == "meta":
        meta = {k: v for k, v in l.items() if k not in ("scenario", "run")}
json.dump({"generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": len(runs), "settings": meta,
           "summary": rows, "raw": [l for l in lines if l.get("scenario") != "meta"]},
          open(sys.argv[2], "w"), indent=2, ensure_ascii=False)
print(f"\nJSON: {sys.argv[2]}")

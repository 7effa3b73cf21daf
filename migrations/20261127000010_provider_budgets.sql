-- Provider limits shared by every worker process (QUICKACT_MODEL_LIMITS) and the pauses a provider
-- asks for (a 429's Retry-After), so N workers together never send a model more than its limits and
-- all of them stop while it asked for a pause. One row per model; see shared/src/store/providers.rs.
--
-- Requests and tokens are two GCRA budgets, like the submit rate's (submit_budgets): the
-- "theoretical arrival time" of each. A request is let through while both are within their burst
-- tolerance and no pause holds; it moves request_tat on by one interval. A turn's tokens are
-- debited after it with its real usage, which may put token_tat far ahead (a debt): later
-- requests wait until it is paid off.
--
-- paused_until/paused_at: a pause, set by a 429 that said when to come back. When it ends, ONE
-- request goes as the probe (paused_until moves on by a probe window meanwhile, so the others keep
-- waiting); the first answer to a request let through after the pause began ends the pause.
--
-- The counters feed the admin page's providers panel (fleet-wide; each process's /metrics counts
-- its own share).
--
-- UNLOGGED: the budget needs no durability, and writes no WAL. A crash empties it: the budget
-- spent and any pause are forgiven, and the next 429 pauses again.
CREATE UNLOGGED TABLE provider_budgets (
    model          text PRIMARY KEY,
    request_tat    timestamptz NOT NULL DEFAULT now(),
    token_tat      timestamptz NOT NULL DEFAULT now(),
    paused_at      timestamptz,
    paused_until   timestamptz,
    requests_total bigint NOT NULL DEFAULT 0,
    waits_total    bigint NOT NULL DEFAULT 0,
    pauses_total   bigint NOT NULL DEFAULT 0,
    fallbacks_total bigint NOT NULL DEFAULT 0
);

-- A run that must wait for its provider hands its task back, and the next claim counts an attempt
-- (`attempts` counts claims, and tells a first claim, which has no journal to read). Those waits
-- are counted here, so the cap on attempts counts only the failed ones: attempts - provider_waits.
-- No index reads it: updating it keeps the task row's update heap-only (see
-- 20261125000002_task_updates_in_place.sql).
ALTER TABLE quick_action_tasks ADD COLUMN provider_waits integer NOT NULL DEFAULT 0;

-- Takes one request of `p_model`'s budget, or says how long to wait: one call, one transaction,
-- the row locked while it decides, so concurrent workers never let through more than the budget.
-- A request the rate alone holds back by at most `p_longest_wait` seconds is let through with a
-- reservation (`wait` says when to send it): waiting requests queue up by the rate instead of all
-- asking again at once. A pause or a token debt reserves nothing: the request asks again later.
-- `p_interval`/`p_tolerance`: the request GCRA's emission interval and burst tolerance (0/0: no
-- limit); `p_token_tolerance`: the token GCRA's; `p_probe_window`: how long the others keep waiting
-- for the answer of a pause's probe.
CREATE FUNCTION quickact_take_provider_request(
    p_model text, p_interval float8, p_tolerance float8, p_token_tolerance float8,
    p_longest_wait float8, p_probe_window float8,
    OUT wait float8, OUT admitted boolean, OUT probe boolean, OUT paused boolean, OUT taken_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    b provider_budgets;
    pause_wait float8;
    token_wait float8;
    rate_wait float8;
BEGIN
    INSERT INTO provider_budgets (model) VALUES (p_model) ON CONFLICT (model) DO NOTHING;
    SELECT * INTO b FROM provider_budgets WHERE model = p_model FOR UPDATE;
    -- After the lock: a wait for another worker's turn at the row must not age the decision.
    taken_at := clock_timestamp();
    pause_wait := coalesce(extract(epoch FROM b.paused_until - taken_at)::float8, 0);
    token_wait := extract(epoch FROM b.token_tat - taken_at)::float8 - p_token_tolerance;
    rate_wait := extract(epoch FROM greatest(b.request_tat, taken_at) - taken_at)::float8 - p_tolerance;
    paused := pause_wait > 0;
    probe := false;
    IF pause_wait > 0 OR token_wait > 0 OR rate_wait > p_longest_wait THEN
        admitted := false;
        wait := greatest(pause_wait, token_wait, rate_wait, 0);
        UPDATE provider_budgets SET waits_total = waits_total + 1 WHERE model = p_model;
    ELSE
        admitted := true;
        wait := greatest(rate_wait, 0);
        -- The first request after a pause is its probe: the others wait for its answer.
        probe := b.paused_until IS NOT NULL;
        UPDATE provider_budgets
        SET request_tat = greatest(b.request_tat, taken_at) + make_interval(secs => p_interval),
            paused_until = CASE WHEN probe THEN taken_at + make_interval(secs => wait + p_probe_window) END,
            requests_total = requests_total + 1
        WHERE model = p_model;
    END IF;
END $$;

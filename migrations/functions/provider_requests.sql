-- Provider limits shared by every worker process (QUICKACT_MODEL_LIMITS) and the pauses a provider
-- asks for (a 429's Retry-After), kept in `provider_budgets` (see shared/src/store/providers.rs).
--
-- Takes one request of `p_model`'s budget, or says how long to wait: one call, one transaction,
-- the row locked while it decides, so concurrent workers never let through more than the budget.
-- A request the rate alone holds back by at most `p_longest_wait` seconds is let through with a
-- reservation (`wait` says when to send it): waiting requests queue up by the rate instead of all
-- asking again at once. A pause or a token debt reserves nothing: the request asks again later.
-- `p_interval`/`p_tolerance`: the request GCRA's emission interval and burst tolerance (0/0: no
-- limit); `p_token_tolerance`: the token GCRA's; `p_probe_window`: how long the others keep waiting
-- for the answer of a pause's probe. `probing`: a probe is out, and the request waits for its
-- answer (announced on quickact_provider_resumes) rather than the whole window.
CREATE OR REPLACE FUNCTION quickact_take_provider_request(
    p_model text, p_interval float8, p_tolerance float8, p_token_tolerance float8,
    p_longest_wait float8, p_probe_window float8,
    OUT wait float8, OUT admitted boolean, OUT probe boolean, OUT paused boolean, OUT probing boolean,
    OUT taken_at timestamptz)
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
    probing := paused AND b.probe_sent_at IS NOT NULL;
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
            probe_sent_at = CASE WHEN probe THEN taken_at END,
            requests_total = requests_total + 1
        WHERE model = p_model;
    END IF;
END $$;

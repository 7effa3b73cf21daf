-- The others wait for a pause's probe by its answer, not by the whole probe window.
--
-- While the probe (the first request after a pause) was out, every other request was told to wait
-- until the probe window's end (5 s), with nothing to say it was a probe's answer they waited for:
-- their runs handed their tasks back for those 5 s, however soon the answer came (the chaos suite's
-- 429 storm: the probe answered within a second, the tasks came back 5-7 s later). Now the budget
-- says when a request waits for a probe's answer (`probing`): a worker waits for it in process, and
-- the answer's settle, which ends the pause, announces it on quickact_provider_resumes.
--
-- probe_sent_at: when the pause's probe was let through; NULL while none is out. A new pause (a
-- 429) clears it, and so does the answer that ends the pause.
ALTER TABLE provider_budgets ADD COLUMN probe_sent_at timestamptz;

-- As in 20261127000010_provider_budgets.sql, with `probing`: the wait is for the answer of a probe
-- already out (the model's own pause is over).
DROP FUNCTION quickact_take_provider_request(text, float8, float8, float8, float8, float8);
CREATE FUNCTION quickact_take_provider_request(
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

-- Takes up to `p_limit` waiting tasks for the lease holder `p_holder` (shared/src/queue.rs,
-- docs/architecture.md "Fair turns"): unfinished tasks nobody holds, served in turn. Interactive
-- tasks (and batch tasks waiting longer than `p_aging_secs`) before batch ones; among those, every
-- user's first task before anyone's second; a user's last waiting task before tasks with more of
-- their user's behind them; among users, the one served longest ago first; within a user, arrival
-- order; never more than `p_max_running` of one user's tasks held at once. A task a worker runs
-- keeps its lease renewed, so no fetch takes it; one whose lease lapsed is taken again like any other
-- (its run is fenced out by the new holder), by whichever worker fetches, its own included.
--
-- In the same statement each task is moved to `processing`, leased for `p_lease_secs`, its attempt
-- counted and its waiters told. Each row is the claimed task (the table's own type: the caller
-- selects the columns it reads) and `alone`: no more of its user's tasks wait behind it.
--
-- `queue_turns` holds, per user, when the fetch last served them and a bound on their held tasks:
-- only the fetch writes it (fetches take turns), so endings and hand-backs write nothing there; the
-- fetch counts again from the user's rows only when the bound could keep the user from a turn.

CREATE OR REPLACE FUNCTION quickact_claim_tasks(
    p_holder text, p_limit int, p_lease_secs float8, p_max_running int, p_aging_secs float8
) RETURNS TABLE (task quick_action_tasks, alone boolean) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    claimed_now int;
    claimed_all int := 0;
BEGIN
    -- Fetches take turns across the fleet: the next statement takes its snapshot once the lock is
    -- held, so it sees every hold the fetch before it made, and two fetches never both give a
    -- user their last free turn. ("quickact fetch"; released at the end of the statement's
    -- transaction.)
    PERFORM pg_advisory_xact_lock(x'7175696b66657463'::int8);
    FOR pass IN 1 .. 4 LOOP
        RETURN QUERY
        WITH RECURSIVE groups AS (
            -- (user, priority) pairs with unfinished tasks: a loose scan of the index.
            (SELECT t.user_id, t.priority FROM quick_action_tasks t WHERE t.completed_at IS NULL
             ORDER BY t.user_id, t.priority, t.created_at LIMIT 1)
            UNION ALL
            SELECT n.user_id, n.priority FROM groups g CROSS JOIN LATERAL (
                SELECT t.user_id, t.priority FROM quick_action_tasks t
                WHERE t.completed_at IS NULL AND (t.user_id, t.priority) > (g.user_id, g.priority)
                ORDER BY t.user_id, t.priority, t.created_at LIMIT 1) n
        ), spread AS MATERIALIZED (
            -- A fair share of this fetch per user, before caps.
            SELECT greatest(1, ceil((p_limit - claimed_all)::numeric / greatest(count(DISTINCT g.user_id), 1)))::int AS k FROM groups g
        ), users AS MATERIALIZED (
            SELECT u.user_id, coalesce(q.last_claim, '-infinity') AS last_claim,
                   CASE WHEN coalesce(q.held, 0) + spread.k <= p_max_running THEN coalesce(q.held, 0)
                        ELSE (SELECT count(*)::int FROM quick_action_tasks r
                              WHERE r.user_id = u.user_id AND r.completed_at IS NULL
                                AND r.lease_owner IS NOT NULL AND r.lease_expires_at >= now())
                   END AS held
            FROM (SELECT DISTINCT g.user_id FROM groups g) u
            CROSS JOIN spread
            LEFT JOIN queue_turns q ON q.user_id = u.user_id
        ), depth AS MATERIALIZED (
            -- The share again, among the users with room.
            SELECT greatest(1, ceil((p_limit - claimed_all)::numeric / greatest(count(*), 1)))::int AS k
            FROM users WHERE held < p_max_running
        ), candidates AS (
            SELECT c.id, c.user_id, c.created_at, u.last_claim, u.held,
                   CASE WHEN g.priority = 'interactive' OR c.created_at <= now() - make_interval(secs => p_aging_secs)
                        THEN 0 ELSE 1 END AS class
            FROM groups g JOIN users u ON u.user_id = g.user_id CROSS JOIN depth
            CROSS JOIN LATERAL (
                -- One more than the user's share: whether more of theirs wait after it.
                SELECT w.id, w.user_id, w.created_at FROM quick_action_tasks w
                WHERE w.user_id = g.user_id AND w.priority = g.priority AND w.completed_at IS NULL
                  AND (w.lease_expires_at IS NULL OR w.lease_expires_at < now())
                ORDER BY w.created_at
                LIMIT least(depth.k, greatest(p_max_running - u.held, 0)) + 1) c
        ), ranked AS (
            SELECT cand.*,
                   row_number() OVER (PARTITION BY cand.user_id ORDER BY cand.class, cand.created_at) AS nth,
                   lead(cand.id) OVER (PARTITION BY cand.user_id ORDER BY cand.class, cand.created_at) IS NOT NULL AS more
            FROM candidates cand
        ), chosen AS (
            SELECT r.id, NOT r.more AS alone FROM ranked r CROSS JOIN depth
            WHERE r.nth <= depth.k AND r.held + r.nth <= p_max_running
            ORDER BY r.class, r.nth, r.more, r.last_claim, r.created_at
            LIMIT p_limit - claimed_all
        ), locked AS (
            -- Rechecked on the row's latest version: an ending or a hand-back may have come between.
            SELECT w.id FROM quick_action_tasks w
            WHERE w.id IN (SELECT chosen.id FROM chosen)
              AND w.completed_at IS NULL AND (w.lease_expires_at IS NULL OR w.lease_expires_at < now())
              -- A build that reads the calls a turn's row carries says so on its connections
              -- (`quickact.journal`, shared/src/db.rs); an older one, which would replay such a
              -- journal without them, is never handed a task whose journal has them.
              AND (current_setting('quickact.journal', true) = 'turn_rows'
                   OR NOT EXISTS (SELECT FROM quick_action_steps s WHERE s.task_id = w.id AND s.calls IS NOT NULL))
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE quick_action_tasks t
            SET status = 'processing', started_at = coalesce(t.started_at, now()), attempts = t.attempts + 1,
                lease_owner = p_holder, lease_expires_at = now() + make_interval(secs => p_lease_secs)
            FROM locked WHERE t.id = locked.id
            RETURNING t.id, t.user_id, t AS task_row
        ), turns AS (
            INSERT INTO queue_turns AS q (user_id, last_claim, held)
            SELECT c.user_id, now(), u.held + count(*)::int
            FROM claimed c JOIN users u ON u.user_id = c.user_id
            GROUP BY c.user_id, u.held
            ON CONFLICT (user_id) DO UPDATE SET last_claim = EXCLUDED.last_claim, held = EXCLUDED.held
        ), notified AS (
            -- Each claimed task's waiters are told (its stream shows the claim).
            SELECT count(pg_notify('quickact_task_events', c.id::text)) AS n FROM claimed c
        )
        SELECT c.task_row, ch.alone FROM claimed c JOIN chosen ch ON ch.id = c.id CROSS JOIN notified;
        GET DIAGNOSTICS claimed_now = ROW_COUNT;
        claimed_all := claimed_all + claimed_now;
        EXIT WHEN claimed_now = 0 OR claimed_all >= p_limit;
    END LOOP;
END
$$;

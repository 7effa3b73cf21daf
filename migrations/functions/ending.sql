-- How runs' tasks end (shared/src/store/ending.rs): every task of the arrays (one element each)
-- that `p_owners` (its run's lease holder; NULL: any holder, for an unfinished task) still holds,
-- in one statement: its final state, its usage added to its totals, its last steps (`p_steps`:
-- rows of `quick_action_steps` as a JSON array, a turn's with its calls) appended to the journal, its user's spend of the
-- day, and a notification of its verdict at commit. Answers the tasks it ended; a task missing
-- from them was decided by someone else first.
--
-- Rows are locked, and so their users' slot rows released (a trigger), in (user, id) order: the
-- order in which a group of local runs (worker/src/groups.rs) ends its runs, so neither another
-- batch nor a group can hold one of these rows while waiting on another that this statement
-- holds. The users' spend is added to in user order too: two batches that end tasks of the same
-- users never wait on each other's spend rows in a cycle.
--
-- A function rather than a statement sent by the worker: its plan is made once per session, where
-- a statement with arrays, a join and a locking step cost more to plan than to run on a pool that
-- plans at each execution (the local runs' group pool).
CREATE OR REPLACE FUNCTION quickact_end_tasks(
    p_ids uuid[], p_owners text[], p_statuses text[], p_result_types text[], p_results jsonb[],
    p_input int8[], p_output int8[], p_cached int8[], p_cost_nanos int8[], p_models text[],
    p_steps jsonb, p_refusals int4[]
) RETURNS SETOF quick_action_tasks LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    WITH ending AS (
        SELECT * FROM unnest(p_ids, p_owners, p_statuses, p_result_types, p_results, p_input, p_output, p_cached,
                             p_cost_nanos, p_models, p_refusals)
            AS e(id, owner, status, result_type, result, input, output, cached, cost_nanos, model, refusals)
    ), locked AS (
        SELECT l.id FROM quick_action_tasks l WHERE l.id = ANY (p_ids) ORDER BY l.user_id, l.id FOR UPDATE
    ), finished AS (
        UPDATE quick_action_tasks t
        SET status = e.status, result_type = e.result_type, result = e.result, completed_at = now(),
            lease_owner = NULL, lease_expires_at = NULL,
            input_tokens = t.input_tokens + e.input, output_tokens = t.output_tokens + e.output,
            cached_tokens = t.cached_tokens + e.cached, cost_nanos = t.cost_nanos + e.cost_nanos,
            model_used = coalesce(e.model, t.model_used)
        FROM locked JOIN ending e ON e.id = locked.id
        WHERE t.id = e.id AND t.status IN ('pending', 'processing') AND (e.owner IS NULL OR t.lease_owner = e.owner)
        RETURNING t.*
    ), spend AS (
        INSERT INTO user_spend AS s (user_id, day, cost_nanos, refusals)
        SELECT f.user_id, (now() AT TIME ZONE 'UTC')::date, sum(e.cost_nanos), sum(e.refusals)
        FROM finished f JOIN ending e ON e.id = f.id
        GROUP BY f.user_id HAVING sum(e.cost_nanos) > 0 OR sum(e.refusals) > 0
        ORDER BY f.user_id
        ON CONFLICT (user_id, day) DO UPDATE SET cost_nanos = s.cost_nanos + excluded.cost_nanos, refusals = s.refusals + excluded.refusals
    ), notified AS (
        SELECT count(pg_notify('quickact_task_events', f.id::text || ' final')) AS n FROM finished f
    ), journal AS (
        INSERT INTO quick_action_steps
            (task_id, seq, kind, name, tool_call_id, arguments, result, ok, error,
             input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt, calls)
        SELECT r.task_id, r.seq, r.kind, r.name, r.tool_call_id, r.arguments, r.result, r.ok, r.error,
               r.input_tokens, r.output_tokens, r.cached_tokens, r.cost_nanos, r.latency_ms, r.started_at, r.finished_at, r.attempt,
               r.calls
        FROM jsonb_populate_recordset(NULL::quick_action_steps, p_steps) AS r
        WHERE r.task_id IN (SELECT f.id FROM finished f)
    )
    SELECT f.* FROM finished f CROSS JOIN notified;
END
$$;

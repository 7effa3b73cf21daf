-- Replies to questions (POST /api/quick-action/{id}/reply, docs/api.md): a task that ended with
-- need_clarification lists numbered options, and the user answers it with an option or a short
-- sentence ("the second one", "改到明天"). The answer runs as a task of its own, and `reply_to`
-- names the task whose question it answers: the run reads that task's sentence, question and
-- journal as its context, and clients see the link. The index serves the lookup of a task's
-- replies and the foreign key's ON DELETE (the sweeper deletes old tasks in bulk).
ALTER TABLE quick_action_tasks ADD COLUMN reply_to uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL;
CREATE INDEX quick_action_tasks_reply_to_idx ON quick_action_tasks (reply_to) WHERE reply_to IS NOT NULL;

-- quickact_submit as in 20261128000030_task_trace_parent, with `p_reply_tos` (one per submission,
-- NULL for a sentence that answers no question) stored on the row, and the row's reply_to in its
-- answer: a reply is stored as every submission is, in the same one statement.
DROP FUNCTION quickact_submit(uuid[], uuid[], text[], int4[], text[], timestamptz[], text[], text[], int8[], text[], text[]);
CREATE FUNCTION quickact_submit(
    p_ids uuid[], p_user_ids uuid[], p_texts text[], p_timeouts int4[], p_keys text[],
    p_reference_times timestamptz[], p_time_zones text[], p_currencies text[], p_caps int8[],
    p_priorities text[], p_trace_parents text[], p_reply_tos uuid[]
) RETURNS TABLE (
    ord int, room boolean,
    id uuid, user_id uuid, input_text text, status text, result_type text, result jsonb,
    created_at timestamptz, started_at timestamptz, completed_at timestamptz,
    input_tokens bigint, output_tokens bigint, cached_tokens bigint, cost_nanos bigint,
    currency text, model_used text, timeout_seconds integer, idempotency_key text,
    reference_time timestamptz, time_zone text, attempts integer, undoes uuid, priority text,
    trace_parent text, reply_to uuid
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    slots int2[] := array_fill(NULL::int2, ARRAY[cardinality(p_ids)]);
    created quick_action_tasks[];
    created_ids uuid[];
    u uuid;
    cap int8;
    members int[];
    taken int2[];
    one int2;
    k int;
BEGIN
    -- Room is taken user by user in user order, so batches (of several API processes) lock slots
    -- in one order: for each user, as much as one statement takes without waiting (slots no other
    -- submission is writing), then one by one (see quickact_take_task_slot).
    FOR u, cap, members IN
        SELECT p_user_ids[i], max(p_caps[i]), array_agg(i ORDER BY i)
        FROM generate_subscripts(p_ids, 1) AS i GROUP BY 1 ORDER BY 1
    LOOP
        -- Most often one slot has room for all of the user's submissions: one statement.
        UPDATE task_slots s SET used = s.used + cardinality(members)
        WHERE (s.user_id, s.slot) = (
            SELECT f.user_id, f.slot FROM task_slots f
            WHERE f.user_id = u
              AND f.used + cardinality(members) <= cap / 16 + CASE WHEN f.slot < cap % 16 THEN 1 ELSE 0 END
            ORDER BY random() LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING s.slot INTO one;
        IF one IS NOT NULL THEN
            FOREACH k IN ARRAY members LOOP
                slots[k] := one;
            END LOOP;
            CONTINUE;
        END IF;
        WITH free AS (
            -- Only as many slots as the room needs (a slot holds about cap/16): each slot locked
            -- is one another batch of the same user cannot use until this one commits.
            SELECT s.slot, cap / 16 + CASE WHEN s.slot < cap % 16 THEN 1 ELSE 0 END - s.used AS room
            FROM task_slots s
            WHERE s.user_id = u AND s.used < cap / 16 + CASE WHEN s.slot < cap % 16 THEN 1 ELSE 0 END
            ORDER BY random()
            LIMIT (cardinality(members) + greatest(cap / 16, 1) - 1) / greatest(cap / 16, 1)
            FOR UPDATE SKIP LOCKED
        ), units AS (
            SELECT free.slot FROM free CROSS JOIN LATERAL generate_series(1, least(free.room, cardinality(members)))
            ORDER BY random() LIMIT cardinality(members)
        ), take AS (
            SELECT units.slot, count(*) AS n FROM units GROUP BY units.slot
        ), updated AS (
            UPDATE task_slots s SET used = s.used + take.n FROM take
            WHERE s.user_id = u AND s.slot = take.slot
            RETURNING s.slot, take.n
        )
        SELECT coalesce(array_agg(updated.slot), '{}') INTO taken
        FROM updated CROSS JOIN LATERAL generate_series(1, updated.n);

        FOR k IN 1 .. cardinality(members) LOOP
            IF k <= cardinality(taken) THEN
                slots[members[k]] := taken[k];
            ELSE
                one := quickact_take_task_slot(u, cap);
                EXIT WHEN one IS NULL;
                slots[members[k]] := one;
            END IF;
        END LOOP;
    END LOOP;

    IF cardinality(array_remove(p_keys, NULL)) = 0 THEN
        -- No idempotency keys (the usual batch): nothing can conflict, so a plain insert, without
        -- the speculative insertion (and its extra WAL record per row) that ON CONFLICT makes.
        WITH inserted AS (
            INSERT INTO quick_action_tasks
                (id, user_id, input_text, timeout_seconds, reference_time, time_zone, currency, slot, priority, trace_parent, reply_to)
            SELECT p_ids[i], p_user_ids[i], p_texts[i], p_timeouts[i], p_reference_times[i],
                   p_time_zones[i], p_currencies[i], slots[i], p_priorities[i], p_trace_parents[i], p_reply_tos[i]
            FROM generate_subscripts(p_ids, 1) AS i
            WHERE slots[i] IS NOT NULL
            RETURNING quick_action_tasks AS task
        )
        SELECT coalesce(array_agg(inserted.task), '{}') INTO created FROM inserted;
    ELSE
        -- Inserted in one order (user, then key) in every batch: two batches written side by side
        -- that share keys wait on each other's inserts in one order, never in a cycle.
        WITH inserted AS (
            INSERT INTO quick_action_tasks
                (id, user_id, input_text, timeout_seconds, idempotency_key, reference_time, time_zone, currency, slot, priority, trace_parent, reply_to)
            SELECT p_ids[i], p_user_ids[i], p_texts[i], p_timeouts[i], p_keys[i], p_reference_times[i],
                   p_time_zones[i], p_currencies[i], slots[i], p_priorities[i], p_trace_parents[i], p_reply_tos[i]
            FROM generate_subscripts(p_ids, 1) AS i
            WHERE slots[i] IS NOT NULL
            ORDER BY p_user_ids[i], p_keys[i]
            ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
            RETURNING quick_action_tasks AS task
        )
        SELECT coalesce(array_agg(inserted.task), '{}') INTO created FROM inserted;
    END IF;
    created_ids := ARRAY(SELECT c.id FROM unnest(created) AS c);

    IF cardinality(created) < cardinality(array_remove(slots, NULL)) THEN
        -- Tasks that lost their idempotency key give their room back (nobody saw it taken).
        UPDATE task_slots s SET used = s.used - lost.n
        FROM (SELECT p_user_ids[i] AS user_id, slots[i] AS slot, count(*) AS n
              FROM generate_subscripts(p_ids, 1) AS i
              WHERE slots[i] IS NOT NULL AND p_ids[i] <> ALL (created_ids)
              GROUP BY 1, 2) AS lost
        WHERE s.user_id = lost.user_id AND s.slot = lost.slot;
    END IF;

    RETURN QUERY
    SELECT i, slots[i] IS NOT NULL,
           t.id, t.user_id, t.input_text, t.status, t.result_type, t.result,
           t.created_at, t.started_at, t.completed_at,
           t.input_tokens, t.output_tokens, t.cached_tokens, t.cost_nanos,
           t.currency, t.model_used, t.timeout_seconds, t.idempotency_key,
           t.reference_time, t.time_zone, t.attempts, t.undoes, t.priority, t.trace_parent, t.reply_to
    FROM generate_subscripts(p_ids, 1) AS i
    LEFT JOIN unnest(created) AS t ON t.id = p_ids[i]
    ORDER BY i;
END
$$;

-- quickact_fetch_tasks as in 20261128000030_task_trace_parent (see the comments of
-- 20261127000002_fair_turns), answering each claimed task's reply_to too: a reply's run reads
-- the question it answers.
DROP FUNCTION quickact_fetch_tasks(text, int, float8, uuid[], int, float8);
CREATE FUNCTION quickact_fetch_tasks(
    p_holder text, p_limit int, p_lease_secs float8, p_running uuid[], p_max_running int, p_aging_secs float8
) RETURNS TABLE (
    id uuid, user_id uuid, input_text text, status text, result_type text, result jsonb,
    created_at timestamptz, started_at timestamptz, completed_at timestamptz,
    input_tokens bigint, output_tokens bigint, cached_tokens bigint, cost_nanos bigint,
    currency text, model_used text, timeout_seconds integer, idempotency_key text,
    reference_time timestamptz, time_zone text, attempts integer, undoes uuid, priority text,
    trace_parent text, reply_to uuid, alone boolean
) LANGUAGE plpgsql AS $$
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
                  AND w.id <> ALL (p_running)
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
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE quick_action_tasks t
            SET status = 'processing', started_at = coalesce(t.started_at, now()), attempts = t.attempts + 1,
                lease_owner = p_holder, lease_expires_at = now() + make_interval(secs => p_lease_secs)
            FROM locked WHERE t.id = locked.id
            RETURNING t.*
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
        SELECT c.id, c.user_id, c.input_text, c.status, c.result_type, c.result,
               c.created_at, c.started_at, c.completed_at,
               c.input_tokens, c.output_tokens, c.cached_tokens, c.cost_nanos,
               c.currency, c.model_used, c.timeout_seconds, c.idempotency_key,
               c.reference_time, c.time_zone, c.attempts, c.undoes, c.priority, c.trace_parent, c.reply_to, ch.alone
        FROM claimed c JOIN chosen ch ON ch.id = c.id CROSS JOIN notified;
        GET DIAGNOSTICS claimed_now = ROW_COUNT;
        claimed_all := claimed_all + claimed_now;
        EXIT WHEN claimed_now = 0 OR claimed_all >= p_limit;
    END LOOP;
END
$$;

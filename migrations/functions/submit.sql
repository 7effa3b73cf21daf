-- A batch of submissions written in one call (api/src/submit.rs): room under each user's cap (see
-- task_slots.sql) and the task rows. Sent as one statement outside a transaction block, it is one
-- round trip and one commit.
--
-- The arrays are the batch's submissions, one element each, in order. One row comes back per
-- submission, in order: `room` false when its user was at the cap (nothing stored), else `task`,
-- the stored row, NULL when its idempotency key was taken by a submission that committed first
-- (nothing stored, its room given back). The row is the table's own type: the caller selects the
-- columns it reads, so a new column changes nothing here.
--
-- Two fast paths for the usual batch: a user's room is taken in one statement when one slot has
-- room for all of the user's submissions; a batch without idempotency keys is a plain insert
-- (ON CONFLICT makes Postgres write every row by speculative insertion, a second WAL record).

CREATE OR REPLACE FUNCTION quickact_submit_tasks(
    p_ids uuid[], p_user_ids uuid[], p_texts text[], p_timeouts int4[], p_keys text[],
    p_reference_times timestamptz[], p_time_zones text[], p_currencies text[], p_caps int8[],
    p_priorities text[], p_trace_parents text[], p_reply_tos uuid[]
) RETURNS TABLE (ord int, room boolean, task quick_action_tasks) LANGUAGE plpgsql AS $$
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
    SELECT i, slots[i] IS NOT NULL, t
    FROM generate_subscripts(p_ids, 1) AS i
    LEFT JOIN unnest(created) AS t ON t.id = p_ids[i]
    ORDER BY i;
END
$$;

-- A new task wakes the workers: one notification per inserting statement (a batch of submissions
-- is one statement), with no payload: a worker that hears it fetches what is waiting.
CREATE OR REPLACE FUNCTION quickact_announce_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_tasks_waiting', '');
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER quick_action_tasks_announce AFTER INSERT ON quick_action_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION quickact_announce_tasks();

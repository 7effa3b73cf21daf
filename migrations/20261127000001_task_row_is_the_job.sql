-- The task row is the job: the queue is `quick_action_tasks` itself, and apalis-postgres's schema
-- goes.
--
-- A task lived twice, as its row (status, lease, attempts) and as an `apalis.jobs` row (status,
-- attempts, `lock_by`), and most of the worker kept the two in step: a fetch and an
-- acknowledgement per task (two commits, and WAL for a second row in three indexes), a sweeper
-- that gave jobs back to tasks that had lost theirs, two attempt counters. Now a worker takes
-- tasks straight from this table (shared/src/queue.rs: pick, lease and count the attempt in one
-- statement), a task's ending is its acknowledgement, and a worker that dies leaves leases that
-- lapse, after which any worker's fetch takes the task again and resumes it from its journal.
--
-- Upgrading with work in flight: pending tasks need nothing (their rows are the queue now);
-- processing tasks are taken again once their lease lapses. Their apalis jobs are dropped with
-- the schema. Stop the old workers first (they fetch from `apalis.jobs`, which is gone).

-- Why the task's last attempt failed (a crash is not recorded: its worker is gone), so the attempt
-- that gives the task up can say so, on whichever worker it runs.
ALTER TABLE quick_action_tasks ADD COLUMN last_error text;

-- A new task wakes the workers: one notification per inserting statement (a batch of submissions
-- is one statement), with no payload: a worker that hears it fetches what is waiting.
CREATE FUNCTION quickact_announce_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_tasks_waiting', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER quick_action_tasks_announce AFTER INSERT ON quick_action_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION quickact_announce_tasks();

-- Workers say they are alive (the admin page's list of workers), one row each, updated in place.
CREATE TABLE quickact_workers (
    name        text PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),
    concurrency integer NOT NULL
) WITH (fillfactor = 50);

-- Submissions no longer push jobs: quickact_submit as in 20261126000001_submit_fast_paths, less
-- the job arrays and the insert into apalis.jobs.
DROP FUNCTION quickact_submit(uuid[], uuid[], text[], int4[], text[], timestamptz[], text[], text[], int8[], text[], bytea[], text, int4);
CREATE FUNCTION quickact_submit(
    p_ids uuid[], p_user_ids uuid[], p_texts text[], p_timeouts int4[], p_keys text[],
    p_reference_times timestamptz[], p_time_zones text[], p_currencies text[], p_caps int8[]
) RETURNS TABLE (
    ord int, room boolean,
    id uuid, user_id uuid, input_text text, status text, result_type text, result jsonb,
    created_at timestamptz, started_at timestamptz, completed_at timestamptz,
    input_tokens bigint, output_tokens bigint, cached_tokens bigint, cost_nanos bigint,
    currency text, model_used text, timeout_seconds integer, idempotency_key text,
    reference_time timestamptz, time_zone text, attempts integer, undoes uuid
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
                (id, user_id, input_text, timeout_seconds, reference_time, time_zone, currency, slot)
            SELECT p_ids[i], p_user_ids[i], p_texts[i], p_timeouts[i], p_reference_times[i],
                   p_time_zones[i], p_currencies[i], slots[i]
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
                (id, user_id, input_text, timeout_seconds, idempotency_key, reference_time, time_zone, currency, slot)
            SELECT p_ids[i], p_user_ids[i], p_texts[i], p_timeouts[i], p_keys[i], p_reference_times[i],
                   p_time_zones[i], p_currencies[i], slots[i]
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
           t.reference_time, t.time_zone, t.attempts, t.undoes
    FROM generate_subscripts(p_ids, 1) AS i
    LEFT JOIN unnest(created) AS t ON t.id = p_ids[i]
    ORDER BY i;
END
$$;

-- apalis-postgres's schema and what quickact added to it.
DROP SCHEMA IF EXISTS apalis CASCADE;
DROP FUNCTION IF EXISTS quickact_release_job_lock();
DROP FUNCTION IF EXISTS quickact_notify_new_jobs();

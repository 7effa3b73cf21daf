-- The per-user cap on unfinished tasks (QUICKACT_MAX_ACTIVE_TASKS_PER_USER) without serialising a
-- user's submissions. Each user has 16 slot rows (`task_slots`); slot s may hold cap/16 tasks, one
-- more when s < cap % 16, so together they hold at most the cap. A submission takes room in a slot
-- no other submission is writing (FOR UPDATE SKIP LOCKED, waiting only when every slot with room
-- is busy), so one user's submissions commit side by side. A task records its slot; the triggers
-- give the room back when the task ends or is removed.

CREATE OR REPLACE FUNCTION quickact_create_task_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_slots (user_id, slot) SELECT NEW.id, s FROM generate_series(0, 15) AS s;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER users_task_slots AFTER INSERT ON users
    FOR EACH ROW EXECUTE FUNCTION quickact_create_task_slots();

CREATE OR REPLACE FUNCTION quickact_release_task_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE task_slots SET used = used - 1 WHERE user_id = OLD.user_id AND slot = OLD.slot;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER quick_action_tasks_release_slot AFTER UPDATE OF status ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.slot IS NOT NULL AND OLD.status IN ('pending', 'processing') AND NEW.status NOT IN ('pending', 'processing'))
    EXECUTE FUNCTION quickact_release_task_slot();

CREATE OR REPLACE TRIGGER quick_action_tasks_release_slot_on_delete AFTER DELETE ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.slot IS NOT NULL AND OLD.status IN ('pending', 'processing'))
    EXECUTE FUNCTION quickact_release_task_slot();

-- Room for one more unfinished task of `p_user_id` under a cap of `p_cap`: any slot with room that
-- no other submission is writing; only when every slot with room is busy, wait for the least used
-- one (Postgres re-checks its room after the wait). NULL when the user is at the cap.
CREATE OR REPLACE FUNCTION quickact_take_task_slot(p_user_id uuid, p_cap int8) RETURNS int2 LANGUAGE plpgsql AS $$
DECLARE
    taken int2;
BEGIN
    UPDATE task_slots SET used = used + 1
    WHERE (user_id, slot) = (
        SELECT user_id, slot FROM task_slots
        WHERE user_id = p_user_id AND used < p_cap / 16 + CASE WHEN slot < p_cap % 16 THEN 1 ELSE 0 END
        ORDER BY random() LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING slot INTO taken;
    IF taken IS NULL THEN
        UPDATE task_slots SET used = used + 1
        WHERE (user_id, slot) = (
            SELECT user_id, slot FROM task_slots
            WHERE user_id = p_user_id AND used < p_cap / 16 + CASE WHEN slot < p_cap % 16 THEN 1 ELSE 0 END
            ORDER BY used LIMIT 1 FOR UPDATE)
        RETURNING slot INTO taken;
    END IF;
    RETURN taken;
END
$$;

-- The per-user cap on unfinished tasks (QUICKACT_MAX_ACTIVE_TASKS_PER_USER) without serialising a
-- user's submissions. Each user has 16 slot rows; slot s may hold cap/16 tasks, one more when
-- s < cap % 16, so together they hold at most the cap. A submission takes room in a slot that no
-- other submission is writing (FOR UPDATE SKIP LOCKED, waiting only when every slot with room is
-- busy), so one user's submissions commit side by side instead of one after another. A task
-- records its slot; the triggers below give the room back when the task ends or is removed.
-- See shared/src/store/tasks.rs (take_task_slot).
CREATE TABLE task_slots (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slot    smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
    used    integer NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (user_id, slot)
);

ALTER TABLE quick_action_tasks ADD COLUMN slot smallint;

CREATE FUNCTION quickact_create_task_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_slots (user_id, slot) SELECT NEW.id, s FROM generate_series(0, 15) AS s;
    RETURN NULL;
END
$$;
CREATE TRIGGER users_task_slots AFTER INSERT ON users
    FOR EACH ROW EXECUTE FUNCTION quickact_create_task_slots();

-- Existing users and their unfinished tasks, spread over the slots.
INSERT INTO task_slots (user_id, slot) SELECT u.id, s FROM users u CROSS JOIN generate_series(0, 15) AS s;
UPDATE quick_action_tasks t SET slot = spread.slot
FROM (SELECT id, (row_number() OVER (PARTITION BY user_id ORDER BY id) % 16)::smallint AS slot
      FROM quick_action_tasks WHERE status IN ('pending', 'processing')) AS spread
WHERE t.id = spread.id;
UPDATE task_slots s SET used = held.n
FROM (SELECT user_id, slot, count(*) AS n FROM quick_action_tasks
      WHERE slot IS NOT NULL AND status IN ('pending', 'processing') GROUP BY user_id, slot) AS held
WHERE s.user_id = held.user_id AND s.slot = held.slot;

CREATE FUNCTION quickact_release_task_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE task_slots SET used = used - 1 WHERE user_id = OLD.user_id AND slot = OLD.slot;
    RETURN NULL;
END
$$;
CREATE TRIGGER quick_action_tasks_release_slot AFTER UPDATE OF status ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.slot IS NOT NULL AND OLD.status IN ('pending', 'processing') AND NEW.status NOT IN ('pending', 'processing'))
    EXECUTE FUNCTION quickact_release_task_slot();
CREATE TRIGGER quick_action_tasks_release_slot_on_delete AFTER DELETE ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.slot IS NOT NULL AND OLD.status IN ('pending', 'processing'))
    EXECUTE FUNCTION quickact_release_task_slot();

-- Undo and the live step stream.
--
-- item_changes: every change a quick action makes to an item, with the row before and after, so
-- `POST /api/quick-action/{id}/undo` can put back exactly what that task changed. A trigger writes
-- it in the transaction of the change itself, so the record exists exactly when the change does
-- (a run's writes and their records commit or roll back together). Changes made without a task
-- (the item routes) are not recorded; the item row's updated_at tells undo they happened.

CREATE TABLE item_changes (
    id       bigserial PRIMARY KEY,
    task_id  uuid NOT NULL REFERENCES quick_action_tasks (id) ON DELETE CASCADE,
    item_id  uuid NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    -- The item row before the change; NULL when the change created it.
    before   jsonb,
    after    jsonb NOT NULL
);
CREATE INDEX item_changes_task_idx ON item_changes (task_id, id);
CREATE INDEX item_changes_item_idx ON item_changes (item_id);

-- An undo is itself a task; `undoes` names the task it reverted (at most one undo per task).
ALTER TABLE quick_action_tasks ADD COLUMN undoes uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL;
CREATE UNIQUE INDEX quick_action_tasks_undoes_idx ON quick_action_tasks (undoes) WHERE undoes IS NOT NULL;

CREATE FUNCTION quickact_record_item_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO item_changes (task_id, item_id, before, after) VALUES (NEW.created_by_task, NEW.id, NULL, to_jsonb(NEW));
    ELSE
        INSERT INTO item_changes (task_id, item_id, before, after) VALUES (NEW.updated_by_task, NEW.id, to_jsonb(OLD), to_jsonb(NEW));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER items_record_task_insert AFTER INSERT ON items
    FOR EACH ROW WHEN (NEW.created_by_task IS NOT NULL) EXECUTE FUNCTION quickact_record_item_change();
-- The writers set updated_by_task to the writing task, or NULL for a change made without one.
CREATE TRIGGER items_record_task_update AFTER UPDATE ON items
    FOR EACH ROW WHEN (NEW.updated_by_task IS NOT NULL) EXECUTE FUNCTION quickact_record_item_change();

-- Each journal step wakes the task's listeners (the SSE stream), on the channel the state changes
-- use. Postgres folds identical notifications of one transaction into one, so a run that commits
-- several steps together wakes them once.
CREATE FUNCTION quickact_notify_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_task_events', NEW.task_id::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER quick_action_steps_notify AFTER INSERT ON quick_action_steps
    FOR EACH ROW EXECUTE FUNCTION quickact_notify_step();

-- Each user's count of live items (the cap on items, `live_item_counts`), kept by the rows that
-- change it rather than counted at every create.
CREATE OR REPLACE FUNCTION quickact_count_live_items() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN
        -- Gone already when the user's removal cascades here: nothing left to count.
        UPDATE live_item_counts SET live = live - 1 WHERE user_id = OLD.user_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN
        INSERT INTO live_item_counts AS c (user_id, live) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET live = c.live + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER items_count_live_on_delete AFTER DELETE ON items
    FOR EACH ROW WHEN (OLD.deleted_at IS NULL) EXECUTE FUNCTION quickact_count_live_items();
CREATE OR REPLACE TRIGGER items_count_live_on_insert AFTER INSERT ON items
    FOR EACH ROW WHEN (NEW.deleted_at IS NULL) EXECUTE FUNCTION quickact_count_live_items();
CREATE OR REPLACE TRIGGER items_count_live_on_update AFTER UPDATE OF deleted_at, user_id ON items
    FOR EACH ROW WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL) OR OLD.user_id <> NEW.user_id)
    EXECUTE FUNCTION quickact_count_live_items();

-- What a task did to an item (`item_changes`, read by undo and the task's page): the row before,
-- and the stamps after, so an undo can tell whether the item changed since.
CREATE OR REPLACE FUNCTION quickact_record_item_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO item_changes (task_id, item_id, before, after)
        VALUES (NEW.created_by_task, NEW.id, NULL, jsonb_build_object('updated_at', NEW.updated_at, 'deleted_at', NEW.deleted_at));
    ELSE
        INSERT INTO item_changes (task_id, item_id, before, after)
        VALUES (NEW.updated_by_task, NEW.id, to_jsonb(OLD), jsonb_build_object('updated_at', NEW.updated_at, 'deleted_at', NEW.deleted_at));
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER items_record_task_insert AFTER INSERT ON items
    FOR EACH ROW WHEN (NEW.created_by_task IS NOT NULL) EXECUTE FUNCTION quickact_record_item_change();
-- An update that only unlinks the creating task (its task was swept) is no change of the item's.
CREATE OR REPLACE TRIGGER items_record_task_update AFTER UPDATE ON items
    FOR EACH ROW WHEN (NEW.updated_by_task IS NOT NULL AND NEW.created_by_task IS NOT DISTINCT FROM OLD.created_by_task)
    EXECUTE FUNCTION quickact_record_item_change();

-- Serialises changes to one user's items until the transaction ends, and answers how many live
-- items the user has: a create's lock and its quota check in one call. Every writer of a user's
-- items takes this lock first, then reads what it changes (shared/src/planner/store.rs). The
-- count is a statement of its own, after the lock: in a function each statement takes its own
-- snapshot, so it sees what every writer before this one committed (read in the statement that
-- waited for the lock, it would not).
CREATE OR REPLACE FUNCTION quickact_lock_items(p_user_id uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('quickact.items:' || p_user_id::text, 0));
    SELECT live INTO n FROM live_item_counts WHERE user_id = p_user_id;
    RETURN coalesce(n, 0);
END
$$;

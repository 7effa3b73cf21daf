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

-- The user's open events with a concrete time range that may overlap [p_start, p_end), by start,
-- at most p_limit, p_except left out: every recurring one that began before p_end is among them
-- (which of its occurrences overlaps is the caller's to tell: `find_conflicts`,
-- shared/src/planner/store.rs). The one predicate of the conflict check and its report.
CREATE OR REPLACE FUNCTION quickact_event_candidates(
    p_user_id uuid, p_start timestamp, p_end timestamp, p_except uuid, p_limit int8
) RETURNS uuid[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(c.id ORDER BY c.starts_at), '{}') FROM (
        SELECT id, starts_at FROM items
        WHERE user_id = p_user_id AND deleted_at IS NULL AND kind = 'event' AND status = 'open'
          AND start_time IS NOT NULL AND end_time IS NOT NULL
          AND starts_at < p_end AND (ends_at > p_start OR recurrence IS NOT NULL)
          AND (p_except IS NULL OR id <> p_except)
        ORDER BY starts_at
        LIMIT p_limit
    ) c
$$;

-- quickact_lock_items for a new event at [p_start, p_end): the user's live items and whether an
-- open event may overlap it, both read once the lock is held (each in a statement of its own,
-- as above), so a create can check and insert in one statement (`create_event_if_free`).
CREATE OR REPLACE FUNCTION quickact_lock_items_for_event(
    p_user_id uuid, p_start timestamp, p_end timestamp, OUT live bigint, OUT busy boolean
) LANGUAGE plpgsql AS $$
BEGIN
    live := quickact_lock_items(p_user_id);
    busy := cardinality(quickact_event_candidates(p_user_id, p_start, p_end, NULL, 1)) > 0;
END
$$;

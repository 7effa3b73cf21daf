-- item_changes.after held the whole item row after the change (20261123120000), and undo reads two
-- fields of it: `updated_at` and `deleted_at`, to tell whether anything changed the item since
-- (shared/src/planner/undo.rs). The row itself is in `items`, and the journal keeps what each tool
-- saw and wrote. The whole row as jsonb was the largest part of a created item's WAL: by
-- pg_waldump of a 5,000-task burst of the local provider, item_changes wrote 0.98 kB of the 8.35
-- kB per task, 0.69 kB of it the heap row. `after` now holds those two fields; rows written before
-- keep the whole row, which undo reads the same way.
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

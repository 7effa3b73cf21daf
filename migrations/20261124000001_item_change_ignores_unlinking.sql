-- Deleting a task that created an item failed: the foreign key's ON DELETE SET NULL updates the
-- item's created_by_task, that update fired items_record_task_update (its updated_by_task was still
-- the task being deleted), and the change it recorded pointed at that task. So the sweeper's
-- removal of old tasks (QUICKACT_KEEP_TASKS_DAYS) failed every round once one had created an item.
-- Writers never change created_by_task after the insert: an update that does is the task being
-- unlinked, not a change to record.
DROP TRIGGER items_record_task_update ON items;
CREATE TRIGGER items_record_task_update AFTER UPDATE ON items
    FOR EACH ROW WHEN (NEW.updated_by_task IS NOT NULL AND NEW.created_by_task IS NOT DISTINCT FROM OLD.created_by_task)
    EXECUTE FUNCTION quickact_record_item_change();

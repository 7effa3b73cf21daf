-- A running task's row is updated in place (a heap-only tuple update, HOT) instead of being written
-- again into every index of the table.
--
-- A task row changes three to five times while it runs: the claim (status, lease, attempts), each
-- model turn's usage (tokens, cost) and the ending (status, verdict, completed_at). Postgres can
-- keep such an update beside the old version on the same page, with no index entry, only when no
-- indexed column changes and the page has room. Two indexes read `status` (one in its key, one in
-- its condition), so every claim and every ending wrote a new entry into all seven indexes, and
-- pages filled to the brim sent even the usage updates to another page, with index entries too:
-- in a burst of 3,000 tasks, 14 index entries and 2 full row versions per task, 2.5 kB of WAL.
--
-- Unfinished tasks are now found by `completed_at IS NULL`, which only the ending changes (the
-- constraint below makes it mean exactly "pending or processing"), so claims and usage updates are
-- heap-only and an ending writes into the indexes that hold every task (a new version), not into
-- an index of unfinished ones. Pages are filled half by inserts, so a task's later versions fit
-- beside it (Postgres prunes the dead ones as the page fills).
--
-- Listings filtered by status read the history indexes newest first and test the status of each
-- row, as they already did (the filter is a parameter that may be NULL, which no index matched).
UPDATE quick_action_tasks SET completed_at = coalesce(started_at, created_at)
WHERE status NOT IN ('pending', 'processing') AND completed_at IS NULL;
ALTER TABLE quick_action_tasks ADD CONSTRAINT completed_exactly_when_finished
    CHECK ((status IN ('pending', 'processing')) = (completed_at IS NULL));

DROP INDEX quick_action_tasks_active_idx;
DROP INDEX quick_action_tasks_status_idx;
-- Scans for unfinished work (the sweeper's deadlines and jobless tasks, the queue's gauges, the
-- workers' running tasks), oldest first.
CREATE INDEX quick_action_tasks_unfinished_idx ON quick_action_tasks (created_at) WHERE completed_at IS NULL;

ALTER TABLE quick_action_tasks SET (fillfactor = 50);

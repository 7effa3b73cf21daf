-- `quick_action_tasks.job_id` recorded the apalis job that carried a task, but nothing ever read it:
-- workers find a task by the id in the job's arguments, and a task handed back to the queue gets a
-- new job, so the column was stale as soon as that happened. Drop it rather than keep a field that
-- looks authoritative and is not.
ALTER TABLE quick_action_tasks DROP COLUMN job_id;

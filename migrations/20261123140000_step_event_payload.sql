-- A step's notification says it is a step ("<task id> step"), so waiters for a task's final state
-- (long-polls) are not woken by every step of a run; the live step stream wakes on both.
CREATE OR REPLACE FUNCTION quickact_notify_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_task_events', NEW.task_id::text || ' step');
    RETURN NULL;
END
$$;

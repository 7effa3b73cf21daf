-- A journal step is no longer notified by the transaction that writes it: the worker notifies
-- after the commit, steps of many runs in one statement (shared/src/notify.rs, StepEvents).
-- Postgres commits notifying transactions one at a time, holding one lock through each one's WAL
-- flush; with this trigger every journal write was such a transaction, and under many runs at
-- once they queued on that lock. The task's state changes (claim, ending) still notify in their
-- own transaction: a long-poll's verdict never depends on a notification sent after the fact.
DROP TRIGGER quick_action_steps_notify ON quick_action_steps;
DROP FUNCTION quickact_notify_step();

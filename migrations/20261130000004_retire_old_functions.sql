-- Functions no build in service calls any more (docs/architecture.md, "Upgrades": a function whose
-- contract changed keeps its old form until no process calls it):
-- - `quickact_submit` and `quickact_fetch_tasks`, in databases from before the squash of
--   2026-11-30, which answered a list of columns: `quickact_submit_tasks` and
--   `quickact_claim_tasks` replaced them;
-- - the claim's overload that took the worker's running tasks (`p_running uuid[]`): a running
--   task's renewed lease keeps it from the fetch now.
-- Every overload of the first two goes, whatever its arguments.
DO $$
DECLARE
    retired regprocedure;
BEGIN
    FOR retired IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = current_schema()::regnamespace
          AND p.proname IN ('quickact_submit', 'quickact_fetch_tasks')
    LOOP
        EXECUTE format('DROP FUNCTION %s', retired);
    END LOOP;
END
$$;
DROP FUNCTION IF EXISTS quickact_claim_tasks(text, int, float8, uuid[], int, float8);

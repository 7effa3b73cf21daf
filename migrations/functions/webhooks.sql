-- A task's ending puts one delivery per matching endpoint in the outbox (`webhook_deliveries`), in
-- the ending's transaction: no verdict is lost between the commit and the send. Users with no
-- endpoint (most) pay one index probe of `webhook_subscribers`.
CREATE OR REPLACE FUNCTION quickact_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM webhook_subscribers
                   WHERE user_id IN (NEW.user_id, '00000000-0000-0000-0000-000000000000')) THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_deliveries (id, endpoint_id, task_id, result_type, ended_at)
    SELECT gen_random_uuid(), e.id, NEW.id, NEW.result_type, NEW.completed_at
    FROM webhook_endpoints e
    WHERE e.enabled AND (e.user_id = NEW.user_id OR e.user_id IS NULL) AND NEW.result_type = ANY (e.verdicts);
    IF FOUND THEN
        PERFORM pg_notify('quickact_webhooks', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER quick_action_tasks_webhook_outbox AFTER UPDATE OF completed_at ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION quickact_webhook_outbox();

-- `webhook_subscribers`: the users with an enabled endpoint (the nil user for deployment-wide
-- ones), recomputed whenever endpoints change.
CREATE OR REPLACE FUNCTION quickact_webhook_subscribers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- One recomputation at a time, each reading what committed before it (a statement's snapshot
    -- is taken after the lock): the last change to commit leaves the set right.
    PERFORM pg_advisory_xact_lock(hashtext('quickact_webhook_subscribers'));
    DELETE FROM webhook_subscribers s
    WHERE NOT EXISTS (SELECT FROM webhook_endpoints e
                      WHERE e.enabled AND coalesce(e.user_id, '00000000-0000-0000-0000-000000000000') = s.user_id);
    INSERT INTO webhook_subscribers (user_id)
    SELECT DISTINCT coalesce(user_id, '00000000-0000-0000-0000-000000000000') FROM webhook_endpoints WHERE enabled
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER webhook_endpoints_subscribers AFTER INSERT OR UPDATE OR DELETE ON webhook_endpoints
    FOR EACH STATEMENT EXECUTE FUNCTION quickact_webhook_subscribers();

-- Webhooks (issue 33): endpoints that hear of task endings, and an outbox of deliveries.
--
-- A delivery row is written by the statement that ends the task (a trigger on the task row, below),
-- so it commits with the verdict or not at all: no ending is lost between the commit and the
-- delivery, whichever process (worker, API cancel, sweeper) wrote it and whatever crashes after.
-- Workers then deliver the rows (worker/src/webhooks.rs).

-- An endpoint: a user's (registered over the API) or the deployment's (`user_id` NULL, synced
-- from `QUICKACT_WEBHOOKS` at start-up; they hear every user's endings).
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY,
    user_id         uuid REFERENCES users (id) ON DELETE CASCADE,
    url             text NOT NULL,
    -- `whsec_<base64>`, kept as given: signing needs the secret itself, not a hash of it.
    secret          text NOT NULL,
    -- The verdict types (`result_type`) it hears.
    verdicts        text[] NOT NULL DEFAULT '{action_completed,need_clarification,error}',
    enabled         boolean NOT NULL DEFAULT true,
    -- Why it was disabled by the service (a receiver answered 410 Gone), if it was.
    disabled_reason text,
    -- A deployment endpoint's place in the configuration (its URL), so a restart updates it.
    deployment_key  text UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT deployment_endpoints_have_no_user CHECK ((deployment_key IS NULL) = (user_id IS NOT NULL)),
    CONSTRAINT verdicts_are_known CHECK (verdicts <@ '{action_completed,need_clarification,error}'::text[])
);
CREATE INDEX webhook_endpoints_user_idx ON webhook_endpoints (user_id, created_at);

-- One task ending to deliver to one endpoint: the outbox. Its id is the event id receivers see
-- (`webhook-id: msg_<id>`), the same at every attempt.
CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    task_id          uuid NOT NULL REFERENCES quick_action_tasks (id) ON DELETE CASCADE,
    result_type      text NOT NULL,
    -- pending (an attempt is due at `next_attempt_at`), delivered (a 2xx), failed (gave up).
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         int NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    -- A worker's claim on an attempt in flight; a crashed worker's claim runs out and is taken again.
    lease_owner      text,
    lease_expires_at timestamptz,
    -- The body, rendered at the first attempt and sent byte for byte at every later one (text, not
    -- jsonb, which would reorder its keys).
    body             text,
    last_error       text,
    -- The verdict's moment (the task's `completed_at`).
    ended_at         timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    delivered_at     timestamptz
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_task_idx ON webhook_deliveries (task_id);

-- Every attempt at a delivery, for the endpoint's owner and admins.
CREATE TABLE webhook_attempts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt     int NOT NULL,
    started_at  timestamptz NOT NULL,
    -- The receiver's HTTP status; NULL when no answer came (refused, timed out, address refused).
    status_code int,
    latency_ms  int NOT NULL,
    error       text,
    worker      text NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);

-- Who has an enabled endpoint: a user's id, or the nil id for the deployment's endpoints. Kept
-- by a trigger on webhook_endpoints; the outbox trigger below reads only this (a table and its
-- key) to tell that nobody listens, so an ending of a user without endpoints locks two small
-- relations more, not the endpoints (and their indexes) and the deliveries (and theirs): an
-- ending's transaction already holds a dozen relation locks, and past 16 Postgres leaves its
-- fast path for the shared lock table (the drain bench in docs/performance.md#webhooks).
CREATE TABLE webhook_subscribers (
    user_id uuid PRIMARY KEY
);

CREATE FUNCTION quickact_webhook_subscribers() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER webhook_endpoints_subscribers AFTER INSERT OR UPDATE OR DELETE ON webhook_endpoints
    FOR EACH STATEMENT EXECUTE FUNCTION quickact_webhook_subscribers();

-- The outbox write. A trigger rather than a CTE in each ending statement: every way a task ends
-- (the ending statements of shared/src/store/ending.rs, and any written later) sets `completed_at`
-- once, so this catches them all in the same statement, with nothing to remember at each new
-- ending path. Without endpoints it costs one probe of webhook_subscribers per ended task; the
-- NOTIFY is sent only when a delivery was written (and an ending already notifies, so it adds no
-- serialisation at commit).
CREATE FUNCTION quickact_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER quick_action_tasks_webhook_outbox AFTER UPDATE OF completed_at ON quick_action_tasks
    FOR EACH ROW
    WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION quickact_webhook_outbox();

-- The backbone of quickact: who may call the API, the quick-action tasks they submit, and the
-- journal of everything a worker did for each task. The job queue itself lives in the `apalis`
-- schema, which apalis-postgres creates and migrates on its own.

CREATE TABLE users (
    id          uuid PRIMARY KEY,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    is_admin    boolean NOT NULL DEFAULT false,
    -- IANA zone; the time resolver reads every date of this user's sentences in it.
    time_zone   text NOT NULL,
    -- The model this user's tasks run on; NULL means the deployment's default model.
    model       text,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Only a SHA-256 of each key is stored. Keys are 256-bit random strings, so a fast hash is enough
-- (no password-style stretching is needed) and lets authentication be a single index lookup.
CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash    bytea NOT NULL UNIQUE,
    -- The first characters of the key, so a user can tell keys apart without the secret.
    key_prefix  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

CREATE TABLE quick_action_tasks (
    id                  uuid PRIMARY KEY,
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    input_text          text NOT NULL,
    status              text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'processing', 'success', 'failed', 'timeout', 'cancelled')),
    result_type         text CHECK (result_type IN ('action_completed', 'need_clarification', 'error')),
    result              jsonb,
    created_at          timestamptz NOT NULL DEFAULT now(),
    started_at          timestamptz,
    completed_at        timestamptz,
    input_tokens        bigint NOT NULL DEFAULT 0,
    output_tokens       bigint NOT NULL DEFAULT 0,
    cached_tokens       bigint NOT NULL DEFAULT 0,
    -- Cost in nano-units of `currency` (10^-9), summed over model turns without float drift.
    cost_nanos          bigint NOT NULL DEFAULT 0,
    currency            text NOT NULL DEFAULT 'CNY',
    model_used          text,
    timeout_seconds     integer NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 120),
    idempotency_key     text,
    -- The moment and zone the user wrote the sentence in: dates resolve against these, not
    -- against whenever a worker happens to pick the task up.
    reference_time      timestamptz NOT NULL,
    time_zone           text NOT NULL,
    -- How many times a worker has started this task; bounds tasks that keep killing workers.
    attempts            integer NOT NULL DEFAULT 0,
    -- The worker running the task and until when its claim holds. A worker renews the lease while
    -- it runs; once it lapses another worker may take over (the journal lets it resume).
    lease_owner         text,
    lease_expires_at    timestamptz,
    -- The apalis job that carries this task through the queue.
    job_id              text,
    CONSTRAINT result_type_matches_status CHECK (
        (status IN ('pending', 'processing') AND result_type IS NULL)
        OR (status = 'success' AND result_type = 'action_completed')
        OR (status = 'failed' AND result_type IN ('need_clarification', 'error'))
        OR (status IN ('timeout', 'cancelled') AND result_type = 'error')
    )
);
-- Idempotency-Key: the same key from the same user names the same task.
CREATE UNIQUE INDEX quick_action_tasks_idempotency_idx
    ON quick_action_tasks (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- A user's history, newest first, with a stable tiebreak for cursor paging.
CREATE INDEX quick_action_tasks_user_history_idx ON quick_action_tasks (user_id, created_at DESC, id DESC);
-- The admin listing of everyone's tasks, newest first.
CREATE INDEX quick_action_tasks_history_idx ON quick_action_tasks (created_at DESC, id DESC);
-- Scans for unfinished work (per-user limits, operators looking for stuck tasks).
CREATE INDEX quick_action_tasks_active_idx ON quick_action_tasks (user_id, status)
    WHERE status IN ('pending', 'processing');
CREATE INDEX quick_action_tasks_status_idx ON quick_action_tasks (status, created_at DESC);

-- The journal of a run: one row per model turn and per tool call, in order. A worker that takes a
-- task over after a crash replays it instead of asking the model (and paying) again, and a tool's
-- change and its row commit together, so side effects happen exactly once.
CREATE TABLE quick_action_steps (
    task_id         uuid NOT NULL REFERENCES quick_action_tasks (id) ON DELETE CASCADE,
    seq             integer NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('model_turn', 'tool_call')),
    -- The model for a turn, the tool for a call.
    name            text NOT NULL,
    -- For a tool call: the id the model gave it, answered exactly once.
    tool_call_id    text,
    -- Tool arguments as the model sent them (parsed when they were JSON).
    arguments       jsonb,
    -- A turn's assistant message, or a tool's result.
    result          jsonb,
    ok              boolean NOT NULL,
    error           text,
    input_tokens    integer NOT NULL DEFAULT 0,
    output_tokens   integer NOT NULL DEFAULT 0,
    cached_tokens   integer NOT NULL DEFAULT 0,
    cost_nanos      bigint NOT NULL DEFAULT 0,
    latency_ms      integer NOT NULL,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz NOT NULL,
    -- The task attempt that wrote the row.
    attempt         integer NOT NULL,
    PRIMARY KEY (task_id, seq)
);

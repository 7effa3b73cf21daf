-- The quickact schema as of 2026-11-29, squashed from the migrations before it: tables, their
-- constraints and indexes. Functions and triggers are not here: they live in
-- `migrations/functions/` and are applied after the migrations by `quickact_shared::schema::migrate`.
-- Where a comment below says "a trigger" keeps something, that trigger is one of them.


-- =============================================================================================
-- Users and their API keys
-- =============================================================================================

-- Who may call the API. Every change to a user or a key is announced on
-- quickact_credential_events (payload: the user's id), whoever makes it, so each API process drops
-- what it cached of that user's keys (shared/src/credentials.rs).
CREATE TABLE users (
    id                      uuid PRIMARY KEY,
    name                    text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    is_admin                boolean NOT NULL DEFAULT false,
    -- IANA zone; the time resolver reads every date of this user's sentences in it.
    time_zone               text NOT NULL,
    -- The model this user's tasks run on; NULL means the deployment's default model.
    model                   text,
    created_at              timestamptz NOT NULL DEFAULT now(),
    -- The user's own spending limits per UTC day and per UTC month, in nano-units of the
    -- deployment's currency (as `cost_nanos`); NULL follows the deployment's default
    -- (QUICKACT_BUDGET_PER_DAY / QUICKACT_BUDGET_PER_MONTH). An admin sets them
    -- (PUT /api/admin/users/{id}/budget).
    budget_per_day_nanos    bigint CHECK (budget_per_day_nanos >= 0),
    budget_per_month_nanos  bigint CHECK (budget_per_month_nanos >= 0)
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


-- =============================================================================================
-- Tasks and their queue
-- =============================================================================================

-- A quick action: a user's sentence and what became of it. The task row is also the job: workers
-- take tasks straight from this table (shared/src/queue.rs: pick, lease and count the attempt in
-- one statement), a task's ending is its acknowledgement, and a worker that dies leaves leases
-- that lapse, after which any worker's fetch takes the task again and resumes it from its journal.
-- A new task wakes the workers on quickact_tasks_waiting (a trigger, once per inserting statement).
--
-- A running task's row changes three to five times (the claim, each model turn's usage, the
-- ending), and those updates are kept heap-only (HOT: beside the old version on the same page, no
-- new index entries). Postgres can do that only when no indexed column changes and the page has
-- room, so no index reads `status`, the lease or the usage columns: unfinished tasks are found by
-- `completed_at IS NULL`, which only the ending changes, and pages are filled half by inserts
-- (fillfactor 50) so a task's later versions fit beside it. Listings filtered by status read the
-- history indexes newest first and test each row's status.
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
    -- How many times a worker has claimed this task; bounds tasks that keep killing workers.
    attempts            integer NOT NULL DEFAULT 0,
    -- The worker running the task and until when its claim holds. A worker renews the lease while
    -- it runs; once it lapses another worker may take over (the journal lets it resume).
    lease_owner         text,
    lease_expires_at    timestamptz,
    -- The task_slots slot holding this task's room under its user's cap while it is unfinished.
    slot                smallint,
    -- An undo is itself a task; `undoes` names the task it reverted (at most one undo per task).
    undoes              uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    -- Why the task's last attempt failed (a crash is not recorded: its worker is gone), so the
    -- attempt that gives the task up can say so, on whichever worker it runs.
    last_error          text,
    -- 'interactive' (the default) or 'batch' (scripts, imports: served after interactive tasks
    -- until they have waited the aging time). Set once, at submission.
    priority            text NOT NULL DEFAULT 'interactive' CHECK (priority IN ('interactive', 'batch')),
    -- Claims that ended with the run handing the task back to wait for its provider. `attempts`
    -- counts every claim, so the cap on attempts counts only failed ones: attempts - provider_waits.
    -- No index reads it, so updating it keeps the row's update heap-only.
    provider_waits      integer NOT NULL DEFAULT 0,
    -- The W3C `traceparent` of the span that submitted the task (OpenTelemetry, docs/tracing.md):
    -- the worker that claims the task continues that trace. NULL when the API that took the task
    -- did not export traces.
    trace_parent        text,
    -- For a reply to a question (POST /api/quick-action/{id}/reply): the task that ended with
    -- need_clarification and whose question this one answers. The run reads that task's sentence,
    -- question and journal as its context.
    reply_to            uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    CONSTRAINT result_type_matches_status CHECK (
        (status IN ('pending', 'processing') AND result_type IS NULL)
        OR (status = 'success' AND result_type = 'action_completed')
        OR (status = 'failed' AND result_type IN ('need_clarification', 'error'))
        OR (status IN ('timeout', 'cancelled') AND result_type = 'error')
    ),
    -- `completed_at IS NULL` means exactly "pending or processing": the indexes of unfinished
    -- tasks rely on it.
    CONSTRAINT completed_exactly_when_finished
        CHECK ((status IN ('pending', 'processing')) = (completed_at IS NULL))
) WITH (fillfactor = 50);
-- Idempotency-Key: the same key from the same user names the same task.
CREATE UNIQUE INDEX quick_action_tasks_idempotency_idx
    ON quick_action_tasks (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- A user's history, newest first, with a stable tiebreak for cursor paging.
CREATE INDEX quick_action_tasks_user_history_idx ON quick_action_tasks (user_id, created_at DESC, id DESC);
-- The admin listing of everyone's tasks, newest first.
CREATE INDEX quick_action_tasks_history_idx ON quick_action_tasks (created_at DESC, id DESC);
-- At most one undo per task.
CREATE UNIQUE INDEX quick_action_tasks_undoes_idx ON quick_action_tasks (undoes) WHERE undoes IS NOT NULL;
-- The fetch walks unfinished tasks by user and priority, in arrival order. Only submissions and
-- endings touch it. It is the only index of unfinished tasks: the sweeper and the queue's counts read
-- all unfinished rows anyway, so they need none by arrival alone.
CREATE INDEX quick_action_tasks_turns_idx ON quick_action_tasks (user_id, priority, created_at)
    WHERE completed_at IS NULL;
-- The lookup of a task's replies, and the foreign key's ON DELETE (the sweeper deletes old tasks
-- in bulk).
CREATE INDEX quick_action_tasks_reply_to_idx ON quick_action_tasks (reply_to) WHERE reply_to IS NOT NULL;

-- The per-user cap on unfinished tasks (QUICKACT_MAX_ACTIVE_TASKS_PER_USER) without serialising a
-- user's submissions. Each user has 16 slot rows (made by a trigger when the user is created);
-- slot s may hold cap/16 tasks, one more when s < cap % 16, so together they hold at most the cap.
-- A submission takes room in a slot that no other submission is writing (FOR UPDATE SKIP LOCKED,
-- waiting only when every slot with room is busy), so one user's submissions commit side by side
-- instead of one after another. A task records its slot; triggers give the room back when the task
-- ends or is removed. See shared/src/store/tasks.rs (take_task_slot).
CREATE TABLE task_slots (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slot    smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
    used    integer NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (user_id, slot)
);

-- Fair turns between users (shared/src/queue.rs, docs/architecture.md "Fair turns"): a row per user
-- the fetch has served: when it last served them (least recently served first), and a bound on
-- their held tasks. Only the fetch writes it (fetches take turns under an advisory lock), so
-- endings and hand-backs write nothing here: `held` is the exact count at the fetch that last
-- counted it plus the tasks claimed since, never less than the tasks the user holds (a hold starts
-- only at a claim). The fetch counts again, from the user's unfinished rows, only when the bound
-- could keep the user from a turn. Updated in place, hence the half-full pages.
CREATE TABLE queue_turns (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    last_claim timestamptz NOT NULL,
    held       integer NOT NULL
) WITH (fillfactor = 50);

-- Workers say they are alive (the admin page's list of workers), one row each, updated in place.
CREATE TABLE quickact_workers (
    name        text PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),
    concurrency integer NOT NULL
) WITH (fillfactor = 50);


-- =============================================================================================
-- Steps: the journal of a run
-- =============================================================================================

-- One row per model turn and per tool call, in order. A worker that takes a task over after a
-- crash replays it instead of asking the model (and paying) again, and a tool's change and its row
-- commit together, so side effects happen exactly once. New steps are announced by the worker
-- after its commit (shared/src/notify.rs), not by a trigger: a notifying transaction holds a
-- commit-wide lock through its WAL flush, and journal writes are many.
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


-- =============================================================================================
-- Planner items and their changes
-- =============================================================================================

-- The planner the agent acts on: each user's events, to-dos and reminders. Items are soft-deleted
-- (deleted_at) so an action can be audited and undone, and remember which quick action created or
-- last changed them.
CREATE TABLE items (
    id              uuid PRIMARY KEY,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('event', 'todo', 'reminder')),
    title           text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    description     text CHECK (length(description) <= 5000),
    -- Wall-clock date and times in `time_zone`. An end time not after the start time means the
    -- item ends the next day (23:00-01:00).
    date            date NOT NULL,
    start_time      time,
    end_time        time,
    -- A fuzzy part of the day instead of clock times.
    segment         text CHECK (segment IN ('all_day', 'early_morning', 'morning', 'forenoon', 'noon',
                                            'afternoon', 'evening')),
    -- Eisenhower quadrant: 1 important+urgent, 2 important, 3 urgent, 4 neither.
    priority        smallint CHECK (priority BETWEEN 1 AND 4),
    item_group      text CHECK (length(item_group) <= 100),
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'completed')),
    completed_at    timestamptz,
    -- RFC 5545 RRULE (without the "RRULE:" prefix).
    recurrence      text CHECK (length(recurrence) <= 500),
    deleted_at      timestamptz,
    created_by_task uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    -- The task that last changed the item; writers set it to NULL for a change made without one.
    updated_by_task uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    -- Local start and end as timestamps, for range queries and conflict checks. An item with a
    -- part of the day (下午, evening) occupies that part, not the whole day, so a search for
    -- "明天上午" does not find tomorrow afternoon's run. The bounds are the planner's
    -- `Segment::bounds`: all_day 00:00-23:59, early_morning 00:00-05:59, morning 06:00-08:59,
    -- forenoon 09:00-11:59, noon 12:00-13:59, afternoon 14:00-17:59, evening 18:00-23:59.
    starts_at       timestamp GENERATED ALWAYS AS (
                        date + coalesce(start_time, CASE segment
                            WHEN 'morning' THEN time '06:00'
                            WHEN 'forenoon' THEN time '09:00'
                            WHEN 'noon' THEN time '12:00'
                            WHEN 'afternoon' THEN time '14:00'
                            WHEN 'evening' THEN time '18:00'
                            ELSE time '00:00'
                        END)) STORED,
    ends_at         timestamp GENERATED ALWAYS AS (
                        CASE
                            WHEN start_time IS NULL THEN date + CASE segment
                                WHEN 'early_morning' THEN time '05:59:59'
                                WHEN 'morning' THEN time '08:59:59'
                                WHEN 'forenoon' THEN time '11:59:59'
                                WHEN 'noon' THEN time '13:59:59'
                                WHEN 'afternoon' THEN time '17:59:59'
                                ELSE time '23:59:59'
                            END
                            WHEN end_time IS NULL THEN date + start_time
                            WHEN end_time > start_time THEN date + end_time
                            ELSE date + 1 + end_time
                        END) STORED,
    -- The IANA zone the item's wall-clock times were written in: without it they are ambiguous
    -- once the user changes zone or a task is submitted with another `tz`.
    time_zone       text NOT NULL,
    CONSTRAINT end_needs_start CHECK (end_time IS NULL OR start_time IS NOT NULL),
    CONSTRAINT times_or_segment CHECK (segment IS NULL OR start_time IS NULL),
    CONSTRAINT completed_has_time CHECK ((status = 'completed') = (completed_at IS NOT NULL))
);
-- A user's live items by day (listings, searches, conflict checks).
CREATE INDEX items_user_date_idx ON items (user_id, date, starts_at) WHERE deleted_at IS NULL;
-- A user's live items, most recently changed first (title search within a user's items).
CREATE INDEX items_user_updated_idx ON items (user_id, updated_at DESC) WHERE deleted_at IS NULL;

-- Each user's count of live items, for the item quota (QUICKACT_MAX_ITEMS_PER_USER): the check
-- reads one row instead of counting the user's items. Triggers keep it on every way an item
-- becomes live or stops being live (created, deleted, restored by an undo, removed). Writers of one
-- user's items already serialise on that user's item lock, so the counter adds no contention.
-- See shared/src/planner/store.rs (count_live_items).
CREATE TABLE live_item_counts (
    user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    live    bigint NOT NULL DEFAULT 0 CHECK (live >= 0)
);

-- Every change a quick action makes to an item, so `POST /api/quick-action/{id}/undo` can put back
-- exactly what that task changed. A trigger writes it in the transaction of the change itself, so
-- the record exists exactly when the change does (a run's writes and their records commit or roll
-- back together). Changes made without a task (the item routes) are not recorded; the item row's
-- updated_at tells undo they happened. An update that only unlinks created_by_task (the task being
-- deleted) is not a change and is not recorded.
CREATE TABLE item_changes (
    id       bigserial PRIMARY KEY,
    task_id  uuid NOT NULL REFERENCES quick_action_tasks (id) ON DELETE CASCADE,
    item_id  uuid NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    -- The item row before the change; NULL when the change created it.
    before   jsonb,
    -- The item's `updated_at` and `deleted_at` after the change: undo compares them to tell whether
    -- anything changed the item since (shared/src/planner/undo.rs). Not the whole row: that is in
    -- `items`, and as jsonb here it would be the largest part of an item change's WAL. Older rows
    -- that hold the whole row are read the same way.
    after    jsonb NOT NULL
);
CREATE INDEX item_changes_task_idx ON item_changes (task_id, id);
CREATE INDEX item_changes_item_idx ON item_changes (item_id);


-- =============================================================================================
-- Budgets and spend
-- =============================================================================================

-- Per-user submit rate limit (QUICKACT_SUBMIT_RATE_PER_MINUTE), shared by every API process.
-- One row per user holding the GCRA "theoretical arrival time": a request is admitted while
-- tat - now() <= the burst tolerance, and moves tat on by one emission interval (60 s / rate).
-- See shared/src/store/budgets.rs.
--
-- UNLOGGED: the budget needs no durability. It writes no WAL, so taking from it costs no commit
-- flush; a crash empties the table, which only forgives whatever budget was spent.
CREATE UNLOGGED TABLE submit_budgets (
    user_id uuid PRIMARY KEY,
    tat     timestamptz NOT NULL
);

-- Provider limits shared by every worker process (QUICKACT_MODEL_LIMITS) and the pauses a provider
-- asks for (a 429's Retry-After), so N workers together never send a model more than its limits
-- and all of them stop while it asked for a pause. One row per model; see
-- shared/src/store/providers.rs.
--
-- Requests and tokens are two GCRA budgets, like the submit rate's: the "theoretical arrival time"
-- of each. A request is let through while both are within their burst tolerance and no pause
-- holds; it moves request_tat on by one interval. A turn's tokens are debited after it with its
-- real usage, which may put token_tat far ahead (a debt): later requests wait until it is paid off.
--
-- The counters feed the admin page's providers panel (fleet-wide; each process's /metrics counts
-- its own share).
--
-- UNLOGGED: the budget needs no durability, and writes no WAL. A crash empties it: the budget
-- spent and any pause are forgiven, and the next 429 pauses again.
CREATE UNLOGGED TABLE provider_budgets (
    model           text PRIMARY KEY,
    request_tat     timestamptz NOT NULL DEFAULT now(),
    token_tat       timestamptz NOT NULL DEFAULT now(),
    -- A pause, set by a 429 that said when to come back. When it ends, ONE request goes as the
    -- probe (paused_until moves on by a probe window meanwhile, so the others keep waiting); the
    -- first answer to a request let through after the pause began ends the pause.
    paused_at       timestamptz,
    paused_until    timestamptz,
    requests_total  bigint NOT NULL DEFAULT 0,
    waits_total     bigint NOT NULL DEFAULT 0,
    pauses_total    bigint NOT NULL DEFAULT 0,
    fallbacks_total bigint NOT NULL DEFAULT 0,
    -- When the pause's probe was let through; NULL while none is out. A new pause (a 429) clears
    -- it, and so does the answer that ends the pause. While it is set the others wait for the
    -- probe's answer (announced on quickact_provider_resumes), not for the whole probe window.
    probe_sent_at   timestamptz
);

-- What each user spent per UTC day, and how many of their tasks a budget refused that day, so a run
-- can check the user's daily and monthly limits before each paid model turn in one cheap
-- statement. A row is added to by the very statement that adds a paid turn's cost to its task, in
-- the same transaction, so the spend never disagrees with the tasks' costs; a turn that costs
-- nothing (the local provider) writes nothing here. The day is the day (UTC) of the transaction
-- that recorded the cost, and a month's spend is the sum of its days: at most 31 rows read through
-- the primary key. (A sum over the tasks would read thousands of rows, and no index may carry the
-- tasks' `cost_nanos`.)
--
-- A day's row is updated at each paid turn of the user's; no index reads the counters, so those
-- updates stay heap-only while the page has room beside the row (hence the half-full pages).
CREATE TABLE user_spend (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day        date NOT NULL,
    cost_nanos bigint NOT NULL DEFAULT 0,
    -- Tasks that ended with a `budget_exhausted` verdict that day.
    refusals   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
) WITH (fillfactor = 50);
-- The day's refusals across users (the API's /metrics gauge, the admin page's totals) and the
-- sweeper's removal of old days.
CREATE INDEX user_spend_day_idx ON user_spend (day);


-- =============================================================================================
-- Webhooks: endpoints that hear of task endings, and an outbox of deliveries
-- =============================================================================================
--
-- A delivery row is written by the statement that ends the task (a trigger on the task row's
-- completed_at), so it commits with the verdict or not at all: no ending is lost between the commit
-- and the delivery, whichever process (worker, API cancel, sweeper) wrote it and whatever crashes
-- after. Workers then deliver the rows (worker/src/webhooks.rs).

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
    attempts         integer NOT NULL DEFAULT 0,
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
    attempt     integer NOT NULL,
    started_at  timestamptz NOT NULL,
    -- The receiver's HTTP status; NULL when no answer came (refused, timed out, address refused).
    status_code integer,
    latency_ms  integer NOT NULL,
    error       text,
    worker      text NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);

-- Who has an enabled endpoint: a user's id, or the nil id for the deployment's endpoints. Kept by
-- a trigger on webhook_endpoints; the outbox trigger reads only this (a table and its key) to tell
-- that nobody listens, so an ending of a user without endpoints locks two small relations more,
-- not the endpoints and the deliveries with their indexes: an ending's transaction already holds a
-- dozen relation locks, and past 16 Postgres leaves its fast path for the shared lock table (the
-- drain bench in docs/performance.md#webhooks).
CREATE TABLE webhook_subscribers (
    user_id uuid PRIMARY KEY
);


-- =============================================================================================
-- MCP servers and users' tokens for them (docs/mcp-tools.md)
-- =============================================================================================

-- A user's own token for an MCP server the deployment registered. The worker passes it through,
-- verbatim, as the server's configured header when that user's task calls the server's tools; a
-- server with a header offers its tools only to users who set one. Kept as given (not hashed): it
-- must be sent on, like a model's API key.
CREATE TABLE user_mcp_tokens (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    server     text NOT NULL,
    token      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, server)
);

-- MCP servers an admin registered through the API (`/api/admin/mcp-servers`), beside those of the
-- deployment's configuration (QUICKACT_MCP_SERVERS): for every user (`user_id` NULL) or for one.
-- A name is unique across both: it prefixes the server's tools as the model sees them.
CREATE TABLE mcp_servers (
    name         text PRIMARY KEY,
    url          text NOT NULL,
    timeout_secs integer NOT NULL CHECK (timeout_secs BETWEEN 1 AND 600),
    header       text,
    tools        text[],
    user_id      uuid REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now()
);


-- =============================================================================================
-- Admin page sessions
-- =============================================================================================

-- Sessions of the admin web page (/admin). A browser logs in with an admin's API key and then holds
-- a random session token in an HttpOnly cookie, never the key itself. Only the token's SHA-256 is
-- stored, with the key that opened the session: revoking that key, or taking the admin flag away,
-- ends the session at once (every request checks both), and logging out deletes the row.
CREATE TABLE admin_sessions (
    token_hash  bytea PRIMARY KEY,
    api_key_id  uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX admin_sessions_expiry_idx ON admin_sessions (expires_at);

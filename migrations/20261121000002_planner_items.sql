-- The planner the agent acts on: each user's events, to-dos and reminders. Items are soft-deleted
-- (deleted_at) so an action can be audited and undone, and remember which quick action created or
-- last changed them.

CREATE TABLE items (
    id              uuid PRIMARY KEY,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('event', 'todo', 'reminder')),
    title           text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    description     text CHECK (length(description) <= 5000),
    -- Wall-clock date and times in the user's zone. An end time not after the start time means the
    -- item ends the next day (23:00-01:00).
    date            date NOT NULL,
    start_time      time,
    end_time        time,
    -- A fuzzy part of the day instead of clock times.
    segment         text CHECK (segment IN ('all_day', 'early_morning', 'morning', 'forenoon', 'noon', 'afternoon', 'evening')),
    -- Eisenhower quadrant: 1 important+urgent, 2 important, 3 urgent, 4 neither.
    priority        smallint CHECK (priority BETWEEN 1 AND 4),
    item_group      text CHECK (length(item_group) <= 100),
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'completed')),
    completed_at    timestamptz,
    -- RFC 5545 RRULE (without the "RRULE:" prefix).
    recurrence      text CHECK (length(recurrence) <= 500),
    deleted_at      timestamptz,
    created_by_task uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    updated_by_task uuid REFERENCES quick_action_tasks (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    -- Local start and end as timestamps, for range queries and conflict checks.
    starts_at       timestamp GENERATED ALWAYS AS (date + coalesce(start_time, time '00:00')) STORED,
    ends_at         timestamp GENERATED ALWAYS AS (
                        CASE
                            WHEN start_time IS NULL THEN date + time '23:59:59'
                            WHEN end_time IS NULL THEN date + start_time
                            WHEN end_time > start_time THEN date + end_time
                            ELSE date + 1 + end_time
                        END) STORED,
    CONSTRAINT end_needs_start CHECK (end_time IS NULL OR start_time IS NOT NULL),
    CONSTRAINT times_or_segment CHECK (segment IS NULL OR start_time IS NULL),
    CONSTRAINT completed_has_time CHECK ((status = 'completed') = (completed_at IS NOT NULL))
);
-- A user's live items by day (listings, searches, conflict checks).
CREATE INDEX items_user_date_idx ON items (user_id, date, starts_at) WHERE deleted_at IS NULL;
-- Title search within a user's items.
CREATE INDEX items_user_updated_idx ON items (user_id, updated_at DESC) WHERE deleted_at IS NULL;

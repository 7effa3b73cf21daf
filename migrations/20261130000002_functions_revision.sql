-- Which revision of the SQL functions (migrations/functions/, shared/src/schema.rs) the database
-- has: a process applies its build's functions only when they are newer, so an older build that
-- starts during an upgrade does not put its functions back.
CREATE TABLE quickact_functions (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    revision    bigint NOT NULL,
    fingerprint text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

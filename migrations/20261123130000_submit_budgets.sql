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

-- Budgets (issue 32, point 6): many users share one deployment's model bill, so each user may spend at
-- most a limit per UTC day and per UTC month, their own or the deployment's default
-- (QUICKACT_BUDGET_PER_DAY / QUICKACT_BUDGET_PER_MONTH). A run checks the limits before each paid
-- model turn, which must read the user's spend in one cheap statement.
--
-- A user's own limits, in nano-units of the deployment's currency (as `cost_nanos`); NULL follows the
-- deployment's default. An admin sets them (PUT /api/admin/users/{id}/budget); a change notifies
-- the credential channel like any change to a user.
ALTER TABLE users
    ADD COLUMN budget_per_day_nanos bigint CHECK (budget_per_day_nanos >= 0),
    ADD COLUMN budget_per_month_nanos bigint CHECK (budget_per_month_nanos >= 0);

-- What each user spent per UTC day, and how many of their tasks a budget refused that day. A row is
-- added to by the very statement that adds a paid turn's cost to its task (the ledger's writes and
-- the endings, shared/src/store/), in the same transaction, so the spend never disagrees with the
-- tasks' costs; a turn that costs nothing (the local provider) writes nothing here. The day is the
-- day (UTC) of the transaction that recorded the cost. A month's spend is the sum of its days: at
-- most 31 rows read through the primary key.
--
-- Why not a sum over the tasks: a user's month may hold thousands of tasks, and no index may carry
-- `cost_nanos` (usage updates of a task row stay heap-only, see 20261125000002). Why days and not
-- only a month row: the daily limit needs the day, and a day row is written by that day's turns only.
CREATE TABLE user_spend (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day        date NOT NULL,
    cost_nanos bigint NOT NULL DEFAULT 0,
    -- Tasks that ended with a `budget_exhausted` verdict that day.
    refusals   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
) WITH (fillfactor = 50);
-- A day's row is updated at each paid turn of the user's; no index reads the counters, so those
-- updates stay heap-only while the page has room beside the row (hence the half-full pages).
-- The day's refusals across users (the API's /metrics gauge, the admin page's totals) and the
-- sweeper's removal of old days.
CREATE INDEX user_spend_day_idx ON user_spend (day);

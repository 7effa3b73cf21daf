-- An item with a part of the day (下午, evening) occupies that part, not the whole day: a search
-- for "明天上午" must not find tomorrow afternoon's run. The generated range columns now take the
-- segment's bounds, the same as the planner's `Segment::bounds` (all_day 00:00-23:59,
-- early_morning 00:00-05:59, morning 06:00-08:59, forenoon 09:00-11:59, noon 12:00-13:59,
-- afternoon 14:00-17:59, evening 18:00-23:59). Generated columns cannot change their expression
-- in place on Postgres 15, so they are dropped and added again (with the index that uses them).
DROP INDEX items_user_date_idx;
ALTER TABLE items DROP COLUMN starts_at, DROP COLUMN ends_at;
ALTER TABLE items
    ADD COLUMN starts_at timestamp GENERATED ALWAYS AS (
        date + coalesce(start_time, CASE segment
            WHEN 'morning' THEN time '06:00'
            WHEN 'forenoon' THEN time '09:00'
            WHEN 'noon' THEN time '12:00'
            WHEN 'afternoon' THEN time '14:00'
            WHEN 'evening' THEN time '18:00'
            ELSE time '00:00'
        END)) STORED,
    ADD COLUMN ends_at timestamp GENERATED ALWAYS AS (
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
        END) STORED;
CREATE INDEX items_user_date_idx ON items (user_id, date, starts_at) WHERE deleted_at IS NULL;

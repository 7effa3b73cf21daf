-- Item times are wall-clock times; without the zone they were written in they are ambiguous once a
-- user changes zone or a task is submitted with another `tz`. Existing items take their owner's
-- zone, the zone the API and the agent used for them until now.
ALTER TABLE items ADD COLUMN time_zone text;
UPDATE items SET time_zone = users.time_zone FROM users WHERE users.id = items.user_id;
ALTER TABLE items ALTER COLUMN time_zone SET NOT NULL;

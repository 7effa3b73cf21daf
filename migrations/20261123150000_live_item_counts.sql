-- The item quota (QUICKACT_MAX_ITEMS_PER_USER) counted each user's live items on every creation:
-- a count(*) over all of the user's items, slower with each item they keep. The count is kept here
-- instead, by a trigger on every way an item becomes live or stops being live (created, deleted,
-- restored by an undo, removed), so the check reads one row. Writers of one user's items already
-- serialise on that user's item lock, so the counter adds no contention.
-- See shared/src/planner/store.rs (count_live_items).
CREATE TABLE live_item_counts (
    user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    live    bigint NOT NULL DEFAULT 0 CHECK (live >= 0)
);

INSERT INTO live_item_counts (user_id, live)
SELECT user_id, count(*) FROM items WHERE deleted_at IS NULL GROUP BY user_id;

CREATE FUNCTION quickact_count_live_items() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN
        -- Gone already when the user's removal cascades here: nothing left to count.
        UPDATE live_item_counts SET live = live - 1 WHERE user_id = OLD.user_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN
        INSERT INTO live_item_counts AS c (user_id, live) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET live = c.live + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER items_count_live_on_insert AFTER INSERT ON items
    FOR EACH ROW WHEN (NEW.deleted_at IS NULL) EXECUTE FUNCTION quickact_count_live_items();
CREATE TRIGGER items_count_live_on_update AFTER UPDATE OF deleted_at, user_id ON items
    FOR EACH ROW WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL) OR OLD.user_id <> NEW.user_id)
    EXECUTE FUNCTION quickact_count_live_items();
CREATE TRIGGER items_count_live_on_delete AFTER DELETE ON items
    FOR EACH ROW WHEN (OLD.deleted_at IS NULL) EXECUTE FUNCTION quickact_count_live_items();

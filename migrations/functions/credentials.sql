-- A changed or removed user or API key is announced, so every API process drops what it cached of
-- that user's credentials at once (shared/src/notify.rs).
CREATE OR REPLACE FUNCTION quickact_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_credential_events', to_jsonb(OLD) ->> TG_ARGV[0]);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER api_keys_credential_events AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION quickact_notify_credentials('user_id');
CREATE OR REPLACE TRIGGER users_credential_events AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION quickact_notify_credentials('id');

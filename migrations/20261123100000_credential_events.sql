-- Every change to a key or a user is announced on quickact_credential_events (payload: the user's
-- id), whoever makes it, so each API process drops what it cached of that user's keys. See
-- shared/src/credentials.rs.
CREATE FUNCTION quickact_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quickact_credential_events', to_jsonb(OLD) ->> TG_ARGV[0]);
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_credential_events AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION quickact_notify_credentials('user_id');

CREATE TRIGGER users_credential_events AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION quickact_notify_credentials('id');

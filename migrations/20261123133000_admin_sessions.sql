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

-- Users' tokens for MCP servers were stored in plain text: anyone who could read the database (or
-- a backup of it) could act as every user on those servers. They are now encrypted at rest with
-- the deployment's key (QUICKACT_SECRETS_KEY, docs/mcp-tools.md "Tokens at rest").
--
-- `sealed_token`: the token encrypted, as a versioned envelope (key id, nonce, ciphertext) bound
-- to the row's user and server (shared/src/secrets.rs). A token this build sets is stored there,
-- with `token` NULL.
--
-- `token` stays, now nullable: the previous build reads and writes it while an upgrade replaces
-- its processes, and the API encrypts the plain tokens it finds at startup (clearing them). A row
-- has one of the two at least; where it has both, the previous build replaced an encrypted token,
-- so the plain one is the newer.
ALTER TABLE user_mcp_tokens
    ADD COLUMN sealed_token bytea,
    ALTER COLUMN token DROP NOT NULL,
    ADD CONSTRAINT user_mcp_tokens_token_or_sealed CHECK (token IS NOT NULL OR sealed_token IS NOT NULL);

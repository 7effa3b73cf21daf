-- A user's own token for an MCP server the deployment registered (QUICKACT_MCP_SERVERS, see
-- docs/mcp-tools.md). The worker passes it through, verbatim, as the server's configured header
-- when that user's task calls the server's tools; a server with a header offers its tools only to
-- users who set one. Kept as given (not hashed): it must be sent on, like a model's API key.
CREATE TABLE user_mcp_tokens (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    server text NOT NULL,
    token text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, server)
);

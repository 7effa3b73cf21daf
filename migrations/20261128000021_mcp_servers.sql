-- MCP servers an admin registered through the API (`/api/admin/mcp-servers`, see
-- docs/mcp-tools.md), beside those of the deployment's configuration (QUICKACT_MCP_SERVERS): for
-- every user (`user_id` NULL) or for one. A name is unique across both: it prefixes the server's
-- tools as the model sees them.
CREATE TABLE mcp_servers (
    name text PRIMARY KEY,
    url text NOT NULL,
    timeout_secs integer NOT NULL CHECK (timeout_secs BETWEEN 1 AND 600),
    header text,
    tools text[],
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);

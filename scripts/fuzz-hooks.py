"""Schemathesis hooks for scripts/fuzz-api.sh: realistic values where a generated one could never
pass, so that the stateful phase reaches what lies behind the create (the OpenAPI links from
`POST /api/webhooks` and `POST /api/admin/mcp-servers` to their per-id routes).

- A webhook endpoint's URL must be one the API can deliver to: a generated host never resolves
  offline. The fuzz allows private receivers, and points endpoints at a closed local port (the
  deliveries fail and are retried, as for any receiver that is down).
- An MCP server's URL likewise; it serves every user (a generated `user_id` names nobody) and
  takes a token, so the token routes linked from it have a server to set one for.
Only a body that is an object is changed, so invalid bodies stay invalid.
"""

import schemathesis

RECEIVER = "http://127.0.0.1:9/quickact-fuzz"

REALISTIC = {
    ("POST", "/api/webhooks"): {"url": RECEIVER},
    ("POST", "/api/admin/mcp-servers"): {"url": RECEIVER, "user_id": None, "header": "Authorization"},
}


@schemathesis.hook
def map_body(context, body):
    operation = context.operation
    if operation is None or not isinstance(body, dict):
        return body
    values = REALISTIC.get((operation.method.upper(), operation.path))
    return {**body, **values} if values else body

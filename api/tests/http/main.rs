//! The API's HTTP contract, tested over real HTTP on port 0 against real Postgres (with in-process
//! workers and a fake model where a test needs a task to finish). One test binary (modules below)
//! keeps link time down.
//!
//! # Layout
//! - `answers`: the engine's own answers (a cancel, a time limit) in the sentence's language.
//! - `api_contract`: authentication, validation, the error envelope, idempotency, history, admin,
//!   health and shutdown of `/api/quick-action` and `/api/admin`.
//! - `items_api`: `/api/items` and `/api/parse-time`.
//! - `preview`: `/api/quick-action/preview`, the local reader's reading of a sentence, nothing run.
//! - `budgets_api`: `/api/admin/users/{id}/budget` and `/api/budget`.
//! - `keys`: `/api/keys` and key revocation by admins, across API processes.
//! - `openapi`: the OpenAPI description, served and committed (`api/openapi.json`), without drift.
//! - `undo`: `POST /api/quick-action/{id}/undo`.
//! - `replies`: `POST /api/quick-action/{id}/reply`: who may reply to what, options, idempotency.
//! - `events`: the live step stream `GET /api/quick-action/{id}/events` (SSE), and resuming it.
//! - `stats_api`: `/api/admin/stats`.
//! - `admin_page`: the admin page's login, session cookie, CSRF and origin checks, logout.
//! - `http_limits`: request time limits, shedding past the in-flight bound, long-polls per user,
//!   CORS.
//! - `long_polls`: task reads batched, a verdict read with its journal, a long-poll that knows its
//!   task unfinished without a read.
//! - `mcp`: `/mcp`, the MCP server, through a real MCP client.
//!
//! What happens after a task is queued (the worker, the agent, the planner's rules, failures) is
//! tested in `worker/tests/e2e`.

mod admin_page;
mod answers;
mod api_contract;
mod budgets_api;
mod http_limits;
mod long_polls;
mod items_api;
mod keys;
mod mcp;
mod openapi;
mod preview;
mod replies;
mod events;
mod undo;
mod stats_api;
mod webhooks_api;

//! Test support for quickact's integration tests: everything real, nothing mocked inside our code.
//!
//! - [`postgres`]: a fresh database per test on the server `DATABASE_URL` names (created from a
//!   migrated template), and whole throwaway clusters for tests that restart the server.
//! - [`fake_model`]: a real HTTP server speaking the OpenAI chat-completions wire format (tool
//!   calls, usage, error statuses, rate limits), scripted per test.
//! - [`app`]: the API on port 0 and workers in process, wired to a test database and a fake model,
//!   with a small HTTP client.
//! - [`wait`]: waiting for background work by a condition and a deadline, never a fixed sleep.
//! - [`held_reads`]: catching a request at the moment it reads a task (e.g. a long-poll before it
//!   waits), where the code offers no event to wait on.
//! - [`mcp_server`]: an MCP server built with `rmcp` whose tools count their effects by
//!   idempotency key, and hang or fail on cue (the worker's external tools).
//! - [`prometheus`]: reading a `/metrics` scrape to assert on its values.
//! - [`held_writes`]: lining concurrent writers of a table up, to test races deterministically.
//! - [`otlp_receiver`]: an OTLP/HTTP trace receiver that records the spans it is sent.
//! - [`processes`]: the API and worker binaries as real processes (to kill, pause and measure).
//! - [`webhook_receiver`]: a webhook receiver on loopback that verifies Standard Webhooks
//!   signatures and answers as told (2xx, an error, held open).
//! - [`corpus`]: the reader corpus (sentence cases as data): parsed, run on a [`TestApp`] and
//!   classified, for the e2e tests and the `quickact-corpus` scorer.
//! - [`chaos`]: the chaos suite: the service under database crashes, purged sessions, paused
//!   workers, a pinned snapshot, exhausted connections, skewed clocks and model faults.

pub mod app;
pub mod corpus;
pub mod fake_model;
pub mod held_reads;
pub mod held_writes;
pub mod mcp_server;
pub mod otlp_receiver;
pub mod postgres;
pub mod processes;
pub mod chaos;
pub mod prometheus;
pub mod wait;
pub mod webhook_receiver;

/// One Server-Sent Event as [`sse_events`] parses it.
pub use eventsource_stream::Event as SseEvent;
pub use app::{LoggedProcess, TestApp, TestAppOptions, assert_step_refused, sse_events, tool_step, tool_steps};
pub use fake_model::{FakeModel, GateHeldOpen, Received, Reply, last_tool_result};
pub use held_reads::HeldTaskReads;
pub use held_writes::HeldWrites;
pub use mcp_server::FakeMcpServer;
pub use otlp_receiver::{OtlpReceiver, ReceivedSpan};
pub use wait::{wait_for, wait_until};
pub use webhook_receiver::WebhookReceiver;

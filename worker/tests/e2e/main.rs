//! End-to-end tests of the worker: real HTTP on port 0, real Postgres, real workers, and a fake
//! model server that speaks the chat-completions wire format. One test binary (modules below) keeps
//! link time down.
//!
//! # Layout
//! - `answers`: the answers people read: in the sentence's language, saying what happened, and
//!   the kind of question a clarification asks.
//! - `backbone`: API -> queue -> worker -> agent -> verdict -> long-poll, and its bookkeeping.
//! - `budgets`: cost budgets: a user past theirs gets `budget_exhausted` before a paid turn, an
//!   admin raising it lets the next task run, the deployment's default in a worker process.
//! - `endings`: the endings of runs with nothing open, written in batches.
//! - `fast_path`: with a model configured, the local fast path and its hand-over to the model.
//! - `groups`: local runs committed many in one transaction: each once, and a failed group loses
//!   nothing and does nothing twice.
//! - `integrity`: concurrent writers (no lost update, no double booking), bounds on what a sentence
//!   or a model can ask for, parts of day and recurrences in searches and conflicts.
//! - `mcp_tools`: external tools over MCP: journaled, a user's token passed through, exactly once
//!   across a worker crash, bounded by the deadline, failures named, results kept as data.
//! - `mcp_tokens`: users' tokens for MCP servers encrypted at rest: sent as set, bound to their
//!   row, refused without a key, plain ones of an older build used and encrypted, a key rotated.
//! - `model_faults`: model endpoint faults that say how to ride them out (a rate limit's
//!   `Retry-After`).
//! - `multi_action`: several actions in one sentence, each with its own outcome.
//! - `observability`: a worker process's JSON logs and Prometheus metrics.
//! - `provider_limits`: the fleet's limits of a model and the pauses it asks for, across worker
//!   processes; the fallback chain.
//! - `planner`: the planner's tools and rules through a scripted model.
//! - `reader_corpus`: the rule-based provider on the reader corpus (`shared/reader/corpus.tsv`),
//!   one test per family of sentences.
//! - `replies`: replies to a question (`POST /api/quick-action/{id}/reply`): an option, an ordinal
//!   or a pointer acts on that item; a passed time or a conflict answered; a model told the question.
//! - `robustness`: concurrent workers, crashes, panics, a database restart, steps a crash took
//!   back, graceful shutdown.
//! - `schema`: migrations and SQL functions: a database from before the squash taken as squashed
//!   (or refused), functions applied by a newer build only.
//! - `traces`: one trace per task over OTLP, from the caller's `traceparent` to the run's turns
//!   and calls (API and worker processes, a real OTLP receiver).
//! - `turns`: many users on one queue: turns between users, the per-user cap on running tasks,
//!   priorities.
//! - `webhooks`: webhooks when a task ends: signed, delivered once, retried, a 410, filters, a
//!   worker killed mid-delivery.
//!
//! The API's own HTTP contract (routes, validation, errors) is tested in `api/tests/http`.

mod answers;
mod backbone;
mod budgets;
mod endings;
mod fast_path;
mod groups;
mod integrity;
mod mcp_tokens;
mod mcp_tools;
mod model_faults;
mod multi_action;
mod observability;
mod planner;
mod provider_limits;
mod reader_corpus;
mod replies;
mod robustness;
mod schema;
mod traces;
mod turns;
mod webhooks;

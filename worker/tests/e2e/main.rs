//! End-to-end tests: real HTTP on port 0, real Postgres, real workers, and a fake model server that
//! speaks the chat-completions wire format. One test binary (modules below) keeps link time down.

mod api_contract;
mod backbone;
mod http_limits;
mod integrity;
mod items_api;
mod keys;
mod local_provider;
mod planner;
mod robustness;

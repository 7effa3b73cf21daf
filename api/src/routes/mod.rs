//! The routes of the HTTP contract (docs/api.md), one module per resource. Where the operation is
//! an action ([`crate::actions`]), the handler only extracts the request (path, query, body,
//! headers), calls the action and puts its answer on the wire (status, headers, JSON).

pub mod admin;
pub mod budgets;
pub mod health;
pub mod items;
pub mod keys;
pub mod mcp_servers;
pub mod parse_time;
pub mod preview;
pub mod quick_action;
pub mod reply;
pub mod stats;
pub mod webhooks;

//! The tool-calling agent: prompt, journal replay and the loop of model turns and tool calls.
//!
//! - [`prompt`]: the system prompt and the user message.
//! - [`journal`]: rebuilding a run (conversation, tool observations) from its recorded steps.
//! - [`run`]: the loop itself.
//!
//! The agent knows nothing of the queue: it takes a task, a provider and a tool registry.

pub mod journal;
pub mod prompt;
pub mod run;

pub use run::{Endings, Grouped, MAX_MODEL_TURNS, RunContext, RunEnd, RunError, run_agent, run_agent_grouped};

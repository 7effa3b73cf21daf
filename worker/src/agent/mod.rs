//! The tool-calling agent: prompt, journal replay and the loop of model turns and tool calls.
//!
//! - [`context`]: what a run is given (its plan, what the process shares, its clock) and its context.
//! - [`run`]: the loop itself, top to bottom.
//! - [`turn`]: a model turn: the request, retries, how it is journaled.
//! - [`tool_call`]: a tool call: run or refused, journaled, `finish` ending the run.
//! - [`external_call`]: an external tool's call: journaled before it is made, made exactly once.
//! - [`ledger`]: the one writer of a run's journal, usage and ending.
//! - [`budget`]: the cost budget a run asks before each paid model turn.
//! - [`prompt`]: the system prompt and the user message.
//! - [`question`]: the question a reply answers, read from the asked task.
//! - [`journal`]: rebuilding a run (conversation, tool observations) from its recorded steps.
//! - [`spans`]: the run's spans in its task's trace (when traces are exported).
//!
//! The agent knows nothing of the queue: it takes a task, a provider and a tool registry.

mod budget;
pub mod context;
mod external_call;
pub mod journal;
pub mod ledger;
mod outcome;
pub mod prompt;
pub mod question;
pub mod run;
mod tool_call;
mod turn;
pub mod spans;
mod state;

pub use context::{Endings, RunClock, RunContext, RunPlan, RunShared};
pub use run::{Grouped, MAX_MODEL_TURNS, RunEnd, RunError, run_agent, run_agent_grouped};

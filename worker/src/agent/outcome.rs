//! How a run ends, and why it could not go on: the types the loop ([`super::run`]), its tool
//! calls and turns, and the ledger that writes its ending all speak. A leaf of the agent.

use std::time::Duration;

use quickact_shared::{
    domain::task::TaskRecord,
    store::{ending::FinalState, tasks::HolderCheck},
};
use tokio::time::Instant;

/// How a run ended.
#[derive(Debug)]
pub enum RunEnd {
    /// A verdict was reached and written with the task's final state: the task as it ended.
    Finished(Box<TaskRecord>),
    /// A grouped run reached its verdict: its group writes it, with its other runs' verdicts, in
    /// one statement before it commits (see `crate::groups`). Only a grouped run ends this way,
    /// and its group turns it into `Finished`.
    Decided(Box<FinalState>),
    /// The task stopped being ours (cancelled, finished or taken over by another worker).
    Stopped(HolderCheck),
    /// `abort` fired.
    Aborted,
    /// The run's model cannot be asked before `wait` is over (see `super::turn::Asked::Wait`),
    /// and the task is to be handed back until then, as far as its deadline.
    WaitForModel { model: String, wait: Duration },
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A grouped run reached a checkpoint (see [`super::run::run_agent_grouped`]).
    #[error("the run must commit before it goes on")]
    Checkpoint,
    /// A grouped run met what a run alone handles in its own way (a tool that failed, see
    /// `super::tool_call::ToolOn::Group`): its group rolls it back, and it runs alone.
    #[error("the run must go on alone")]
    RunAlone,
    /// The group a run was part of failed to commit (see [`crate::groups`]).
    #[error("{0}")]
    Group(String),
    /// The database went away since the run last wrote, and took back some of what the run wrote
    /// without waiting for the disk (see [`super::ledger`]): the run goes on from the journal.
    #[error("the database lost some of the run's latest steps")]
    JournalLost,
}

/// Milliseconds since `started`, as the journal stores them.
pub(super) fn elapsed_ms(started: Instant) -> i32 {
    started.elapsed().as_millis().min(i32::MAX as u128) as i32
}

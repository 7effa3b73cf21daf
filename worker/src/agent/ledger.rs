//! The ledger of a run: the one writer of its journal, its usage and its ending.
//!
//! Every write checks, in the statement or transaction that makes it, that the run's lease holder
//! still holds the task (see `quickact_shared::queue::fetch_tasks`): a cancel or a takeover that
//! committed first wins, and nothing is written after it. Where a write goes depends on the
//! ledger's [`Mode`], in one `match` per operation:
//! - [`Mode::Alone`]: nothing is open. A write is one statement with the steps held so far; an
//!   ending goes to the process's batch of endings (`super::context::Endings`).
//! - [`Mode::Open`]: the run's own transaction holds the task's row lock. Steps go in with the
//!   changes they record and commit together (exactly-once tool effects); a checkpoint commits.
//! - [`Mode::Group`]: the transaction of a group of local runs (`crate::groups`). Nothing is
//!   committed here: a checkpoint stops the run, an ending is handed to the group, which writes
//!   every run's in one statement, and the group commits.
//!
//! A step is first *held* (in memory, written with the next write), *kept* (in the open
//! transaction) or *written now*: the caller says which ([`StepWrite`]), [`Ledger::record`] does it. What was held or kept and not committed is lost with a crash,
//! together with its effects, and the resumed run asks again.
//!
//! Durability: only the task's verdict waits for the disk (an ending, or a group's commit, which
//! carries verdicts). A checkpoint and a write with nothing open commit without waiting
//! (`synchronous_commit = off`): a crash may take back their last fraction of a second, tool
//! effects with their steps, never one without the other. A run must then not go on from what it
//! remembers: before it writes again with nothing open, it checks whether the process saw the
//! database go away since (every connection drops in a restart, see
//! `quickact_shared::db::outages_seen`), and if so, whether the journal still holds every step it
//! wrote; if not, it goes on from the journal ([`RunError::JournalLost`]). A step whose effect
//! leaves the database (a model's turn is paid, nothing more) is redone at worst; a tool with an
//! effect outside the database flushes its step first (an external tool's call, see
//! `super::external_call`, whose row is then completed in place with [`Ledger::complete`]).

use quickact_shared::{
    db::outages_seen,
    domain::task::TaskRecord,
    store::{
        ending::{Ending, FinalState, end_one},
        steps::{Step, insert_steps, list_steps},
        tasks::{HolderCheck, Usage, add_usage, complete_step_if_holder, lock_for_holder, record_if_holder},
    },
};
use sqlx::{PgConnection, PgExecutor, Postgres, Transaction};

use super::{
    context::RunContext,
    outcome::{RunEnd, RunError},
};

/// A transaction a run writes in.
pub type RunTransaction = Transaction<'static, Postgres>;

/// Where the ledger's writes go (see the module docs).
pub enum Mode {
    Alone,
    Open(RunTransaction),
    Group(RunTransaction),
    /// The group's transaction went with a failure; nothing of the group will commit.
    GroupLost,
}

/// How a step is written: the one choice a caller makes (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepWrite {
    /// In memory, written with the next write (the next step's, or the ending's); opens nothing.
    Hold,
    /// In the run's transaction, opened if need be: it commits with what the run does next there.
    Keep,
    /// Now, with every step held: with nothing open one statement; otherwise the open transaction
    /// takes it and commits.
    Now,
}

/// The outcome of writing something on behalf of the task.
pub enum Recorded<T> {
    Done(T),
    NotOurs(HolderCheck),
}

pub struct Ledger<'a> {
    cx: &'a RunContext<'a>,
    /// The whole journal: what was committed before this run began and every step since.
    journal: Vec<Step>,
    /// How many steps of `journal` are written (committed, or in the open transaction). The rest
    /// are held, and written together, in one statement, with the next write.
    written: usize,
    /// Usage of turns not yet added to the task's totals: added with the next write of the steps,
    /// or by the statement that ends the task.
    usage: Option<Usage>,
    /// Whether the task's `model_used` is recorded in this run (written, or in `usage`): a later
    /// turn that costs nothing has nothing to add.
    model_recorded: bool,
    mode: Mode,
    /// The database outages this process had seen when the run last knew its journal was whole.
    outages: u64,
}

impl<'a> Ledger<'a> {
    /// The ledger of a run going on from `journal` (what is committed), alone or in `group`'s
    /// transaction.
    pub fn new(cx: &'a RunContext<'a>, journal: &[Step], group: Option<RunTransaction>) -> Self {
        Ledger {
            cx,
            journal: journal.to_vec(),
            written: journal.len(),
            usage: None,
            model_recorded: false,
            mode: group.map_or(Mode::Alone, Mode::Group),
            outages: outages_seen(),
        }
    }

    /// The position of the next step.
    pub fn next_seq(&self) -> i32 {
        self.journal.last().map_or(0, |step| step.seq + 1)
    }

    /// The cost of the run's turns that is not written yet (held for the next write): the run's
    /// spend that the database does not know of.
    pub fn unrecorded_cost(&self) -> i64 {
        self.usage.as_ref().map_or(0, |usage| usage.cost_nanos)
    }

    /// Whether a transaction is open (the run's or its group's).
    pub fn is_open(&self) -> bool {
        !matches!(self.mode, Mode::Alone)
    }

    /// Whether the run is part of a group.
    pub fn in_group(&self) -> bool {
        matches!(self.mode, Mode::Group(_) | Mode::GroupLost)
    }

    /// The group's transaction, given back to the group (`None` when a failure lost it).
    pub fn into_group_transaction(self) -> Option<RunTransaction> {
        match self.mode {
            Mode::Group(tx) => Some(tx),
            _ => None,
        }
    }

    /// The open transaction's connection, for a tool's change to commit with its step.
    pub fn connection(&mut self) -> Option<&mut PgConnection> {
        match &mut self.mode {
            Mode::Open(tx) | Mode::Group(tx) => Some(&mut **tx),
            Mode::Alone | Mode::GroupLost => None,
        }
    }

    /// Writes `step` (and a turn's usage) as `how` says.
    pub async fn record(&mut self, step: Step, usage: Option<Usage>, how: StepWrite) -> Result<Recorded<()>, RunError> {
        match how {
            StepWrite::Hold => {
                self.hold(step, usage);
                Ok(Recorded::Done(()))
            }
            StepWrite::Keep => self.keep(step, usage).await,
            StepWrite::Now => self.write_now(step, usage).await,
        }
    }

    /// Holds `step` (and a turn's usage) to be written with the next write; opens nothing.
    pub fn hold(&mut self, step: Step, usage: Option<Usage>) {
        self.count_usage(usage);
        self.journal.push(step);
    }

    /// Opens the run's transaction if none is open, once it has checked the task is still ours
    /// (its row stays locked until the transaction ends).
    pub async fn open(&mut self) -> Result<Recorded<()>, RunError> {
        match self.mode {
            Mode::Open(_) | Mode::Group(_) => Ok(Recorded::Done(())),
            Mode::GroupLost => Err(lost_group_transaction().into()),
            Mode::Alone => {
                self.check_journal().await?;
                let mut tx = self.cx.pool.begin().await?;
                let check = lock_for_holder(&mut *tx, self.cx.task.id, self.cx.holder).await?;
                if check != HolderCheck::Owned {
                    return Ok(Recorded::NotOurs(check));
                }
                self.mode = Mode::Open(tx);
                Ok(Recorded::Done(()))
            }
        }
    }

    /// Keeps `step` (and a turn's usage) in the open transaction, opening one if need be: it
    /// commits with whatever the run does next in it.
    pub async fn keep(&mut self, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        if let Recorded::NotOurs(check) = self.open().await? {
            return Ok(Recorded::NotOurs(check));
        }
        self.hold(step, usage);
        Ok(Recorded::Done(()))
    }

    /// Writes `step` (and a turn's usage) now, with every step held: with nothing open, one
    /// statement (see [`record_if_holder`]); otherwise the open transaction takes it and commits.
    pub async fn write_now(&mut self, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        if self.is_open() {
            let kept = self.keep(step, usage).await?;
            if let Recorded::Done(()) = kept {
                self.checkpoint().await?;
            }
            return Ok(kept);
        }
        self.check_journal().await?;
        let before = (self.usage.clone(), self.model_recorded);
        self.count_usage(usage);
        let mut unwritten = self.journal[self.written..].to_vec();
        unwritten.push(step.clone());
        let check = record_if_holder(self.cx.lazy_journal, self.cx.task.id, self.cx.holder, &unwritten, self.usage.as_ref()).await;
        match check {
            Ok(HolderCheck::Owned) => {
                self.cx.step_events.stepped(self.cx.task.id);
                self.usage = None;
                self.journal.push(step);
                self.written = self.journal.len();
                Ok(Recorded::Done(()))
            }
            // Nothing was written: the ledger is as it was.
            outcome => {
                (self.usage, self.model_recorded) = before;
                Ok(Recorded::NotOurs(outcome?))
            }
        }
    }

    /// Records the outcome of an external call in its in-flight row (`step.seq`), if the task is
    /// still ours, in one statement; whatever the run holds or keeps is committed first, so the
    /// journal's rows stay in order of position.
    pub async fn complete(&mut self, step: Step) -> Result<Recorded<()>, RunError> {
        self.checkpoint().await?;
        if self.written < self.journal.len() {
            // Steps held since the row (none are expected): written first, in one statement.
            let held = self.journal.pop().expect("a held step");
            if let Recorded::NotOurs(check) = self.write_now(held, None).await? {
                return Ok(Recorded::NotOurs(check));
            }
        }
        self.check_journal().await?;
        let check = complete_step_if_holder(self.cx.lazy_journal, self.cx.holder, &step).await?;
        if check != HolderCheck::Owned {
            return Ok(Recorded::NotOurs(check));
        }
        self.cx.step_events.stepped(self.cx.task.id);
        if let Some(row) = self.journal.iter_mut().rev().find(|row| row.seq == step.seq) {
            *row = step;
        }
        Ok(Recorded::Done(()))
    }

    /// Commits what the run wrote so far (nothing to do with nothing open). A grouped run stops
    /// here instead ([`RunError::Checkpoint`]): its group commits.
    pub async fn checkpoint(&mut self) -> Result<(), RunError> {
        match std::mem::replace(&mut self.mode, Mode::Alone) {
            Mode::Alone => Ok(()),
            Mode::Open(mut tx) => {
                self.write_held(&mut tx).await?;
                sqlx::query("SET LOCAL synchronous_commit = off").execute(&mut *tx).await?;
                tx.commit().await?;
                self.cx.step_events.stepped(self.cx.task.id);
                Ok(())
            }
            Mode::Group(mut tx) => {
                self.mode = Mode::GroupLost;
                self.write_held(&mut tx).await?;
                self.mode = Mode::Group(tx);
                Err(RunError::Checkpoint)
            }
            Mode::GroupLost => {
                self.mode = Mode::GroupLost;
                Err(lost_group_transaction().into())
            }
        }
    }

    /// Ends the task with `ending` and the steps held, if it is still ours, else says whose it is
    /// now: with nothing open, in one statement shared with other runs' endings when the process
    /// batches them; in the open transaction (which holds the task's row lock), committing it; in
    /// a group, handing it to the group ([`RunEnd::Decided`]).
    pub async fn end(&mut self, ending: Ending) -> Result<RunEnd, RunError> {
        let language = quickact_shared::phrases::Language::of(&self.cx.task.input_text);
        let end = FinalState::new(self.cx.task.id, ending, language, &self.journal, &self.journal[self.written..], self.usage.as_ref());
        match std::mem::replace(&mut self.mode, Mode::Alone) {
            Mode::Alone => {
                self.check_journal().await?;
                let journal = self.cx.journal;
                let alone = async |(holder, end): (String, FinalState)| end_one(journal, Some(&holder), &end).await;
                let ended = match self.cx.endings {
                    Some(endings) => endings.call_or_alone((self.cx.holder.to_owned(), end), alone).await?,
                    None => alone((self.cx.holder.to_owned(), end)).await?,
                };
                Ok(self.ended(ended, journal).await?)
            }
            Mode::Open(mut tx) => {
                let ended = end_one(&mut *tx, Some(self.cx.holder), &end).await?;
                let run_end = self.ended(ended, &mut *tx).await?;
                self.write_held(&mut tx).await?;
                tx.commit().await?;
                Ok(run_end)
            }
            // The task's row is the group's, locked since the run began: its group writes the
            // verdict, with the others', before it commits.
            Mode::Group(tx) => {
                self.mode = Mode::Group(tx);
                self.usage = None;
                self.written = self.journal.len();
                Ok(RunEnd::Decided(Box::new(end)))
            }
            Mode::GroupLost => {
                self.mode = Mode::GroupLost;
                Err(lost_group_transaction().into())
            }
        }
    }

    /// Takes in what ending the task gave: the task as it ended (its steps and usage are written),
    /// or, when it was no longer ours, whose it is now (asked on `db`).
    async fn ended(&mut self, ended: Option<TaskRecord>, db: impl PgExecutor<'_>) -> Result<RunEnd, sqlx::Error> {
        Ok(match ended {
            Some(task) => {
                self.usage = None;
                self.written = self.journal.len();
                RunEnd::Finished(Box::new(task))
            }
            None => RunEnd::Stopped(lock_for_holder(db, self.cx.task.id, self.cx.holder).await?),
        })
    }

    /// Checks, when the process saw the database go away since the run last knew its journal was
    /// whole, that the journal still holds every step the run wrote (see the module docs).
    async fn check_journal(&mut self) -> Result<(), RunError> {
        let outages = outages_seen();
        if outages == self.outages {
            return Ok(());
        }
        let durable = list_steps(self.cx.pool, self.cx.task.id).await?;
        let written = &self.journal[..self.written];
        if durable.len() != written.len() || durable.last().map(|s| s.seq) != written.last().map(|s| s.seq) {
            tracing::warn!(task_id = %self.cx.task.id, kept = durable.len(), written = written.len(), "the database lost some of the run's steps");
            return Err(RunError::JournalLost);
        }
        self.outages = outages;
        Ok(())
    }

    /// Writes the steps held since the last write, in one statement, and the usage of their turns.
    async fn write_held(&mut self, tx: &mut PgConnection) -> Result<(), sqlx::Error> {
        if let Some(usage) = self.usage.take() {
            add_usage(&mut *tx, self.cx.task.id, &usage).await?;
        }
        insert_steps(&mut *tx, &self.journal[self.written..]).await?;
        self.written = self.journal.len();
        Ok(())
    }

    /// Adds a turn's usage to what the next write adds to the task's totals (a turn that cost
    /// nothing adds nothing once the task's model is recorded).
    fn count_usage(&mut self, usage: Option<Usage>) {
        if let Some(u) = usage
            && !(self.model_recorded && u.is_nothing())
        {
            self.usage = Some(match self.usage.take() {
                Some(earlier) => earlier.then(u),
                None => u,
            });
            self.model_recorded = true;
        }
    }
}

/// A grouped run found its group's transaction gone: it went with an earlier failure, which
/// already ended the run; never expected here.
fn lost_group_transaction() -> sqlx::Error {
    sqlx::Error::Protocol("a grouped run lost its group's transaction".into())
}

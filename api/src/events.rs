//! A task's live step stream over Server-Sent Events (`GET /api/quick-action/{id}/events`).
//!
//! Events, in the order things commit:
//! - `status`: the task's state (`{"status", "attempts", "started_at"}`), sent first (a finished
//!   task's too) and again whenever it changes while unfinished; it carries no event id.
//! - `step`: one journal step (a model turn with its tokens, cost and latency; a tool call with its
//!   arguments and result), the same JSON as a step of `GET /api/quick-action/{id}`. Its event id is
//!   the step's `seq`, so a client that reconnects with `Last-Event-ID` gets exactly the steps after
//!   it: none lost, none twice.
//! - `verdict`: the finished task (the JSON of `GET /api/quick-action/{id}` without its steps); the
//!   stream then ends.
//!
//! Only what a crash cannot take back is sent: steps are made durable before they go out (see
//! `read`), and a verdict is durable when it is written.
//!
//! Like a long-poll, the stream holds no database connection while it waits: it wakes on the
//! process's LISTEN fan-out (each step and state change notifies), re-reads after the listener
//! reconnects, and ends when the server shuts down. It counts against the caller's long-poll bound.

use std::{collections::VecDeque, convert::Infallible, time::Duration};

use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use quickact_shared::{
    db::is_unavailable,
    domain::task::TaskStatus,
    notify::TaskSubscription,
    store::{steps, tasks},
};
use serde_json::json;
use uuid::Uuid;

use crate::{
    limits::LongPollSlot,
    state::AppState,
    views::{StepView, TaskView},
};

/// How often an idle stream sends a comment, so proxies keep it open and dead peers are noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The stream of task `id` after step `after` (-1 for all), for a caller already checked to see it.
pub fn task_events(
    state: AppState,
    id: Uuid,
    after: i32,
    slot: LongPollSlot,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + Send + 'static> {
    let feed = Feed {
        subscription: state.notifications.subscribe_task(id),
        state,
        id,
        sent_seq: after,
        last_status: None,
        queued: VecDeque::new(),
        finished: false,
        _slot: slot,
    };
    let stream = futures::stream::unfold(feed, |mut feed| async move {
        let event = feed.next_event().await?;
        Some((Ok(event), feed))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}

struct Feed {
    state: AppState,
    id: Uuid,
    /// Subscribed before the first read, so no change between a read and the wait is missed.
    subscription: TaskSubscription,
    sent_seq: i32,
    last_status: Option<TaskStatus>,
    queued: VecDeque<Event>,
    finished: bool,
    _slot: LongPollSlot,
}

impl Feed {
    /// The next event, waiting for one if need be; `None` ends the stream.
    async fn next_event(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queued.pop_front() {
                return Some(event);
            }
            if self.finished || self.state.stopping.is_cancelled() {
                return None;
            }
            match self.read().await {
                Ok(()) if !self.queued.is_empty() => continue,
                Ok(()) => {}
                // The database is away: the listener's reconnect wakes us to read again.
                Err(err) if is_unavailable(&err) => {
                    tracing::warn!(task_id = %self.id, error = %err, "event stream read failed, waiting for the database");
                }
                Err(err) => {
                    tracing::error!(task_id = %self.id, error = %err, "event stream read failed");
                    self.finished = true;
                    let body = json!({ "error": { "code": "internal", "message": "the stream failed; reconnect to resume" } });
                    return Some(Event::default().event("error").data(body.to_string()));
                }
            }
            tokio::select! {
                _ = self.subscription.changed_or_stepped() => {}
                _ = self.state.stopping.cancelled() => return None,
            }
        }
    }

    /// Reads the task, then the steps after the last one sent (in this order: once the task reads
    /// as final its journal is whole), and queues what the client has not seen.
    async fn read(&mut self) -> Result<(), sqlx::Error> {
        // One connection for the reads and the flush: a flush on another connection, opened after a
        // crash and a restart, would succeed while the steps read before the crash are gone.
        let mut conn = self.state.pool.acquire().await?;
        let Some(task) = tasks::find_task(&mut *conn, self.id).await? else {
            self.finished = true;
            return Ok(());
        };
        // Made durable before they are sent when the task is unfinished; a final task's steps are
        // durable already (its verdict's commit, which waited for the disk, came after them). A
        // final task's whole journal is read: its verdict lists the run from it.
        let unfinished = !task.status.is_final();
        let journal = steps::steps_to_show(&mut conn, self.id, if unfinished { self.sent_seq } else { -1 }, unfinished).await?;
        drop(conn);
        // Every stream opens with the state; a final state later on is told by the verdict.
        let first = self.last_status.is_none();
        if (first || !task.status.is_final()) && self.last_status != Some(task.status) {
            self.last_status = Some(task.status);
            let data = json!({ "status": task.status, "attempts": task.attempts, "started_at": task.started_at });
            self.queued.push_back(Event::default().event("status").data(data.to_string()));
        }
        let sent = self.sent_seq;
        for step in journal.iter().filter(|step| step.seq > sent) {
            self.sent_seq = step.seq;
            let data = serde_json::to_string(&StepView::from(step.clone())).expect("a step serialises");
            self.queued.push_back(Event::default().event("step").id(self.sent_seq.to_string()).data(data));
        }
        if task.status.is_final() {
            self.finished = true;
            let data = serde_json::to_string(&TaskView::new(task, &journal)).expect("a task serialises");
            self.queued.push_back(Event::default().event("verdict").data(data));
        }
        Ok(())
    }
}

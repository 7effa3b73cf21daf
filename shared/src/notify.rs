//! Change notifications over Postgres LISTEN/NOTIFY, fanned out inside the process.
//!
//! Each process keeps ONE listening connection (not one per waiter). A long-polling request
//! subscribes to its task id and then waits on an in-memory channel: it holds no database
//! connection and runs no query while it waits. Workers use the same listener to hear of waiting
//! tasks the moment their insert commits, and of webhook deliveries the moment their task's ending
//! commits.
//!
//! Notifications sent while the listening connection is down are lost, so after every (re)connect
//! the listener bumps a "reconnected" epoch: every waiter wakes and re-reads the state it waits on.
//!
//! The same connection hears credential changes and keeps the process's [`CredentialCache`] true
//! (see [`crate::credentials`]), and the verdicts of the tasks this process stored ([`unheard`]).

mod step_events;
mod unheard;

pub use step_events::StepEvents;

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::Stream;
use sqlx::{PgPool, postgres::PgListener};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{
    credentials::{CREDENTIAL_EVENTS_CHANNEL, CredentialCache},
    domain::user::User,
    provider_pauses::{PROVIDER_PAUSES_CHANNEL, PROVIDER_RESUMES_CHANNEL, ProviderPauses},
    queue::TASKS_WAITING_CHANNEL,
    store::webhooks::WEBHOOKS_CHANNEL,
};
use unheard::Unheard;

/// Channel carrying the id of a task whose row changed (its state), `"<id> final"` when that change
/// made it final, or `"<id> step"` when a step of its journal committed.
pub const TASK_EVENTS_CHANNEL: &str = "quickact_task_events";

/// The process's listening connection and everyone waiting on it.
#[derive(Clone)]
pub struct Notifications {
    inner: Arc<Inner>,
}

struct Inner {
    /// One sender per task somebody waits on; the value counts its changes.
    tasks: Mutex<HashMap<Uuid, watch::Sender<TaskChanges>>>,
    /// Bumped after each successful (re)connect.
    epoch: watch::Sender<u64>,
    /// Waiting-task wakeups: one per announcement, and one after each reconnect.
    waiting: broadcast::Sender<()>,
    connected: AtomicBool,
    credentials: CredentialCache,
    /// Pauses models asked for, announced on [`PROVIDER_PAUSES_CHANNEL`], and their ends
    /// ([`PROVIDER_RESUMES_CHANNEL`]) (workers only).
    provider_pauses: ProviderPauses,
    /// Webhook deliveries were written ([`WEBHOOKS_CHANNEL`]), or the listener reconnected: the
    /// process's delivery loop claims them (workers only). One stored permit, so none is missed.
    webhooks: tokio::sync::Notify,
    /// Tasks this process stored whose verdict it has not heard yet.
    unheard: Unheard,
}

impl Notifications {
    /// Starts listening to every channel (what a worker hears); the background task reconnects by
    /// itself until `stop` is cancelled.
    pub fn start(pool: PgPool, stop: CancellationToken) -> Self {
        Self::start_on(
            pool,
            stop,
            &[
                TASK_EVENTS_CHANNEL,
                TASKS_WAITING_CHANNEL,
                CREDENTIAL_EVENTS_CHANNEL,
                PROVIDER_PAUSES_CHANNEL,
                PROVIDER_RESUMES_CHANNEL,
                WEBHOOKS_CHANNEL,
            ],
        )
    }

    /// [`Notifications::start`] without waiting-task wakeups, which only workers use (what the API
    /// hears): a submission's announcement is then not delivered to every API process.
    /// [`Notifications::task_wakeups`] never yields here but after a reconnect.
    pub fn start_for_api(pool: PgPool, stop: CancellationToken) -> Self {
        Self::start_on(pool, stop, &[TASK_EVENTS_CHANNEL, CREDENTIAL_EVENTS_CHANNEL])
    }

    fn start_on(pool: PgPool, stop: CancellationToken, channels: &'static [&'static str]) -> Self {
        let notifications = Self::unconnected();
        tokio::spawn(listen_until_stopped(pool, notifications.inner.clone(), stop, channels));
        notifications
    }

    /// The fan-out without its listening connection.
    fn unconnected() -> Self {
        let inner = Arc::new(Inner {
            tasks: Mutex::new(HashMap::new()),
            epoch: watch::Sender::new(0),
            waiting: broadcast::Sender::new(1024),
            connected: AtomicBool::new(false),
            credentials: CredentialCache::default(),
            provider_pauses: ProviderPauses::default(),
            webhooks: tokio::sync::Notify::new(),
            unheard: Unheard::default(),
        });
        Notifications { inner }
    }

    /// Whether the listening connection is up (readiness).
    pub fn is_connected(&self) -> bool {
        self.inner.connected.load(Ordering::Relaxed)
    }

    /// Waits until the listener is connected, or `timeout` passes; true when connected.
    pub async fn wait_connected(&self, timeout: Duration) -> bool {
        let mut epoch = self.inner.epoch.subscribe();
        let connected = async {
            while !self.is_connected() {
                if epoch.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, connected).await.is_ok()
    }

    /// The user of a key hash from the credential cache: only while the listener is connected, so
    /// a change is never missed while an entry is used.
    pub fn cached_user(&self, key_hash: &[u8]) -> Option<User> {
        if !self.is_connected() {
            return None;
        }
        self.inner.credentials.get(key_hash)
    }

    /// User `id` from the credential cache, on the same terms as [`Notifications::cached_user`].
    pub fn cached_user_by_id(&self, id: Uuid) -> Option<User> {
        if !self.is_connected() {
            return None;
        }
        self.inner.credentials.user(id)
    }

    /// The pauses of models this process heard of (see [`ProviderPauses`]).
    pub fn provider_pauses(&self) -> &ProviderPauses {
        &self.inner.provider_pauses
    }

    /// Completes when webhook deliveries may be due: some were written since the last call, or the
    /// listener reconnected (and may have missed an announcement).
    pub async fn webhooks_written(&self) {
        self.inner.webhooks.notified().await
    }

    /// The process's credential cache (to fill it after a lookup, or drop a user's entries after a
    /// change this process made).
    pub fn credentials(&self) -> &CredentialCache {
        &self.inner.credentials
    }

    /// Task `id` of `user_id`, with the time limit `limit`, is about to be stored by this process:
    /// until its verdict is heard, [`Notifications::unfinished_owner`] knows it (see [`unheard`]).
    pub fn storing_task(&self, id: Uuid, user_id: Uuid, limit: Duration) {
        self.inner.unheard.storing(id, user_id, limit);
    }

    /// Task `id`, announced by [`Notifications::storing_task`], was not stored.
    pub fn task_not_stored(&self, id: Uuid) {
        self.inner.unheard.forget(id);
    }

    /// Whose task `id` is, when it is known unfinished without a read: this process stored it and
    /// has not heard its verdict, listening all along. Subscribe to the task first.
    pub fn unfinished_owner(&self, id: Uuid) -> Option<Uuid> {
        if !self.is_connected() {
            return None;
        }
        self.inner.unheard.owner(id)
    }

    /// Registers interest in task `id`. Subscribe BEFORE reading the task's state, so a change that
    /// commits between the read and the wait is not missed.
    pub fn subscribe_task(&self, id: Uuid) -> TaskSubscription {
        let mut tasks = self.inner.tasks.lock().expect("task map lock");
        let changes = tasks.entry(id).or_insert_with(|| watch::Sender::new(TaskChanges::default())).subscribe();
        let TaskChanges { state: seen_state, finals: seen_finals, .. } = *changes.borrow();
        TaskSubscription {
            id,
            changes,
            epoch: self.inner.epoch.subscribe(),
            epoch_moved: false,
            seen_state,
            seen_finals,
            inner: self.inner.clone(),
        }
    }

    /// A stream that yields whenever tasks may be waiting: on each announcement (a submission, a
    /// hand-back), and after each reconnect (announcements may have been missed meanwhile).
    pub fn task_wakeups(&self) -> impl Stream<Item = ()> + Send + Unpin + 'static {
        let receiver = self.inner.waiting.subscribe();
        Box::pin(futures::stream::unfold(receiver, |mut receiver| async move {
            match receiver.recv().await {
                // A lagged receiver skipped wakeups: one is as good as many.
                Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => Some(((), receiver)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        }))
    }
}

/// How many times a task's state changed and its journal grew, as heard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct TaskChanges {
    state: u64,
    /// Of the state changes, those to a final state.
    finals: u64,
    steps: u64,
}

/// Interest in one task's changes.
pub struct TaskSubscription {
    id: Uuid,
    changes: watch::Receiver<TaskChanges>,
    epoch: watch::Receiver<u64>,
    /// The listener reconnected since `changed` last returned.
    epoch_moved: bool,
    /// The state count `changed` last returned at (at first, the count when subscribing).
    seen_state: u64,
    /// The same for `finished`.
    seen_finals: u64,
    inner: Arc<Inner>,
}

impl TaskSubscription {
    /// The task it follows.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Returns once the task's state changed or the listener reconnected (either way: re-read the
    /// task). Steps of its journal do not wake it.
    pub async fn changed(&mut self) {
        self.next_change(|changes| changes.state, |subscription| &mut subscription.seen_state).await
    }

    /// Returns once the task reached a final state or the listener reconnected (either way: re-read
    /// the task). Other state changes (a claim) and steps do not wake it: a long-poll waiting for a
    /// verdict reads the task once when it arrives, not at every change on the way.
    pub async fn finished(&mut self) {
        self.next_change(|changes| changes.finals, |subscription| &mut subscription.seen_finals).await
    }

    /// [`Self::finished`], saying why: `true` when the task's verdict was heard, `false` when the
    /// listener reconnected (a verdict may have gone unheard: read the task).
    pub async fn verdict_heard(&mut self) -> bool {
        loop {
            let finals = self.changes.borrow().finals;
            if finals != self.seen_finals {
                self.seen_finals = finals;
                return true;
            }
            if std::mem::take(&mut self.epoch_moved) {
                return false;
            }
            self.changed_or_stepped().await;
        }
    }

    /// Returns once the count `count` picks differs from the one `seen` keeps (then keeps it), or
    /// the listener reconnected. Counts every change heard since subscribing, including ones
    /// before this call.
    async fn next_change(&mut self, count: impl Fn(&TaskChanges) -> u64, seen: impl Fn(&mut Self) -> &mut u64) {
        loop {
            let now = count(&self.changes.borrow());
            if self.epoch_moved || now != *seen(self) {
                *seen(self) = now;
                self.epoch_moved = false;
                return;
            }
            self.changed_or_stepped().await;
        }
    }

    /// Returns once the task's state changed, a step of its journal committed, or the listener
    /// reconnected.
    pub async fn changed_or_stepped(&mut self) {
        tokio::select! {
            res = self.changes.changed() => { if res.is_err() { std::future::pending::<()>().await } }
            res = self.epoch.changed() => {
                if res.is_err() { std::future::pending::<()>().await }
                self.epoch_moved = true;
            }
        }
    }
}

impl Drop for TaskSubscription {
    fn drop(&mut self) {
        let mut tasks = self.inner.tasks.lock().expect("task map lock");
        // Our receiver still counts here; remove the entry when we were the last one.
        if tasks.get(&self.id).is_some_and(|sender| sender.receiver_count() <= 1) {
            tasks.remove(&self.id);
        }
    }
}

async fn listen_until_stopped(pool: PgPool, inner: Arc<Inner>, stop: CancellationToken, channels: &'static [&'static str]) {
    let mut delay = Duration::from_millis(100);
    while !stop.is_cancelled() {
        let listener = async {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen_all(channels.iter().copied()).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        let mut listener = tokio::select! {
            _ = stop.cancelled() => return,
            res = listener => match res {
                Ok(listener) => listener,
                Err(err) => {
                    tracing::warn!(error = %err, "notification listener cannot connect, retrying");
                    tokio::select! { _ = stop.cancelled() => return, _ = tokio::time::sleep(delay) => {} }
                    delay = (delay * 2).min(Duration::from_secs(2));
                    continue;
                }
            },
        };
        delay = Duration::from_millis(100);
        // Credential changes made while we were away went unheard: forget every cached key first.
        inner.credentials.clear();
        // So may verdicts have.
        inner.unheard.clear();
        // So were pauses of models announced meanwhile (or before this process started): read the
        // ones on now, after LISTEN, so that none falls in between.
        if channels.contains(&PROVIDER_PAUSES_CHANNEL) {
            match crate::store::providers::paused_models(&pool).await {
                Ok(models) => models.iter().for_each(|model| inner.provider_pauses.heard(model)),
                Err(err) => {
                    tracing::warn!(error = %err, "could not read the models' pauses; every model counts as maybe paused for a while");
                    inner.provider_pauses.unheard();
                }
            }
        }
        inner.connected.store(true, Ordering::Relaxed);
        inner.epoch.send_modify(|e| *e += 1);
        let _ = inner.waiting.send(());
        inner.webhooks.notify_one();
        tracing::info!("notification listener connected");

        loop {
            let next = tokio::select! {
                _ = stop.cancelled() => return,
                next = listener.try_recv() => next,
            };
            match next {
                Ok(Some(notification)) => dispatch(&inner, notification.channel(), notification.payload()),
                // The connection dropped (`Ok(None)`) or failed: start over with a fresh one.
                Ok(None) => break,
                Err(err) => {
                    tracing::warn!(error = %err, "notification listener lost its connection");
                    break;
                }
            }
        }
        inner.connected.store(false, Ordering::Relaxed);
        // The server restarted, most likely: the pools' connections went with this one.
        crate::db::database_went_away();
    }
}

fn dispatch(inner: &Inner, channel: &str, payload: &str) {
    if channel == TASK_EVENTS_CHANNEL {
        let (id, what) = payload.split_once(' ').unwrap_or((payload, ""));
        let Ok(id) = id.parse::<Uuid>() else { return };
        // Before the subscribers wake: a waiter that found it unheard has subscribed already.
        if what == "final" {
            inner.unheard.forget(id);
        }
        if let Some(sender) = inner.tasks.lock().expect("task map lock").get(&id) {
            sender.send_modify(|n| match what {
                "step" => n.steps += 1,
                "final" => {
                    n.state += 1;
                    n.finals += 1;
                }
                _ => n.state += 1,
            });
        }
    } else if channel == CREDENTIAL_EVENTS_CHANNEL {
        match payload.parse::<Uuid>() {
            Ok(user_id) => inner.credentials.invalidate_user(user_id),
            Err(_) => inner.credentials.clear(),
        }
    } else if channel == TASKS_WAITING_CHANNEL {
        let _ = inner.waiting.send(());
    } else if channel == PROVIDER_PAUSES_CHANNEL {
        inner.provider_pauses.heard(payload);
    } else if channel == PROVIDER_RESUMES_CHANNEL {
        inner.provider_pauses.resumed(payload);
    } else if channel == WEBHOOKS_CHANNEL {
        inner.webhooks.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    #[test]
    fn steps_wake_the_step_stream_but_not_waiters_for_the_state() {
        let notifications = Notifications::unconnected();
        let id = Uuid::now_v7();
        let mut waiter = notifications.subscribe_task(id);
        let mut stream = notifications.subscribe_task(id);
        let inner = &notifications.inner;

        dispatch(inner, TASK_EVENTS_CHANNEL, &format!("{id} step"));
        assert!(waiter.changed().now_or_never().is_none(), "a step is not a state change");
        assert!(stream.changed_or_stepped().now_or_never().is_some());

        // A state change heard before the wait begins is not lost.
        dispatch(inner, TASK_EVENTS_CHANNEL, &id.to_string());
        assert!(waiter.changed().now_or_never().is_some());
        assert!(waiter.changed().now_or_never().is_none(), "each change wakes once");

        // A reconnect wakes every waiter (notifications may have been lost meanwhile).
        inner.epoch.send_modify(|e| *e += 1);
        assert!(waiter.changed().now_or_never().is_some());
        dispatch(inner, TASK_EVENTS_CHANNEL, &Uuid::now_v7().to_string());
        assert!(waiter.changed().now_or_never().is_none(), "another task's change");
    }

    #[test]
    fn a_verdict_wakes_a_waiter_for_the_verdict_and_a_claim_does_not() {
        let notifications = Notifications::unconnected();
        let id = Uuid::now_v7();
        let mut verdict = notifications.subscribe_task(id);
        let mut state = notifications.subscribe_task(id);
        let inner = &notifications.inner;

        dispatch(inner, TASK_EVENTS_CHANNEL, &id.to_string());
        dispatch(inner, TASK_EVENTS_CHANNEL, &format!("{id} step"));
        assert!(verdict.finished().now_or_never().is_none(), "a claim and a step are not a verdict");
        assert!(state.changed().now_or_never().is_some(), "a claim is a change of state");

        dispatch(inner, TASK_EVENTS_CHANNEL, &format!("{id} final"));
        assert!(verdict.finished().now_or_never().is_some());
        assert!(verdict.finished().now_or_never().is_none(), "each verdict wakes once");
        assert!(state.changed().now_or_never().is_some(), "a verdict is a change of state too");

        // A reconnect wakes it (the verdict's notification may have been lost meanwhile).
        inner.epoch.send_modify(|e| *e += 1);
        assert!(verdict.finished().now_or_never().is_some());
    }

    #[test]
    fn a_guard_tells_a_verdict_heard_from_a_reconnect_and_a_stored_task_from_an_unknown_one() {
        let notifications = Notifications::unconnected();
        let (id, user) = (Uuid::now_v7(), Uuid::now_v7());
        let mut guard = notifications.subscribe_task(id);
        let inner = &notifications.inner;
        dispatch(inner, TASK_EVENTS_CHANNEL, &id.to_string());
        assert_eq!(guard.verdict_heard().now_or_never(), None, "a claim is no verdict");
        inner.epoch.send_modify(|e| *e += 1);
        assert_eq!(guard.verdict_heard().now_or_never(), Some(false), "a reconnect: read the task");
        dispatch(inner, TASK_EVENTS_CHANNEL, &format!("{id} final"));
        assert_eq!(guard.verdict_heard().now_or_never(), Some(true));

        // A task stored here is known unfinished only while the listener is connected, and not
        // once its verdict is heard.
        let other = Uuid::now_v7();
        notifications.storing_task(other, user, Duration::from_secs(30));
        assert_eq!(notifications.unfinished_owner(other), None, "not connected");
        inner.connected.store(true, Ordering::Relaxed);
        assert_eq!(notifications.unfinished_owner(other), Some(user));
        dispatch(inner, TASK_EVENTS_CHANNEL, &format!("{other} final"));
        assert_eq!(notifications.unfinished_owner(other), None);
    }
}

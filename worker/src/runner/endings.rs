//! How a run's attempt ends: the outcome settled, the task finished by the engine (given up, out
//! of time), handed back, or left waiting for a model; the guard that keeps a run's lease and
//! stops it when the task is cancelled or taken over; the batches the endings are written in.

use super::*;

impl Runner {
    /// What the run's outcome leaves to do: nothing (finished, stopped, cancelled or taken over),
    /// a hand-back on shutdown, a wait for a model, the ending of a run out of time, or a retry.
    pub(super) async fn settle(&self, outcome: Result<Result<RunEnd, RunError>, tokio::time::error::Elapsed>, plan: &RunPlan, holder: &str) -> Attempt {
        let task_id = plan.task.id;
        match outcome {
            Ok(Ok(RunEnd::Finished(task))) => {
                quickact_shared::metrics::task_finished(&task);
                tracing::info!(task_id = %task_id, status = %task.status, "task finished");
                Attempt::Settled
            }
            // A group turns its runs' verdicts into `Finished` (crate::groups); one that came
            // here unwritten is a failed attempt, retried from the committed journal.
            Ok(Ok(RunEnd::Decided(_))) => Attempt::Failed(AttemptFailure::Run(RunError::Group("a grouped run's verdict reached the runner unwritten".into()))),
            Ok(Ok(RunEnd::Stopped(check))) => {
                tracing::info!(task_id = %task_id, ?check, "task stopped: no longer ours");
                Attempt::Settled
            }
            Ok(Ok(RunEnd::Aborted)) if self.hand_back.is_cancelled() => {
                self.give_back(task_id, holder, None, None).await;
                Attempt::HandedBack
            }
            // Aborted by the guard: cancelled or taken over.
            Ok(Ok(RunEnd::Aborted)) => Attempt::Settled,
            Ok(Ok(RunEnd::WaitForModel { model, wait })) => {
                self.wait_for_model(task_id, holder, &model, wait).await;
                Attempt::Settled
            }
            Ok(Err(err)) => Attempt::Failed(err.into()),
            Err(_elapsed) => self.finish(&plan.task, holder, Ending::Timeout { timeout_seconds: plan.task.timeout_seconds }).await,
        }
    }

    /// Ends a task this process holds without a run (given up, or out of time).
    pub(super) async fn finish(&self, task: &TaskRecord, holder: &str, ending: Ending) -> Attempt {
        let ending = &ending;
        let ended = retry_unavailable(DATABASE_PATIENCE, || end_task(&self.pool, task.id, Some(holder), ending.clone())).await;
        match ended {
            Ok(Some(ended)) => {
                quickact_shared::metrics::task_finished(&ended.task);
                tracing::info!(task_id = %task.id, status = %ended.task.status, "task finished");
                Attempt::Settled
            }
            Ok(None) => {
                tracing::info!(task_id = %task.id, "task ended elsewhere first");
                Attempt::Settled
            }
            Err(err) => Attempt::Failed(err.into()),
        }
    }

    /// Gives an unfinished task back to the queue (see [`hand_back`]): at once on shutdown, after
    /// `pause` when the attempt failed (`failure` says why). When even that fails, the lease lapses
    /// and the next fetch takes the task.
    pub(super) async fn give_back(&self, task_id: Uuid, holder: &str, pause: Option<Duration>, failure: Option<&str>) {
        let (pool, holder) = (&self.bookkeeping, holder);
        match retry_unavailable(Duration::from_secs(5), || hand_back(pool, task_id, holder, pause, failure)).await {
            Ok(released) => {
                if let Some(pause) = pause.filter(|_| released) {
                    self.due_tasks.add(Instant::now() + pause);
                }
                tracing::info!(task_id = %task_id, "task handed back to the queue")
            }
            Err(err) => tracing::error!(task_id = %task_id, error = %err, "could not hand the task back; its lease will lapse"),
        }
    }

    /// Gives the task back to the queue until its model can be asked again (`wait`, already cut
    /// at the task's deadline): meanwhile it holds no run slot here, and any worker resumes it from
    /// its journal once the wait is over. Not a failed attempt (see [`hand_back_to_wait`]).
    pub(super) async fn wait_for_model(&self, task_id: Uuid, holder: &str, model: &str, wait: Duration) {
        quickact_shared::metrics::provider_hand_back(model);
        let (pool, holder) = (&self.bookkeeping, holder);
        match retry_unavailable(Duration::from_secs(5), || hand_back_to_wait(pool, task_id, holder, wait)).await {
            Ok(released) => {
                if released {
                    self.due_tasks.add(Instant::now() + wait);
                }
                tracing::info!(task_id = %task_id, %model, wait_ms = wait.as_millis() as u64, "task handed back to wait for its model")
            }
            Err(err) => tracing::error!(task_id = %task_id, error = %err, "could not hand the task back; its lease will lapse"),
        }
    }

    /// Renews the lease every third of its length and listens for the task's verdict; fires
    /// `abort` when the task is no longer ours to run. Its claim (a state change) is not
    /// listened for, and a verdict heard needs no read: it is final, whoever wrote it (most often
    /// the run itself, just before the guard is stopped).
    pub(super) async fn guard(self: Arc<Self>, task_id: Uuid, holder: String, abort: CancellationToken, stop: CancellationToken) {
        let lease_secs = self.worker.lease().as_secs_f64();
        let every = self.worker.lease() / 3;
        let mut changes = self.notifications.subscribe_task(task_id);
        let mut next_renewal = Instant::now() + every;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = abort.cancelled() => return,
                heard = changes.verdict_heard() => {
                    let ended = heard || matches!(find_task(&self.pool, task_id).await, Ok(Some(task)) if task.status != TaskStatus::Processing);
                    if ended {
                        tracing::debug!(task_id = %task_id, "the task has its verdict: the run stops if it still goes on");
                        abort.cancel();
                        return;
                    }
                }
                _ = tokio::time::sleep_until(next_renewal) => {
                    next_renewal = Instant::now() + every;
                    match renew_lease(&self.bookkeeping, task_id, &holder, lease_secs).await {
                        Ok(true) => {}
                        Ok(false) => {
                            // A renewal waits on the row lock of the run's own writes, so it often
                            // finds the run's verdict just committed: an ended task, not a lost lease.
                            match find_task(&self.pool, task_id).await {
                                Ok(Some(task)) if task.status.is_final() => {
                                    tracing::debug!(task_id = %task_id, status = %task.status, "task ended; its lease is not renewed");
                                }
                                _ => tracing::warn!(task_id = %task_id, "lease lost, stopping the run"),
                            }
                            abort.cancel();
                            return;
                        }
                        // The database is away; the run's own writes wait for it. Keep trying.
                        Err(err) => tracing::warn!(task_id = %task_id, error = %err, "lease renewal failed"),
                    }
                }
            }
        }
    }
}

/// The loop that writes the endings waiting together in one statement (see [`Endings`]): each
/// run's answer is its task as it ended, `None` when it was no longer the run's.
pub(super) fn ending_batches(journal: PgPool) -> Endings {
    Batcher::start(MAX_ENDINGS, "endings", move |ends: Vec<(String, FinalState)>| {
        let journal = journal.clone();
        async move {
            let mut ended: HashMap<Uuid, TaskRecord> = end_tasks(&journal, &ends).await?.into_iter().map(|task| (task.id, task)).collect();
            Ok(ends.iter().map(|(_, end)| ended.remove(&end.id)).collect())
        }
    })
}

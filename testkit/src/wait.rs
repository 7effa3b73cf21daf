//! Waiting for something to happen in the background, for as long as it takes and no longer.
//!
//! A test that sleeps "long enough" is slow when things are fast and flaky when they are slow. Where
//! the code offers an event, wait on it (e.g. [`FakeModel::wait_for_requests`](crate::FakeModel::wait_for_requests)
//! or a long-poll); where it does not, [`wait_until`] checks a condition every few milliseconds and
//! returns the moment it holds, and a test that waits in vain fails saying what it waited for.

use std::{fmt::Debug, time::Duration};

use tokio::time::Instant;

/// How often [`wait_until`] and [`wait_for`] check their condition: short next to anything a test
/// waits for, long enough not to load the database.
const CHECK_EVERY: Duration = Duration::from_millis(20);

/// Returns once `condition` is true; panics naming `what` if it is still false after `timeout`.
pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_for(what, timeout, || {
        let check = condition();
        async move { if check.await { Ok(()) } else { Err("not yet") } }
    })
    .await
}

/// Returns the value once `check` gives `Ok`; panics naming `what` and the last `Err` (what was seen
/// instead) if none came within `timeout`.
pub async fn wait_for<T, Seen, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    Seen: Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Seen>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(seen) if Instant::now() >= deadline => panic!("waited {timeout:?} for {what} in vain; last seen: {seen:#?}"),
            Err(_) => tokio::time::sleep(CHECK_EVERY).await,
        }
    }
}

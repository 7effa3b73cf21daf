//! The API keys a process has seen lately, so a request is authenticated without a query.
//!
//! Correctness rests on three rules:
//! - **Every change is heard.** A trigger on `api_keys` and `users`
//!   (`migrations/functions/credentials.sql`) notifies [`CREDENTIAL_EVENTS_CHANNEL`] with the user's id
//!   on every update or delete, whoever writes it; the process's listener ([`crate::notify`]) drops
//!   that user's entries. A process that makes a change drops them itself too, before it answers.
//! - **Nothing is served while changes could be missed.** Entries are used only while the
//!   listener is connected, and all of them are dropped when it (re)connects.
//! - **A read never outlives a change it raced with.** A lookup notes the cache's generation
//!   before it queries; every invalidation bumps it; the answer is kept only if the generation did
//!   not move, so a key read just before its revocation committed cannot be cached after the
//!   notification was handled.
//!
//! Entries also expire after [`ENTRY_TTL`]; a full map ([`MAX_ENTRIES`]) drops its expired entries,
//! and is emptied only when all are fresh: the cache saves queries for the keys in use, it is never
//! the place a key's validity is decided.
//! Unknown keys are not cached (a new key works at once).
//!
//! Workers keep users by id under the same rules ([`CredentialCache::user`]): a run needs its
//! user's model choice, and a user's next tasks find it here instead of in a query each.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::Mutex,
    time::{Duration, Instant},
};

use uuid::Uuid;

use crate::domain::user::User;

/// Channel the credential trigger notifies on (payload: the user's id).
pub const CREDENTIAL_EVENTS_CHANNEL: &str = "quickact_credential_events";
/// How long an entry is used before the key is looked up again.
pub const ENTRY_TTL: Duration = Duration::from_secs(60);
/// Entries kept at most (about 200 bytes each); a full map of fresh entries is emptied (a burst of
/// distinct keys costs queries, not memory). Room for the keys of 10,000 users' long-polls and
/// their submissions at once: a map that emptied at exactly that many looked up every key twice.
pub const MAX_ENTRIES: usize = 50_000;

/// A key's hash -> the user it authenticates, for the keys seen lately.
#[derive(Default)]
pub struct CredentialCache {
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    generation: u64,
    by_hash: HashMap<Vec<u8>, (User, Instant)>,
    by_id: HashMap<Uuid, (User, Instant)>,
}

/// What a lookup noted before it queried; hand it back to [`CredentialCache::insert`].
#[derive(Debug, Clone, Copy)]
pub struct Generation(u64);

impl CredentialCache {
    /// The user for a key hash, if cached and fresh.
    pub fn get(&self, hash: &[u8]) -> Option<User> {
        let entries = self.inner.lock().expect("credential cache lock");
        fresh(&entries.by_hash, hash)
    }

    /// Note this before querying the database for a key.
    pub fn generation(&self) -> Generation {
        Generation(self.inner.lock().expect("credential cache lock").generation)
    }

    /// Keeps what a query found, unless something was invalidated since `seen` was noted.
    pub fn insert(&self, seen: Generation, hash: Vec<u8>, user: User) {
        let mut entries = self.inner.lock().expect("credential cache lock");
        if entries.generation == seen.0 {
            keep(&mut entries.by_hash, hash, user);
        }
    }

    /// The user `id`, if cached (by [`CredentialCache::insert_user`]) and fresh.
    pub fn user(&self, id: Uuid) -> Option<User> {
        let entries = self.inner.lock().expect("credential cache lock");
        fresh(&entries.by_id, &id)
    }

    /// Keeps a user a query found, unless something was invalidated since `seen` was noted.
    pub fn insert_user(&self, seen: Generation, user: User) {
        let mut entries = self.inner.lock().expect("credential cache lock");
        if entries.generation == seen.0 {
            keep(&mut entries.by_id, user.id, user);
        }
    }

    /// Drops every entry of `user_id` (a key or the user changed).
    pub fn invalidate_user(&self, user_id: Uuid) {
        let mut entries = self.inner.lock().expect("credential cache lock");
        entries.generation += 1;
        entries.by_hash.retain(|_, (user, _)| user.id != user_id);
        entries.by_id.remove(&user_id);
    }

    /// Drops everything (the listener reconnected: changes may have been missed).
    pub fn clear(&self) {
        let mut entries = self.inner.lock().expect("credential cache lock");
        entries.generation += 1;
        entries.by_hash.clear();
        entries.by_id.clear();
    }
}

/// The user kept under `key`, if it is younger than [`ENTRY_TTL`].
fn fresh<K: Hash + Eq + ?Sized, Q: Hash + Eq + std::borrow::Borrow<K>>(map: &HashMap<Q, (User, Instant)>, key: &K) -> Option<User> {
    map.get(key).filter(|(_, at)| at.elapsed() < ENTRY_TTL).map(|(user, _)| user.clone())
}

/// Keeps `user` under `key`; a full map ([`MAX_ENTRIES`]) drops its expired entries first, and is
/// emptied when none had expired.
fn keep<K: Hash + Eq>(map: &mut HashMap<K, (User, Instant)>, key: K, user: User) {
    if map.len() >= MAX_ENTRIES {
        map.retain(|_, (_, at)| at.elapsed() < ENTRY_TTL);
    }
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(key, (user, Instant::now()));
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    fn user() -> User {
        User { id: Uuid::now_v7(), name: "alice".into(), is_admin: false, time_zone: "UTC".into(), model: None, created_at: Utc::now() }
    }

    #[test]
    fn a_read_that_raced_with_an_invalidation_is_not_kept() {
        let cache = CredentialCache::default();
        let alice = user();
        let before = cache.generation();
        cache.invalidate_user(alice.id);
        cache.insert(before, b"k".to_vec(), alice.clone());
        assert!(cache.get(b"k").is_none(), "read before the revocation was handled, kept after it");

        let now = cache.generation();
        cache.insert(now, b"k".to_vec(), alice.clone());
        assert_eq!(cache.get(b"k").map(|u| u.id), Some(alice.id));
    }

    #[test]
    fn invalidation_drops_only_that_users_keys_and_clear_drops_all() {
        let cache = CredentialCache::default();
        let (alice, bob) = (user(), user());
        let seen = cache.generation();
        cache.insert(seen, b"a1".to_vec(), alice.clone());
        cache.insert(seen, b"a2".to_vec(), alice.clone());
        cache.insert(seen, b"b1".to_vec(), bob.clone());
        cache.invalidate_user(alice.id);
        assert!(cache.get(b"a1").is_none() && cache.get(b"a2").is_none());
        assert_eq!(cache.get(b"b1").map(|u| u.id), Some(bob.id));
        cache.clear();
        assert!(cache.get(b"b1").is_none());
    }

    #[test]
    fn a_full_map_drops_its_expired_entries_first_and_empties_only_when_all_are_fresh() {
        let stale = Instant::now() - ENTRY_TTL - Duration::from_secs(1);
        let mut map: HashMap<u32, (User, Instant)> = (0..MAX_ENTRIES as u32).map(|i| (i, (user(), if i % 2 == 0 { stale } else { Instant::now() }))).collect();
        keep(&mut map, u32::MAX, user());
        assert_eq!(map.len(), MAX_ENTRIES / 2 + 1, "the expired half went, the fresh half stayed");
        let mut full: HashMap<u32, (User, Instant)> = (0..MAX_ENTRIES as u32).map(|i| (i, (user(), Instant::now()))).collect();
        keep(&mut full, u32::MAX, user());
        assert_eq!(full.len(), 1, "all fresh: emptied, then the new entry");
    }

    #[test]
    fn users_by_id_follow_the_same_rules() {
        let cache = CredentialCache::default();
        let (alice, bob) = (user(), user());
        let before = cache.generation();
        cache.invalidate_user(bob.id);
        cache.insert_user(before, alice.clone());
        assert!(cache.user(alice.id).is_none(), "read before an invalidation, kept after it");

        let seen = cache.generation();
        cache.insert_user(seen, alice.clone());
        cache.insert_user(seen, bob.clone());
        assert_eq!(cache.user(alice.id).map(|u| u.id), Some(alice.id));
        cache.invalidate_user(alice.id);
        assert!(cache.user(alice.id).is_none(), "a change to the user drops it");
        assert_eq!(cache.user(bob.id).map(|u| u.id), Some(bob.id));
        cache.clear();
        assert!(cache.user(bob.id).is_none());
    }
}

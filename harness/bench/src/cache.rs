//! The cache of built problems (meshes, f64 references, plans) that consecutive cases of a run
//! share, so that a sweep over methods or precisions builds each problem once. Each benchmark
//! keeps one in the run's context ([`crate::context::RunContext::state`]).

use std::sync::{Arc, Mutex};

/// A key's place in the cache: empty until its problem is built. Its own lock is held while the
/// problem is built, so a second caller of the same key waits for it, and callers of other keys
/// do not (a problem built ahead on another thread does not stall the case in hand).
type Slot<V> = Arc<Mutex<Option<Arc<V>>>>;

/// At most `capacity` problems, the oldest dropped first (the largest meshes hold gigabytes).
/// A panic while a problem is built inserts nothing, and the cache stays usable.
pub struct ProblemCache<K, V> {
    entries: Mutex<Vec<(K, Slot<V>)>>,
    capacity: usize,
}

impl<K: PartialEq, V> ProblemCache<K, V> {
    pub const fn new(capacity: usize) -> Self {
        ProblemCache { entries: Mutex::new(Vec::new()), capacity }
    }

    /// Drops every problem whose key `keep` refuses.
    pub fn retain(&self, keep: impl Fn(&K) -> bool) {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).retain(|(k, _)| keep(k));
    }

    /// Whether the problem of `key` is built (a build in progress is not).
    pub fn contains(&self, key: &K) -> bool {
        let slot = self.entries.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| k == key).map(|(_, s)| s.clone());
        slot.is_some_and(|s| s.try_lock().is_ok_and(|v| v.is_some()))
    }

    /// The problem of `key`, built by `build` if it is not cached. Only this key's slot is
    /// locked while it is built: two callers never build the same problem twice, and a caller
    /// of another key goes on.
    pub fn get_or_build<E>(&self, key: K, build: impl FnOnce() -> Result<V, E>) -> Result<Arc<V>, E> {
        let slot = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match entries.iter().find(|(k, _)| *k == key) {
                Some((_, s)) => s.clone(),
                None => {
                    let s: Slot<V> = Default::default();
                    entries.push((key, s.clone()));
                    s
                }
            }
        };
        // A panic in an earlier build left the slot empty (its lock poisoned): build it again.
        let mut value = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = value.as_ref() {
            return Ok(v.clone());
        }
        match build() {
            Ok(v) => {
                let v = Arc::new(v);
                *value = Some(v.clone());
                drop(value);
                // Room for it: the oldest others go (a failed build never pushes one out).
                let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
                while entries.len() > self.capacity.max(1) {
                    match entries.iter().position(|(_, s)| !Arc::ptr_eq(s, &slot)) {
                        Some(i) => drop(entries.remove(i)),
                        None => break,
                    }
                }
                Ok(v)
            }
            Err(e) => {
                // A failed build keeps no place: it must not push a built problem out.
                drop(value);
                self.entries.lock().unwrap_or_else(|e| e.into_inner()).retain(|(_, s)| !Arc::ptr_eq(s, &slot));
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_once_oldest_dropped_and_usable_after_a_panic() {
        let cache: ProblemCache<u32, u32> = ProblemCache::new(2);
        let mut builds = 0;
        for k in [1, 1, 2, 1, 3, 1] {
            cache
                .get_or_build::<()>(k, || {
                    builds += 1;
                    Ok(k * 10)
                })
                .unwrap();
        }
        assert_eq!(builds, 4, "1, 2, 3, then 1 again after 3 pushed it out");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cache.get_or_build::<()>(9, || panic!("bug while meshing"))));
        assert!(r.is_err());
        assert_eq!(*cache.get_or_build::<()>(9, || Ok(90)).unwrap(), 90);
        assert_eq!(cache.get_or_build::<&str>(7, || Err("no mesh")).unwrap_err(), "no mesh");
        cache.retain(|&k| k != 9);
        assert_eq!(*cache.get_or_build::<()>(9, || Ok(91)).unwrap(), 91, "dropped by retain, built again");
    }

    #[test]
    fn a_build_in_progress_blocks_its_own_key_only() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        static CACHE: ProblemCache<u32, u32> = ProblemCache::new(2);
        let (release_tx, release_rx) = channel::<()>();
        let (started_tx, started_rx) = channel::<()>();
        let ahead = std::thread::spawn(move || {
            *CACHE
                .get_or_build::<()>(1, || {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Ok(10)
                })
                .unwrap()
        });
        started_rx.recv().unwrap();
        assert!(!CACHE.contains(&1), "a build in progress is not a built problem");
        // Another key is served while key 1 is still being built.
        let (done_tx, done_rx) = channel();
        std::thread::spawn(move || done_tx.send(*CACHE.get_or_build::<()>(2, || Ok(20)).unwrap()).unwrap());
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(20)), Ok(20), "key 2 waited for key 1's build");
        // The same key waits for the build in progress and does not build again.
        let (same_tx, same_rx) = channel();
        std::thread::spawn(move || same_tx.send(*CACHE.get_or_build::<()>(1, || Ok(11)).unwrap()).unwrap());
        assert!(same_rx.recv_timeout(Duration::from_millis(200)).is_err(), "key 1 must wait for its build");
        release_tx.send(()).unwrap();
        assert_eq!(ahead.join().unwrap(), 10);
        assert_eq!(same_rx.recv_timeout(Duration::from_secs(20)), Ok(10), "built once");
        assert!(CACHE.contains(&1) && CACHE.contains(&2));
        // A failed build keeps no place.
        assert!(CACHE.get_or_build::<&str>(3, || Err("no mesh")).is_err());
        assert!(CACHE.contains(&1) && CACHE.contains(&2), "the failed key pushed nothing out");
    }
}

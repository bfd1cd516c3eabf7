//! The one process-wide cache of built problems (meshes, f64 references, plans) that
//! consecutive cases of a run share, so that a sweep over methods or precisions builds each
//! problem once. Each benchmark keeps one `static` of it.

use std::sync::{Arc, Mutex};

/// At most `capacity` problems, the oldest dropped first (the largest meshes hold gigabytes).
/// A panic while a problem is built inserts nothing, and the cache stays usable.
pub struct ProblemCache<K, V> {
    entries: Mutex<Vec<(K, Arc<V>)>>,
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

    /// The problem of `key`, built by `build` if it is not cached. The lock is held while it is
    /// built: two cases never build the same problem twice.
    pub fn get_or_build<E>(&self, key: K, build: impl FnOnce() -> Result<V, E>) -> Result<Arc<V>, E> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = entries.iter().find(|(k, _)| *k == key) {
            return Ok(v.clone());
        }
        let v = Arc::new(build()?);
        if entries.len() >= self.capacity.max(1) {
            entries.remove(0);
        }
        entries.push((key, v.clone()));
        Ok(v)
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
}

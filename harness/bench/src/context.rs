//! What the cases of one run share, passed down to each ([`crate::benchmark::CaseCtx::run`])
//! instead of living in process-wide statics: each benchmark's state between cases (its cache of
//! built problems, Cecka's problem built ahead) and the run's background jobs. A run makes one;
//! a test makes its own, so two runs in one process share nothing.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::background::Background;

type Entries = HashMap<(&'static str, TypeId), Arc<dyn Any + Send + Sync>>;

#[derive(Default)]
pub struct RunContext {
    state: Mutex<Entries>,
    background: Arc<Background>,
}

impl RunContext {
    /// The run's state named `name` of type T, made by `make` on first use (e.g. a benchmark's
    /// [`crate::cache::ProblemCache`]): the same value for every case of the run.
    pub fn state<T: Send + Sync + 'static>(&self, name: &'static str, make: impl FnOnce() -> T) -> Arc<T> {
        let mut entries = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let entry = entries.entry((name, TypeId::of::<T>())).or_insert_with(|| Arc::new(make()));
        entry.clone().downcast::<T>().expect("an entry is keyed by its type")
    }

    /// The run's background jobs.
    pub fn background(&self) -> &Arc<Background> {
        &self.background
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_is_made_once_per_name_and_type_and_runs_share_nothing() {
        let run = RunContext::default();
        let a = run.state("count", || Mutex::new(1u32));
        *a.lock().unwrap() += 1;
        assert_eq!(*run.state("count", || Mutex::new(7u32)).lock().unwrap(), 2, "made once");
        assert_eq!(*run.state("other", || Mutex::new(7u32)).lock().unwrap(), 7, "another name");
        assert_eq!(*run.state("count", || 5u64), 5, "another type");
        assert_eq!(*RunContext::default().state("count", || Mutex::new(9u32)).lock().unwrap(), 9, "another run");
    }
}

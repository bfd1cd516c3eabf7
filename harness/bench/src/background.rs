//! Host work that runs on threads of its own beside the cases (a Pogo model's CPU window, the
//! next Cecka problem and its plans), and the one rule that keeps it out of host timings: the
//! runner waits for all of it before every case timed on the host ([`Background::quiet`]), so
//! those cases have the cores to themselves. GPU cases run beside it: their timers are device
//! events around gated work, which host load does not enter. A run holds one [`Background`]
//! (in its [`crate::context::RunContext`]).

use std::sync::{Arc, Condvar, Mutex};

/// The background jobs of one run: how many run, and a wake-up when one ends.
#[derive(Default)]
pub struct Background {
    count: Mutex<usize>,
    done: Condvar,
}

impl Background {
    /// Waits until no background job runs.
    pub fn quiet(&self) {
        let mut n = self.count.lock().unwrap_or_else(|e| e.into_inner());
        while *n > 0 {
            n = self.done.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// One job in the count, from [`Job::start`] until dropped (a panic too). Take it before the
/// job's thread starts, so that no host-timed case can slip in before the job is counted.
pub struct Job(Arc<Background>);

impl Job {
    pub fn start(jobs: &Arc<Background>) -> Job {
        *jobs.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Job(jobs.clone())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        *self.0.count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.0.done.notify_all();
    }
}

/// A rayon pool for background work: every core but two, so that the case in hand keeps a
/// core for its own thread and one for the driver's.
pub fn pool() -> rayon::ThreadPool {
    let n = rayon::current_num_threads().saturating_sub(2).max(1);
    rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("background-{i}")).build().expect("a rayon pool")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn quiet_waits_for_every_job_and_a_panicking_job_still_ends() {
        let jobs = Arc::new(Background::default());
        let (release_tx, release_rx) = channel::<()>();
        let job = Job::start(&jobs);
        let worker = std::thread::spawn(move || {
            let _job = job;
            release_rx.recv().unwrap();
        });
        let panicking = Job::start(&jobs);
        let _ = std::thread::spawn(move || {
            let _job = panicking;
            panic!("a job that fails");
        })
        .join();
        let (quiet_tx, quiet_rx) = channel();
        let waiting = jobs.clone();
        std::thread::spawn(move || {
            waiting.quiet();
            quiet_tx.send(()).unwrap();
        });
        assert!(quiet_rx.recv_timeout(Duration::from_millis(200)).is_err(), "quiet returned while a job ran");
        release_tx.send(()).unwrap();
        worker.join().unwrap();
        assert!(quiet_rx.recv_timeout(Duration::from_secs(20)).is_ok(), "quiet did not return after the jobs ended");
    }
}

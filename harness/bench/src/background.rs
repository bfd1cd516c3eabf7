//! Host work that runs on threads of its own beside the cases (a Pogo model's CPU window, the
//! next Cecka problem and its plans), and the one rule that keeps it out of host timings: the
//! runner waits for all of it before every case timed on the host ([`quiet`]), so those cases
//! have the cores to themselves. GPU cases run beside it: their timers are device events around
//! gated work, which host load does not enter.

use std::sync::{Condvar, Mutex};

static COUNT: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// One job in the count, from [`Job::start`] until dropped (a panic too). Take it before the
/// job's thread starts, so that no host-timed case can slip in before the job is counted.
pub struct Job(());

impl Job {
    pub fn start() -> Job {
        *COUNT.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Job(())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        *COUNT.0.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        COUNT.1.notify_all();
    }
}

/// Waits until no background job runs.
pub fn quiet() {
    let (count, done) = &COUNT;
    let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
    while *n > 0 {
        n = done.wait(n).unwrap_or_else(|e| e.into_inner());
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
        let (release_tx, release_rx) = channel::<()>();
        let job = Job::start();
        let worker = std::thread::spawn(move || {
            let _job = job;
            release_rx.recv().unwrap();
        });
        let panicking = Job::start();
        let _ = std::thread::spawn(move || {
            let _job = panicking;
            panic!("a job that fails");
        })
        .join();
        let (quiet_tx, quiet_rx) = channel();
        std::thread::spawn(move || {
            quiet();
            quiet_tx.send(()).unwrap();
        });
        assert!(quiet_rx.recv_timeout(Duration::from_millis(200)).is_err(), "quiet returned while a job ran");
        release_tx.send(()).unwrap();
        worker.join().unwrap();
        assert!(quiet_rx.recv_timeout(Duration::from_secs(20)).is_ok(), "quiet did not return after the jobs ended");
    }
}

//! What a run is asked to do ([`RunOptions`]), what it did ([`RunSummary`]) and why it could
//! not go on ([`RunError`]).

use std::path::PathBuf;

use crate::results::ResultsError;
use fembench_device::Backend;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Restrict to these backends (intersected with each experiment's list); empty: no restriction.
    pub backends: Vec<Backend>,
    pub device_index: usize,
    pub quick: bool,
    /// Parent folder of new run folders.
    pub out_dir: PathBuf,
    /// Continue this run folder instead of starting a new one.
    pub resume: Option<PathBuf>,
    /// With `resume`: run again the cases whose rows have these statuses ("failed", "skipped").
    pub retry: Vec<String>,
    /// With `resume`: continue although the run was made on another device, commit or
    /// harness version.
    pub force: bool,
    /// Show a progress bar (off in tests).
    pub progress: bool,
    /// Start no new case after this long (a batch job's time limit): the run stops cleanly,
    /// every finished case kept, and `--resume` continues it.
    pub stop_after: Option<std::time::Duration>,
    /// Run only this part of the case list ([`crate::shard`]).
    pub shard: Option<crate::shard::Shard>,
    /// Stored runs (or folders of them) whose case wall times balance the shards.
    pub costs_from: Vec<PathBuf>,
}

/// Rows by status.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RowCounts {
    pub ok: usize,
    pub failed: usize,
    pub skipped: usize,
    pub infeasible: usize,
}

impl RowCounts {
    pub fn add(&mut self, status: crate::results::Status) {
        use crate::results::Status;
        match status {
            Status::Ok => self.ok += 1,
            Status::Failed => self.failed += 1,
            Status::Skipped => self.skipped += 1,
            Status::Infeasible => self.infeasible += 1,
        }
    }
}

#[derive(Debug, Default)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub cases_run: usize,
    pub cases_skipped_as_done: usize,
    pub rows_ok: usize,
    /// Rows that failed: a wrong answer, or an error of the method or the device.
    pub rows_failed: usize,
    pub rows_skipped: usize,
    /// Rows of cases that cannot run by construction ([`crate::results::Status::Infeasible`]).
    pub rows_infeasible: usize,
    /// Devices found in an error state after a case and opened again (a sticky CUDA error).
    /// The driver may refuse a new context in this process; a new process then runs the
    /// skipped cases (`harness run` does this itself).
    pub devices_reopened: usize,
    /// Cases left unstarted because `stop_after` ran out or an interrupt asked the run to stop.
    pub cases_left: usize,
    /// Whether an interrupt (Ctrl-C) stopped the run.
    pub interrupted: bool,
}

impl RunSummary {
    pub fn count(&mut self, c: RowCounts) {
        self.rows_ok += c.ok;
        self.rows_failed += c.failed;
        self.rows_skipped += c.skipped;
        self.rows_infeasible += c.infeasible;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{0}")]
    Resume(String),
}

//! A case's rows: what a case returned, made into rows, counted and written; and the cases whose
//! rows wait for their deferred rest ([`Deferred`]), settled in order.

use std::panic::{catch_unwind, AssertUnwindSafe};

use indicatif::ProgressBar;

use crate::benchmark::{CaseError, Deferred, Measured};
use crate::experiment::Params;
use crate::results::{CaseKey, ResultsError, Row, RunDir, Status};
use crate::run_options::RowCounts;
use fembench_core::Precision;
use fembench_device::Backend;

/// A case that returned: its identity, its outcome, and the rest it left to run ([`Deferred`]).
pub(crate) struct Finished<'r> {
    pub run: &'r RunDir,
    pub run_id: &'r str,
    pub exp: &'r str,
    pub id: &'r str,
    pub backend: Backend,
    pub device: String,
    pub precision: Precision,
    pub params: &'r Params,
    pub outcome: Result<Vec<Measured>, CaseError>,
    pub rest: Option<Deferred>,
}

/// Runs the deferred rest of every pending case, in order, and hands each case to `finish`.
pub(crate) fn settle<'r, E>(pending: &mut Vec<Finished<'r>>, finish: &mut dyn FnMut(Finished<'r>) -> Result<(), E>) -> Result<(), E> {
    for mut p in pending.drain(..) {
        if let (Some(rest), Ok(rows)) = (p.rest.take(), &mut p.outcome) {
            let rows = std::mem::take(rows);
            p.outcome = guarded(|| Ok(rest(rows)));
        }
        finish(p)?;
    }
    Ok(())
}

/// A case's rows: reported where they failed, written, and the case's started marker cleared;
/// returns how many rows had each status.
pub(crate) fn finish_case(done: Finished, bar: &ProgressBar) -> Result<RowCounts, ResultsError> {
    let key = CaseKey {
        run_id: done.run_id,
        experiment: done.exp,
        case_id: done.id,
        backend: done.backend.as_str(),
        device: &done.device,
        precision: done.precision.as_str(),
        params: done.params,
    };
    let rows = to_rows(&key, done.outcome);
    let mut counts = RowCounts::default();
    for r in &rows {
        counts.add(r.status);
        if r.status == Status::Failed {
            say(bar, format!("FAILED {} {} {}: {}", done.exp, done.id, r.metric, r.reason.as_deref().unwrap_or("")));
        }
    }
    if let Err(e) = done.run.write_case(done.exp, &rows) {
        // The rows could not be written (a full disk): the case did not crash, so the next
        // `--resume` runs it again rather than recording it as killed.
        let _ = done.run.clear_started(done.exp, done.id);
        return Err(e);
    }
    done.run.clear_started(done.exp, done.id)?;
    Ok(counts)
}

/// A line for the user above the progress bar; on standard error where the bar is not drawn (a
/// batch job, a pipe, a worker process), where indicatif would drop it.
pub(crate) fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// A panic inside a case (a bug) is recorded as that case's failure; the run goes on.
pub(crate) fn guarded(f: impl FnOnce() -> Result<Vec<Measured>, CaseError>) -> Result<Vec<Measured>, CaseError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(CaseError::Failed(format!("panic: {msg}")))
        }
    }
}

/// The rows of case `key`: one per measured metric, or one row `case` with the reason it did
/// not run.
pub(crate) fn to_rows(key: &CaseKey, outcome: Result<Vec<Measured>, CaseError>) -> Vec<Row> {
    let blank = |metric: &str| Row::blank(key, metric);
    match outcome {
        Err(e) => {
            let mut r = blank("case");
            r.status = e.status();
            r.reason = Some(e.reason());
            vec![r]
        }
        Ok(measured) => measured
            .into_iter()
            .map(|m| {
                let mut r = blank(&m.metric);
                r.status = m.status;
                r.reason = m.reason;
                r.bytes = m.bytes;
                r.executed_flops = m.flops;
                r.paper_flops = m.paper_flops;
                r.error = m.error;
                r.tolerance = m.tolerance;
                r.memory_bytes = m.memory_bytes;
                r.library = m.library;
                r.extras = m.extras;
                r.series = m.series;
                if let Some(t) = &m.timing {
                    let med = t.median();
                    r.timer = Some(t.timer.as_str().into());
                    r.mode = Some(t.mode.as_str().into());
                    r.reps = t.samples.len() as u32;
                    r.time_median_s = Some(med);
                    r.time_min_s = Some(t.min());
                    r.time_max_s = Some(t.max());
                    r.time_mean_s = Some(t.mean());
                    r.time_stddev_s = Some(t.stddev());
                    let ci = t.median_ci();
                    r.time_ci_low_s = Some(ci.low);
                    r.time_ci_high_s = Some(ci.high);
                    r.samples_s = t.samples.clone();
                    r.iters_per_sample = Some(t.batch);
                    r.bandwidth_gbs = m.bytes.map(|b| b / med / 1e9);
                    r.gflops = m.flops.map(|f| f / med / 1e9);
                    r.paper_gflops = m.paper_flops.map(|f| f / med / 1e9);
                }
                r
            })
            .collect(),
    }
}

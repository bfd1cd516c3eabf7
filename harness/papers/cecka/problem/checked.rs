//! The check of a method's system against the f64 reference, entry by entry, and the case's rows.

use super::prepared::Prepared;
use super::system::{check_bounds, compare, Problem};
use crate::benchmark::{CaseError, Measured};
use crate::cecka::cost::sizes;
use crate::cecka::spec::Point;
use crate::measure::Timing;
use crate::real::Real;
use crate::Precision;

/// A case's declared cost and what its rows carry beside the timings.
#[derive(Clone)]
pub struct Cost {
    /// Bytes the method must move from or to global memory.
    pub bytes: f64,
    pub flops: f64,
    /// Device bytes of its arrays.
    pub memory: f64,
    /// Host seconds of its set-up: its plan (when first made) and its uploads.
    pub setup_s: f64,
    pub extras: Vec<(&'static str, f64)>,
}

/// What one GPU method's run leaves for verification and the row.
pub(crate) struct GpuRun<T> {
    pub(crate) timings: Vec<Timing>,
    /// The outputs of the checked repetition (run on poisoned outputs before the timed ones).
    pub(crate) vals: Vec<T>,
    pub(crate) rhs: Vec<T>,
    pub(crate) cost: Cost,
}

impl<T> GpuRun<T> {
    pub(crate) fn new(timings: Vec<Timing>, vals: Vec<T>, rhs: Vec<T>, cost: Cost) -> Self {
        GpuRun { timings, vals, rhs, cost }
    }
}

/// How a route computes its entries, which sets the rounding its check allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// From the reference integrals, as the paper's kernels (`system.rs`, `error_bounds`).
    Formula,
    /// By quadrature, as a FEM library integrates (`quadrature_bounds`).
    Quadrature,
}

/// The rows of a run whose system was checked, entry by entry, against the f64 reference; an
/// external peer's rows name its library.
pub(crate) fn checked_rows<T: Real>(
    prep: &Prepared,
    point: &Point,
    run: GpuRun<T>,
    library: Option<&str>,
) -> Result<Vec<Measured>, CaseError> {
    checked_rows_by(prep, point, run, library, Rounding::Formula)
}

/// [`checked_rows`] with the rounding of the way the route computes.
pub(crate) fn checked_rows_by<T: Real>(
    prep: &Prepared,
    point: &Point,
    run: GpuRun<T>,
    library: Option<&str>,
    rounding: Rounding,
) -> Result<Vec<Measured>, CaseError> {
    let p = &prep.problem;
    let got_vals: Vec<f64> = run.vals.iter().map(|v| v.to_f64()).collect();
    let got_rhs: Vec<f64> = run.rhs.iter().map(|v| v.to_f64()).collect();
    if got_vals.len() != p.nnz() || got_rhs.len() != p.n_free {
        return Err(CaseError::Failed("the device returned a system of the wrong size".into()));
    }
    // Every entry within its own bound (system.rs: element rounding, coordinate rounding and
    // summation, in units of the precision's u); a dummy kernel against the dummy system.
    let dummy = point.method.dummy();
    let reference = if dummy { prep.dummy_reference() } else { prep.reference() };
    let u = T::PRECISION.unit_roundoff();
    let bounds = if rounding == Rounding::Quadrature && !dummy { prep.quadrature_bounds() } else { prep.bounds(dummy) };
    let (over, worst) = check_bounds(&got_vals, &got_rhs, reference, bounds, u);
    let cmp = compare(&got_vals, &got_rhs, reference);
    // Table VI's average relative error must also stay plausible: 1e-3 in f32 (the paper's
    // largest is 2.1e-5), 1e-10 in f64.
    let avg_limit = if T::PRECISION == Precision::F32 { 1e-3 } else { 1e-10 };
    let error = if cmp.avg_relative.is_nan() || cmp.avg_relative > avg_limit { f64::INFINITY } else { worst };
    Ok(run
        .timings
        .into_iter()
        .map(|t| {
            let mut m = Measured::verified(point.method.as_str(), t, error, 1.0).bytes(run.cost.bytes).flops(run.cost.flops).memory(run.cost.memory);
            if over > 0 || error.is_infinite() {
                m.reason = Some(format!(
                    "verification failed: {over} entries over their error bound (largest error/bound {worst:.3e}), average relative error {:.3e} (limit {avg_limit:.0e})",
                    cmp.avg_relative
                ));
            }
            if !dummy {
                m = m.extra("table6_error", cmp.avg_relative);
            }
            m = m.extra("entries_over_bound", over as f64).extra("setup_s", run.cost.setup_s);
            for (k, v) in sizes(prep) {
                m = m.extra(k, v);
            }
            for &(k, v) in &run.cost.extras {
                m = m.extra(k, v);
            }
            if let Some(library) = library {
                m = m.library(library);
            }
            m
        })
        .collect())
}

/// A route that builds its own CSR pattern (the COO routes) must build the problem's before its
/// values are compared entry by entry.
pub(crate) fn same_pattern<I: Copy + Into<f64>>(p: &Problem, indptr: &[I], indices: &[I]) -> Result<(), CaseError> {
    let (indptr, indices): (Vec<f64>, Vec<f64>) = (indptr.iter().map(|&v| v.into()).collect(), indices.iter().map(|&v| v.into()).collect());
    if indptr.len() != p.n_free + 1 || indices.len() != p.nnz() {
        return Err(CaseError::Failed(format!(
            "verification failed: the route's CSR has {} rows and {} entries, the problem's {} and {}",
            indptr.len().saturating_sub(1),
            indices.len(),
            p.n_free,
            p.nnz()
        )));
    }
    if let Some(r) = (0..=p.n_free).find(|&r| indptr[r] != p.row_ptr[r] as f64) {
        return Err(CaseError::Failed(format!(
            "verification failed: the route's row {r} starts at entry {}, the pattern's at {}",
            indptr[r], p.row_ptr[r]
        )));
    }
    if let Some(k) = (0..p.nnz()).find(|&k| indices[k] != p.col[k] as f64) {
        return Err(CaseError::Failed(format!(
            "verification failed: the route's entry {k} is in column {}, the pattern's in {}",
            indices[k], p.col[k]
        )));
    }
    Ok(())
}

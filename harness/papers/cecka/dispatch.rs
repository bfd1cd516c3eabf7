//! A GPU case of any method: its launch sequence (the paper's methods in `gpu`, the peers in
//! `peer` and `python`), then the check of its system against the f64 reference (`checked`).

use super::checked::checked_rows;
use super::gpu::{gpu_of, run_elem, run_global_nz, run_local_nz, run_shared_atomic, run_shared_nz, shared_limit};
use super::peer::run_peer;
use super::plans::warm;
use super::prepared::Prepared;
use super::python::python_rows;
use super::spec::{Family, Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::real::Real;

/// Runs the method of `point` on the case's GPU and checks every entry of its system.
pub(crate) fn run_gpu<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let dev = gpu_of(ctx)?;
    warm(ctx, problem, prep, point, dev.info().backend, shared_limit(dev, problem)?, !dev.info().runs_on_host());
    let run = match point.method.family() {
        Family::Elem => run_elem::<T>(ctx, problem, prep, point)?,
        Family::GlobalNz => run_global_nz::<T>(ctx, problem, prep, point)?,
        Family::SharedNz => run_shared_nz::<T>(ctx, problem, prep, point)?,
        Family::LocalNz => run_local_nz::<T>(ctx, problem, prep, point)?,
        Family::SharedAtomic => run_shared_atomic::<T>(ctx, problem, prep, point)?,
        Family::Coo => run_peer::<T>(ctx, problem, prep, point.method)?,
        Family::Python => return python_rows::<T>(ctx, prep, point),
        Family::Cpu => return Err(CaseError::Failed("a CPU method on a GPU target".into())),
    };
    checked_rows(prep, point, run, None)
}

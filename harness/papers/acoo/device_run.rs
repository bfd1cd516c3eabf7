//! One device method's case: the mesh uploaded, the method's buffers and kernels made, the
//! case lifecycle run (the checked pass on poisoned outputs, then the timed passes; every
//! pass's solution checked), then the method's matrix-vector product measured on its own.

use super::afem::AFem;
use super::capacitor::Capacitor;
use super::ebe::Ebe;
use super::gpu::{Memory, Mesh, Stop, BLOCK};
use super::methods::{Base, MethodRun, Reference, WARM_ONLY};
use super::spec::{Method, Problem_};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::Device;
use crate::kernels::Defines;
use crate::lifecycle::{drive, warm_only, Driven};
use crate::real::Real;

/// A device method's case: its buffers and kernels made, driven by the case lifecycle, then
/// its matrix-vector product measured on its own.
pub(crate) fn run_device<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    c: &Capacitor,
    colors: (&[Vec<u32>], f64),
    reference: Reference,
    method: Method,
) -> Result<MethodRun, CaseError> {
    let mode = warm_only(ctx.policy, WARM_ONLY)?;
    let mut mem = Memory::default();
    let mesh = Mesh::upload::<T>(dev, &mut mem, c)?;
    let stop = Stop { tol: problem.tolerance, max_iter: problem.max_iterations };
    let base = Base { dev, c, mesh: &mesh, stop, reference, defines: Defines::for_precision(T::PRECISION).with("BLOCK", BLOCK) };
    match method {
        Method::AFem => {
            let mut m = AFem::<T>::new(ctx, &base, &mut mem)?;
            let Driven { staged, .. } = drive(ctx, dev, &mut m, mode)?;
            let product = m.product(ctx)?;
            m.checks.into_run(staged, mem, None, product)
        }
        Method::EbeV1 | Method::EbeV2 => {
            let mut m = Ebe::<T>::new(ctx, &base, &mut mem, colors.0, method == Method::EbeV2)?;
            let Driven { staged, .. } = drive(ctx, dev, &mut m, mode)?;
            let product = m.product_run(ctx)?;
            m.checks.into_run(staged, mem, Some((colors.1, colors.0.len())), product)
        }
        Method::CpuSerial | Method::CpuParallel => unreachable!("CPU methods run on the host"),
        _ => super::csr_methods::run::<T>(ctx, &base, mem, colors, method, mode),
    }
}

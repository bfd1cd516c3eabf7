//! What the GPU methods share: the case's device, the nodal data every method reads, the
//! combined output of the methods by non-zero, and a run's result before its check.

use rayon::prelude::*;

use super::nz::plans;
use super::problem::system::Problem;
use super::spec::Problem_;
use crate::benchmark::{CaseCtx, CaseError, Target};
use crate::device::{Buffer, Device, DeviceExt};
use crate::real::Real;

pub(crate) fn gpu_of<'a>(ctx: &CaseCtx<'a>) -> Result<&'a dyn Device, CaseError> {
    match ctx.target {
        Target::Gpu(dev) => Ok(dev),
        Target::Cpu => Err(CaseError::Failed("not a GPU target".into())),
    }
}

pub(crate) fn to_real<T: Real>(v: &[f64]) -> Vec<T> {
    v.par_iter().map(|&x| T::from_f64(x)).collect()
}

/// The shared memory a block may use: the device's limit, or less if the experiment asks.
pub(crate) fn shared_limit(dev: &dyn Device, problem: &Problem_) -> Result<usize, CaseError> {
    dev.info().shared_limit(problem.shared_bytes).map_err(CaseError::Failed)
}

/// Nodal data every method reads: coordinates and prescribed values.
pub(crate) struct Nodal {
    pub(crate) x: Buffer,
    pub(crate) y: Buffer,
    pub(crate) g: Buffer,
    pub(crate) refs: Buffer,
    pub(crate) bytes: usize,
}

pub(crate) fn upload_nodal<T: Real>(dev: &dyn Device, p: &Problem) -> Result<Nodal, CaseError> {
    let refs = to_real::<T>(&p.refs.packed());
    Ok(Nodal {
        x: dev.upload_slice(&to_real::<T>(&p.mesh.x))?,
        y: dev.upload_slice(&to_real::<T>(&p.mesh.y))?,
        g: dev.upload_slice(&to_real::<T>(&p.g))?,
        bytes: (3 * p.mesh.num_nodes() + refs.len()) * std::mem::size_of::<T>(),
        refs: dev.upload_slice(&refs)?,
    })
}

/// The combined output of the methods by non-zero: CSR values, then the right-hand side.
pub(crate) struct SplitOut {
    pub(crate) out: Buffer,
    nnz: usize,
    targets: usize,
}

impl SplitOut {
    /// The output, every entry NaN.
    pub(crate) fn poisoned<T: Real>(dev: &dyn Device, p: &Problem) -> Result<Self, CaseError> {
        let targets = plans::num_targets(p);
        Ok(SplitOut { out: dev.upload_slice(&vec![T::nan(); targets])?, nnz: p.nnz(), targets })
    }
    /// The CSR values and the right-hand side.
    pub(crate) fn read<T: Real>(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError> {
        let mut all = dev.download_vec::<T>(&self.out, self.targets)?;
        let rhs = all.split_off(self.nnz);
        Ok((all, rhs))
    }
}

//! What the device methods share: their stages, the f64 reference and the checks of every
//! pass, the case's mesh and stopping rule (`Base`), and the element-by-element product.
//! The methods, as the case lifecycle runs them ([`crate::lifecycle`]): `afem`, `csr_methods`
//! and `ebe`; [`super::method`] runs one's case.

use super::capacitor::Capacitor;
use super::gpu::{cover, fill_with, Cg, CgRun, Kernels, Memory, Mesh, Stop};
use super::kernel::EbeMatvec;
use super::product::ProductRun;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, Device, DeviceExt};
use crate::kernels::Defines;
use crate::measure::Staged;
use crate::real::Real;

/// Bytes of one A-FEM list node (`acoo_node` in kernels/acoo.kern).
pub const NODE_BYTES: usize = 16;

/// What a method's passes measured and how its last checked pass compared.
pub struct MethodRun {
    pub(crate) staged: Vec<Staged>,
    pub(crate) cg: CgRun,
    /// Relative L2 error of the solution on the free nodes against the reference.
    pub(crate) error: f64,
    /// A-FEM: relative error of its CSR matrix (infinite if the pattern differs).
    pub(crate) csr_error: Option<f64>,
    pub(crate) memory: Memory,
    /// Host seconds of the coloring (EbE methods), and its color count.
    pub(crate) coloring: Option<(f64, usize)>,
    /// The method's matrix-vector product on its own (device methods).
    pub(crate) product: Option<ProductRun>,
    /// The library and its version, for a library's route (`peers/acoo_cg.py`).
    pub(crate) library: Option<String>,
}

/// Why a cold run of these methods fails.
pub(crate) const WARM_ONLY: &str = "a-COO methods run warm only: a cold flush between CG iterations is not what the paper times";

/// The relative L2 error of the solution `cg.x` on the free nodes (`on_nodes`: x is on every
/// node) against the reference.
pub(crate) fn check<T: Real>(dev: &dyn Device, cg: &Cg, c: &Capacitor, reference: &[f64], on_nodes: bool) -> Result<f64, CaseError> {
    let x: Vec<f64> = dev.download_vec::<T>(&cg.x, cg.n)?.into_iter().map(|v| v.to_f64()).collect();
    let free: Vec<f64> = if on_nodes { (0..c.num_nodes()).filter(|&v| c.dof[v] >= 0).map(|v| x[v]).collect() } else { x };
    Ok(fembench_fem::verify::relative_l2(&free, reference))
}

/// Each color's (first, count) in the elements listed color after color.
pub(crate) fn color_ranges(colors: &[Vec<u32>]) -> Vec<(usize, usize)> {
    colors
        .iter()
        .scan(0, |start, g| {
            let r = (*start, g.len());
            *start += g.len();
            Some(r)
        })
        .collect()
}

/// q = sum of A^e p over every color, one launch per color (q zeroed first: `words` 32-bit
/// words); `kernels`: the element product and the filler, `elements`: the color-ordered element
/// list, each color's range and the stored element matrices (v1).
pub(crate) fn ebe_product(
    dev: &dyn Device,
    kernels: (&crate::device::Kernel, &crate::device::Kernel),
    m: &Mesh,
    elements: (&Buffer, &[(usize, usize)], &Buffer),
    p: &Buffer,
    q: &Buffer,
    words: usize,
) -> crate::device::DeviceResult<()> {
    let ((mv, z), (elist, ranges, ke)) = (kernels, elements);
    fill_with(dev, z, q, 0, words)?;
    for &(first, count) in ranges {
        let args = EbeMatvec { elist, first: first as i64, count: count as i64, tris: &m.tris, x: &m.x, y: &m.y, ke, p, q };
        dev.launch_with(mv, cover(count), &args)?;
    }
    Ok(())
}

/// The f64 reference a device run is checked against: the solution and the matrix's values (on
/// the capacitor's pattern).
#[derive(Clone, Copy)]
pub(crate) struct Reference<'a> {
    pub(crate) x: &'a [f64],
    pub(crate) vals: &'a [f64],
}

/// What every device method of a case shares: the device, the capacitor and its mesh on the
/// device, when the CG stops, the reference and the kernels' definitions.
pub(crate) struct Base<'a> {
    pub(crate) dev: &'a dyn Device,
    pub(crate) c: &'a Capacitor,
    pub(crate) mesh: &'a Mesh,
    pub(crate) stop: Stop,
    pub(crate) reference: Reference<'a>,
    pub(crate) defines: Defines,
    /// The form of our CG on the CSR methods' matrices.
    pub(crate) csr_cg: super::gpu::CgForm,
}

impl Base<'_> {
    /// The kernels of the case's precision, through the run's module cache.
    pub(crate) fn kernels<'m>(&self, ctx: &'m mut CaseCtx) -> Kernels<'_, 'm> {
        Kernels { dev: self.dev, modules: &mut *ctx.modules, defines: self.defines.clone() }
    }
}

/// What the passes found: the worst solution error over every pass (NaN if any was NaN), the
/// last pass's CG and A-FEM's CSR error.
#[derive(Default)]
pub(crate) struct Checks {
    worst: f64,
    last: Option<CgRun>,
    csr: Option<f64>,
}

impl Checks {
    pub(crate) fn note(&mut self, run: CgRun, error: f64, csr: Option<f64>) {
        self.worst = if error.is_nan() || self.worst.is_nan() { f64::NAN } else { self.worst.max(error) };
        self.last = Some(run);
        self.csr = csr;
    }

    /// The worst solution error so far.
    pub(crate) fn worst(&self) -> f64 {
        self.worst
    }

    /// The row's figures: the timed passes, the checks, the memory, the coloring and the product.
    pub(crate) fn into_run(
        self,
        staged: Staged,
        memory: Memory,
        coloring: Option<(f64, usize)>,
        product: ProductRun,
    ) -> Result<MethodRun, CaseError> {
        let cg = self.last.ok_or_else(|| CaseError::Failed("no pass ran".into()))?;
        Ok(MethodRun {
            staged: vec![staged],
            cg,
            error: self.worst,
            csr_error: self.csr,
            memory,
            coloring,
            product: Some(product),
            library: None,
        })
    }
}

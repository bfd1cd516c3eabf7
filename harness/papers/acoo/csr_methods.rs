//! The methods that assemble straight into the capacitor's CSR pattern: `csr-atomic` (atomic
//! adds into precomputed slots) and `csr-color` (one launch per color, no atomics), solved by
//! our CG; and the library peers, the same atomic assembly solved by a cuSPARSE/cuBLAS CG:
//! `cusparse-cg` (scalars on the host, as NVIDIA's sample), `cusparse-cg-device` (device pointer
//! mode) and `cusparse-cg-graph` (a batch replayed as a CUDA graph).

use std::marker::PhantomData;

use super::gpu::{
    cover, fill_with, spmv_into, vendor_cg, Cg, CgForm, CgKernels, DeviceCsr, Memory, Product, Stage, Vendor, VendorCgKernels,
};
use super::kernel::ACOO;
use super::kernel::{CsrAtomic, CsrColor, SpmvCsr};
use super::method::{DeviceMethod, Passes};
use super::methods::{check, color_ranges, Base, Checks, MethodRun};
use super::product::{self, Output, ProductRun};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::vendor::{VendorBlas, VendorOp};
use crate::device::{Buffer, DeviceExt, Kernel};
use crate::lifecycle::{drive, Driven, PassMethod};
use crate::measure::{Pass, Timer};
use crate::real::Real;

/// How a CSR method's system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solver {
    /// Our CG with our CSR product.
    Ours,
    /// The library CG with its scalars on the host (NVIDIA's sample).
    VendorHost,
    /// The library CG in device pointer mode.
    VendorDevice,
    /// The same, each batch of iterations replayed as a CUDA graph.
    VendorGraph,
}

/// A method that assembles into the CSR pattern (by atomic adds, or `colored`), solved by
/// `solver`.
pub struct Csr {
    pub colored: bool,
    pub solver: Solver,
}

impl DeviceMethod for Csr {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, base: &Base, passes: Passes) -> Result<MethodRun, CaseError> {
        run::<T>(ctx, base, passes, self)
    }
}

/// The case of one of these methods: buffers, the solver's plans, the lifecycle, the product.
fn run<T: Real>(ctx: &mut CaseCtx, base: &Base, passes: Passes, method: &Csr) -> Result<MethodRun, CaseError> {
    let Passes { mut mem, colors: (colors, coloring_s), about, mode } = passes;
    let (dev, c, s) = (base.dev, base.c, std::mem::size_of::<T>());
    let (nf, nnz) = (c.n_free, c.pattern.nnz());
    let colored = method.colored;
    let inputs = Inputs::upload(base, &mut mem, colors, colored)?;
    let a = DeviceCsr {
        row_ptr: mem.upload(dev, &c.pattern.row_ptr)?,
        col: mem.upload(dev, &c.pattern.col)?,
        val: mem.alloc(dev, s * nnz)?,
        rows: nf,
    };
    let rhs = mem.alloc(dev, s * nf)?;
    let cg = Cg::new::<T>(dev, &mut mem, nf, if method.solver == Solver::Ours { base.csr_cg } else { CgForm::Plain })?;
    let solver = Solving::new::<T>(ctx, base, &mut mem, method.solver, (&a, &cg))?;
    let kernel = if colored {
        ctx.modules.kernel_for::<CsrColor>(dev, &ACOO, &base.defines)?
    } else {
        ctx.modules.kernel_for::<CsrAtomic>(dev, &ACOO, &base.defines)?
    };
    let fill = ctx.modules.filler(dev)?;
    let mut m = CsrCase::<T> {
        base,
        stages: about.timed_stages(),
        inputs,
        a: &a,
        rhs,
        cg: &cg,
        solver,
        kernel,
        fill,
        checks: Checks::default(),
        real: PhantomData,
    };
    let Driven { staged, .. } = drive(ctx, dev, &mut m, mode)?;
    let product = m.product(ctx)?;
    m.checks.into_run(staged, mem, colored.then_some((coloring_s, colors.len())), product)
}

/// The element inputs of the assembly: each element's nine CSR slots, and for csr-color the
/// triangles in color order with each color's range.
struct Inputs {
    slots: Buffer,
    color_tris: Option<Buffer>,
    ranges: Vec<(usize, usize)>,
}

impl Inputs {
    /// csr-color: the elements renumbered by color (their triangles and slots uploaded in color
    /// order), one launch per color.
    fn upload(base: &Base, mem: &mut Memory, colors: &[Vec<u32>], colored: bool) -> Result<Self, CaseError> {
        let (dev, c) = (base.dev, base.c);
        if !colored {
            return Ok(Inputs { slots: mem.upload(dev, &c.slots)?, color_tris: None, ranges: color_ranges(colors) });
        }
        let order: Vec<usize> = colors.iter().flatten().map(|&e| e as usize).collect();
        let slots = mem.upload(dev, &order.iter().flat_map(|&e| c.slots[9 * e..9 * e + 9].iter().copied()).collect::<Vec<i32>>())?;
        let tris = mem.upload(dev, &order.iter().flat_map(|&e| c.tris[e].map(|v| v as i32)).collect::<Vec<i32>>())?;
        Ok(Inputs { slots, color_tris: Some(tris), ranges: color_ranges(colors) })
    }
}

/// The assembled system's solver, planned.
enum Solving<'a> {
    /// Our CG with our CSR product.
    Ours { k: CgKernels<'a>, spmv: Kernel },
    /// The library CG with its scalars on the host (`cusparse-cg`).
    Host { op: Box<dyn VendorOp + 'a>, blas: &'a dyn VendorBlas },
    /// The library CG in device pointer mode, a batch as a CUDA graph where `graph`.
    Device { op: Box<dyn VendorOp + 'a>, blas: &'a dyn VendorBlas, k: VendorCgKernels<'a>, graph: bool },
}

impl<'a> Solving<'a> {
    /// The peers' SpMV is planned here, outside the passes (descriptors, workspace), and its
    /// workspace and cuBLAS' (a buffer the harness gives the handle) counted as the method's.
    fn new<T: Real>(
        ctx: &mut CaseCtx,
        base: &'a Base,
        mem: &mut Memory,
        solver: Solver,
        (a, cg): (&'a DeviceCsr, &'a Cg),
    ) -> Result<Self, CaseError> {
        let dev = base.dev;
        let mut k = base.kernels(ctx);
        if solver == Solver::Ours {
            return Ok(Solving::Ours { spmv: k.get::<SpmvCsr>()?, k: k.cg()? });
        }
        let op = dev.sparse()?.csr_spmv(a.compressed(T::PRECISION, base.c.pattern.nnz()), &cg.p, &cg.q)?;
        mem.count(op.workspace_bytes());
        let blas = dev.blas()?;
        mem.count(blas.workspace_bytes());
        Ok(match solver {
            Solver::VendorHost => Solving::Host { op, blas },
            _ => Solving::Device { op, blas, k: k.vendor_cg()?, graph: solver == Solver::VendorGraph },
        })
    }
}

/// One of the CSR methods' case: the assembly, then the solver.
struct CsrCase<'a, T> {
    base: &'a Base<'a>,
    stages: Vec<(&'static str, Timer)>,
    inputs: Inputs,
    a: &'a DeviceCsr,
    rhs: Buffer,
    cg: &'a Cg,
    solver: Solving<'a>,
    /// The assembly kernel (csr_atomic or csr_color) and the filler.
    kernel: Kernel,
    fill: Kernel,
    checks: Checks,
    real: PhantomData<T>,
}

impl<T: Real> CsrCase<'_, T> {
    /// Values and right-hand side zeroed, then the element entries added into their slots.
    fn elements(&self) -> crate::device::DeviceResult<()> {
        let (dev, m, c, s) = (self.base.dev, self.base.mesh, self.base.c, std::mem::size_of::<T>());
        let (a, rhs, inputs) = (self.a, &self.rhs, &self.inputs);
        fill_with(dev, &self.fill, &a.val, 0, c.pattern.nnz() * s / 4)?;
        fill_with(dev, &self.fill, rhs, 0, c.n_free * s / 4)?;
        let (x, y, dof, g, slots, vals) = (&m.x, &m.y, &m.dof, &m.g, &inputs.slots, &a.val);
        let Some(tris) = &inputs.color_tris else {
            let ne = c.num_elements();
            let args = CsrAtomic { tris: &m.tris, x, y, dof, g, slots, vals, rhs, ne: ne as i64 };
            return self.base.dev.launch_with(&self.kernel, cover(ne), &args);
        };
        for &(first, count) in &inputs.ranges {
            let args = CsrColor { first: first as i64, count: count as i64, tris, x, y, dof, g, slots, vals, rhs };
            dev.launch_with(&self.kernel, cover(count), &args)?;
        }
        Ok(())
    }

    /// The product on its own: cuSPARSE's SpMV (planned again, on the product's buffers) for
    /// the peers, our CSR kernel for the others.
    fn product(&self, ctx: &mut CaseCtx) -> Result<ProductRun, CaseError> {
        let (dev, c, s) = (self.base.dev, self.base.c, std::mem::size_of::<T>());
        let (px, qy) = product::buffers::<T>(dev, c, false)?;
        let bytes = product::csr_bytes(c, s);
        let out = Output { q: &qy, on_nodes: false };
        let refs = (c, self.base.reference.vals);
        match &self.solver {
            Solving::Ours { spmv: sp, .. } => {
                let (a, partial) = (self.a, &self.cg.partial);
                product::measure::<T>(ctx, dev, refs, out, bytes, &mut || spmv_into(dev, sp, a, &px, &qy, partial))
            }
            _ => {
                let op = dev.sparse()?.csr_spmv(self.a.compressed(T::PRECISION, c.pattern.nnz()), &px, &qy)?;
                product::measure::<T>(ctx, dev, refs, out, bytes, &mut || op.enqueue())
            }
        }
    }
}

impl<T: Real> PassMethod for CsrCase<'_, T> {
    type Verdict = f64;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        self.stages.clone()
    }
    fn decisive(&self) -> &'static str {
        "solve"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.cg.x, &self.a.val, &self.rhs]
    }
    /// The solution poisoned, the matrix assembled, solved, and the solution checked.
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, c, stop, s) = (self.base.dev, self.base.c, self.base.stop, std::mem::size_of::<T>());
        fill_with(dev, &self.fill, &self.cg.x, u32::MAX, c.n_free * s / 4)?;
        pass.device(dev, "elements", &mut || self.elements())?;
        let (cg, rhs, stage) = (self.cg, &self.rhs, Stage { pass, name: "solve" });
        let run = match &self.solver {
            Solving::Ours { k, .. } => cg.solve::<T>(k, rhs, stop, stage, Product::Csr(self.a))?,
            Solving::Host { op, blas } => vendor_cg::<T>(dev, Vendor { spmv: &**op, blas: *blas }, &self.fill, rhs, cg, stop, stage)?,
            Solving::Device { op, blas, k, graph } => {
                cg.solve_vendor::<T>(k, Vendor { spmv: &**op, blas: *blas }, *graph, rhs, stop, stage)?
            }
        };
        let err = check::<T>(dev, cg, c, self.base.reference.x, false)?;
        self.checks.note(run, err, None);
        Ok(())
    }
    fn verify(&mut self) -> Result<f64, CaseError> {
        Ok(self.checks.worst())
    }
}

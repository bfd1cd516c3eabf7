//! EbE-v1 and EbE-v2 (the paper's element-by-element CG): the product is a sum of A^e p over
//! the elements, one launch per color; v1 stores the element matrices in a timed `elements`
//! stage, v2 recomputes them in every product. The boundary conditions are applied at the
//! element level (b = -(A g) on the free nodes), and the CG runs on every node, masked.

use std::marker::PhantomData;

use super::gpu::{cover, Cg, CgForm, CgKernels, Memory, Product, Stage};
use super::kernel::{EbeRhsFinish, EbeStore, MaskDot};
use super::method::{DeviceMethod, Passes};
use super::methods::{check, color_ranges, ebe_product, Base, Checks, MethodRun};
use super::product::{self, Output, ProductRun};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, DeviceExt, DeviceResult, Kernel};
use crate::lifecycle::{drive, Driven, PassMethod};
use crate::measure::{Pass, Timer};
use crate::real::Real;

/// EbE-v1 (element matrices stored, colored element-by-element products in CG) and EbE-v2
/// (`recompute`: the element matrices recomputed in every product).
pub struct Ebe {
    pub recompute: bool,
}

impl DeviceMethod for Ebe {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, base: &Base, passes: Passes) -> Result<MethodRun, CaseError> {
        let Passes { mut mem, colors, about, mode } = passes;
        let mut m = EbeCase::<T>::new(ctx, base, &mut mem, colors.0, self.recompute)?;
        m.stages = about.timed_stages();
        let Driven { staged, .. } = drive(ctx, base.dev, &mut m, mode)?;
        let product = m.product_run(ctx)?;
        m.checks.into_run(staged, mem, Some((colors.1, colors.0.len())), product)
    }
}

/// EbE's kernels: store A^e, finish the right-hand side, the masked dot, the element product
/// and the filler.
struct EbeKernels {
    store: Kernel,
    finish: Kernel,
    mask: Kernel,
    product: Kernel,
    fill: Kernel,
}

/// One of the EbE methods.
pub(crate) struct EbeCase<'a, T> {
    base: &'a Base<'a>,
    recompute: bool,
    stages: Vec<(&'static str, Timer)>,
    /// The elements in color order, and each color's range in it.
    elist: Buffer,
    ranges: Vec<(usize, usize)>,
    /// The stored element matrices (v1; a placeholder word for v2) and the right-hand side.
    ke: Buffer,
    b: Buffer,
    cg: Cg,
    k: EbeKernels,
    cgk: CgKernels<'a>,
    pub(crate) checks: Checks,
    real: PhantomData<T>,
}

impl<'a, T: Real> EbeCase<'a, T> {
    pub(crate) fn new(
        ctx: &mut CaseCtx,
        base: &'a Base<'a>,
        mem: &mut Memory,
        colors: &[Vec<u32>],
        recompute: bool,
    ) -> Result<Self, CaseError> {
        let (dev, c, s) = (base.dev, base.c, std::mem::size_of::<T>());
        let (ne, n) = (c.num_elements(), c.num_nodes());
        let elist: Vec<i32> = colors.iter().flatten().map(|&e| e as i32).collect();
        let elist = mem.upload(dev, &elist)?;
        let ke = if recompute { mem.alloc(dev, 4)? } else { mem.alloc(dev, 9 * ne * s)? };
        let b = mem.alloc(dev, s * n)?;
        let cg = Cg::new::<T>(dev, mem, n, CgForm::Plain)?;
        let mut kk = base.kernels(ctx);
        let k = EbeKernels {
            store: kk.get::<EbeStore>()?,
            finish: kk.get::<EbeRhsFinish>()?,
            mask: kk.get::<MaskDot>()?,
            product: kk.ebe(recompute)?,
            fill: kk.filler()?,
        };
        let cgk = kk.cg()?;
        Ok(EbeCase {
            base,
            recompute,
            stages: Vec::new(),
            elist,
            ranges: color_ranges(colors),
            ke,
            b,
            cg,
            k,
            cgk,
            checks: Checks::default(),
            real: PhantomData,
        })
    }

    /// q = A p over every color, then the masked partials of p.q.
    fn masked_product(&self, p: &Buffer, q: &Buffer) -> DeviceResult<()> {
        let (dev, m, n) = (self.base.dev, self.base.mesh, self.base.c.num_nodes());
        self.product(p, q)?;
        dev.launch_with(&self.k.mask, cover(n), &MaskDot { dof: &m.dof, p, q, partial: &self.cg.partial, n: n as i64 })
    }

    /// q = sum of A^e p over every color (q zeroed first).
    fn product(&self, p: &Buffer, q: &Buffer) -> DeviceResult<()> {
        let (dev, m, n, s) = (self.base.dev, self.base.mesh, self.base.c.num_nodes(), std::mem::size_of::<T>());
        ebe_product(dev, (&self.k.product, &self.k.fill), m, (&self.elist, &self.ranges[..], &self.ke), p, q, n * s / 4)
    }

    /// The product on its own, on the product's buffers.
    pub(crate) fn product_run(&self, ctx: &mut CaseCtx) -> Result<ProductRun, CaseError> {
        let (dev, c, s) = (self.base.dev, self.base.c, std::mem::size_of::<T>());
        let (px, qy) = product::buffers::<T>(dev, c, true)?;
        let bytes = product::ebe_bytes(c, s, self.recompute);
        product::measure::<T>(ctx, dev, (c, self.base.reference.vals), Output { q: &qy, on_nodes: true }, bytes, &mut || {
            self.masked_product(&px, &qy)
        })
    }
}

impl<T: Real> PassMethod for EbeCase<'_, T> {
    type Verdict = f64;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        self.stages.clone()
    }
    fn decisive(&self) -> &'static str {
        "solve"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        let mut out = vec![&self.cg.x, &self.b];
        if !self.recompute {
            out.push(&self.ke);
        }
        out
    }
    /// A^e stored (v1), the element-level boundary conditions (b = -(A g) on the free nodes),
    /// the masked CG, and the solution checked.
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, m, c) = (self.base.dev, self.base.mesh, self.base.c);
        let (ne, n) = (c.num_elements(), c.num_nodes());
        if !self.recompute {
            let args = EbeStore { tris: &m.tris, x: &m.x, y: &m.y, ke: &self.ke, ne: ne as i64 };
            pass.device(dev, "elements", &mut || dev.launch_with(&self.k.store, cover(ne), &args))?;
        }
        pass.device(dev, "bc", &mut || {
            self.product(&m.g, &self.b)?;
            dev.launch_with(&self.k.finish, cover(n), &EbeRhsFinish { b: &self.b, dof: &m.dof, n: n as i64 })
        })?;
        let run = self.cg.solve::<T>(
            &self.cgk,
            &self.b,
            self.base.stop,
            Stage { pass, name: "solve" },
            Product::Other(&mut |cg| self.masked_product(&cg.p, &cg.q)),
        )?;
        let err = check::<T>(dev, &self.cg, c, self.base.reference.x, true)?;
        self.checks.note(run, err, None);
        Ok(())
    }
    fn verify(&mut self) -> Result<f64, CaseError> {
        Ok(self.checks.worst())
    }
}

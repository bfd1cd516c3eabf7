//! A-FEM (the paper's method): element entries pushed into per-row linked lists with atomics,
//! the boundary conditions applied on the lists, each row consolidated, the lists converted to
//! CSR, then our CG on it.

use std::marker::PhantomData;

use super::gpu::{cover, csr_error, fill_with, spmv_into, Cg, CgKernels, DeviceCsr, Memory, Product, Stage};
use super::kernel::{Bc, Consolidate, Push, SpmvCsr, ToCsr};
use super::method::{DeviceMethod, Passes};
use super::methods::{check, Base, Checks, MethodRun, NODE_BYTES};
use super::product::{self, Output, ProductRun};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::{exclusive_scan, scan_sums_len, ScanKernels};
use crate::device::{Buffer, DeviceExt, Kernel};
use crate::lifecycle::{drive, Driven, PassMethod};
use crate::measure::{Pass, Timer};
use crate::real::Real;

/// The paper's method, as registered.
pub struct AFem;

impl DeviceMethod for AFem {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, base: &Base, passes: Passes) -> Result<MethodRun, CaseError> {
        let Passes { mut mem, about, mode, .. } = passes;
        let mut m = AFemCase::<T>::new(ctx, base, &mut mem, about.timed_stages())?;
        let Driven { staged, .. } = drive(ctx, base.dev, &mut m, mode)?;
        let product = m.product(ctx)?;
        m.checks.into_run(staged, mem, None, product)
    }
}

/// A-FEM's linked lists (row heads; per element entry a 16-byte node: next, column, value),
/// its row counts, right-hand side and scan scratch.
struct Lists {
    head: Buffer,
    node: Buffer,
    count: Buffer,
    rhs: Buffer,
    sums: Buffer,
}

/// A-FEM's kernels: push, boundary conditions, consolidation, the scan, the conversion, the
/// CSR product and the filler.
struct AFemKernels {
    push: Kernel,
    bc: Kernel,
    cons: Kernel,
    scan: ScanKernels,
    to_csr: Kernel,
    spmv: Kernel,
    fill: Kernel,
}

/// A-FEM: element entries pushed into per-row lists with atomics, boundary conditions on the
/// lists, consolidation, conversion to CSR, then our CG on it.
pub(crate) struct AFemCase<'a, T> {
    base: &'a Base<'a>,
    stages: Vec<(&'static str, Timer)>,
    lists: Lists,
    a: DeviceCsr,
    cg: Cg,
    k: AFemKernels,
    cgk: CgKernels<'a>,
    pub(crate) checks: Checks,
    real: PhantomData<T>,
}

impl<'a, T: Real> AFemCase<'a, T> {
    pub(crate) fn new(
        ctx: &mut CaseCtx,
        base: &'a Base<'a>,
        mem: &mut Memory,
        stages: Vec<(&'static str, Timer)>,
    ) -> Result<Self, CaseError> {
        let (dev, c, s) = (base.dev, base.c, std::mem::size_of::<T>());
        let (nf, ne, n, nnz) = (c.n_free, c.num_elements(), c.num_nodes(), c.pattern.nnz());
        let lists_bytes = 4 * n + 9 * ne * NODE_BYTES;
        let lists = Lists {
            head: mem.alloc(dev, 4 * n)?,
            node: mem.alloc(dev, 9 * ne * NODE_BYTES)?,
            count: mem.alloc(dev, 4 * nf)?,
            rhs: mem.alloc(dev, s * nf)?,
            sums: mem.alloc(dev, 4 * scan_sums_len(nf + 1))?,
        };
        let a =
            DeviceCsr { row_ptr: mem.alloc(dev, 4 * (nf + 1))?, col: mem.alloc(dev, 4 * nnz)?, val: mem.alloc(dev, s * nnz)?, rows: nf };
        // The lists are freed once converted (their buffers are kept for the next pass).
        mem.release(lists_bytes);
        let cg = Cg::new::<T>(dev, mem, nf, base.csr_cg)?;
        let mut kk = base.kernels(ctx);
        let k = AFemKernels {
            push: kk.get::<Push>()?,
            bc: kk.get::<Bc>()?,
            cons: kk.get::<Consolidate>()?,
            scan: kk.scan()?,
            to_csr: kk.get::<ToCsr>()?,
            spmv: kk.get::<SpmvCsr>()?,
            fill: kk.filler()?,
        };
        let cgk = kk.cg()?;
        Ok(AFemCase { base, stages, lists, a, cg, k, cgk, checks: Checks::default(), real: PhantomData })
    }

    /// The stages up to the CSR matrix: elements (lists emptied inside the stage, as csr-atomic
    /// zeroes its values there), bc, consolidate and convert.
    fn assemble(&self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, m, c, s) = (self.base.dev, self.base.mesh, self.base.c, std::mem::size_of::<T>());
        let (nf, ne, n) = (c.n_free, c.num_elements(), c.num_nodes());
        let (l, a, k) = (&self.lists, &self.a, &self.k);
        pass.device(dev, "elements", &mut || {
            fill_with(dev, &k.fill, &l.head, u32::MAX, n)?;
            dev.launch_with(&k.push, cover(ne), &Push { tris: &m.tris, x: &m.x, y: &m.y, head: &l.head, node: &l.node, ne: ne as i64 })
        })?;
        let (head, node, dof, n_i) = (&l.head, &l.node, &m.dof, n as i64);
        pass.device(dev, "bc", &mut || {
            fill_with(dev, &k.fill, &l.rhs, 0, nf * s / 4)?;
            dev.launch_with(&k.bc, cover(n), &Bc { head, node, dof, g: &m.g, rhs: &l.rhs, n: n_i })
        })?;
        pass.device(dev, "consolidate", &mut || {
            dev.launch_with(&k.cons, cover(n), &Consolidate { head, node, dof, count: &l.count, n: n_i })
        })?;
        // Checked before the conversion (untimed): a row the kernel could not hold would make
        // the row pointers wrong.
        let counts: Vec<i32> = dev.download_vec(&l.count, nf)?;
        if let Some(r) = counts.iter().position(|&v| v < 0) {
            return Err(CaseError::Failed(format!("row {r} has more distinct columns than the kernel's MAXROW")));
        }
        pass.device(dev, "convert", &mut || {
            exclusive_scan(dev, &k.scan, &l.count, &a.row_ptr, &l.sums, nf, nf + 1)?;
            dev.launch_with(&k.to_csr, cover(n), &ToCsr { head, node, dof, row_ptr: &a.row_ptr, col: &a.col, val: &a.val, n: n_i })
        })?;
        Ok(())
    }

    /// Our CSR product on its own, on the product's buffers.
    pub(crate) fn product(&self, ctx: &mut CaseCtx) -> Result<ProductRun, CaseError> {
        let (dev, c, s) = (self.base.dev, self.base.c, std::mem::size_of::<T>());
        let (px, qy) = product::buffers::<T>(dev, c, false)?;
        let bytes = product::csr_bytes(c, s);
        let (sp, a, partial) = (&self.k.spmv, &self.a, &self.cg.partial);
        product::measure::<T>(ctx, dev, (c, self.base.reference.vals), Output { q: &qy, on_nodes: false }, bytes, &mut || {
            spmv_into(dev, sp, a, &px, &qy, partial)
        })
    }
}

impl<T: Real> PassMethod for AFemCase<'_, T> {
    type Verdict = f64;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        self.stages.clone()
    }
    fn decisive(&self) -> &'static str {
        "solve"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.cg.x, &self.lists.rhs, &self.lists.count, &self.a.row_ptr, &self.a.col, &self.a.val]
    }
    /// Every output poisoned each pass (NaN values, -1 indices), the matrix assembled, solved,
    /// and the solution and matrix checked.
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, c, s) = (self.base.dev, self.base.c, std::mem::size_of::<T>());
        let (nf, nnz) = (c.n_free, c.pattern.nnz());
        let (l, a) = (&self.lists, &self.a);
        for (buf, words) in [(&l.rhs, nf * s / 4), (&l.count, nf), (&a.row_ptr, nf + 1), (&a.col, nnz), (&a.val, nnz * s / 4)] {
            fill_with(dev, &self.k.fill, buf, u32::MAX, words)?;
        }
        self.assemble(pass)?;
        let run = self.cg.solve::<T>(&self.cgk, &l.rhs, self.base.stop, Stage { pass, name: "solve" }, Product::Csr(a))?;
        let err = check::<T>(dev, &self.cg, c, self.base.reference.x, false)?;
        let csr = csr_error::<T>(dev, a, &c.pattern, self.base.reference.vals)?;
        self.checks.note(run, err, Some(csr));
        Ok(())
    }
    fn verify(&mut self) -> Result<f64, CaseError> {
        Ok(self.checks.worst())
    }
}

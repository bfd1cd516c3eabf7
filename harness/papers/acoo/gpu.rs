//! The device methods, written once against the `Device` trait: A-FEM (linked lists, atomics,
//! no coloring, then CSR), EbE-v1 and EbE-v2 (colored element-by-element products), the CSR
//! baseline by atomic adds into precomputed slots, and the conjugate gradients they share.

use fembench_fem::csr::Pattern;

use super::capacitor::Capacitor;
use super::kernel::ACOO;
use super::kernel::{EbeMatvec, Pipe, Reduce, Reduce2, SpmvCsr, SpmvCsrP, Start, VendorAlpha, VendorBeta, VendorStart, Xr, P};
use crate::benchmark::{CaseError, ModuleCache};
pub(crate) use crate::device::scan::fill_words as fill_with;
use crate::device::scan::ScanKernels;
use crate::device::vendor::{Compressed, VendorBlas, VendorOp};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, KernelArgs, Launch};
use crate::kernels::Defines;
use crate::measure::Pass;
use crate::real::Real;
use crate::Precision;

/// Work-group size of every kernel (the scan and reduction kernels assume it).
pub(crate) const BLOCK: usize = 256;
/// CG iterations enqueued between two convergence checks (even: a fused CSR product swaps its
/// two direction vectors every iteration, so every batch starts from the first).
const BATCH: usize = 16;

/// Device memory of one method's buffers, as they are allocated and freed in the method's own
/// order (A-FEM frees its lists after the conversion): the peak is what the method needs.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Memory {
    now: usize,
    pub(crate) peak: usize,
}

impl Memory {
    pub(crate) fn alloc(&mut self, dev: &dyn Device, bytes: usize) -> DeviceResult<Buffer> {
        self.now += bytes;
        self.peak = self.peak.max(self.now);
        dev.alloc(bytes.max(4))
    }
    pub(crate) fn upload<T: bytemuck::Pod>(&mut self, dev: &dyn Device, data: &[T]) -> DeviceResult<Buffer> {
        self.now += std::mem::size_of_val(data);
        self.peak = self.peak.max(self.now);
        dev.upload_slice(data)
    }
    /// Counts `bytes` allocated elsewhere (a vendor library's workspace).
    pub(crate) fn count(&mut self, bytes: usize) {
        self.now += bytes;
        self.peak = self.peak.max(self.now);
    }
    /// Counts `bytes` as freed (the buffer itself is kept for the next pass: nothing is freed
    /// inside a timed pass).
    pub(crate) fn release(&mut self, bytes: usize) {
        self.now -= bytes.min(self.now);
    }
}

/// Kernels of one precision, compiled through the run's module cache.
pub(crate) struct Kernels<'a, 'm> {
    pub(crate) dev: &'a dyn Device,
    pub(crate) modules: &'m mut ModuleCache,
    pub(crate) defines: Defines,
}

impl<'a> Kernels<'a, '_> {
    /// The kernel whose arguments are `A`.
    pub(crate) fn get<A: KernelArgs>(&mut self) -> Result<Kernel, CaseError> {
        Ok(self.modules.kernel_for::<A>(self.dev, &ACOO, &self.defines)?)
    }
    pub(crate) fn ebe(&mut self, recompute: bool) -> Result<Kernel, CaseError> {
        let d = self.defines.clone().with("EBE_RECOMPUTE", recompute as u8);
        Ok(self.modules.kernel_for::<EbeMatvec>(self.dev, &ACOO, &d)?)
    }
    /// The harness' `fb_fill_u32` kernel (for fills inside timed bodies: fetch it before).
    pub(crate) fn filler(&mut self) -> Result<Kernel, CaseError> {
        Ok(self.modules.filler(self.dev)?)
    }
    /// The shared exclusive scan's kernels (kernels/scan.kern).
    pub(crate) fn scan(&mut self) -> Result<ScanKernels, CaseError> {
        Ok(self.modules.scan(self.dev)?)
    }
    /// The kernels of our CG ([`Cg::solve`]).
    pub(crate) fn cg(&mut self) -> Result<CgKernels<'a>, CaseError> {
        Ok(CgKernels {
            start: self.get::<Start>()?,
            reduce: self.get::<Reduce>()?,
            xr: self.get::<Xr>()?,
            p: self.get::<P>()?,
            spmv_p: self.get::<SpmvCsrP>()?,
            pipe: self.get::<Pipe>()?,
            reduce2: self.get::<Reduce2>()?,
            fill: self.filler()?,
            dev: self.dev,
        })
    }
    /// The scalar steps of the library CG in device pointer mode ([`Cg::solve_vendor`]).
    pub(crate) fn vendor_cg(&mut self) -> Result<VendorCgKernels<'a>, CaseError> {
        let (start, alpha, beta) = (self.get::<VendorStart>()?, self.get::<VendorAlpha>()?, self.get::<VendorBeta>()?);
        let fill = self.filler()?;
        Ok(VendorCgKernels { start, alpha, beta, fill, dev: self.dev })
    }
}

/// Our CG's kernels on their device, fetched before any pass (loading a module inside a timed
/// body would wait on the closed gate).
pub(crate) struct CgKernels<'d> {
    pub(crate) dev: &'d dyn Device,
    start: Kernel,
    reduce: Kernel,
    xr: Kernel,
    p: Kernel,
    spmv_p: Kernel,
    pub(crate) pipe: Kernel,
    pub(crate) reduce2: Kernel,
    pub(crate) fill: Kernel,
}

/// The product q = A p of our CG.
pub(crate) enum Product<'k> {
    /// Our CSR product with the direction update fused into it (`cg_spmv_csr_p`): p' = r + beta p
    /// is formed where it is read, written into the other of two direction vectors, and the
    /// iteration has no launch of its own for it (four launches, not five).
    Csr(&'k DeviceCsr),
    /// Another product: it enqueues q = A p and the block partials of p.q (into `partial`); the
    /// direction update is a launch of its own.
    Other(&'k mut dyn FnMut(&Cg) -> DeviceResult<()>),
}

/// The library CG's own kernels on their device: its start, its scalar steps and a filler.
pub(crate) struct VendorCgKernels<'d> {
    pub(crate) dev: &'d dyn Device,
    start: Kernel,
    alpha: Kernel,
    beta: Kernel,
    fill: Kernel,
}

pub(crate) fn cover(n: usize) -> Launch {
    Launch::cover(n.max(1), BLOCK)
}

/// The mesh on the device.
pub(crate) struct Mesh {
    pub(crate) tris: Buffer,
    pub(crate) x: Buffer,
    pub(crate) y: Buffer,
    pub(crate) dof: Buffer,
    pub(crate) g: Buffer,
}

impl Mesh {
    pub(crate) fn upload<T: Real>(dev: &dyn Device, mem: &mut Memory, c: &Capacitor) -> DeviceResult<Mesh> {
        let tris: Vec<i32> = c.tris.iter().flat_map(|t| t.map(|v| v as i32)).collect();
        let real = |v: &[f64]| v.iter().map(|&a| T::from_f64(a)).collect::<Vec<T>>();
        Ok(Mesh {
            tris: mem.upload(dev, &tris)?,
            x: mem.upload(dev, &real(&c.x))?,
            y: mem.upload(dev, &real(&c.y))?,
            dof: mem.upload(dev, &c.dof)?,
            g: mem.upload(dev, &real(&c.g))?,
        })
    }
}

/// What a device CG gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CgRun {
    /// The iteration at which ||r|| <= tol ||b|| was first seen.
    pub(crate) iterations: usize,
    /// Iterations run (a batch may run past convergence before the host sees it).
    pub(crate) performed: usize,
    pub(crate) converged: bool,
    /// How the device CG ran: each full batch one CUDA graph launch, and the direction update
    /// fused into the product (the rows' `cg_graph` and `cg_fused`; host and library CGs: none).
    pub(crate) graph: bool,
    pub(crate) fused: bool,
    /// The single-reduction form (the rows' `cg_single`).
    pub(crate) single: bool,
}

impl CgRun {
    /// A CG that stopped at `iterations` after running `performed`, its launches plain (the host's,
    /// the libraries' and the vendor's; our device CG sets its own).
    pub(crate) fn counted(iterations: usize, performed: usize, converged: bool) -> CgRun {
        CgRun { iterations, performed, converged, graph: false, fused: false, single: false }
    }
}

/// CG vectors and scalars on the device, for systems of `n` unknowns.
pub(crate) struct Cg {
    pub(crate) x: Buffer,
    pub(crate) r: Buffer,
    pub(crate) p: Buffer,
    pub(crate) q: Buffer,
    pub(crate) partial: Buffer,
    pub(crate) scal: Buffer,
    pub(crate) history: Buffer,
    /// The second direction vector of a fused CSR product ([`Product::Csr`]).
    p_next: Option<Buffer>,
    /// The single-reduction CG's second r, its two s and second q ([`CgForm::SingleReduction`]).
    pub(crate) single: Option<[Buffer; 4]>,
    pub(crate) n: usize,
}

/// How our CG runs a CSR product ([`Product::Csr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgForm {
    /// Five launches an iteration, the direction update its own (EbE's CG).
    Plain,
    /// The direction update inside the product: four launches an iteration.
    Fused,
    /// Chronopoulos and Gear's single-reduction CG with every vector update inside the product:
    /// two launches an iteration (the product, one reduction).
    SingleReduction,
}

impl Cg {
    /// `form`: the vectors a CSR product of that form needs besides the plain CG's.
    pub(crate) fn new<T: Real>(dev: &dyn Device, mem: &mut Memory, n: usize, form: CgForm) -> DeviceResult<Cg> {
        let s = std::mem::size_of::<T>();
        let fused = form == CgForm::Fused;
        let single = form == CgForm::SingleReduction;
        Ok(Cg {
            x: mem.alloc(dev, n * s)?,
            r: mem.alloc(dev, n * s)?,
            p: mem.alloc(dev, n * s)?,
            q: mem.alloc(dev, n * s)?,
            partial: mem.alloc(dev, (1 + single as usize) * n.div_ceil(BLOCK).max(1) * s)?,
            scal: mem.alloc(dev, 10 * s)?,
            history: mem.alloc(dev, BATCH * s)?,
            p_next: if fused { Some(mem.alloc(dev, n * s)?) } else { None },
            single: if single {
                Some([mem.alloc(dev, n * s)?, mem.alloc(dev, n * s)?, mem.alloc(dev, n * s)?, mem.alloc(dev, n * s)?])
            } else {
                None
            },
            n,
        })
    }

    pub(crate) fn groups(&self) -> usize {
        self.n.div_ceil(BLOCK).max(1)
    }

    /// Solves A x = b from x = 0 until ||r|| <= tol ||b||, at most `max_iter` iterations, with
    /// `product` as q = A p. The iterations run in device-timed batches; between batches the
    /// host reads the residual history (not timed), and the batches' device times are recorded
    /// as stage `stage`.
    pub(crate) fn solve<T: Real>(
        &self,
        k: &CgKernels,
        b: &Buffer,
        stop: Stop,
        stage: Stage,
        mut product: Product,
    ) -> Result<CgRun, CaseError> {
        let CgKernels { dev, start, reduce, xr, p: pk, spmv_p, .. } = k;
        let dev = *dev;
        let (n, m) = (self.n as i64, self.groups() as i64);
        let (x, r, q, scal, partial) = (&self.x, &self.r, &self.q, &self.scal, &self.partial);
        let reduce_args = |what: i32, it: i32| Reduce { partial, m, scal, history: &self.history, what, it };
        let one = Launch { groups: 1, group_size: BLOCK };
        let t = dev.time_events(&mut || {
            dev.launch_with(start, cover(self.n), &Start { b, x, r, p: &self.p, partial, n })?;
            dev.launch_with(reduce, one, &reduce_args(2, 0))
        })?;
        stage.pass.record(stage.name, t);
        if let (Some(vectors), Product::Csr(a)) = (&self.single, &product) {
            return self.solve_single::<T>(k, a, vectors, stop, stage);
        }
        if matches!(product, Product::Csr(_)) && self.p_next.is_none() {
            return Err(CaseError::Failed("a fused CSR product needs the CG's second direction vector (Cg::new with fused)".into()));
        }
        let mut iteration = |j: usize| -> DeviceResult<()> {
            // The direction this iteration's product and update read: p, or (fused, every other
            // iteration: a batch has an even count) the second vector.
            let p = match &mut product {
                Product::Csr(a) => {
                    let other = self.p_next.as_ref().expect("checked above");
                    let (p, p_next) = if j % 2 == 0 { (&self.p, other) } else { (other, &self.p) };
                    let (row_ptr, col, val) = (&a.row_ptr, &a.col, &a.val);
                    dev.launch_with(spmv_p, cover(self.n), &SpmvCsrP { row_ptr, col, val, r, p, p_next, scal, q, partial, n })?;
                    p_next
                }
                Product::Other(matvec) => {
                    matvec(self)?;
                    &self.p
                }
            };
            dev.launch_with(reduce, one, &reduce_args(0, 0))?;
            dev.launch_with(xr, cover(self.n), &Xr { x, r, p, q, scal, partial, n })?;
            dev.launch_with(reduce, one, &reduce_args(1, j as i32))?;
            match product {
                Product::Csr(_) => Ok(()),
                Product::Other(_) => dev.launch_with(pk, cover(self.n), &P { p, r, scal, n }),
            }
        };
        let run = self.batches::<T>(dev, stop, stage, ("CG", 1), true, &mut iteration)?;
        Ok(CgRun { fused: matches!(product, Product::Csr(_)), ..run })
    }

    /// The iterations after the start, in device-timed batches of [`BATCH`] (`iteration(j)`
    /// enqueues iteration j of a batch, writing its r.r into `history[j]`). With `graphs`, where
    /// the backend has them (CUDA), a whole batch is recorded once (untimed: nothing runs) and each
    /// full batch replayed by one launch, as NVIDIA's CUDA-graph CG sample does; a last, shorter
    /// batch and other backends enqueue call by call. Between batches the
    /// host reads the history (not timed) and stops at ||r|| <= tol ||b|| (||b||^2 from the
    /// start, in `scal`) or after `max_iter`; the batches are recorded as stage `stage`. `what`
    /// names the CG in a breakdown's message; `shift`: updates before `history[j]`'s residual
    /// beyond j (1: iteration j writes its new r.r; 0: the single-reduction CG's iteration j
    /// writes r_j.r_j, the residual of j updates).
    pub(crate) fn batches<T: Real>(
        &self,
        dev: &dyn Device,
        Stop { tol, max_iter }: Stop,
        stage: Stage,
        (what, shift): (&str, usize),
        graphs: bool,
        iteration: &mut dyn FnMut(usize) -> DeviceResult<()>,
    ) -> Result<CgRun, CaseError> {
        let recorded = if graphs { dev.record_if_graphs(&mut || (0..BATCH).try_for_each(&mut *iteration))? } else { None };
        let graph = recorded.is_some();
        let mut run_batch = |count: usize| match &recorded {
            Some(g) if count == BATCH => dev.launch_graph(g),
            _ => (0..count).try_for_each(&mut *iteration),
        };
        let bb = dev.download_vec::<T>(&self.scal, 5)?[4].to_f64();
        let target = tol * tol * bb;
        let mut performed = 0;
        while performed < max_iter && bb > 0.0 {
            let batch = BATCH.min(max_iter - performed);
            let t = dev.time_events(&mut || run_batch(batch))?;
            stage.pass.record(stage.name, t);
            let history = dev.download_vec::<T>(&self.history, batch)?;
            if let Some(j) = history.iter().position(|h| h.to_f64() <= target) {
                return Ok(CgRun { graph, ..CgRun::counted(performed + j + shift, performed + batch, true) });
            }
            if history.iter().any(|h| !h.to_f64().is_finite()) {
                return Err(CaseError::Failed(format!(
                    "{what} broke down: residual {:?} after {} iterations",
                    history.last().map(|h| h.to_f64()),
                    performed + batch
                )));
            }
            performed += batch;
        }
        Ok(CgRun { graph, ..CgRun::counted(performed, performed, bb == 0.0) })
    }

    /// The CG an expert writes with the vendor libraries, as NVIDIA's `conjugateGradientCudaGraphs`
    /// sample does (without the graph): `vendor`'s planned cuSPARSE q = A p and cuBLAS' dot, axpy
    /// and scal in device pointer mode, the scalar steps (alpha, beta) in one-thread kernels of
    /// ours, so that nothing waits on the host inside a batch. As [`Cg::solve`]: from x = 0 until
    /// ||r|| <= tol ||b||, in device-timed batches, the host reading the residual history between
    /// them (not timed), the batches recorded as stage `stage`.
    ///
    /// `graph`: a whole batch is recorded once (untimed, after the warm-up) as a CUDA graph and
    /// each full batch replayed by one launch, as NVIDIA's `conjugateGradientCudaGraphs` does; a
    /// last, shorter batch is enqueued call by call.
    pub(crate) fn solve_vendor<T: Real>(
        &self,
        k: &VendorCgKernels,
        vendor: Vendor,
        graph: bool,
        b: &Buffer,
        stop: Stop,
        stage: Stage,
    ) -> Result<CgRun, CaseError> {
        let (Vendor { spmv, blas }, p, n) = (vendor, T::PRECISION, self.n);
        let VendorCgKernels { dev, start, alpha, beta, fill: z } = k;
        let dev = *dev;
        let one = Launch { groups: 1, group_size: 1 };
        let begin = || -> DeviceResult<()> {
            fill_with(dev, z, &self.x, 0, n * std::mem::size_of::<T>() / 4)?;
            blas.copy(p, n, b, &self.r)?;
            blas.copy(p, n, &self.r, &self.p)?;
            blas.dot_to(p, n, &self.r, &self.r, &self.scal, 0)?;
            dev.launch_with(start, one, &VendorStart { scal: &self.scal })
        };
        let mut iteration = |j: usize| -> DeviceResult<()> {
            spmv.enqueue()?;
            blas.dot_to(p, n, &self.p, &self.q, &self.scal, 1)?;
            dev.launch_with(alpha, one, &VendorAlpha { scal: &self.scal })?;
            blas.axpy_by(p, n, &self.scal, 2, &self.p, &self.x)?;
            blas.axpy_by(p, n, &self.scal, 5, &self.q, &self.r)?;
            blas.dot_to(p, n, &self.r, &self.r, &self.scal, 6)?;
            dev.launch_with(beta, one, &VendorBeta { scal: &self.scal, history: &self.history, it: j as i32 })?;
            blas.scal_by(p, n, &self.scal, 3, &self.p)?;
            blas.axpy_by(p, n, &self.scal, 7, &self.r, &self.p)
        };
        // One untimed start and iteration first: cuBLAS loads the kernels of its device-pointer
        // calls on first use, which waits on the stream and must not happen behind the gate.
        begin()?;
        iteration(0)?;
        dev.synchronize()?;
        let t = dev.time_events(&mut || begin())?;
        stage.pass.record(stage.name, t);
        self.batches::<T>(dev, stop, stage, ("the vendor CG", 1), graph, &mut iteration)
    }
}

/// The CG a user writes with the vendor libraries, as NVIDIA's `conjugateGradient` sample does:
/// `spmv` (a planned cuSPARSE q = A p) and cuBLAS' copy, dot, axpy and scal, the scalars on the
/// host. Each iteration waits for its two dot products, and the convergence test
/// (||r|| <= tol ||b||, from x = 0) runs every iteration. The whole solve is one region timed by
/// device events with the gate open (`time_events_open`), so the host's waits between the calls
/// count, as they do for the user; it is recorded as stage `stage`.
pub(crate) fn vendor_cg<T: Real>(
    dev: &dyn Device,
    Vendor { spmv, blas }: Vendor,
    filler: &Kernel,
    b: &Buffer,
    cg: &Cg,
    Stop { tol, max_iter }: Stop,
    stage: Stage,
) -> Result<CgRun, CaseError> {
    let (p, n) = (T::PRECISION, cg.n);
    let (mut iterations, mut converged, mut last) = (0, false, f64::NAN);
    let t = dev.time_events_open(&mut || {
        fill_with(dev, filler, &cg.x, 0, n * std::mem::size_of::<T>() / 4)?;
        blas.copy(p, n, b, &cg.r)?;
        blas.copy(p, n, &cg.r, &cg.p)?;
        let mut rr = blas.dot(p, n, &cg.r, &cg.r)?;
        let target = tol * tol * rr;
        (iterations, converged, last) = (0, rr <= target, rr);
        while !converged && iterations < max_iter && rr.is_finite() {
            spmv.enqueue()?;
            let alpha = rr / blas.dot(p, n, &cg.p, &cg.q)?;
            blas.axpy(p, n, alpha, &cg.p, &cg.x)?;
            blas.axpy(p, n, -alpha, &cg.q, &cg.r)?;
            let next = blas.dot(p, n, &cg.r, &cg.r)?;
            iterations += 1;
            (converged, last) = (next <= target, next);
            if !converged {
                blas.scal(p, n, next / rr, &cg.p)?;
                blas.axpy(p, n, 1.0, &cg.r, &cg.p)?;
            }
            rr = next;
        }
        Ok(())
    })?;
    stage.pass.record(stage.name, t);
    if !last.is_finite() {
        return Err(CaseError::Failed(format!("the vendor CG broke down: residual {last} after {iterations} iterations")));
    }
    Ok(CgRun::counted(iterations, iterations, converged))
}

/// When a CG stops: ||r|| <= tol ||b|| (from x = 0), or after `max_iter` iterations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stop {
    pub(crate) tol: f64,
    pub(crate) max_iter: usize,
}

/// Where a solve's device times go: `pass`, as stage `name`.
pub(crate) struct Stage<'p, 'n> {
    pub(crate) pass: &'p mut Pass<'n>,
    pub(crate) name: &'p str,
}

/// The vendor calls a CG is written with: a planned cuSPARSE q = A p, and cuBLAS.
#[derive(Clone, Copy)]
pub(crate) struct Vendor<'v> {
    pub(crate) spmv: &'v dyn VendorOp,
    pub(crate) blas: &'v dyn VendorBlas,
}

/// A CSR matrix on the device.
pub(crate) struct DeviceCsr {
    pub(crate) row_ptr: Buffer,
    pub(crate) col: Buffer,
    pub(crate) val: Buffer,
    pub(crate) rows: usize,
}

impl DeviceCsr {
    /// The matrix as the vendor library reads it (square, `nnz` entries).
    pub(crate) fn compressed(&self, precision: Precision, nnz: usize) -> Compressed<'_> {
        Compressed { precision, rows: self.rows, cols: self.rows, nnz, row_ptr: &self.row_ptr, col: &self.col, val: &self.val }
    }
}

/// q = A p with the block partials of p.q into `partial` (one per work-group of the rows).
pub(crate) fn spmv_into(dev: &dyn Device, kern: &Kernel, a: &DeviceCsr, p: &Buffer, q: &Buffer, partial: &Buffer) -> DeviceResult<()> {
    let args = SpmvCsr { row_ptr: &a.row_ptr, col: &a.col, val: &a.val, p, q, partial, n: a.rows as i64 };
    dev.launch_with(kern, cover(a.rows), &args)
}

/// The CSR arrays back on the host, checked against the reference pattern: the relative error
/// of the values (infinite if the pattern differs).
pub(crate) fn csr_error<T: Real>(dev: &dyn Device, a: &DeviceCsr, pattern: &Pattern, reference: &[f64]) -> Result<f64, CaseError> {
    let row_ptr: Vec<i32> = dev.download_vec(&a.row_ptr, a.rows + 1)?;
    let nnz = pattern.nnz();
    if row_ptr.iter().zip(&pattern.row_ptr).any(|(&a, &b)| a as u32 != b) {
        return Ok(f64::INFINITY);
    }
    let col: Vec<i32> = dev.download_vec(&a.col, nnz)?;
    if col.iter().zip(&pattern.col).any(|(&a, &b)| a as u32 != b) {
        return Ok(f64::INFINITY);
    }
    let val: Vec<f64> = dev.download_vec::<T>(&a.val, nnz)?.into_iter().map(|v| v.to_f64()).collect();
    Ok(fembench_fem::verify::compare(&[(&val, reference)]).max_scaled)
}

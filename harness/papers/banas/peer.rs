//! The peers (beyond the paper, CUDA only): the element stiffness matrices as one batched GEMM,
//! what a user of cuBLAS or torch writes. Per element, B (6 N_Q x 3 N_sh: the Voigt strains of
//! every dof at every point) and E = w |det J| D B come from our kernel (`banas_bmatrix`), and
//! cuBLAS' strided-batched GEMM forms A^e = B^T E: `cublas-gemm` in cuBLAS' default math (FP32
//! without TF32; f64 on the FP64 tensor cores where the GPU has them), `cublas-gemm-tf32` on the
//! TF32 tensor cores (f32 only, TF32's accuracy), `cublas-gemm-3xtf32` as three TF32 GEMMs of the
//! high and low TF32 parts (`banas_split_tf32`), keeping about f32's accuracy. Same elements,
//! inputs (the NOJAC Jacobian terms) and check as the paper's variants, on the same GPU and stream;
//! every row carries its error against the f64 reference.
//!
//! Rows (metric): `bmatrix` (our kernel, one thread per entry of B and E), `split` (3xTF32 only),
//! `gemm` (cuBLAS alone) and `kernel` (all, the time that compares with a variant's kernel). The inputs are uploaded once, outside the timers;
//! every pass poisons B, E and A, and A is downloaded and checked after every pass (the case
//! lifecycle's checked pass first, [`crate::lifecycle`]).

use super::elasticity::{element_dofs, element_flops};
use super::kernel::{Bmatrix, SplitTf32};
use std::marker::PhantomData;
use std::sync::Arc;

use super::inputs::{check_pass, input_lengths, prepare_inputs, prepared, with_extras, Prepared};
use super::kernel::BANAS;
use super::method::DeviceMethod;
use super::plan::{Plan, Tuning, Variant};
use super::spec::{Method, Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::device::scan::fill_words;
use crate::device::vendor::{BatchedGemm, VendorBlas};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, HostBuffer, Kernel, Launch};
use crate::kernels::Defines;
use crate::lifecycle::{checked, trials, PassMethod};
use crate::measure::{CacheFlusher, CacheMode, Pass, Staged, Timer};
use crate::real::Real;
use crate::Precision;

const PEER_STAGES: [(&str, Timer); 2] = [("bmatrix", Timer::DeviceEvent), ("gemm", Timer::DeviceEvent)];
const SPLIT_STAGES: [(&str, Timer); 3] = [("bmatrix", Timer::DeviceEvent), ("split", Timer::DeviceEvent), ("gemm", Timer::DeviceEvent)];

/// The error a peer's output may have against the f64 reference: f64's and f32's as the paper's
/// variants; TF32's (10 stored mantissa bits) for the plain TF32 GEMM.
pub(crate) fn tolerance(method: Method, precision: Precision) -> f64 {
    match (method, precision) {
        (Method::CUBLAS_GEMM_TF32, _) => 1e-2,
        (_, Precision::F32) => 1e-4,
        (_, Precision::F64) => 1e-10,
    }
}

/// The cuBLAS route: B by our kernel, then a strided-batched GEMM (in TF32 or as 3xTF32 by the
/// case's name).
pub struct CublasRoute;

impl DeviceMethod for CublasRoute {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        run_gemm_peer::<T>(ctx, dev, problem, point)
    }
}

fn run_gemm_peer<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let (prep, nsh, nq) = peer_problem(ctx, dev, problem, point, T::PRECISION)?;
    let mut m = GemmPeer::<T>::new(ctx, dev, &prep, (nsh, nq), point.method)?;
    // The checked pass; its error is in `m.worst` with every timed pass's.
    checked(ctx, dev, &mut m)?;
    let (mut runs, mut passes) = (Vec::new(), 1);
    for &mode in ctx.policy.modes.iter() {
        m.flusher = match mode {
            CacheMode::Cold => Some(ctx.flusher.ok_or_else(|| CaseError::Failed("cold mode asked for, but no cache flusher".into()))?),
            CacheMode::Warm => None,
        };
        let staged = trials(ctx.policy, &mut m, mode)?;
        passes += staged.passes;
        runs.push(staged);
    }
    Ok(m.rows(runs, m.worst, passes))
}

/// A peer's problem at `point`'s degree and its shape (N_sh, N_Q): the same elements as
/// REG_NOJAC's launch, the same output size, so the same work.
pub(crate) fn peer_problem(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    point: &Point,
    precision: Precision,
) -> Result<(Arc<Prepared>, usize, usize), CaseError> {
    let p = point.degree as usize;
    let nsh = super::prism::shape_functions(p);
    let nq = super::prism::quadrature(p).map_err(CaseError::Failed)?.len();
    let tuning = Tuning { output_bytes: (problem.output_mib * (1u64 << 20) as f64) as usize, ..Default::default() };
    let plan = Plan::new(Variant::RegNojac, nsh, nq, precision, dev.info(), &tuning).map_err(CaseError::Failed)?;
    Ok((prepared(ctx.run, point.degree, plan.elements, problem.verify_fraction)?, nsh, nq))
}

/// The inputs on the device (the NOJAC variant's: shape derivatives, Jacobian terms, Lamé
/// coefficients), B and E, their low TF32 parts (3xTF32), and A.
struct GemmBuffers {
    dphi: Buffer,
    jterms: Buffer,
    lame: Buffer,
    bm: Buffer,
    em: Buffer,
    lows: Option<(Buffer, Buffer)>,
    a: Buffer,
}

/// A cuBLAS route: B and E by our kernel, (the split,) then the GEMMs.
struct GemmPeer<'a, T> {
    dev: &'a dyn Device,
    blas: &'a dyn VendorBlas,
    prep: &'a Prepared,
    method: Method,
    /// The GEMM's dimensions: K = 6 N_Q and N = 3 N_sh, and N_sh, N_Q.
    k: usize,
    n: usize,
    shape: (usize, usize),
    b: GemmBuffers,
    /// B and E's kernel, the 3xTF32 split's and the filler.
    bmatrix: Kernel,
    splitter: Option<Kernel>,
    fill: Kernel,
    host_out: HostBuffer,
    /// The host bytes of the inputs uploaded.
    input_bytes: usize,
    flusher: Option<&'a CacheFlusher>,
    worst: f64,
    last: f64,
    real: PhantomData<T>,
}

impl<'a, T: Real> GemmPeer<'a, T> {
    fn new(
        ctx: &mut CaseCtx,
        dev: &'a dyn Device,
        prep: &'a Prepared,
        (nsh, nq): (usize, usize),
        method: Method,
    ) -> Result<Self, CaseError> {
        let (ne, s) = (prep.mesh.len(), std::mem::size_of::<T>());
        let (k, n) = (6 * nq, element_dofs(nsh));
        let split = method == Method::CUBLAS_GEMM_3XTF32;
        let lengths = input_lengths(prep, false);
        let mut host_in: Vec<HostBuffer> = lengths.iter().map(|&l| dev.alloc_host(l * s)).collect::<Result<_, _>>()?;
        prepare_inputs::<T>(prep, false, &mut host_in);
        let [dphi, _, jterms, lame] = &host_in[..] else { unreachable!("four input buffers") };
        let upload = |h: &HostBuffer| -> Result<_, CaseError> {
            let mut b = dev.alloc(h.len())?;
            dev.upload_async(&mut b, h, h.len())?;
            Ok(b)
        };
        let b = GemmBuffers {
            dphi: upload(dphi)?,
            jterms: upload(jterms)?,
            lame: upload(lame)?,
            bm: dev.alloc(s * k * n * ne)?,
            em: dev.alloc(s * k * n * ne)?,
            // 3xTF32's low parts (the high parts replace B and E in place).
            lows: if split { Some((dev.alloc(s * k * n * ne)?, dev.alloc(s * k * n * ne)?)) } else { None },
            a: dev.alloc(s * n * n * ne)?,
        };
        dev.synchronize()?;
        let defines = Defines::for_precision(T::PRECISION).with("NSH", nsh).with("NQ", nq);
        Ok(GemmPeer {
            dev,
            blas: dev.blas()?,
            prep,
            method,
            k,
            n,
            shape: (nsh, nq),
            b,
            bmatrix: ctx.modules.kernel_for::<Bmatrix>(dev, &BANAS, &defines)?,
            splitter: if split { Some(ctx.modules.kernel_for::<SplitTf32>(dev, &BANAS, &defines)?) } else { None },
            fill: ctx.modules.filler(dev)?,
            host_out: dev.alloc_host(s * n * n * ne)?,
            input_bytes: (lengths[0] + lengths[2] + lengths[3]) * s,
            flusher: None,
            worst: 0.0,
            last: f64::NAN,
            real: PhantomData,
        })
    }

    /// The GEMMs of the method: one, or 3xTF32's three (the small products first, the large last).
    fn gemms(&self) -> DeviceResult<()> {
        let (b, ne) = (&self.b, self.prep.mesh.len());
        let gemm =
            |tf32: bool, accumulate: bool| BatchedGemm { precision: T::PRECISION, k: self.k, n: self.n, batch: ne, tf32, accumulate };
        match &b.lows {
            None => self.blas.gemm_tn_batched(&gemm(self.method.tf32(), false), &b.bm, &b.em, &b.a),
            Some((bl, el)) => {
                self.blas.gemm_tn_batched(&gemm(true, false), bl, &b.em, &b.a)?;
                self.blas.gemm_tn_batched(&gemm(true, true), &b.bm, el, &b.a)?;
                self.blas.gemm_tn_batched(&gemm(true, true), &b.bm, &b.em, &b.a)
            }
        }
    }

    /// 3xTF32's split of B and E into high (in place) and low parts.
    fn split(&self) -> DeviceResult<()> {
        let (Some(kern), Some((bl, el))) = (&self.splitter, &self.b.lows) else { return Ok(()) };
        let words = self.k * self.n * self.prep.mesh.len();
        let launch = Launch::cover(words, 256);
        self.dev.launch_with(kern, launch, &SplitTf32 { x: &self.b.bm, lo: bl, n: words as i64 })?;
        self.dev.launch_with(kern, launch, &SplitTf32 { x: &self.b.em, lo: el, n: words as i64 })
    }

    /// One row per stage and the kernel row (all stages), in each mode, with the case's figures.
    fn rows(&self, runs: Vec<Staged>, worst: f64, passes: usize) -> Vec<Measured> {
        let ((nsh, nq), (k, n), ne, s) = (self.shape, (self.k, self.n), self.prep.mesh.len(), std::mem::size_of::<T>());
        let split = self.b.lows.is_some();
        let tolerance = tolerance(self.method, T::PRECISION);
        let paper_flops = element_flops(nsh, nq) * ne as f64;
        // Executed: 3xTF32 makes three GEMMs.
        let gemm_flops = if split { 3.0 } else { 1.0 } * 2.0 * (n * n * k) as f64 * ne as f64;
        let memory = self.input_bytes + s * (if split { 4 } else { 2 } * k * n + n * n) * ne;
        let extras = [
            ("elements", ne as f64),
            ("checked_elements", self.prep.checked.len() as f64),
            ("checked_passes", passes as f64),
            ("output_mb", (s * n * n * ne) as f64 / 1e6),
            ("bmatrix_mb", (2 * s * k * n * ne) as f64 / 1e6),
            (crate::report::physics::TF32_COLUMN, if self.method.tf32() { 1.0 } else { 0.0 }),
            // cuBLAS' DGEMM runs on the FP64 tensor cores.
            (crate::report::physics::FP64_TENSOR_COLUMN, (T::PRECISION == Precision::F64) as u8 as f64),
        ];
        let mut out = Vec::new();
        for staged in runs {
            for (stage, timing) in staged.stages {
                let m = Measured::verified(stage, timing, worst, tolerance).memory(memory as f64);
                out.push(match stage {
                    "bmatrix" => m.bytes((self.input_bytes + 2 * s * k * n * ne) as f64),
                    // Reads B and E, writes their high and low parts.
                    "split" => m.bytes((6 * s * k * n * ne) as f64),
                    _ => m.flops(gemm_flops).paper_flops(paper_flops),
                });
            }
            let total = Measured::verified("kernel", staged.total, worst, tolerance);
            out.push(total.flops(gemm_flops).paper_flops(paper_flops).memory(memory as f64));
        }
        with_extras(out, &extras)
    }
}

impl<T: Real> PassMethod for GemmPeer<'_, T> {
    type Verdict = f64;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        if self.b.lows.is_some() {
            SPLIT_STAGES.to_vec()
        } else {
            PEER_STAGES.to_vec()
        }
    }
    fn decisive(&self) -> &'static str {
        "gemm"
    }
    /// None the driver poisons: every pass poisons B, E and A itself.
    fn outputs(&self) -> Vec<&Buffer> {
        Vec::new()
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, b, ne) = (self.dev, &self.b, self.prep.mesh.len());
        for buf in [&b.bm, &b.em, &b.a] {
            fill_words(dev, &self.fill, buf, u32::MAX, buf.bytes() / 4)?;
        }
        if let Some(f) = self.flusher {
            f.flush(dev, pass.index() as u32)?;
        }
        dev.synchronize()?;
        let args = Bmatrix { dphi: &b.dphi, jterms: &b.jterms, lame: &b.lame, bm: &b.bm, em: &b.em, ne: ne as i32 };
        let launch = Launch::cover(ne * self.n * self.k, 256);
        pass.device(dev, "bmatrix", &mut || dev.launch_with(&self.bmatrix, launch, &args))?;
        if b.lows.is_some() {
            pass.device(dev, "split", &mut || self.split())?;
        }
        // cuBLAS may wait on the stream (its workspace), so its region is open.
        pass.device_open(dev, "gemm", &mut || self.gemms())?;
        let size = self.n * self.n;
        dev.download_async(&b.a, &mut self.host_out, std::mem::size_of::<T>() * size * ne)?;
        dev.synchronize()?;
        self.last = check_pass(&self.host_out.typed::<T>()[..size * ne], self.prep, size);
        self.worst = if self.last.is_nan() || self.worst.is_nan() { f64::NAN } else { self.worst.max(self.last) };
        Ok(())
    }
    /// The checked pass's error (every later pass is checked too: [`GemmPeer::worst`]).
    fn verify(&mut self) -> Result<f64, CaseError> {
        Ok(self.last)
    }
}

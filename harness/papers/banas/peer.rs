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
//! every pass poisons B, E and A, and A is downloaded and checked after every pass.

use super::elasticity::{element_dofs, element_flops};
use super::inputs::{check_pass, input_lengths, prepare_inputs, prepared, with_extras};
use super::plan::{Plan, Tuning, Variant, BANAS};
use super::spec::{Method, Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::device::vendor::BatchedGemm;
use crate::device::{Arg, Device, DeviceResult, HostBuffer, Launch};
use crate::kernels::Defines;
use crate::measure::{run_staged, CacheMode, Timer};
use crate::real::Real;
use crate::Precision;

const PEER_STAGES: [(&str, Timer); 2] = [("bmatrix", Timer::DeviceEvent), ("gemm", Timer::DeviceEvent)];
const SPLIT_STAGES: [(&str, Timer); 3] = [("bmatrix", Timer::DeviceEvent), ("split", Timer::DeviceEvent), ("gemm", Timer::DeviceEvent)];

/// The error a peer's output may have against the f64 reference: f64's and f32's as the paper's
/// variants; TF32's (10 stored mantissa bits) for the plain TF32 GEMM.
fn tolerance(method: Method, precision: Precision) -> f64 {
    match (method, precision) {
        (Method::CublasGemmTf32, _) => 1e-2,
        (_, Precision::F32) => 1e-4,
        (_, Precision::F64) => 1e-10,
    }
}

pub(crate) fn run_gemm_peer<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    point: &Point,
) -> Result<Vec<Measured>, CaseError> {
    let p = point.degree as usize;
    let nsh = super::prism::shape_functions(p);
    let nq = super::prism::quadrature(p).map_err(CaseError::Failed)?.len();
    // The same elements as REG_NOJAC's launch: the same output size, so the same work.
    let tuning = Tuning { output_bytes: (problem.output_mib * (1u64 << 20) as f64) as usize, ..Default::default() };
    let plan = Plan::new(Variant::RegNojac, nsh, nq, T::PRECISION, dev.info(), &tuning).map_err(CaseError::Failed)?;
    let prep = prepared(ctx.run, point.degree, plan.elements, problem.verify_fraction)?;
    let (ne, s) = (prep.mesh.len(), std::mem::size_of::<T>());
    let (k, n) = (6 * nq, element_dofs(nsh));
    let size = n * n;
    let (blas, method) = (dev.blas()?, point.method);
    let split = method == Method::CublasGemm3xTf32;
    let lengths = input_lengths(&prep, false);
    let mut host_in: Vec<HostBuffer> = lengths.iter().map(|&l| dev.alloc_host(l * s)).collect::<Result<_, _>>()?;
    prepare_inputs::<T>(&prep, false, &mut host_in);
    let [dphi, _, jterms, lame] = &host_in[..] else { unreachable!("four input buffers") };
    let upload = |h: &HostBuffer| -> Result<_, CaseError> {
        let mut b = dev.alloc(h.len())?;
        dev.upload_async(&mut b, h, h.len())?;
        Ok(b)
    };
    let (dphi, jterms, lame) = (upload(dphi)?, upload(jterms)?, upload(lame)?);
    let (bm, em, a) = (dev.alloc(s * k * n * ne)?, dev.alloc(s * k * n * ne)?, dev.alloc(s * size * ne)?);
    // 3xTF32's low parts (the high parts replace B and E in place).
    let lows = if split { Some((dev.alloc(s * k * n * ne)?, dev.alloc(s * k * n * ne)?)) } else { None };
    let mut host_out = dev.alloc_host(s * size * ne)?;
    dev.synchronize()?;
    let defines = Defines::for_precision(T::PRECISION).with("NSH", nsh).with("NQ", nq);
    let kernel = ctx.modules.kernel(dev, &BANAS, &defines, "banas_bmatrix")?;
    let args = [Arg::Buf(&dphi), Arg::Buf(&jterms), Arg::Buf(&lame), Arg::Buf(&bm), Arg::Buf(&em), Arg::I32(ne as i32)];
    let launch = Launch::cover(ne * n * k, 256);
    let splitter = if split { Some(ctx.modules.kernel(dev, &BANAS, &defines, "banas_split_tf32")?) } else { None };
    let gemm = |tf32: bool, accumulate: bool| BatchedGemm { precision: T::PRECISION, k, n, batch: ne, tf32, accumulate };
    // The GEMMs of the method: one, or 3xTF32's three (the small products first, the large last).
    let gemms = || -> DeviceResult<()> {
        match &lows {
            None => blas.gemm_tn_batched(&gemm(method.tf32(), false), &bm, &em, &a),
            Some((bl, el)) => {
                blas.gemm_tn_batched(&gemm(true, false), bl, &em, &a)?;
                blas.gemm_tn_batched(&gemm(true, true), &bm, el, &a)?;
                blas.gemm_tn_batched(&gemm(true, true), &bm, &em, &a)
            }
        }
    };
    let split_all = || -> DeviceResult<()> {
        let (Some(kern), Some((bl, el))) = (&splitter, &lows) else { return Ok(()) };
        let words = (k * n * ne) as i64;
        dev.launch(kern, Launch::cover(k * n * ne, 256), &[Arg::Buf(&bm), Arg::Buf(bl), Arg::I64(words)])?;
        dev.launch(kern, Launch::cover(k * n * ne, 256), &[Arg::Buf(&em), Arg::Buf(el), Arg::I64(words)])
    };
    let stages: &[(&str, Timer)] = if split { &SPLIT_STAGES } else { &PEER_STAGES };

    let mut staged_modes = Vec::new();
    let (mut worst, mut passes) = (0f64, 0usize);
    for &mode in ctx.policy.modes.iter() {
        let flusher = match mode {
            CacheMode::Cold => Some(ctx.flusher.ok_or_else(|| CaseError::Failed("cold mode asked for, but no cache flusher".into()))?),
            CacheMode::Warm => None,
        };
        let modules = &mut *ctx.modules;
        let staged = run_staged(ctx.policy, mode, stages, "gemm", |pass| -> Result<(), CaseError> {
            for b in [&bm, &em, &a] {
                modules.poison(dev, b)?;
            }
            if let Some(f) = flusher {
                f.flush(dev, pass.index() as u32)?;
            }
            dev.synchronize()?;
            pass.device(dev, "bmatrix", &mut || dev.launch(&kernel, launch, &args))?;
            if split {
                pass.device(dev, "split", &mut || split_all())?;
            }
            // cuBLAS may wait on the stream (its workspace), so its region is open.
            pass.device_open(dev, "gemm", &mut || gemms())?;
            dev.download_async(&a, &mut host_out, s * size * ne)?;
            dev.synchronize()?;
            let error = check_pass(&host_out.typed::<T>()[..size * ne], &prep, size);
            worst = if error.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(error) };
            Ok(())
        })?;
        passes += staged.passes;
        staged_modes.push(staged);
    }
    let tolerance = tolerance(method, T::PRECISION);
    let paper_flops = element_flops(nsh, nq) * ne as f64;
    // Executed: 3xTF32 makes three GEMMs.
    let gemm_flops = if split { 3.0 } else { 1.0 } * 2.0 * (n * n * k) as f64 * ne as f64;
    let inputs = (lengths[0] + lengths[2] + lengths[3]) * s;
    let memory = inputs + s * (if split { 4 } else { 2 } * k * n + size) * ne;
    let extras = [
        ("elements", ne as f64),
        ("checked_elements", prep.checked.len() as f64),
        ("checked_passes", passes as f64),
        ("output_mb", (s * size * ne) as f64 / 1e6),
        ("bmatrix_mb", (2 * s * k * n * ne) as f64 / 1e6),
        (crate::report::physics::TF32_COLUMN, if method.tf32() { 1.0 } else { 0.0 }),
    ];
    let mut out = Vec::new();
    for staged in staged_modes {
        for (stage, timing) in staged.stages {
            let m = Measured::verified(stage, timing, worst, tolerance).memory(memory as f64);
            out.push(match stage {
                "bmatrix" => m.bytes((inputs + 2 * s * k * n * ne) as f64),
                // Reads B and E, writes their high and low parts.
                "split" => m.bytes((6 * s * k * n * ne) as f64),
                _ => m.flops(gemm_flops).paper_flops(paper_flops),
            });
        }
        out.push(
            Measured::verified("kernel", staged.total, worst, tolerance).flops(gemm_flops).paper_flops(paper_flops).memory(memory as f64),
        );
    }
    Ok(with_extras(out, &extras))
}

//! The Banaś et al. experiments: cases (variant x degree), the staged GPU run the paper's
//! Tables 6/7 time (input preparation, device memory allocation, input transfer, kernel, output
//! transfer), the CPU reference, and the reports: Tables 3/4 (the plan), 5-7 (stages), the best
//! variant per degree, Fig. 2 (stacked stage times) and Fig. 3 (GFLOP/s against p).

use super::elasticity::{element_dofs, element_flops, element_matrices_into, rigid_body_residual};
use super::plan::BANAS;
use super::plan::{Plan, Tuning, Variant};
use super::prism::MAX_DEGREE;
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::device::{Arg, Backend, Buffer, Device, HostBuffer, Launch};
use crate::experiment::{cartesian, ParamValue, Params};
use crate::kernels::KernelSource;
use crate::measure::{run_staged, CacheMode, Timer};
use crate::real::Real;
use crate::Precision;

use super::inputs::{check_pass, input_lengths, prepare_inputs, prepared, with_extras};
use super::spec::{Outputs, Point, Problem_, Sweep, STAGES};

pub struct BanasIntegration;

/// The stages of one pass, in table order, with the clock that times each.
const STAGE_CLOCKS: [(&str, Timer); 5] = [
    (STAGES[0], Timer::HostWall),
    (STAGES[1], Timer::HostWall),
    (STAGES[2], Timer::DeviceEvent),
    (STAGES[3], Timer::DeviceEvent),
    (STAGES[4], Timer::DeviceEvent),
];

impl Benchmark for BanasIntegration {
    const NAME: &'static str = "banas-integration";
    const COLUMNS: &'static [&'static str] = &[
        "blocks_per_thread",
        "bmatrix_mb",
        "checked_elements",
        "checked_passes",
        "elements",
        "group_size",
        "groups",
        "host_written_back",
        "input_mb",
        "output_mb",
        "parts",
        "performed_blocks",
        "pinned_host",
        "reg_cols",
        "reg_rows",
        "shared_bytes",
        "tensor_tf32",
        "threads",
    ];
    const KERNELS: &'static [KernelSource] = &[BANAS];
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(s: &Sweep) -> Vec<Point> {
        let axes = vec![s.degree.iter().map(|&v| v as usize).collect::<Vec<_>>(), (0..s.method.len()).collect()];
        cartesian(&axes).into_iter().map(|p| Point { method: s.method[p[1]], degree: p[0] as u32 }).collect()
    }

    fn params(p: &Point) -> Params {
        Params::default().push("method", ParamValue::Str(p.method.as_str().into())).push("degree", ParamValue::Int(p.degree as i64))
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let quick = spec.quick.as_ref().and_then(|q| q.sweep.as_ref());
        for (field, sweep) in [("sweep.degree", Some(&spec.sweep)), ("quick.sweep.degree", quick)] {
            for &d in sweep.into_iter().flat_map(|s| s.degree.iter()) {
                if !(1..=MAX_DEGREE as u32).contains(&d) {
                    return Err((field.into(), format!("{field}: {d} is outside 1..{MAX_DEGREE}")));
                }
            }
        }
        let problems = [("problem", Some(&spec.problem)), ("quick.problem", spec.quick.as_ref().and_then(|q| q.problem.as_ref()))];
        for (at, p) in problems {
            let Some(p) = p else { continue };
            if !(p.output_mib > 0.0 && p.output_mib <= (1u64 << 20) as f64) {
                return Err((format!("{at}.output_mib"), format!("{at}.output_mib must be in (0, 1048576], got {}", p.output_mib)));
            }
            if !(p.verify_fraction > 0.0 && p.verify_fraction <= 1.0) {
                return Err((
                    format!("{at}.verify_fraction"),
                    format!("{at}.verify_fraction must be in (0, 1], got {}", p.verify_fraction),
                ));
            }
            if p.group_size == Some(0) {
                return Err((format!("{at}.group_size"), format!("{at}.group_size must be at least 1")));
            }
        }
        Ok(())
    }

    /// The f64 CPU reference runs on the cpu backend; the four GPU variants on CUDA and OpenCL in
    /// f32 and f64.
    fn case_exists(point: &Point, backend: Backend, precision: Precision) -> bool {
        match (backend, point.method) {
            (Backend::Cuda, m) if m.is_peer() => !m.tf32() || precision == Precision::F32,
            (_, m) if m.is_peer() => false,
            (Backend::Cpu, _) => point.method.variant().is_none() && precision == Precision::F64,
            _ => point.method.variant().is_some(),
        }
    }

    /// A launch's output (`output_mib`) on the device with its inputs, and on the host its pinned
    /// staging buffer and the copies the check reads.
    fn memory_estimate(problem: &Problem_, _: &Point) -> Option<MemoryEstimate> {
        let output = problem.output_mib * (1u64 << 20) as f64;
        Some(MemoryEstimate { host_bytes: 3.0 * output, device_bytes: 2.0 * output })
    }

    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match (point.method.variant(), &ctx.target, ctx.precision) {
            (None, Target::Gpu(dev), Precision::F32) if point.method.is_peer() => {
                super::peer::run_gemm_peer::<f32>(ctx, *dev, problem, point)
            }
            (None, Target::Gpu(_), Precision::F64) if point.method.tf32() => {
                Err(CaseError::Skipped(format!("{} takes f32 inputs", point.method.as_str())))
            }
            (None, Target::Gpu(dev), Precision::F64) if point.method.is_peer() => {
                super::peer::run_gemm_peer::<f64>(ctx, *dev, problem, point)
            }
            (None, Target::Cpu, _) if point.method.is_peer() => {
                Err(CaseError::Skipped(format!("{} runs on the cuda backend", point.method.as_str())))
            }
            (None, Target::Cpu, Precision::F64) => run_cpu(ctx, problem, point),
            (None, Target::Cpu, Precision::F32) => Err(CaseError::Skipped("the CPU reference runs in f64, as the paper's baseline".into())),
            (None, Target::Gpu(_), _) => Err(CaseError::Skipped("cpu-reference runs on the cpu backend".into())),
            (Some(_), Target::Cpu, _) => Err(CaseError::Skipped("the GPU variants run on GPU backends".into())),
            (Some(v), Target::Gpu(dev), Precision::F32) => run_gpu::<f32>(ctx, *dev, problem, point, v),
            (Some(v), Target::Gpu(dev), Precision::F64) => run_gpu::<f64>(ctx, *dev, problem, point, v),
        }
    }
}

fn run_cpu(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let threads = rayon::current_num_threads();
    let n = problem.cpu_elements.unwrap_or(8 * threads).max(1);
    let prep = prepared(ctx.run, point.degree, n, 1.0 / n as f64)?;
    let all: Vec<usize> = (0..n).collect();
    // The output is allocated once; every repetition overwrites it in place.
    let mut out = vec![f64::NAN; element_dofs(prep.re.nsh).pow(2) * n];
    let t = crate::measure::measure_host::<()>(ctx.policy, &mut || {
        element_matrices_into(&prep.re, &prep.mesh, &all, &mut out);
        Ok(())
    })
    .map_err(|_| CaseError::Failed("host integration failed".into()))?;
    // The oracle is checked against closed forms: the six rigid-body modes of element 0.
    let error = rigid_body_residual(&prep.re, &prep.mesh.element_vertices(0), &out[..element_dofs(prep.re.nsh).pow(2)]);
    let flops = element_flops(prep.re.nsh, prep.re.nq()) * n as f64;
    Ok(vec![Measured::verified("kernel", t, error, 1e-10)
        .flops(super::plan::cpu_executed_flops(prep.re.nsh, prep.re.nq()) * n as f64)
        .paper_flops(flops)
        .extra("elements", n as f64)
        .extra("threads", threads as f64)])
}

fn run_gpu<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    point: &Point,
    variant: Variant,
) -> Result<Vec<Measured>, CaseError> {
    let nsh = super::prism::shape_functions(point.degree as usize);
    let nq = super::prism::quadrature(point.degree as usize).map_err(CaseError::Failed)?.len();
    let tuning = Tuning {
        output_bytes: (problem.output_mib * (1u64 << 20) as f64) as usize,
        group_size: problem.group_size,
        reg_blocks: problem.reg_blocks,
        shared_bytes: problem.shared_bytes,
        register_file: None,
    };
    let plan = Plan::new(variant, nsh, nq, T::PRECISION, dev.info(), &tuning).map_err(CaseError::Failed)?;
    let prep = prepared(ctx.run, point.degree, plan.elements, problem.verify_fraction)?;
    let ne = prep.mesh.len();
    let kernel = ctx.modules.kernel(dev, &BANAS, &plan.defines(T::PRECISION), "banas_integrate")?;
    let size = element_dofs(nsh).pow(2);
    let out_len = ne * size;
    let rb = plan.real_bytes;
    let lengths = input_lengths(&prep, variant.jac());
    // Host memory of every timed transfer, pinned, allocated once outside every timer.
    let mut host_in: Vec<HostBuffer> = lengths.iter().map(|&n| dev.alloc_host(n * rb)).collect::<Result<_, _>>()?;
    let mut host_out = dev.alloc_host(out_len * rb)?;
    let pinned = host_out.pinned() && host_in.iter().all(|h| h.pinned());
    let sizes = [lengths[0], lengths[1], lengths[2], lengths[3], out_len];
    let memory = sizes.iter().sum::<usize>() * rb;
    let launch = Launch { groups: plan.groups, group_size: plan.group_size };

    let mut rows = Vec::new();
    let mut worst: f64 = 0.0;
    let mut passes_checked = 0usize;
    let mut written_back = false;
    let from_cache = fembench_device::host_cache::upload_from_cache();
    for &mode in ctx.policy.modes.iter() {
        let flusher = match mode {
            CacheMode::Cold => Some(ctx.flusher.ok_or_else(|| CaseError::Failed("cold mode asked for, but no cache flusher".into()))?),
            CacheMode::Warm => None,
        };
        // The paper times each stage of one pass; we repeat whole passes (the first `warmup`
        // untimed) until the kernel's samples satisfy the policy (count, time, noise), and
        // check every pass's output.
        let modules = &mut *ctx.modules;
        let staged = run_staged(ctx.policy, mode, &STAGE_CLOCKS, "kernel", |pass| -> Result<(), CaseError> {
            pass.host("prepare", || prepare_inputs::<T>(&prep, variant.jac(), &mut host_in));
            // Untimed: the upload reads memory, not lines dirty in the caches of the cores that
            // wrote them (their DMA speed depends on where the threads ran; host_cache.rs).
            written_back = !from_cache && host_in.iter().all(|h| h.write_back_cpu_caches());
            // A real allocation each pass: memory pooled by the last pass goes back first.
            dev.release_pooled_memory()?;
            let mut bufs = pass.host("allocate", || -> Result<Vec<Buffer>, CaseError> {
                let mut bufs: Vec<Buffer> = sizes.iter().map(|&n| dev.alloc((n * rb).max(1))).collect::<Result<_, _>>()?;
                for b in bufs.iter_mut() {
                    dev.touch(b)?;
                }
                dev.synchronize()?;
                Ok(bufs)
            })?;
            // Poison the output: an element the kernel does not write stays NaN. The inputs are
            // filled too, so that every page is mapped before the timed upload: a first write
            // into memory fresh from the driver costs a variable amount (up to 2.9x the upload
            // time between back-to-back runs on an H200 before this).
            for b in &bufs {
                modules.poison(dev, b)?;
            }
            dev.synchronize()?;
            pass.device(dev, "upload", &mut || {
                for (b, h) in bufs.iter_mut().zip(&host_in) {
                    let n = h.len();
                    dev.upload_async(b, h, n)?;
                }
                Ok(())
            })?;
            if let Some(f) = flusher {
                f.flush(dev, pass.index() as u32)?;
            }
            // The kernel reads vertices (JAC) or Jacobian terms (NOJAC): one buffer fills both slots.
            let args = [
                Arg::Buf(&bufs[0]),
                Arg::Buf(&bufs[1]),
                Arg::Buf(&bufs[2]),
                Arg::Buf(&bufs[2]),
                Arg::Buf(&bufs[3]),
                Arg::Buf(&bufs[4]),
                Arg::I32(ne as i32),
                Arg::I32(plan.parts as i32),
            ];
            pass.device(dev, "kernel", &mut || dev.launch(&kernel, launch, &args))?;
            pass.device(dev, "download", &mut || dev.download_async(&bufs[4], &mut host_out, out_len * rb))?;
            drop(bufs);
            let error = check_pass(&host_out.typed::<T>()[..out_len], &prep, size);
            worst = if error.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(error) };
            Ok(())
        })?;
        passes_checked += staged.passes;
        rows.push(staged);
    }
    dev.release_pooled_memory()?;

    let tolerance = if T::PRECISION == Precision::F32 { 1e-4 } else { 1e-10 };
    let paper_flops = element_flops(nsh, nq) * ne as f64;
    let executed_flops = plan.executed_flops_per_element() * ne as f64;
    let extras = [
        ("elements", ne as f64),
        ("checked_elements", prep.checked.len() as f64),
        ("checked_passes", passes_checked as f64),
        ("pinned_host", pinned as u8 as f64),
        ("host_written_back", written_back as u8 as f64),
        ("group_size", plan.group_size as f64),
        ("parts", plan.parts as f64),
        ("blocks_per_thread", plan.blocks_per_thread as f64),
        ("reg_rows", plan.rb as f64),
        ("reg_cols", plan.cb as f64),
        ("groups", plan.groups as f64),
        ("shared_bytes", plan.shared_bytes as f64),
        ("input_mb", plan.input_bytes(variant.jac()) as f64 / 1e6),
        ("output_mb", (plan.elements * plan.output_bytes_per_element()) as f64 / 1e6),
        ("performed_blocks", plan.performed_blocks() as f64),
    ];
    let mut out = Vec::new();
    for staged in rows {
        for (stage, timing) in staged.stages {
            let mut m = Measured::verified(stage, timing, worst, tolerance);
            match stage {
                "kernel" => m = m.flops(executed_flops).paper_flops(paper_flops).memory(memory as f64),
                "upload" => m = m.bytes((lengths.iter().sum::<usize>() * rb) as f64),
                "download" => m = m.bytes((out_len * rb) as f64),
                _ => {}
            }
            out.push(m);
        }
        out.push(Measured::verified("total", staged.total, worst, tolerance).flops(executed_flops).paper_flops(paper_flops));
    }
    Ok(with_extras(out, &extras))
}

// ---------------------------------------------------------------------------------------------
// Reports

//! The Sanfui-Sharma experiments: cases (method x box) and their runs, on a device or the host.

use std::sync::Arc;

use super::formats::Format;
use super::formats::{self, Check};
use super::gpu::{DeviceRun, SANFUI};
use super::method::{About, Case, SanfuiMethod};
use super::reference::{CpuCsr, Prepared};
use super::spec::{Method, Outputs, Point, Problem_, Sweep};
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec};
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::experiment::Params;
use crate::kernels::KernelSource;
use crate::measure::{run_staged, CacheMode, Timer, Timing};
use crate::methods::host_for;
use crate::{Backend, Precision};

pub struct SanfuiAssembly;

type Key = ([usize; 3], [u64; 3]);
fn prepared(run: &RunContext, problem: &Problem_, nodes: [usize; 3]) -> Arc<Prepared> {
    let key = (nodes, [problem.young.to_bits(), problem.poisson.to_bits(), problem.spacing.to_bits()]);
    run.state("sanfui problems", || ProblemCache::<Key, Prepared>::new(1))
        .get_or_build::<std::convert::Infallible>(key, || Ok(Prepared::new(nodes, problem.spacing, problem.young, problem.poisson)))
        .unwrap_or_else(|e| match e {})
}

/// The largest |got - ref| / scale a precision may give: 1e-12 in f64 (the bound), and
/// in f32 u (64 + 16 X/h), from the element computation (about 48 rounded operations on every
/// path to an entry: the Jacobian's 8-term sums, its inverse, the gradients, the 3x3 block and
/// the 8 Gauss points, then at most 8 elements summed) and the rounding of the coordinates
/// (an edge h computed from coordinates up to X carries a relative error of about u X/h, which
/// enters K^e about five times over: J^-1 twice and |J| three times).
pub fn tolerance(precision: Precision, x_over_h: f64) -> f64 {
    match precision {
        Precision::F64 => 1e-12,
        Precision::F32 => Precision::F32.unit_roundoff() * (64.0 + 16.0 * x_over_h),
    }
}

impl Benchmark for SanfuiAssembly {
    const NAME: &'static str = "sanfui-assembly";
    const COLUMNS: &'static [&'static str] = super::spec::COLUMNS;
    const KERNELS: &'static [KernelSource] = &[SANFUI];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::SANFUI_ARGS;
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        sweep.product()
    }
    fn params(p: &Point) -> Params {
        p.params()
    }
    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let p = &spec.problem;
        if !(p.young > 0.0 && p.spacing > 0.0 && p.poisson > -1.0 && p.poisson < 0.5) {
            return Err(("problem".into(), "problem needs young > 0, spacing > 0 and -1 < poisson < 0.5".into()));
        }
        // One node's 8 element columns of 576 4-byte reals, at least.
        if p.shared_bytes.is_some_and(|b| b < 8 * 576 * 4) {
            return Err((
                "problem.shared_bytes".into(),
                "problem.shared_bytes: SharedNZ needs at least 18432 bytes (8 elements x 576 f32)".into(),
            ));
        }
        for n in spec.sweep.nodes.iter().map(|b| &b.0) {
            if n.iter().any(|&v| v < 2) {
                return Err(("sweep.nodes".into(), format!("sweep.nodes: every box needs at least 2 nodes a side, got {n:?}")));
            }
            // ELL's index array (81 x 3N) and every value index must fit a 32-bit int.
            if 243 * n.iter().product::<usize>() >= i32::MAX as usize {
                return Err((
                    "sweep.nodes".into(),
                    format!("sweep.nodes: {n:?} has more entries than 32-bit indices reach (243 N < 2^31)"),
                ));
            }
        }
        Ok(())
    }
    fn memory_estimate(_: &Problem_, p: &Point) -> Option<MemoryEstimate> {
        // Host: the reference (values, scale, columns: 20 bytes x 243 per node), the mesh and
        // the part of a result the check holds (its values and two index arrays, f64); the
        // baseline's slots and K^e dominate on the device (576 x (8 + 4) bytes per element).
        let n = p.nodes.0.iter().product::<usize>() as f64;
        let part = super::gpu::CHECK_ENTRIES.min(243 * p.nodes.0.iter().product::<usize>()) as f64 * 16.0;
        // The COO peers keep five int arrays of 576 E triplets besides K^e, and the sort's workspace.
        let host = n * 243.0 * 20.0 + part + if p.method == Method::ELEM_ATOMIC { n * 576.0 * 4.0 } else { 0.0 };
        let peer = if p.method.coo_route() { n * 576.0 * 28.0 } else { 0.0 };
        // SharedNZ's lists: about 576 sources and 243 targets per owned node, 4 bytes each,
        // built per block, then concatenated (host: twice), and no K^e on the device.
        if p.method == Method::SHARED_NZ {
            let lists = n * 850.0 * 4.0;
            return Some(MemoryEstimate { host_bytes: host + 3.0 * lists, device_bytes: lists + n * 243.0 * 16.0 });
        }
        Some(MemoryEstimate { host_bytes: host, device_bytes: n * (576.0 * 12.0 + 243.0 * 16.0) + peer })
    }
    fn case_exists(p: &Point, backend: Backend, precision: Precision) -> bool {
        p.method.runs_on(backend) && (backend != Backend::Cpu || precision == Precision::F64)
    }
    fn problem_key(point: &Point) -> Option<String> {
        Some(format!("nodes={:?}", point.nodes.0))
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let prep = prepared(ctx.run, problem, point.nodes.0);
        crate::measure::trace::mark("sanfui: box prepared");
        let run = point.method.entry().run(ctx, &Case { prep: &prep, problem, method: point.method })?;
        crate::measure::trace::mark("sanfui: device buffers freed");
        Ok(rows(&prep, point, ctx.precision, run))
    }
}

/// Algorithm 2 on the host into CSR arrays allocated once: the symbolic stage, then `addto`
/// (values zeroed, K^e computed, blocks added), serial or per color on rayon's threads. The
/// checked pass (on poisoned arrays) runs first and stands as the first warm-up pass: it does
/// the timed passes' work on the same arrays (a serial pass at 500K nodes takes about 3.7 s).
pub struct HostMethod {
    pub about: About,
    /// Per color on rayon's threads, else serial.
    pub parallel: bool,
}

impl SanfuiMethod for HostMethod {
    fn about(&self) -> &About {
        &self.about
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<DeviceRun, CaseError> {
        host_for(ctx, self.about.names[0])?;
        run_cpu(ctx, case.prep, self)
    }
}

fn run_cpu(ctx: &mut CaseCtx, prep: &Prepared, method: &HostMethod) -> Result<DeviceRun, CaseError> {
    let parallel = method.parallel;
    let threads = if parallel { rayon::current_num_threads() } else { 1 };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| CaseError::Failed(e.to_string()))?;
    let mut csr = CpuCsr::new(prep);
    csr.row_ptr.fill(u32::MAX);
    csr.col.fill(u32::MAX);
    csr.vals.fill(f64::NAN);
    pool.install(|| {
        csr.symbolic(&prep.nb);
        csr.numeric(prep, parallel)
    });
    let as_i32 = |v: &[u32]| v.iter().map(|&x| x as i32).collect::<Vec<_>>();
    let check = formats::check(Format::CSR, &prep.nb, (&as_i32(&csr.row_ptr), &as_i32(&csr.col)), &csr.vals, prep.expected());
    let policy = crate::measure::MeasurePolicy { warmup: ctx.policy.warmup.saturating_sub(1), ..ctx.policy.clone() };
    let staged = pool.install(|| {
        run_staged(&policy, CacheMode::Warm, &method.about.timed_stages(), "addto", |pass| -> Result<(), CaseError> {
            pass.host("symbolic", || csr.symbolic(&prep.nb));
            pass.host("addto", || csr.numeric(prep, parallel));
            Ok(())
        })
    })?;
    Ok(DeviceRun {
        staged,
        check,
        device_bytes: 0.0,
        storage_bytes: formats::storage_bytes(Format::CSR, &prep.nb, 8) as f64,
        setup_s: 0.0,
        spmv: Vec::new(),
        costs: Vec::new(),
        extras: Vec::new(),
        library: None,
    })
}

/// One row per stage and the total, each with the check, the counts and its stage's cost.
fn rows(prep: &Prepared, point: &Point, precision: Precision, run: DeviceRun) -> Vec<Measured> {
    let tol = tolerance(if point.method.on_cpu() { Precision::F64 } else { precision }, prep.x_over_h);
    let Check { worst, structure } = run.check;
    let costs = if run.costs.is_empty() {
        super::cost::stages(prep, point.method, if precision == Precision::F32 { 4 } else { 8 })
    } else {
        run.costs.iter().map(|&(n, bytes, flops)| (n, super::cost::Cost { bytes, flops })).collect()
    };
    let (nn, nnz) = (prep.nb.nodes() as f64, 9.0 * prep.nb.blocks() as f64);
    let format = point.method.format();
    let extras: Vec<(&str, f64)> = [
        ("nodes", nn),
        ("elements", prep.mesh.num_elements() as f64),
        ("dofs", 3.0 * nn),
        ("nnz", nnz),
        ("eq6_nnz", formats::eq6(point.nodes.0) as f64),
        ("storage_bytes", run.storage_bytes),
        ("table1_bytes", if point.method.is_paper() { formats::table1_bytes(format, point.nodes.0) } else { f64::NAN }),
        ("device_bytes", run.device_bytes),
        ("setup_s", run.setup_s),
        ("neighbours_s", prep.neighbours_s),
        ("coloring_s", prep.coloring_s),
        ("colors", if point.method.uses_colors() { prep.colors.len() as f64 } else { 0.0 }),
    ]
    .into_iter()
    .chain(run.extras.iter().copied())
    .collect();
    let staged = run.staged;
    let spmv_tol = tolerance(precision, prep.x_over_h) + 256.0 * precision.unit_roundoff();
    let spmv_rows: Vec<Measured> = run
        .spmv
        .into_iter()
        .map(|r| {
            let m = match r.result {
                Ok((t, worst)) => Measured::verified(r.name, t, worst, spmv_tol).bytes(r.bytes).flops(2.0 * nnz),
                Err(why) => Measured {
                    status: crate::results::Status::Failed,
                    reason: Some(why),
                    timing: None,
                    ..Measured::verified(
                        r.name,
                        Timing { samples: Vec::new(), timer: Timer::DeviceEvent, mode: CacheMode::Warm, batch: 1 },
                        f64::NAN,
                        spmv_tol,
                    )
                },
            };
            let m = m.extra("vendor_version", r.version.map_or(f64::NAN, |v| v as f64));
            extras.iter().fold(m, |m, &(k, v)| m.extra(k, v))
        })
        .collect();
    staged
        .stages
        .into_iter()
        .chain([("total", staged.total)])
        .map(|(name, t)| {
            let mut m = Measured::verified(name, t, worst, tol);
            if let Some(l) = &run.library {
                m = m.library(l);
            }
            if let Some(problem) = &structure {
                m.status = crate::results::Status::Failed;
                m.reason = Some(format!("verification failed: {problem}"));
                m.timing = None;
            }
            if let Some((_, c)) = costs.iter().find(|(n, _)| *n == name) {
                m = m.bytes(c.bytes);
                if c.flops > 0.0 {
                    m = m.flops(c.flops);
                }
            }
            if run.device_bytes > 0.0 {
                m = m.memory(run.device_bytes);
            }
            extras.iter().fold(m, |m, &(k, v)| m.extra(k, v))
        })
        .chain(spmv_rows)
        .collect()
}

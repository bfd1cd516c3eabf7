//! Pogo across GPUs (beyond the paper): the weld model split over 1, 2 or 4 GPUs of one node
//! ([`self::split`]), each GPU stepping its part with our sliced-ELL kernel or with the paper's
//! kernel on the part's blocks ([`self::split_blocks`]), the halo's U going through NCCL every
//! increment while the interior rows or blocks are stepped ([`self::gpu`]).
//!
//! Three studies, each a case per GPU count:
//! - `strong`: one model (`strong_scale` times the paper's weld DOFs) on 1, 2, 4 GPUs;
//! - `weak`: `weak_scale` times the paper's DOFs per GPU (the model grows with the GPUs);
//! - `strong-3d`: the 3D hexahedral box of [`super::hexbox`] (`box_nodes` a side; 20.6M DOFs
//!   at 190) on 1, 2, 4 GPUs, with the sliced ELL only (the paper's kernel is 2D);
//! - `arrival`: a coarse weld run through every increment, its receivers' traces over the
//!   main arrival checked against the CPU f64 reference and against the one-GPU run's.
//!
//! Every case's U after its checked steps is compared with the CPU f64 reference (Eq. (4) on K',
//! the host's CSR step) and, for P > 1, with the one-GPU run of the same model, which it equals
//! to the bit where the device sums in the same order.

pub mod gpu;
pub mod ready;
mod report;
mod rows;
pub mod spec;
pub mod split;
pub mod split_blocks;
mod stepper;
mod upload;

use self::ready::ready;
use self::spec::{Outputs, Point, Problem_, Study, StudyModel, Sweep};
use super::spec::Method;
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::experiment::Params;
use crate::{Backend, Precision};

pub struct PogoScaling;

impl Benchmark for PogoScaling {
    const NAME: &'static str = "pogo-multigpu";
    const COLUMNS: &'static [&'static str] = self::spec::COLUMNS;
    const KERNELS: &'static [crate::kernels::KernelSource] = &[super::kernel::POGO];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::POGO_ARGS;
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        // Strong first (one model for every count), then weak (its 2-GPU model is the strong
        // one at the default scales), then the arrival runs; GPUs ascending, so the one-GPU run
        // that the others equal comes first.
        let mut out = sweep.product();
        out.sort_by_key(|p| (p.study, p.gpus));
        out
    }
    fn params(p: &Point) -> Params {
        p.params()
    }
    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        check_sweep(&spec.sweep, "sweep")?;
        if let Some(s) = spec.quick.as_ref().and_then(|q| q.sweep.as_ref()) {
            check_sweep(s, "quick.sweep")?;
        }
        check_problem(&spec.problem, "problem")?;
        if let Some(p) = spec.quick.as_ref().and_then(|q| q.problem.as_ref()) {
            check_problem(p, "quick.problem")?;
        }
        Ok(())
    }
    fn memory_estimate(problem: &Problem_, p: &Point) -> Option<MemoryEstimate> {
        // Host: the model, CSR K', the splits' local copies, a part's sliced ELL and the CPU
        // reference's vectors; device: each part's K' and vectors, over P GPUs.
        let (nodes, host, device) = match problem.model_for(p.study, p.gpus) {
            StudyModel::Plane { coarsen_bits, .. } => (1.0e6 / f64::from_bits(coarsen_bits).powi(2), 1200.0, 400.0),
            // 27 links of 3x3 blocks a node: 243 entries of CSR K' (12 bytes each), three
            // copies of it (the model's, the split's, the one-GPU pass's), and a sliced ELL.
            StudyModel::Box { nodes } => ((nodes as f64).powi(3), 11_000.0, 2_300.0),
        };
        Some(MemoryEstimate { host_bytes: nodes * host, device_bytes: nodes * device / p.gpus as f64 })
    }
    fn case_exists(p: &Point, backend: Backend, precision: Precision) -> bool {
        backend != Backend::Cpu && (precision == Precision::F64 || !p.method.kf32())
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let Target::Gpu(dev) = ctx.target else { return Err(CaseError::Skipped("a GPU study".into())) };
        self::gpu::can_run(dev, point.gpus)?;
        if point.study == Study::Strong3d && point.method.blocker().is_some() {
            return Err(CaseError::Skipped(self::ready::PAPER_KERNEL_IS_2D.into()));
        }
        let r = ready(ctx.run, problem, problem.model_for(point.study, point.gpus));
        let split = r.split(point.gpus);
        let split = split.as_ref().as_ref().map_err(|e| CaseError::Failed(format!("METIS could not split the model: {e}")))?;
        let steps = match point.study {
            Study::Arrival => problem.arrival_steps.map_or(r.model.increments(), |s| s.min(r.model.increments())),
            _ => problem.check_steps,
        };
        let timed_steps = if point.study == Study::Arrival { 0 } else { problem.timed_steps };
        let plan = self::gpu::Plan { method: point.method, checked_steps: steps, timed_steps };
        let run = match ctx.precision {
            Precision::F32 => self::gpu::run::<f32>(ctx, dev, &r, split, &plan)?,
            Precision::F64 => self::gpu::run::<f64>(ctx, dev, &r, split, &plan)?,
        };
        Ok(vec![self::rows::row(&r, split, point, ctx.precision, run)])
    }
}

fn check_sweep(s: &Sweep, at: &str) -> Result<(), (String, String)> {
    if let Some(m) = s.method.iter().find(|m| !m.splits()) {
        let split: Vec<&str> = Method::all().iter().filter(|m| m.splits()).map(|m| m.as_str()).collect();
        return Err((format!("{at}.method"), format!("{at}.method: {} is not split across GPUs ({} are)", m.as_str(), split.join(", "))));
    }
    if s.gpus.iter().any(|&g| g == 0 || g > 64) {
        return Err((format!("{at}.gpus"), format!("{at}.gpus: every count must lie in 1..=64")));
    }
    Ok(())
}

fn check_problem(p: &Problem_, at: &str) -> Result<(), (String, String)> {
    for (field, v) in [("strong_scale", p.strong_scale), ("weak_scale", p.weak_scale)] {
        if !(v > 0.0 && v <= 64.0) {
            return Err((format!("{at}.{field}"), format!("{at}.{field}: the DOFs over the paper's must lie in (0, 64]")));
        }
    }
    if !(p.arrival_coarsen >= 1.0 && p.arrival_coarsen <= 64.0) {
        return Err((format!("{at}.arrival_coarsen"), format!("{at}.arrival_coarsen must lie in [1, 64]")));
    }
    if p.timed_steps == 0 || p.timed_steps > 1000 {
        return Err((format!("{at}.timed_steps"), format!("{at}.timed_steps must lie in 1..=1000")));
    }
    if p.check_steps == 0 || p.check_steps > 2000 {
        return Err((format!("{at}.check_steps"), format!("{at}.check_steps must lie in 1..=2000")));
    }
    if !(3..=256).contains(&p.box_nodes) {
        return Err((
            format!("{at}.box_nodes"),
            format!("{at}.box_nodes must lie in 3..=256 (nodes a side; 256 keeps K' within 32-bit offsets)"),
        ));
    }
    if !(p.sell_sigma == 1 || (p.sell_sigma % 32 == 0 && p.sell_sigma <= 8192)) {
        return Err((format!("{at}.sell_sigma"), format!("{at}.sell_sigma must be 1 or a multiple of 32 up to 8192")));
    }
    Ok(())
}

//! The Pogo experiments: cases (method x model x element size) and their runs, on a device or
//! the host, with each method's bytes by its own storage and by the paper's Table A.5 count.

use std::sync::Arc;

use super::gpu::{CheckedFullRun, StepRun};
use super::kernel::POGO;
use super::method::{About, Case, PogoMethod};
use super::prepared::{Built, Prepared};
use super::spec::{Method, ModelName, Outputs, Point, Problem_, Sweep};
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::experiment::Params;
use crate::kernels::KernelSource;
use crate::measure::{run_staged, CacheMode, Timer, Timing};
use crate::methods::host_for;
use crate::{Backend, Precision};

pub struct PogoStepping;

type Key = (ModelName, u64, usize, usize, Option<std::path::PathBuf>);
fn prepared(run: &RunContext, problem: &Problem_, m: ModelName, coarsen: f64) -> Arc<Result<Prepared, String>> {
    let key = (m, coarsen.to_bits(), problem.check_steps, problem.sell_sigma, problem.msh.clone());
    run.state("pogo models", || ProblemCache::<Key, Result<Prepared, String>>::new(1))
        .get_or_build::<std::convert::Infallible>(key, || Ok(prepared_model(problem, m, coarsen)))
        .unwrap_or_else(|e| match e {})
}

/// The model made ready, through the prepared-problem cache (keyed by the model, its size, the
/// check's steps, the sliced ELL's window and the mesh file's contents).
fn prepared_model(problem: &Problem_, m: ModelName, coarsen: f64) -> Result<Prepared, String> {
    let msh = match &problem.msh {
        Some(path) => crate::prep_cache::file_fingerprint(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => "none".into(),
    };
    let params =
        format!("model={} coarsen={coarsen:?} check_steps={} sell_sigma={} msh={msh}", m.as_str(), problem.check_steps, problem.sell_sigma);
    let recipe = crate::prep_cache::Recipe { kind: "pogo-model", code: crate::prep_code::POGO, params: &params };
    let (mut built, _) = crate::prep_cache::get_or_build(recipe, || match &problem.msh {
        Some(path) => {
            // Reading the file stands for the mesher's seconds.
            let t = std::time::Instant::now();
            super::io::import::from_msh(path, m).and_then(|model| {
                let read_s = t.elapsed().as_secs_f64();
                let mut b = Built::new(|| model, problem.check_steps, problem.sell_sigma)?;
                b.mesh_s = read_s;
                Ok(b)
            })
        }
        None => Built::new(|| m.build(coarsen), problem.check_steps, problem.sell_sigma),
    })?;
    if built.model.name.is_empty() {
        built.model.name = m.as_str();
    }
    Ok(Prepared::from_built(built, Some(params)))
}

/// The relative L2 error a precision may leave after `steps` steps from rest. f64: 1e-10 (the
/// issue's bound). f32 (U or K' stored in f32): each step's rounding is at most u rho |U|,
/// rho = max_r sum_s |K'_rs| + |C'_r|; the three-level recurrence carries an error injected j
/// steps earlier with a gain of at most j (|sin(j theta) / sin theta| <= j on its normal
/// modes), so after N steps the error is at most u rho N^2 / 2 max|U|; we allow u rho N^2,
/// a factor 2 for the change from the modes' M-norm to L2 on meshes of one density contrast.
pub fn tolerance(f32_rounding: bool, rho: f64, steps: usize) -> f64 {
    if f32_rounding {
        f32::EPSILON as f64 / 2.0 * rho * (steps * steps) as f64
    } else {
        1e-10
    }
}

/// The full run's bound on the relative L2 error of U after `steps` steps against the CPU f64
/// reference: the same u rho N^2 argument with the precision's u (the device's f64 sums differ
/// from the host's in order only), at most 10% (beyond that the N^2 bound says nothing, and
/// 10% still fails a kernel that writes zeros or garbage).
pub fn long_run_tolerance(f32_rounding: bool, rho: f64, steps: usize) -> f64 {
    let u = if f32_rounding { f32::EPSILON as f64 / 2.0 } else { f64::EPSILON / 2.0 };
    (u * rho * (steps * steps) as f64).min(0.1)
}

impl Benchmark for PogoStepping {
    const NAME: &'static str = "pogo-stepping";
    const COLUMNS: &'static [&'static str] = super::spec::COLUMNS;
    const KERNELS: &'static [KernelSource] = &[POGO];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::POGO_ARGS;
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        // One size at a time (the cache holds one model: going back to a size builds it again),
        // models and sizes in the file's order. At each size: the GPU methods without a full run
        // first, then those with one (their CPU window, started by the first GPU case of the
        // size, overlaps the others and their own device runs), then the host methods (timed
        // with the cores to themselves).
        let at = |list: &[f64], v: f64| list.iter().position(|&x| x == v);
        let class = |m: Method| match m {
            _ if m.on_cpu() => 2,
            _ if m.full_runs() => 1,
            _ => 0,
        };
        let mut out = sweep.product();
        out.sort_by_key(|p| (sweep.model.iter().position(|&m| m == p.model), at(&sweep.coarsen, p.coarsen), class(p.method)));
        out
    }
    fn params(p: &Point) -> Params {
        p.params()
    }
    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        if spec.sweep.coarsen.iter().any(|&c| !(c >= 1.0 && c <= 64.0)) {
            return Err(("sweep.coarsen".into(), "sweep.coarsen: every value must lie in [1, 64] (1: the paper's element size)".into()));
        }
        let p = &spec.problem;
        if p.timed_steps == 0 || p.timed_steps > 200 {
            return Err((
                "problem.timed_steps".into(),
                "problem.timed_steps must lie in 1..=200 (a timed region queues two launches a step)".into(),
            ));
        }
        if p.cpu_timed_steps == 0 || p.cpu_timed_steps > 1000 {
            return Err(("problem.cpu_timed_steps".into(), "problem.cpu_timed_steps must lie in 1..=1000".into()));
        }
        check_full_runs(spec)?;
        check_arrival(spec)?;
        if !(p.sell_sigma == 1 || (p.sell_sigma % 32 == 0 && p.sell_sigma <= 8192)) {
            return Err((
                "problem.sell_sigma".into(),
                "problem.sell_sigma must be 1 (no sort) or a multiple of 32 (a slice) up to 8192".into(),
            ));
        }
        check_mesh_files(spec)?;
        if p.check_steps == 0 || p.check_steps > 2000 {
            return Err(("problem.check_steps".into(), "problem.check_steps must lie in 1..=2000".into()));
        }
        Ok(())
    }
    fn memory_estimate(_: &Problem_, p: &Point) -> Option<MemoryEstimate> {
        // Nodes at the paper's size (0.96M for the weld, 1.45M for the gear, 1.0M for the
        // geophysical model), over coarsen^2.
        let at_paper = if p.model == super::spec::ModelName::Gear { 1.5e6 } else { 1.0e6 };
        let nodes = at_paper / (p.coarsen * p.coarsen);
        // Host: mesh and graph, CSR K' (2 x 14 entries of 12 bytes a node), the sliced ELL, the
        // oracle's vectors; device: the stored K' and five vectors.
        Some(MemoryEstimate { host_bytes: nodes * 1200.0, device_bytes: nodes * 400.0 })
    }
    fn case_exists(p: &Point, backend: Backend, precision: Precision) -> bool {
        p.method.runs_on(backend) && (precision == Precision::F64 || !(p.method.on_cpu() || p.method.kf32()))
    }
    fn problem_key(point: &Point) -> Option<String> {
        Some(format!("{}/{:?}", point.model.as_str(), point.coarsen))
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let shared = prepared(ctx.run, problem, point.model, point.coarsen);
        let prep = shared.as_ref().as_ref().map_err(|e| CaseError::Failed(e.clone()))?;
        let window = cpu_window(problem, point.coarsen, prep.model.increments);
        if let (Target::Gpu(_), Some(w)) = (&ctx.target, window) {
            Prepared::window_in_background(&shared, w, ctx.run.background());
        }
        let steps = problem.timed_steps;
        // The full-length run: ours and the paper's kernel on aligned blocks, at the element size
        // the experiment names (capped as it says), or the arrival check's (every increment it
        // runs checked).
        let full =
            window.filter(|_| point.method.full_runs()).map(|w| match problem.full_run.as_ref().filter(|f| f.coarsen == point.coarsen) {
                Some(f) => (w, f.cap(point.method, ctx.precision)),
                None => (w, w),
            });
        let case = Case { prep, method: point.method, steps, cpu_steps: problem.cpu_timed_steps, full };
        let mut run = point.method.entry().run(ctx, &case)?;
        let timed = if matches!(ctx.target, Target::Cpu) { problem.cpu_timed_steps } else { steps };
        let full = run.full.take();
        let mut rows = vec![row(prep, point, ctx.precision, run, timed)];
        rows.extend(prep.metis_row());
        // The full run's check waits for the CPU window: after the case, so that the next GPU
        // cases run meanwhile (the runner settles it before any host-timed case).
        if let Some(f) = full {
            let (shared, point, precision) = (shared.clone(), *point, ctx.precision);
            ctx.deferred = Some(Box::new(move |mut rows: Vec<Measured>| {
                if let Ok(prep) = shared.as_ref() {
                    let window = prep.window(f.window);
                    let checked = f.check(&window);
                    let full = full_row(prep, &point, precision, checked, &rows[0]);
                    rows.push(full);
                }
                rows
            }));
        }
        Ok(rows)
    }
}

/// Each `full_run` section (the problem's and the quick one's): its model size in the sweep, its
/// window and steps in range, and the methods it runs through every increment.
fn check_full_runs(spec: &Spec<PogoStepping>) -> Result<(), (String, String)> {
    let p = &spec.problem;
    let quick = spec.quick.as_ref();
    let quick_sweep = quick.and_then(|q| q.sweep.as_ref()).unwrap_or(&spec.sweep);
    let full_runs =
        [("problem", &spec.problem, &spec.sweep), ("quick.problem", quick.and_then(|q| q.problem.as_ref()).unwrap_or(p), quick_sweep)];
    for (at, problem, sweep) in full_runs {
        let Some(f) = &problem.full_run else { continue };
        if !sweep.coarsen.iter().any(|&c| c == f.coarsen) && !(at == "quick.problem" && std::ptr::eq(problem, p)) {
            return Err((format!("{at}.full_run.coarsen"), format!("{at}.full_run.coarsen: {} is not in the sweep's coarsen", f.coarsen)));
        }
        if f.window == 0 || f.window > 100_000 {
            return Err((format!("{at}.full_run.window"), format!("{at}.full_run.window must lie in 1..=100000 steps")));
        }
        if f.steps.is_some_and(|s| s < f.window || s > 10_000_000) {
            return Err((
                format!("{at}.full_run.steps"),
                format!("{at}.full_run.steps must lie in window..=10000000 (the window's steps are part of the run)"),
            ));
        }
        let field = format!("{at}.full_run.every_increment");
        if !f.every_increment.is_empty() && f.steps.is_none() {
            return Err((field.clone(), format!("{field}: without full_run.steps every run already goes through every increment")));
        }
        for r in &f.every_increment {
            let m = r.method.as_str();
            if !r.method.full_runs() {
                return Err((field.clone(), format!("{field}: {m} makes no full run (sell, sell-kf32 and pogo-aligned do)")));
            }
            if !sweep.method.iter().any(|&s| s == r.method) {
                return Err((field.clone(), format!("{field}: {m} is not in the sweep's methods")));
            }
            if r.method.kf32() && r.precision == Precision::F32 {
                return Err((field.clone(), format!("{field}: {m} runs in f64 only")));
            }
            if !spec.precisions.iter().any(|&p| p == r.precision) {
                return Err((field.clone(), format!("{field}: {} is not in the experiment's precisions", r.precision.as_str())));
            }
        }
    }
    Ok(())
}

/// A mesh file is one model at its own size: the sweep names one model and coarsen [1], and the
/// file reads.
fn check_mesh_files(spec: &Spec<PogoStepping>) -> Result<(), (String, String)> {
    let p = &spec.problem;
    let quick = spec.quick.as_ref();
    let quick_sweep = quick.and_then(|q| q.sweep.as_ref()).unwrap_or(&spec.sweep);
    let quick_problem = quick.and_then(|q| q.problem.as_ref()).unwrap_or(p);
    for (at, problem, sweep) in [("problem", p, &spec.sweep), ("quick.problem", quick_problem, quick_sweep)] {
        let Some(path) = &problem.msh else { continue };
        if sweep.model.len() != 1 || sweep.coarsen.iter().any(|&c| c != 1.0) {
            // A quick section without a problem of its own runs problem.msh on its sweep.
            let field = if at == "quick.problem" && std::ptr::eq(problem, p) { "quick.sweep".to_string() } else { format!("{at}.msh") };
            return Err((
                field.clone(),
                format!(
                    "{field}: a mesh file ({}) is one model at its own size: the sweep must name one model and coarsen [1]",
                    path.display()
                ),
            ));
        }
        let model = *sweep.model.iter().next().expect("one model");
        super::io::import::from_msh(path, model).map_err(|e| (format!("{at}.msh"), format!("{at}.msh: {e}")))?;
    }
    Ok(())
}

/// The arrival checks of the experiment and of its quick form: at a size of the sweep, another
/// than the full run's, of at most a million increments.
fn check_arrival(spec: &Spec<PogoStepping>) -> Result<(), (String, String)> {
    let quick = spec.quick.as_ref();
    let checks = [
        ("problem", &spec.problem, &spec.sweep),
        (
            "quick.problem",
            quick.and_then(|q| q.problem.as_ref()).unwrap_or(&spec.problem),
            quick.and_then(|q| q.sweep.as_ref()).unwrap_or(&spec.sweep),
        ),
    ];
    for (at, problem, sweep) in checks {
        let Some(a) = problem.arrival else { continue };
        let field = format!("{at}.arrival.coarsen");
        // The quick form without its own problem takes the full one's: a size its sweep lacks
        // just makes no arrival run there.
        let inherited = at == "quick.problem" && std::ptr::eq(problem, &spec.problem);
        if !inherited && !sweep.coarsen.iter().any(|&c| c == a.coarsen) {
            return Err((field.clone(), format!("{field}: {} is not in the sweep's coarsen", a.coarsen)));
        }
        if problem.full_run.as_ref().is_some_and(|f| f.coarsen == a.coarsen) {
            return Err((field.clone(), format!("{field}: {} is the full run's size; the arrival check runs at another", a.coarsen)));
        }
        if a.steps.is_some_and(|s| s == 0 || s > 1_000_000) {
            return Err((format!("{at}.arrival.steps"), format!("{at}.arrival.steps must lie in 1..=1000000")));
        }
    }
    Ok(())
}

/// The CPU reference's window at an element size: the full run's, or the arrival check's (all
/// the increments it runs); none at other sizes.
fn cpu_window(problem: &Problem_, coarsen: f64, increments: usize) -> Option<usize> {
    match (problem.full_run.as_ref().filter(|f| f.coarsen == coarsen), problem.arrival.filter(|a| a.coarsen == coarsen)) {
        (Some(f), _) => Some(f.window),
        (None, Some(a)) => Some(a.steps_of(increments)),
        (None, None) => None,
    }
}

/// Eq. (4) on the host: `steps` steps a repetition (CSR, f64, one thread or all), checked from
/// rest against the oracle on poisoned vectors. The serial method (about 50 ms a step at the
/// paper's sizes) is checked after the steps of one repetition, against an oracle of as many
/// steps; the parallel one after the experiment's `check_steps`, as the devices are.
pub struct HostStep {
    pub about: About,
    /// On every rayon thread, else one.
    pub parallel: bool,
}

impl PogoMethod for HostStep {
    fn about(&self) -> &About {
        &self.about
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<StepRun, CaseError> {
        host_for(ctx, self.about.names[0])?;
        run_cpu(ctx, case.prep, self.parallel, case.cpu_steps)
    }
}

fn run_cpu(ctx: &mut CaseCtx, prep: &Prepared, parallel: bool, steps: usize) -> Result<StepRun, CaseError> {
    let threads = if parallel { rayon::current_num_threads() } else { 1 };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| CaseError::Failed(e.to_string()))?;
    let sys = &prep.sys;
    let ndof = 2 * sys.nodes;
    let (dt, signal, start) = (prep.model.dt, prep.model.source.signal, prep.model.check_start);
    let mut u = [vec![0.0; ndof], vec![0.0; ndof], vec![f64::NAN; ndof]];
    let run_steps = |u: &mut [Vec<f64>; 3], from: usize, count: usize| {
        for k in from..from + count {
            let [a, b, c] = u;
            sys.step(a, b, c, signal.at((start + k) as f64 * dt), parallel);
            u.rotate_left(1);
        }
    };
    let checked_steps = if parallel { prep.check_steps } else { steps.min(prep.check_steps) };
    let fewer;
    let reference = if checked_steps == prep.check_steps {
        &prep.reference
    } else {
        fewer = super::system::Oracle::new(&prep.model).run(checked_steps).0;
        &fewer
    };
    pool.install(|| run_steps(&mut u, 0, checked_steps));
    let error = crate::fem::verify::relative_l2(&u[1], reference);
    let mut k = checked_steps;
    let stages = [("steps", Timer::HostWall)];
    let staged = pool.install(|| {
        run_staged(ctx.policy, CacheMode::Warm, &stages, "steps", |pass| -> Result<(), CaseError> {
            pass.host("steps", || run_steps(&mut u, k, steps));
            k += steps;
            Ok(())
        })
    })?;
    let t = staged.stages.into_iter().next().map(|(_, t)| t).expect("one stage");
    let per_step = Timing { samples: t.samples.iter().map(|v| v / steps as f64).collect(), timer: t.timer, mode: t.mode, batch: t.batch };
    Ok(StepRun {
        per_step,
        error,
        trace_error: f64::NAN,
        device_bytes: 0.0,
        vendor_version: None,
        col16: false,
        graph: false,
        full: None,
        checked_steps,
        library: None,
    })
}

/// Bytes a step moves by the method's own storage, counting each stored value once: K' (with
/// its column indices and, for the sliced ELL, without the padding), U_curr, U_prev, C' and
/// U_next. The sliced ELL's padded bytes are an extra column; its columns take 2 bytes where
/// they went as 16-bit offsets (`col16`).
///
/// The paper's kernel: per node its used links' K' blocks and link pointers (and the pointer
/// that ends the list), U_curr, U_prev, C' and U_next; per block the table and the linked
/// loads it makes. Its padded count is Appendix A's with our own L_av: every warp loads the
/// K' terms its busiest thread needs, and every slot of a used block moves its vectors.
pub fn step_bytes(prep: &Prepared, method: Method, s: usize, col16: bool) -> (f64, f64) {
    let ndof = (2 * prep.sys.nodes) as f64;
    let vectors = 4.0 * ndof * s as f64;
    if let Some(Ok(a)) = method.blocker().map(|b| prep.blocked(b)) {
        let (b, sf) = (&a.data, s as f64);
        let kv = if method.kf32() { 4.0 } else { sf };
        let slots = b.slots as f64;
        let linked = b.arr.loaded_slots() as f64 * 2.0 * sf + (b.arr.blocks * 20 * 4) as f64;
        let own = 4.0 * kv * b.used_links as f64 + 2.0 * b.pointer_reads as f64 + vectors + linked;
        let padded = 4.0 * kv * (b.warp_links * 32) as f64 + 2.0 * b.pointer_reads as f64 + 4.0 * 2.0 * slots * sf + linked;
        return (own, padded);
    }
    match method {
        Method::SELL | Method::SELL_KF32 => {
            let kv = if method == Method::SELL_KF32 { 4.0 } else { s as f64 };
            let links = prep.sell.links as f64;
            let stored = prep.sell.col.len() as f64;
            let cb = if col16 { 2.0 } else { 4.0 };
            ((4.0 * kv + cb) * links + vectors, (4.0 * kv + cb) * stored + 4.0 * prep.sell.slice_ptr.len() as f64 + vectors)
        }
        Method::SELL_CUSPARSE => {
            // Values and columns of every entry, then of every stored slot (32-row slices).
            let (nnz, p) = (prep.sys.pattern.nnz() as f64, &prep.sys.pattern);
            let stored = crate::fem::csr::SlicedEll::stored(p, 32) as f64;
            let slices = 4.0 * (p.rows().div_ceil(32) + 1) as f64;
            ((s as f64 + 4.0) * nnz + slices + vectors, (s as f64 + 4.0) * stored + slices + vectors)
        }
        m if m.bsr() => {
            // Warp's BSR of 2 x 2 blocks: values of every entry, a column a block, the offsets.
            let (nnz, nodes) = (prep.sys.pattern.nnz() as f64, prep.sys.nodes as f64);
            let b = s as f64 * nnz + 4.0 * nnz / 4.0 + 4.0 * (nodes + 1.0) + vectors;
            (b, b)
        }
        _ => {
            let nnz = prep.sys.pattern.nnz() as f64;
            let b = (s as f64 + 4.0) * nnz + 4.0 * (ndof + 1.0) + vectors;
            (b, b)
        }
    }
}

/// The full run's row: its time for all increments, checked against the CPU window (U after
/// the window's steps), with the receivers' traces as series and the step row's model columns.
fn full_row(prep: &Prepared, point: &Point, precision: Precision, f: CheckedFullRun, step: &Measured) -> Measured {
    let f32_rounding = precision == Precision::F32 || point.method.kf32();
    let tol = long_run_tolerance(f32_rounding, prep.sys.row_bound, f.window);
    let per_step = step.bytes.unwrap_or(f64::NAN);
    let mut out = Measured::verified("full-run", f.timing, f.field_error, tol)
        .bytes(per_step * f.steps as f64)
        .flops(step.flops.unwrap_or(f64::NAN) * f.steps as f64)
        .series("trace", f.trace)
        .series("reference_trace", f.reference_trace);
    if let Some(m) = step.memory_bytes {
        out = out.memory(m);
    }
    for (k, v) in step.extras.iter().filter(|(k, _)| k != "trace_error" && k != "timed_steps") {
        out = out.extra(k, *v);
    }
    out.extra("timed_steps", f.steps as f64)
        .extra("window_steps", f.window as f64)
        .extra("window_cpu_s", f.window_cpu_s)
        .extra("trace_error", f.trace_error)
        .extra("trace_stride", f.stride as f64)
        .extra("receivers", prep.model.receivers.len() as f64)
}

pub(crate) fn row(prep: &Prepared, point: &Point, precision: Precision, run: StepRun, timed_steps: usize) -> Measured {
    let s = if point.method.on_cpu() { 8 } else { precision.bytes() };
    let f32_rounding = precision == Precision::F32 || point.method.kf32();
    let tol = tolerance(f32_rounding && !point.method.on_cpu(), prep.sys.row_bound, run.checked_steps);
    let (bytes, padded) = step_bytes(prep, point.method, s, run.col16);
    // Table 4 is for the aligned blocker: Appendix A's count with our aligned blocks, or with
    // the blocks of the arrangement the paper's kernel ran on.
    let eta = prep.aligned_eta();
    let arranged = point.method.blocker().and_then(|b| prep.blocked(b).as_ref().ok());
    let (blocks, block_eta) = arranged.map_or((prep.aligned.blocks, eta), |a| (a.data.arr.blocks, a.data.arr.eta()));
    let paper_bytes = blocks as f64 * super::paper::block_bytes(block_eta, s == 8);
    // Flops a step executes: 2 per stored K' entry (the multiply-add) and 2 per dof for C'.
    let flops = 2.0 * prep.sys.pattern.nnz() as f64 + 4.0 * prep.sys.nodes as f64;
    let m = &prep.model;
    let extras = [
        ("nodes", m.nodes() as f64),
        ("dofs", m.dofs() as f64),
        ("elements", m.mesh.tris.len() as f64),
        ("element_size", m.element_size),
        ("mean_edge", m.mean_edge()),
        ("dt", m.dt),
        ("increments", m.increments as f64),
        ("cfl_margin", prep.cfl_margin),
        ("nnz", prep.sys.pattern.nnz() as f64),
        ("links", prep.sell.links as f64),
        ("sell_sigma", prep.sell.sigma as f64),
        ("sell_padding", prep.sell.padding()),
        ("padded_bytes", padded),
        ("paper_bytes", paper_bytes),
        ("greedy_blocks", prep.greedy_blocks as f64),
        ("greedy_eta", prep.greedy_eta()),
        ("aligned_blocks", prep.aligned.blocks as f64),
        ("aligned_eta", eta),
        ("aligned_s", prep.aligned.seconds),
        ("aligned_layers", prep.aligned.layers as f64),
        ("metis_blocks", prep.metis_blocks as f64),
        ("metis_eta", prep.metis_eta()),
        ("metis_s", prep.metis_s),
        ("greedy_s", prep.greedy_s),
        ("mesh_s", prep.mesh_s),
        ("order_s", prep.order_s),
        ("operators_s", prep.operators_s),
        ("oracle_s", prep.oracle_s),
        ("check_steps", run.checked_steps as f64),
        ("timed_steps", timed_steps as f64),
        ("trace_error", run.trace_error),
        ("row_bound", prep.sys.row_bound),
        ("vendor_version", run.vendor_version.map_or(f64::NAN, |v| v as f64)),
        ("col16", run.col16 as u8 as f64),
        ("step_graph", run.graph as u8 as f64),
    ];
    // The arrangement the paper's kernel ran on: its blocks and efficiency after the splits,
    // Appendix A's L_av (the busiest thread's links per warp, averaged over every warp of the
    // blocks) and its seconds on the host.
    let nan = f64::NAN;
    let arranged_extras = arranged.map_or([nan; 7], |a| {
        let r = &a.data.arr;
        let warps = (r.blocks * super::arrange::ROWS) as f64;
        [r.blocks as f64, r.eta(), r.splits as f64, r.passes as f64, a.data.warp_links as f64 / warps, r.links as f64, a.seconds]
    });
    let names = ["arranged_blocks", "arranged_eta", "arrange_splits", "arrange_passes", "l_av", "link_pointers", "arrange_s"];
    let mut out = Measured::verified("step", run.per_step, run.error, tol).bytes(bytes).flops(flops);
    if let Some(l) = &run.library {
        out = out.library(l);
    }
    out = names.iter().zip(arranged_extras).fold(out, |m, (k, v)| m.extra(k, v));
    if run.device_bytes > 0.0 {
        out = out.memory(run.device_bytes);
    }
    extras.iter().fold(out, |m, &(k, v)| m.extra(k, v))
}

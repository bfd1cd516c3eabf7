//! The pipeline's middle: experiments -> cases -> measure -> rows on disk, with a progress bar.
//! A failing case becomes rows with its status and reason, and the run goes on.

use std::collections::BTreeMap;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use crate::benchmark::{CaseCtx, CaseError, Deferred, Experiment, Measured, ModuleCache, Target, Upcoming};
pub use crate::case_list::{case_id, planned_case_ids};
use crate::case_list::{cases_to_run, experiment_ends, Case};
use crate::case_rows::{finish_case, guarded, settle, Finished};
use crate::context::RunContext;
use crate::results::{hostname, now_string, ExperimentRecord, RunDir, RunMeta};
pub use crate::run_options::{RunError, RunOptions, RunSummary};
use fembench_core::Precision;
use fembench_device::{self as device, Backend, Device};
use fembench_measure::{CacheFlusher, MeasurePolicy};

pub use crate::benchmark::RUNNER_COLUMNS;

/// The commit this harness was built from (`-dirty` when the tree had changes).
pub fn build_commit() -> &'static str {
    option_env!("FEMBENCH_GIT_COMMIT").unwrap_or("unknown")
}

/// An opened backend, or why it is not available.
enum Opened {
    /// `flusher`: not yet made (None), made, or the reason it could not be.
    Gpu {
        dev: Box<dyn Device>,
        modules: ModuleCache,
        flusher: Option<Result<CacheFlusher, String>>,
    },
    Cpu,
    Unavailable(String),
}

fn run_id(experiments: &[Box<dyn Experiment>], quick: bool, shard: Option<crate::shard::Shard>) -> String {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let what = if experiments.len() == 1 { experiments[0].id().to_string() } else { "all".into() };
    let part = shard.map(|s| format!("-shard-{}of{}", s.index, s.count)).unwrap_or_default();
    format!("{stamp}-{what}{}{part}", if quick { "-quick" } else { "" })
}

pub fn run(experiments: &[Box<dyn Experiment>], opts: &RunOptions) -> Result<RunSummary, RunError> {
    let (run, mut meta) = open_run(experiments, opts)?;
    // One writer per run folder, held to the end of the run.
    let _lock = run.lock()?;
    record_experiments(experiments, &run, &mut meta, opts.resume.is_some())?;
    let mut summary = RunSummary { run_dir: run.path.clone(), ..Default::default() };
    let cases = cases_to_run(experiments, &run, &meta, opts, &mut summary)?;
    let bar = progress_bar(opts.progress, cases.len());
    // Every case as a benchmark sees the ones after it: one list, sliced per case up to the end
    // of its experiment.
    let listed: Vec<Upcoming> = cases.iter().map(Case::upcoming).collect();
    let experiment_end = experiment_ends(&cases.iter().map(|c| c.exp).collect::<Vec<_>>());
    let mut opened: BTreeMap<Backend, Opened> = BTreeMap::new();
    let telemetry = fembench_device::telemetry::Telemetry::open();
    // Cases whose rows wait for their deferred rest (see [`Deferred`]).
    let run_id = meta.run_id.clone();
    let mut pending: Vec<Finished> = Vec::new();
    let run_start = std::time::Instant::now();
    let out_of_time = || opts.stop_after.is_some_and(|limit| run_start.elapsed() >= limit) || crate::interrupt::requested();
    let shared = Arc::new(RunContext::default());
    for (ci, case) in cases.iter().enumerate() {
        if out_of_time() {
            summary.cases_left = cases.len() - ci;
            summary.interrupted = crate::interrupt::requested();
            break;
        }
        let e = &experiments[case.exp];
        // No background job of one experiment runs into the next.
        if ci > 0 && cases[ci - 1].exp != case.exp {
            shared.background().quiet();
        }
        let iteration_start = std::time::Instant::now();
        bar.set_message(format!("{} {}", e.id(), case.id));
        let target = opened.entry(case.backend).or_insert_with(|| open_backend(case.backend, meta.device_index, &mut meta));
        run.mark_started(e.id(), &case.id)?;
        crate::interrupt::set_in_hand(Some(run.marker(e.id(), &case.id)));
        if matches!(target, Opened::Cpu) {
            // Host-timed: no background job (a model's CPU window, a problem built ahead) may
            // share the cores, and the cases that waited for one are settled first.
            settle(&mut pending, &mut |p| finish_counted(p, &mut summary, &bar))?;
            shared.background().quiet();
        }
        let policy = e.policy(meta.quick);
        let job =
            Job { e: e.as_ref(), case, quick: meta.quick, policy: &policy, upcoming: &listed[ci + 1..experiment_end[ci]], shared: &shared };
        let (outcome, deferred) = run_case(target, &job, &telemetry);
        let failed_on_gpu = outcome.is_err() && matches!(target, Opened::Gpu { .. });
        let device = device_name(target);
        let (exp, id, params) = (e.id(), case.id.as_str(), &case.params);
        let (backend, precision) = (case.backend, case.precision);
        let done = Finished { run: &run, run_id: &run_id, exp, id, backend, device, precision, params, outcome, rest: None };
        match (deferred, &done.outcome) {
            (Some(rest), Ok(_)) => pending.push(Finished { rest: Some(rest), ..done }),
            _ => finish_counted(done, &mut summary, &bar)?,
        }
        crate::interrupt::set_in_hand(None);
        fembench_measure::trace::mark("rows written");
        after_case(&run, &mut opened, case, failed_on_gpu, (&mut summary, &bar))?;
        // The experiment's last case (or the last before the time limit): the cases that waited
        // for background work are settled, and the experiment's wall time goes to meta.json now,
        // so a run stopped later keeps it.
        let last = cases.get(ci + 1).is_none_or(|next| next.exp != case.exp) || out_of_time();
        if last {
            settle(&mut pending, &mut |p| finish_counted(p, &mut summary, &bar))?;
        }
        *meta.experiment_wall_s.entry(e.id().to_string()).or_default() += iteration_start.elapsed().as_secs_f64();
        if last {
            run.write_meta(&meta)?;
        }
        bar.inc(1);
    }
    settle(&mut pending, &mut |p| finish_counted(p, &mut summary, &bar))?;
    bar.finish_and_clear();
    // A run with cases left (stopped by the time limit or an interrupt) is not finished.
    meta.finished = (summary.cases_left == 0).then(now_string);
    run.write_meta(&meta)?;
    Ok(summary)
}

/// The run folder and its meta.json: a resumed run's, checked for resuming, or a new one's.
fn open_run(experiments: &[Box<dyn Experiment>], opts: &RunOptions) -> Result<(RunDir, RunMeta), RunError> {
    if let Some(path) = &opts.resume {
        let run = RunDir::open(path)?;
        let meta = run.read_meta()?;
        crate::resume::check_resumable(&meta, opts.force, build_commit()).map_err(RunError::Resume)?;
        return Ok((run, meta));
    }
    let (run, id) = RunDir::create_new(&opts.out_dir, &run_id(experiments, opts.quick, opts.shard))?;
    let meta = RunMeta {
        run_id: id,
        harness_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: build_commit().into(),
        host: hostname(),
        cpu_model: device::cpu::model(),
        started: now_string(),
        finished: None,
        quick: opts.quick,
        backends: opts.backends.iter().map(|b| b.to_string()).collect(),
        device_index: opts.device_index,
        experiments: vec![],
        devices: vec![],
        unavailable: vec![],
        experiment_wall_s: Default::default(),
        kernel_dir: device::kernels::kernel_dir().map(|d| d.display().to_string()),
        shard: opts.shard.map(|s| s.to_string()),
        merged_from: Vec::new(),
    };
    Ok((run, meta))
}

/// Each experiment's file saved in a new run and its hash recorded; a resumed run refuses an
/// experiment that changed since it started, or that it never had.
fn record_experiments(experiments: &[Box<dyn Experiment>], run: &RunDir, meta: &mut RunMeta, resumed: bool) -> Result<(), RunError> {
    for e in experiments {
        let sha = format!("{:x}", Sha256::digest(e.text().as_bytes()));
        if let Some(rec) = meta.experiments.iter().find(|r| r.id == e.id()) {
            if rec.sha256 != sha {
                return Err(RunError::Resume(format!(
                    "experiment `{}` changed since the run started ({} has another hash); start a new run",
                    e.id(),
                    e.path().display()
                )));
            }
        } else if resumed {
            let has: Vec<&str> = meta.experiments.iter().map(|r| r.id.as_str()).collect();
            return Err(RunError::Resume(format!(
                "experiment `{}` ({}) is not part of run {} (its experiments: {}); run it in a new run folder",
                e.id(),
                e.path().display(),
                meta.run_id,
                has.join(", ")
            )));
        } else {
            run.save_experiment(e.id(), e.text())?;
            meta.experiments.push(ExperimentRecord { id: e.id().into(), file: e.path().display().to_string(), sha256: sha });
        }
    }
    Ok(run.write_meta(meta)?)
}

fn progress_bar(shown: bool, cases: usize) -> ProgressBar {
    let bar = if shown { ProgressBar::new(cases as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:32}] {pos}/{len} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

/// What one case needs besides its backend.
struct Job<'a> {
    e: &'a dyn Experiment,
    case: &'a Case,
    quick: bool,
    policy: &'a MeasurePolicy,
    upcoming: &'a [Upcoming],
    shared: &'a Arc<RunContext>,
}

/// A case's rows, or why it has none, and the rest it deferred.
type Outcome = (Result<Vec<Measured>, CaseError>, Option<Deferred>);

/// Runs a case and puts the runner's columns on its rows.
fn run_case(target: &mut Opened, job: &Job, telemetry: &fembench_device::telemetry::Telemetry) -> Outcome {
    let case_start = std::time::Instant::now();
    let prep_before = crate::prep_cache::counts();
    fembench_measure::trace::begin(&format!("{} {}", job.e.id(), job.case.id));
    let (mut outcome, deferred) = outcome_of(target, job);
    // Where a case's wall time goes besides its timed repetitions: compiling (or loading
    // compiled kernels from the disk cache), building problems, verifying.
    fembench_measure::trace::mark("case returned");
    let prep_after = crate::prep_cache::counts();
    let prep = ((prep_after.0 - prep_before.0) as f64, (prep_after.1 - prep_before.1) as f64);
    annotate(&mut outcome, target, (case_start.elapsed().as_secs_f64(), prep), telemetry);
    (outcome, deferred)
}

/// Runs a case on its opened backend, unless it cannot fit or the backend cannot run it.
fn outcome_of(target: &mut Opened, job: &Job) -> Outcome {
    if let Some(why) = memory_refusal(job.e, job.quick, job.case.point, target) {
        return (Err(CaseError::Failed(why)), None);
    }
    match target {
        Opened::Unavailable(reason) => (Err(CaseError::Skipped(reason.clone())), None),
        Opened::Gpu { dev, .. } if job.case.precision == Precision::F64 && !dev.info().fp64 => {
            (Err(CaseError::Skipped(format!("{} has no fp64 support", dev.info().name))), None)
        }
        Opened::Gpu { dev, modules, flusher } => {
            inject_sticky_fault(dev.as_ref(), &job.case.id);
            let needs_flush = job.policy.modes.contains(&fembench_measure::CacheMode::Cold);
            if needs_flush && flusher.is_none() {
                *flusher = Some(CacheFlusher::new(dev.as_ref()).map_err(|e| e.to_string()));
            }
            match flusher {
                Some(Err(why)) if needs_flush => {
                    (Err(CaseError::Failed(format!("cold mode asked for, but the cache flusher could not be made: {why}"))), None)
                }
                _ => run_point(job, Target::Gpu(dev.as_ref()), modules, flusher.as_ref().and_then(|f| f.as_ref().ok())),
            }
        }
        Opened::Cpu => run_point(job, Target::Cpu, &mut ModuleCache::default(), None),
    }
}

/// The benchmark's run of the case's point, a panic caught as a failed case.
fn run_point(job: &Job, target: Target, modules: &mut ModuleCache, flusher: Option<&CacheFlusher>) -> Outcome {
    let mut ctx = CaseCtx {
        target,
        run: job.shared,
        precision: job.case.precision,
        policy: job.policy,
        flusher,
        modules,
        upcoming: job.upcoming,
        deferred: None,
    };
    let outcome = guarded(|| job.e.run_point(&mut ctx, job.quick, job.case.point));
    (outcome, ctx.deferred.take())
}

/// The runner's columns on every row of a case that ran: its wall time, the time its kernels
/// took to compile, which GPU of the node, how many other workers shared the host (`--gpus`),
/// the prepared-problem cache entries read and built, and the GPU's clocks, temperature, power
/// and throttle reasons right after the case.
fn annotate(
    outcome: &mut Result<Vec<Measured>, CaseError>,
    target: &mut Opened,
    (wall_s, (prep_read, prep_built)): (f64, (f64, f64)),
    telemetry: &fembench_device::telemetry::Telemetry,
) {
    let compile_s = match &mut *target {
        Opened::Gpu { modules, .. } => Some(modules.take_compile_s()),
        _ => None,
    };
    let Ok(measured) = outcome else { return };
    let gpu = match &*target {
        Opened::Gpu { dev, .. } => Some((dev.info().index as f64, telemetry.read(dev.info()))),
        _ => None,
    };
    for m in measured.iter_mut() {
        m.extras.push(("case_wall_s".into(), wall_s));
        m.extras.push(("prep_read".into(), prep_read));
        m.extras.push(("prep_built".into(), prep_built));
        if let Some(c) = compile_s {
            m.extras.push(("compile_s".into(), c));
        }
        if let Some((i, _)) = &gpu {
            m.extras.push(("device_index".into(), *i));
        }
        if let Some(w) = concurrent_workers() {
            m.extras.push(("concurrent_workers".into(), w));
        }
    }
    if let Some((_, readings)) = gpu {
        for m in measured.iter_mut() {
            m.extras.extend(readings.iter().cloned());
        }
    }
}

fn device_name(target: &Opened) -> String {
    match target {
        Opened::Gpu { dev, .. } => dev.info().name.clone(),
        Opened::Cpu => device::cpu::model(),
        Opened::Unavailable(_) => "-".into(),
    }
}

/// After a case: kernels.json gains what the case's device compiled (nothing is written when
/// nothing is new), and after a sticky error (an illegal address poisons a CUDA context for
/// good) the device is opened again, so the rest of the run is not lost.
fn after_case(
    run: &RunDir,
    opened: &mut BTreeMap<Backend, Opened>,
    case: &Case,
    failed_on_gpu: bool,
    (summary, bar): (&mut RunSummary, &ProgressBar),
) -> Result<(), RunError> {
    summary.cases_run += 1;
    let Some(Opened::Gpu { dev, .. }) = opened.get(&case.backend) else { return Ok(()) };
    run.add_kernels(&dev.compiled())?;
    if failed_on_gpu && !dev.healthy() {
        crate::case_rows::say(bar, format!("{}: device in an error state after {}; opening it again", case.backend, case.id));
        opened.remove(&case.backend);
        summary.devices_reopened += 1;
    }
    Ok(())
}

/// How many other worker processes run beside this one on the node (`harness run --gpus` sets
/// it for its workers); None for an ordinary run.
fn concurrent_workers() -> Option<f64> {
    std::env::var("FEMBENCH_CONCURRENT_WORKERS").ok()?.parse().ok()
}

/// A hook for the GPU test of the re-open and relaunch path: with `FEMBENCH_TEST_STICKY_FAULT`
/// set to a case id, the first process of a chain (not a relaunched one) puts the device into a
/// sticky error just before that case, by a kernel that writes to an illegal address.
fn inject_sticky_fault(dev: &dyn Device, case_id: &str) {
    if std::env::var("FEMBENCH_TEST_STICKY_FAULT").ok().as_deref() != Some(case_id) || std::env::var_os("FEMBENCH_RELAUNCH_DEPTH").is_some()
    {
        return;
    }
    use fembench_device::{kernels::*, Buffer, DeviceExt, Launch};
    const SRC: KernelSource =
        KernelSource { file: "sticky-fault.kern", text: "KERNEL void fault(GLOBAL int *p) { p[(idx_t)1 << 40] = 1; }" };
    fembench_device::kernel_args! {
        const _FAULT_ARGS in SRC;
        struct Fault<'a> = "fault" { p: &'a Buffer }
    }
    let fault = || -> Result<(), fembench_device::DeviceError> {
        let k = dev.kernel(&dev.compile(&SRC, &Defines::new())?, "fault")?;
        let buf = dev.alloc(64)?;
        dev.launch_with(&k, Launch { groups: 1, group_size: 1 }, &Fault { p: &buf })?;
        dev.synchronize()
    };
    eprintln!("FEMBENCH_TEST_STICKY_FAULT: a fault before {case_id}: {:?}", fault());
}

/// A case that cannot fit in this machine's free memory or its device's, before anything is
/// built for it.
fn memory_refusal(e: &dyn Experiment, quick: bool, point: usize, target: &Opened) -> Option<String> {
    let m = e.memory_estimate(quick, point)?;
    if let Some(host) = crate::benchmark::host_memory_bytes() {
        if m.host_bytes > host {
            return Some(format!("needs about {:.1} GB of host memory; this machine has {:.1} GB", m.host_bytes / 1e9, host / 1e9));
        }
    }
    if let Opened::Gpu { dev, .. } = target {
        let have = dev.info().memory_bytes as f64;
        if m.device_bytes > have {
            return Some(format!(
                "needs about {:.1} GB of device memory; {} has {:.1} GB",
                m.device_bytes / 1e9,
                dev.info().name,
                have / 1e9
            ));
        }
    }
    None
}

/// A case's rows written, and counted in the run's summary.
fn finish_counted(done: Finished, summary: &mut RunSummary, bar: &ProgressBar) -> Result<(), RunError> {
    summary.count(finish_case(done, bar)?);
    Ok(())
}

fn open_backend(backend: Backend, index: usize, meta: &mut RunMeta) -> Opened {
    if backend == Backend::Cpu {
        let info = device::cpu::info();
        if !meta.devices.iter().any(|d| d.backend == Some(Backend::Cpu)) {
            meta.devices.push(info);
        }
        return Opened::Cpu;
    }
    match device::open(backend, index) {
        Ok(dev) => {
            let info = dev.info().clone();
            if !meta.devices.iter().any(|d| d.backend == info.backend && d.index == info.index) {
                meta.devices.push(info);
            }
            Opened::Gpu { dev, modules: ModuleCache::default(), flusher: None }
        }
        Err(e) => {
            let reason = e.to_string();
            if !meta.unavailable.iter().any(|(b, _)| b == backend.as_str()) {
                meta.unavailable.push((backend.to_string(), reason.clone()));
            }
            Opened::Unavailable(reason)
        }
    }
}

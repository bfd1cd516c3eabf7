//! The pipeline's middle: experiments -> cases -> measure -> rows on disk, with a progress bar.
//! A failing case becomes rows with its status and reason, and the run goes on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use crate::benchmark::{CaseCtx, CaseError, Deferred, Experiment, Measured, ModuleCache, Target, Upcoming};
use crate::case_rows::{finish_case, guarded, settle, to_rows, Finished};
use crate::context::RunContext;
use crate::experiment::Params;
use crate::results::{hostname, now_string, CaseKey, ExperimentRecord, ResultsError, RunDir, RunMeta};
use fembench_core::Precision;
use fembench_device::{self as device, Backend, Device};
use fembench_measure::CacheFlusher;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Restrict to these backends (intersected with each experiment's list); empty: no restriction.
    pub backends: Vec<Backend>,
    pub device_index: usize,
    pub quick: bool,
    /// Parent folder of new run folders.
    pub out_dir: PathBuf,
    /// Continue this run folder instead of starting a new one.
    pub resume: Option<PathBuf>,
    /// With `resume`: run again the cases whose rows have these statuses ("failed", "skipped").
    pub retry: Vec<String>,
    /// With `resume`: continue although the run was made on another device, commit or
    /// harness version.
    pub force: bool,
    /// Show a progress bar (off in tests).
    pub progress: bool,
    /// Start no new case after this long (a batch job's time limit): the run stops cleanly,
    /// every finished case kept, and `--resume` continues it.
    pub stop_after: Option<std::time::Duration>,
    /// Run only this part of the case list ([`crate::shard`]).
    pub shard: Option<crate::shard::Shard>,
    /// Stored runs (or folders of them) whose case wall times balance the shards.
    pub costs_from: Vec<PathBuf>,
}

pub use crate::benchmark::RUNNER_COLUMNS;

/// The commit this harness was built from (`-dirty` when the tree had changes).
pub fn build_commit() -> &'static str {
    option_env!("FEMBENCH_GIT_COMMIT").unwrap_or("unknown")
}

#[derive(Debug, Default)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub cases_run: usize,
    pub cases_skipped_as_done: usize,
    pub rows_ok: usize,
    pub rows_failed: usize,
    pub rows_skipped: usize,
    /// Devices found in an error state after a case and opened again (a sticky CUDA error).
    /// The driver may refuse a new context in this process; a new process then runs the
    /// skipped cases (`harness run` does this itself).
    pub devices_reopened: usize,
    /// Cases left unstarted because `stop_after` ran out or an interrupt asked the run to stop.
    pub cases_left: usize,
    /// Whether an interrupt (Ctrl-C) stopped the run.
    pub interrupted: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{0}")]
    Resume(String),
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

/// The case ids an experiment plans, in run order (sweep point, backend, precision), on the
/// backends of `restrict` where given.
pub fn planned_case_ids(e: &dyn Experiment, quick: bool, restrict: Option<&[Backend]>) -> Vec<String> {
    let mut out = Vec::new();
    for (pi, params) in e.points(quick).into_iter().enumerate() {
        for &backend in e.backends() {
            if restrict.is_some_and(|r| !r.contains(&backend)) {
                continue;
            }
            for &precision in e.precisions() {
                if e.case_exists(quick, pi, backend, precision) {
                    out.push(case_id(backend, precision, &params));
                }
            }
        }
    }
    out
}

/// Case identity within an experiment: what `--resume` matches on.
pub fn case_id(backend: Backend, precision: Precision, params: &Params) -> String {
    format!("{backend}/{precision}/{}", params.key())
}

pub fn run(experiments: &[Box<dyn Experiment>], opts: &RunOptions) -> Result<RunSummary, RunError> {
    let (run, mut meta) = match &opts.resume {
        Some(path) => {
            let run = RunDir::open(path)?;
            let meta = run.read_meta()?;
            crate::resume::check_resumable(&meta, opts.force, build_commit()).map_err(RunError::Resume)?;
            (run, meta)
        }
        None => {
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
            (run, meta)
        }
    };
    // One writer per run folder, held to the end of the run.
    let _lock = run.lock()?;
    // A resumed run keeps its own mode: quick or full, whatever the command line says.
    let quick = meta.quick;
    // A resumed run keeps its own device.
    let device_index = meta.device_index;
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
        } else if opts.resume.is_some() {
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
    run.write_meta(&meta)?;
    // The cases, in order: experiment, sweep point, backend, precision. Points outermost, so a
    // benchmark that builds a large problem per point (a mesh) builds it once for all backends.
    struct Case {
        exp: usize,
        backend: Backend,
        precision: Precision,
        point: usize,
        params: Params,
        id: String,
    }
    // A resumed run keeps its backends; --backend narrows them further (possibly to none).
    let restrict: Option<Vec<Backend>> = {
        let stored: Vec<Backend> =
            if opts.resume.is_some() { meta.backends.iter().filter_map(|b| b.parse().ok()).collect() } else { vec![] };
        match (stored.is_empty(), opts.backends.is_empty()) {
            (true, true) => None,
            (true, false) => Some(opts.backends.clone()),
            (false, true) => Some(stored),
            (false, false) => Some(stored.into_iter().filter(|b| opts.backends.contains(b)).collect()),
        }
    };
    let mut cases = Vec::new();
    let mut skipped_done = 0;
    let mut summary = RunSummary { run_dir: run.path.clone(), ..Default::default() };
    for (ei, e) in experiments.iter().enumerate() {
        if !opts.retry.is_empty() {
            let again: BTreeSet<String> =
                run.case_statuses(e.id())?.into_iter().filter(|(_, st)| opts.retry.contains(st)).map(|(id, _)| id).collect();
            run.remove_cases(e.id(), &again)?;
        }
        let mut done = run.finished_cases(e.id())?;
        // A case that was started but never finished killed the process (out of memory, say):
        // record it as failed rather than crash again, unless failed cases are retried.
        for (id, started) in run.crashed_cases(e.id())? {
            if !done.contains(&id) && !opts.retry.iter().any(|r| r == "failed") {
                let (backend, precision, params) = case_identity(e.as_ref(), quick, &id);
                let key = CaseKey {
                    run_id: &meta.run_id,
                    experiment: e.id(),
                    case_id: &id,
                    backend: backend.as_str(),
                    device: "-",
                    precision: precision.as_str(),
                    params: &params,
                };
                let rows = to_rows(
                    &key,
                    Err(CaseError::Failed(format!(
                        "the harness process ended inside this case (started {started}): killed, out of memory or crashed; `--retry failed` runs it again"
                    ))),
                );
                run.write_case(e.id(), &rows)?;
                summary.rows_failed += rows.len();
                done.insert(id.clone());
            }
            run.clear_started(e.id(), &id)?;
        }
        for (pi, params) in e.points(quick).into_iter().enumerate() {
            for &backend in e.backends() {
                if restrict.as_ref().is_some_and(|r| !r.contains(&backend)) {
                    continue;
                }
                for &precision in e.precisions() {
                    if !e.case_exists(quick, pi, backend, precision) {
                        continue;
                    }
                    let id = case_id(backend, precision, &params);
                    if done.contains(&id) {
                        skipped_done += 1;
                        continue;
                    }
                    cases.push(Case { exp: ei, backend, precision, point: pi, params: params.clone(), id });
                }
            }
        }
    }
    summary.cases_skipped_as_done = skipped_done;
    if let Some(shard) = opts.shard.or_else(|| meta.shard.as_deref().and_then(|s| s.parse().ok())) {
        let planned: Vec<(String, String)> = experiments
            .iter()
            .flat_map(|e| planned_case_ids(e.as_ref(), quick, restrict.as_deref()).into_iter().map(|id| (e.id().to_string(), id)))
            .collect();
        let mine = shard_part(&planned, &opts.costs_from, shard);
        cases.retain(|c| mine.contains(&(experiments[c.exp].id().to_string(), c.id.clone())));
    }

    let bar = if opts.progress { ProgressBar::new(cases.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:32}] {pos}/{len} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );

    // Every case as a benchmark sees the ones after it: one list, sliced per case up to the end
    // of its experiment.
    let listed: Vec<Upcoming> =
        cases.iter().map(|c| Upcoming { backend: c.backend, precision: c.precision, params: c.params.clone() }).collect();
    let experiment_end = experiment_ends(&cases.iter().map(|c| c.exp).collect::<Vec<_>>());
    let mut opened: BTreeMap<Backend, Opened> = BTreeMap::new();
    let telemetry = fembench_device::telemetry::Telemetry::open();
    // Cases whose rows wait for their deferred rest (see [`Deferred`]).
    let run_id = meta.run_id.clone();
    let mut pending: Vec<Finished> = Vec::new();
    let run_start = std::time::Instant::now();
    let shared = Arc::new(RunContext::default());
    for (ci, case) in cases.iter().enumerate() {
        if opts.stop_after.is_some_and(|limit| run_start.elapsed() >= limit) || crate::interrupt::requested() {
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
        let target = opened.entry(case.backend).or_insert_with(|| open_backend(case.backend, device_index, &mut meta));
        let device_name = match target {
            Opened::Gpu { dev, .. } => dev.info().name.clone(),
            Opened::Cpu => device::cpu::model(),
            Opened::Unavailable(_) => "-".into(),
        };
        let policy = e.policy(quick);
        let upcoming = &listed[ci + 1..experiment_end[ci]];
        run.mark_started(e.id(), &case.id)?;
        crate::interrupt::set_in_hand(Some(run.marker(e.id(), &case.id)));
        let too_big = memory_refusal(e.as_ref(), quick, case.point, target);
        let case_start = std::time::Instant::now();
        fembench_measure::trace::begin(&format!("{} {}", e.id(), case.id));
        let (mut outcome, deferred): (Result<Vec<Measured>, CaseError>, Option<Deferred>) = match target {
            _ if too_big.is_some() => (Err(CaseError::Failed(too_big.unwrap_or_default())), None),
            Opened::Unavailable(reason) => (Err(CaseError::Skipped(reason.clone())), None),
            Opened::Gpu { dev, .. } if case.precision == Precision::F64 && !dev.info().fp64 => {
                (Err(CaseError::Skipped(format!("{} has no fp64 support", dev.info().name))), None)
            }
            Opened::Gpu { dev, modules, flusher } => {
                inject_sticky_fault(dev.as_ref(), &case.id);
                let needs_flush = policy.modes.contains(&fembench_measure::CacheMode::Cold);
                if needs_flush && flusher.is_none() {
                    *flusher = Some(CacheFlusher::new(dev.as_ref()).map_err(|e| e.to_string()));
                }
                match flusher {
                    Some(Err(why)) if needs_flush => {
                        (Err(CaseError::Failed(format!("cold mode asked for, but the cache flusher could not be made: {why}"))), None)
                    }
                    _ => {
                        let mut ctx = CaseCtx {
                            target: Target::Gpu(dev.as_ref()),
                            run: &shared,
                            precision: case.precision,
                            policy: &policy,
                            flusher: flusher.as_ref().and_then(|f| f.as_ref().ok()),
                            modules,
                            upcoming,
                            deferred: None,
                        };
                        let outcome = guarded(|| e.run_point(&mut ctx, quick, case.point));
                        (outcome, ctx.deferred.take())
                    }
                }
            }
            Opened::Cpu => {
                // Host-timed: no background job (a model's CPU window, a problem built ahead)
                // may share the cores, and the cases that waited for one are settled first.
                settle(&mut pending, &mut |p| finish_counted(p, &mut summary, &bar))?;
                shared.background().quiet();
                let mut modules = ModuleCache::default();
                let mut ctx = CaseCtx {
                    target: Target::Cpu,
                    run: &shared,
                    precision: case.precision,
                    policy: &policy,
                    flusher: None,
                    modules: &mut modules,
                    upcoming,
                    deferred: None,
                };
                let outcome = guarded(|| e.run_point(&mut ctx, quick, case.point));
                (outcome, ctx.deferred.take())
            }
        };
        // Where a case's wall time goes besides its timed repetitions: compiling (or loading
        // compiled kernels from the disk cache), building problems, verifying.
        fembench_measure::trace::mark("case returned");
        let wall_s = case_start.elapsed().as_secs_f64();
        let compile_s = match &mut *target {
            Opened::Gpu { modules, .. } => Some(modules.take_compile_s()),
            _ => None,
        };
        let device_index = match &*target {
            Opened::Gpu { dev, .. } => Some(dev.info().index as f64),
            _ => None,
        };
        if let Ok(measured) = &mut outcome {
            for m in measured.iter_mut() {
                m.extras.push(("case_wall_s".into(), wall_s));
                if let Some(c) = compile_s {
                    m.extras.push(("compile_s".into(), c));
                }
                // Which GPU of the node, and how many other workers shared the host (`--gpus`).
                if let Some(i) = device_index {
                    m.extras.push(("device_index".into(), i));
                }
                if let Some(w) = concurrent_workers() {
                    m.extras.push(("concurrent_workers".into(), w));
                }
            }
        }
        // The GPU's clocks, temperature, power and throttle reasons right after the case.
        if let (Opened::Gpu { dev, .. }, Ok(measured)) = (&*target, &mut outcome) {
            let readings = telemetry.read(dev.info());
            for m in measured.iter_mut() {
                m.extras.extend(readings.iter().cloned());
            }
        }
        let failed_on_gpu = outcome.is_err() && matches!(target, Opened::Gpu { .. });
        let done = Finished {
            run: &run,
            run_id: &run_id,
            exp: e.id(),
            id: &case.id,
            backend: case.backend,
            device: device_name.clone(),
            precision: case.precision,
            params: &case.params,
            outcome,
            rest: None,
        };
        match (deferred, &done.outcome) {
            (Some(rest), Ok(_)) => pending.push(Finished { rest: Some(rest), ..done }),
            _ => finish_counted(done, &mut summary, &bar)?,
        }
        crate::interrupt::set_in_hand(None);
        fembench_measure::trace::mark("rows written");
        // kernels.json gains what the case's device compiled (nothing is written when nothing
        // is new).
        if let Some(Opened::Gpu { dev, .. }) = opened.get(&case.backend) {
            run.add_kernels(&dev.compiled())?;
        }
        // After a sticky error (an illegal address poisons a CUDA context for good) the device
        // is opened again, so the rest of the run is not lost.
        if failed_on_gpu {
            if let Some(Opened::Gpu { dev, .. }) = opened.get(&case.backend) {
                if !dev.healthy() {
                    bar.println(format!("{}: device in an error state after {}; opening it again", case.backend, case.id));
                    opened.remove(&case.backend);
                    summary.devices_reopened += 1;
                }
            }
        }
        summary.cases_run += 1;
        // The experiment's last case (or the last before the time limit): the cases that waited
        // for background work are settled, and the experiment's wall time goes to meta.json now,
        // so a run stopped later keeps it.
        let last = cases.get(ci + 1).is_none_or(|next| next.exp != case.exp)
            || opts.stop_after.is_some_and(|limit| run_start.elapsed() >= limit)
            || crate::interrupt::requested();
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

/// How many other worker processes run beside this one on the node (`harness run --gpus` sets
/// it for its workers); None for an ordinary run.
fn concurrent_workers() -> Option<f64> {
    std::env::var("FEMBENCH_CONCURRENT_WORKERS").ok()?.parse().ok()
}

/// The cases of `planned` (experiment, case id) that shard `shard` holds. The assignment is made
/// over every planned case, done or not, so a resumed shard keeps its part.
fn shard_part(planned: &[(String, String)], costs_from: &[PathBuf], shard: crate::shard::Shard) -> BTreeSet<(String, String)> {
    let known = crate::shard::known_costs(costs_from);
    let costs = crate::shard::costs_of(planned, &known);
    let parts = crate::shard::assign(&costs, shard.count);
    planned.iter().zip(parts).filter(|(_, p)| p + 1 == shard.index).map(|(k, _)| k.clone()).collect()
}

/// A hook for the GPU test of the re-open and relaunch path: with `FEMBENCH_TEST_STICKY_FAULT`
/// set to a case id, the first process of a chain (not a relaunched one) puts the device into a
/// sticky error just before that case, by a kernel that writes to an illegal address.
fn inject_sticky_fault(dev: &dyn Device, case_id: &str) {
    if std::env::var("FEMBENCH_TEST_STICKY_FAULT").ok().as_deref() != Some(case_id) || std::env::var_os("FEMBENCH_RELAUNCH_DEPTH").is_some()
    {
        return;
    }
    use fembench_device::{kernels::*, Arg, Launch};
    let src = KernelSource { file: "sticky-fault.kern", text: "KERNEL void fault(GLOBAL int *p) { p[(idx_t)1 << 40] = 1; }" };
    let fault = || -> Result<(), fembench_device::DeviceError> {
        let k = dev.kernel(&dev.compile(&src, &Defines::new())?, "fault")?;
        let buf = dev.alloc(64)?;
        dev.launch(&k, Launch { groups: 1, group_size: 1 }, &[Arg::Buf(&buf)])?;
        dev.synchronize()
    };
    eprintln!("FEMBENCH_TEST_STICKY_FAULT: a fault before {case_id}: {:?}", fault());
}

/// For each case (given by its experiment's index, cases grouped by experiment), the index one
/// past its experiment's last case.
fn experiment_ends(exp: &[usize]) -> Vec<usize> {
    let mut end = vec![exp.len(); exp.len()];
    for i in (0..exp.len().saturating_sub(1)).rev() {
        end[i] = if exp[i + 1] == exp[i] { end[i + 1] } else { i + 1 };
    }
    end
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

/// Backend, precision and parameters of a case id (`backend/precision/k=v,...`) of an experiment.
fn case_identity(e: &dyn Experiment, quick: bool, id: &str) -> (Backend, Precision, Params) {
    let mut parts = id.splitn(3, '/');
    let backend = parts.next().and_then(|b| b.parse().ok()).unwrap_or(Backend::Cpu);
    let precision = match parts.next() {
        Some("f32") => Precision::F32,
        _ => Precision::F64,
    };
    let key = parts.next().unwrap_or("");
    let params = e.points(quick).into_iter().find(|p| p.key() == key).unwrap_or_default();
    (backend, precision, params)
}

/// A case's rows written, and counted in the run's summary.
fn finish_counted(done: Finished, summary: &mut RunSummary, bar: &ProgressBar) -> Result<(), RunError> {
    let (ok, failed, skipped) = finish_case(done, bar)?;
    summary.rows_ok += ok;
    summary.rows_failed += failed;
    summary.rows_skipped += skipped;
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

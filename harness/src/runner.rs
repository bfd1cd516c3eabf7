//! The pipeline's middle: experiments -> cases -> measure -> rows on disk, with a progress bar.
//! A failing case becomes rows with its status and reason, and the run goes on.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use crate::benchmark::{CaseCtx, CaseError, Experiment, Measured, ModuleCache, Target};
use crate::device::{self, Backend, Device};
use crate::experiment::Params;
use crate::measure::CacheFlusher;
use crate::results::{now_string, ExperimentRecord, ResultsError, Row, RunDir, RunMeta, Status};
use crate::Precision;

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
    /// Show a progress bar (off in tests).
    pub progress: bool,
}

#[derive(Debug, Default)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub cases_run: usize,
    pub cases_skipped_as_done: usize,
    pub rows_ok: usize,
    pub rows_failed: usize,
    pub rows_skipped: usize,
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
    Gpu { dev: Box<dyn Device>, modules: ModuleCache, flusher: Option<CacheFlusher> },
    Cpu,
    Unavailable(String),
}

fn run_id(experiments: &[Box<dyn Experiment>], quick: bool) -> String {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let what = if experiments.len() == 1 { experiments[0].id().to_string() } else { "all".into() };
    format!("{stamp}-{what}{}", if quick { "-quick" } else { "" })
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
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
            (run, meta)
        }
        None => {
            let id = run_id(experiments, opts.quick);
            let run = RunDir::create(opts.out_dir.join(&id))?;
            let meta = RunMeta {
                run_id: id,
                harness_version: env!("CARGO_PKG_VERSION").into(),
                git_commit: option_env!("FEMBENCH_GIT_COMMIT").unwrap_or("unknown").into(),
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
            };
            (run, meta)
        }
    };
    let quick = meta.quick;
    if opts.resume.is_some() && quick != opts.quick {
        return Err(RunError::Resume(format!("run {} was {}quick; resume it the same way", meta.run_id, if quick { "" } else { "not " })));
    }
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
    let restrict: Vec<Backend> =
        if opts.resume.is_some() { meta.backends.iter().filter_map(|b| b.parse().ok()).collect() } else { opts.backends.clone() };
    let mut cases = Vec::new();
    let mut skipped_done = 0;
    for (ei, e) in experiments.iter().enumerate() {
        let done = run.finished_cases(e.id())?;
        for (pi, params) in e.points(quick).into_iter().enumerate() {
            for &backend in e.backends() {
                if !restrict.is_empty() && !restrict.contains(&backend) {
                    continue;
                }
                for &precision in e.precisions() {
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

    let bar = if opts.progress { ProgressBar::new(cases.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:32}] {pos}/{len} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );

    let mut opened: BTreeMap<Backend, Opened> = BTreeMap::new();
    let mut summary = RunSummary { run_dir: run.path.clone(), cases_skipped_as_done: skipped_done, ..Default::default() };
    for case in &cases {
        let e = &experiments[case.exp];
        bar.set_message(format!("{} {}", e.id(), case.id));
        let target = opened.entry(case.backend).or_insert_with(|| open_backend(case.backend, opts.device_index, &mut meta));
        let device_name = match target {
            Opened::Gpu { dev, .. } => dev.info().name.clone(),
            Opened::Cpu => device::cpu::model(),
            Opened::Unavailable(_) => "-".into(),
        };
        let policy = e.policy(quick);
        let outcome: Result<Vec<Measured>, CaseError> = match target {
            Opened::Unavailable(reason) => Err(CaseError::Skipped(reason.clone())),
            Opened::Gpu { dev, .. } if case.precision == Precision::F64 && !dev.info().fp64 => {
                Err(CaseError::Skipped(format!("{} has no fp64 support", dev.info().name)))
            }
            Opened::Gpu { dev, modules, flusher } => {
                let needs_flush = policy.modes.contains(&crate::measure::CacheMode::Cold);
                if needs_flush && flusher.is_none() {
                    *flusher = CacheFlusher::new(dev.as_ref()).ok();
                }
                let mut ctx = CaseCtx {
                    target: Target::Gpu(dev.as_ref()),
                    precision: case.precision,
                    policy: &policy,
                    flusher: flusher.as_ref(),
                    modules,
                };
                guarded(|| e.run_point(&mut ctx, quick, case.point))
            }
            Opened::Cpu => {
                let mut modules = ModuleCache::default();
                let mut ctx =
                    CaseCtx { target: Target::Cpu, precision: case.precision, policy: &policy, flusher: None, modules: &mut modules };
                guarded(|| e.run_point(&mut ctx, quick, case.point))
            }
        };
        let rows = to_rows(&meta.run_id, e.id(), &case.id, case.backend, &device_name, case.precision, &case.params, outcome);
        for r in &rows {
            match r.status {
                Status::Ok => summary.rows_ok += 1,
                Status::Failed => {
                    summary.rows_failed += 1;
                    bar.println(format!("FAILED {} {} {}: {}", e.id(), case.id, r.metric, r.reason.as_deref().unwrap_or("")));
                }
                Status::Skipped => summary.rows_skipped += 1,
            }
        }
        run.write_case(e.id(), &rows)?;
        summary.cases_run += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    meta.finished = Some(now_string());
    run.write_meta(&meta)?;
    Ok(summary)
}

/// A panic inside a case (a bug) is recorded as that case's failure; the run goes on.
fn guarded(f: impl FnOnce() -> Result<Vec<Measured>, CaseError>) -> Result<Vec<Measured>, CaseError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(CaseError::Failed(format!("panic: {msg}")))
        }
    }
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

#[allow(clippy::too_many_arguments)]
fn to_rows(
    run_id: &str,
    experiment: &str,
    case_id: &str,
    backend: Backend,
    device: &str,
    precision: Precision,
    params: &Params,
    outcome: Result<Vec<Measured>, CaseError>,
) -> Vec<Row> {
    let blank = |metric: &str| Row::blank(run_id, experiment, case_id, backend.as_str(), device, precision.as_str(), params, metric);
    match outcome {
        Err(e) => {
            let mut r = blank("case");
            r.status = e.status();
            r.reason = Some(e.reason());
            vec![r]
        }
        Ok(measured) => measured
            .into_iter()
            .map(|m| {
                let mut r = blank(&m.metric);
                r.status = m.status;
                r.reason = m.reason;
                r.bytes = m.bytes;
                r.flops = m.flops;
                r.error = m.error;
                r.tolerance = m.tolerance;
                r.memory_bytes = m.memory_bytes;
                r.extras = m.extras;
                if let Some(t) = &m.timing {
                    let med = t.median();
                    r.timer = Some(t.timer.as_str().into());
                    r.mode = Some(t.mode.as_str().into());
                    r.reps = t.samples.len() as u32;
                    r.time_median_s = Some(med);
                    r.time_min_s = Some(t.min());
                    r.time_max_s = Some(t.max());
                    r.time_mean_s = Some(t.mean());
                    r.time_stddev_s = Some(t.stddev());
                    r.bandwidth_gbs = m.bytes.map(|b| b / med / 1e9);
                    r.gflops = m.flops.map(|f| f / med / 1e9);
                }
                r
            })
            .collect(),
    }
}

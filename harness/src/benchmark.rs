//! The contract between the harness and each benchmark module (one per paper, plus the
//! device-bandwidth ceiling): typed YAML parts, the cases of a sweep, running one case on one
//! target, and turning stored rows into tables and figures.

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;
use serde::de::DeserializeOwned;

use crate::device::{Backend, Device, DeviceError, Kernel, Module};
use crate::experiment::{self, BenchmarkKind, ExperimentError, ExperimentSpec, Params};
use crate::kernels::{Defines, KernelSource};
use crate::measure::{CacheFlusher, MeasurePolicy, Timing};
use crate::report::{ReportCtx, ReportError, ReportItem};
use crate::results::Status;
use crate::Precision;

/// Where a case runs.
pub enum Target<'a> {
    Gpu(&'a dyn Device),
    /// The host reference implementation (rayon-parallel or serial, as the benchmark says).
    Cpu,
}

/// Compiled modules of one device, keyed by kernel file and defines: each is compiled once a run.
#[derive(Default)]
pub struct ModuleCache {
    modules: HashMap<(&'static str, Defines), Module>,
}

impl ModuleCache {
    pub fn kernel(&mut self, dev: &dyn Device, source: &KernelSource, defines: &Defines, name: &str) -> Result<Kernel, DeviceError> {
        let key = (source.file, defines.clone());
        if !self.modules.contains_key(&key) {
            let m = dev.compile(source, defines)?;
            self.modules.insert(key.clone(), m);
        }
        dev.kernel(&self.modules[&key], name)
    }
}

/// Everything a case needs besides its own parameters.
pub struct CaseCtx<'a> {
    pub target: Target<'a>,
    pub precision: Precision,
    pub policy: &'a MeasurePolicy,
    pub flusher: Option<&'a CacheFlusher>,
    pub modules: &'a mut ModuleCache,
}

/// One measured quantity of a case, before the runner adds identity and derived columns.
#[derive(Debug, Clone)]
pub struct Measured {
    pub metric: String,
    pub status: Status,
    pub reason: Option<String>,
    pub timing: Option<Timing>,
    pub bytes: Option<f64>,
    pub flops: Option<f64>,
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    pub memory_bytes: Option<f64>,
    /// Extra named figures, stored as their own columns.
    pub extras: Vec<(String, f64)>,
}

impl Measured {
    /// A timing whose outputs were checked: `ok` if `error <= tolerance`, otherwise a failure
    /// whose time is dropped (a wrong answer is never recorded as a speed).
    pub fn verified(metric: &str, timing: Timing, error: f64, tolerance: f64) -> Measured {
        let ok = error <= tolerance; // NaN compares false: a NaN error fails.
        Measured {
            metric: metric.into(),
            status: if ok { Status::Ok } else { Status::Failed },
            reason: (!ok).then(|| format!("verification failed: error {error:.3e} > tolerance {tolerance:.1e}")),
            timing: ok.then_some(timing),
            bytes: None,
            flops: None,
            error: Some(error),
            tolerance: Some(tolerance),
            memory_bytes: None,
            extras: Vec::new(),
        }
    }
    pub fn extra(mut self, name: &str, value: f64) -> Self {
        self.extras.push((name.into(), value));
        self
    }
    pub fn bytes(mut self, b: f64) -> Self {
        self.bytes = Some(b);
        self
    }
    pub fn flops(mut self, f: f64) -> Self {
        self.flops = Some(f);
        self
    }
    pub fn memory(mut self, m: f64) -> Self {
        self.memory_bytes = Some(m);
        self
    }
}

/// Why a case produced no measurement.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("skipped: {0}")]
    Skipped(String),
    #[error("{0}")]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Failed(String),
}

impl CaseError {
    pub fn status(&self) -> Status {
        match self {
            CaseError::Skipped(_) => Status::Skipped,
            _ => Status::Failed,
        }
    }
    pub fn reason(&self) -> String {
        match self {
            CaseError::Skipped(r) => r.clone(),
            other => other.to_string(),
        }
    }
}

/// A benchmark module. Its YAML parts are its own types, so the schema of each experiment file
/// is checked by serde against exactly what that benchmark understands.
pub trait Benchmark: 'static {
    const KIND: BenchmarkKind;
    type Sweep: DeserializeOwned + Clone + Debug;
    type Problem: DeserializeOwned + Default + Clone + Debug;
    type Outputs: DeserializeOwned + Clone + Debug;
    type Point: Clone;

    fn points(sweep: &Self::Sweep) -> Vec<Self::Point>;
    fn params(point: &Self::Point) -> Params;
    /// Checks that serde cannot express (relations between fields).
    fn check(_spec: &Spec<Self>) -> Result<(), String> {
        Ok(())
    }
    fn run(ctx: &mut CaseCtx, problem: &Self::Problem, point: &Self::Point) -> Result<Vec<Measured>, CaseError>;
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError>;
}

pub type Spec<B> = ExperimentSpec<<B as Benchmark>::Sweep, <B as Benchmark>::Problem, <B as Benchmark>::Outputs>;

/// A parsed experiment file of any benchmark, as the runner and reporter see it.
pub trait Experiment {
    fn id(&self) -> &str;
    fn kind(&self) -> BenchmarkKind;
    fn path(&self) -> &Path;
    fn text(&self) -> &str;
    fn backends(&self) -> &[Backend];
    fn precisions(&self) -> &[Precision];
    fn policy(&self, quick: bool) -> MeasurePolicy;
    /// Parameters of every sweep point (quick or full).
    fn points(&self, quick: bool) -> Vec<Params>;
    fn run_point(&self, ctx: &mut CaseCtx, quick: bool, index: usize) -> Result<Vec<Measured>, CaseError>;
    fn report(&self, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError>;
}

struct Loaded<B: Benchmark> {
    spec: Spec<B>,
    path: PathBuf,
    text: String,
}

impl<B: Benchmark> Loaded<B> {
    fn sweep(&self, quick: bool) -> &B::Sweep {
        match (&self.spec.quick, quick) {
            (Some(q), true) => q.sweep.as_ref().unwrap_or(&self.spec.sweep),
            _ => &self.spec.sweep,
        }
    }
    fn problem(&self, quick: bool) -> &B::Problem {
        match (&self.spec.quick, quick) {
            (Some(q), true) => q.problem.as_ref().unwrap_or(&self.spec.problem),
            _ => &self.spec.problem,
        }
    }
}

impl<B: Benchmark> Experiment for Loaded<B> {
    fn id(&self) -> &str {
        &self.spec.id
    }
    fn kind(&self) -> BenchmarkKind {
        B::KIND
    }
    fn path(&self) -> &Path {
        &self.path
    }
    fn text(&self) -> &str {
        &self.text
    }
    fn backends(&self) -> &[Backend] {
        &self.spec.backends
    }
    fn precisions(&self) -> &[Precision] {
        &self.spec.precisions
    }
    fn policy(&self, quick: bool) -> MeasurePolicy {
        match (&self.spec.quick, quick) {
            (Some(q), true) => q.measure.as_ref().map(|o| self.spec.measure.with(o)).unwrap_or_else(|| self.spec.measure.clone()),
            _ => self.spec.measure.clone(),
        }
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        B::points(self.sweep(quick)).iter().map(B::params).collect()
    }
    fn run_point(&self, ctx: &mut CaseCtx, quick: bool, index: usize) -> Result<Vec<Measured>, CaseError> {
        let points = B::points(self.sweep(quick));
        B::run(ctx, self.problem(quick), &points[index])
    }
    fn report(&self, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        B::report(&self.spec, rows, ctx)
    }
}

fn load_as<B: Benchmark>(path: &Path, text: String) -> Result<Box<dyn Experiment>, ExperimentError> {
    let spec: Spec<B> = experiment::parse_spec(path, &text)?;
    B::check(&spec).map_err(|m| ExperimentError::plain(path, m))?;
    Ok(Box::new(Loaded::<B> { spec, path: path.to_path_buf(), text }))
}

/// Parses and validates one experiment file.
pub fn load(path: &Path) -> Result<Box<dyn Experiment>, ExperimentError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExperimentError::plain(path, e.to_string()))?;
    match experiment::benchmark_of(path, &text)? {
        BenchmarkKind::DeviceBandwidth => load_as::<crate::bandwidth::DeviceBandwidth>(path, text),
        BenchmarkKind::CeckaAssembly => load_as::<crate::cecka::CeckaAssembly>(path, text),
        BenchmarkKind::BanasIntegration => load_as::<crate::banas::BanasIntegration>(path, text),
    }
}

/// Parses every experiment file under `path` (a file or a folder); all errors are returned, not
/// only the first, and two files may not share an id.
pub fn load_all(path: &Path) -> Result<Vec<Box<dyn Experiment>>, Vec<ExperimentError>> {
    let files = experiment::experiment_files(path).map_err(|e| vec![e])?;
    let mut out: Vec<Box<dyn Experiment>> = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match load(&f) {
            Ok(e) => {
                if let Some(prev) = out.iter().find(|p| p.id() == e.id()) {
                    errors.push(ExperimentError::plain(&f, format!("id `{}` is already used by {}", e.id(), prev.path().display())));
                } else {
                    out.push(e);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

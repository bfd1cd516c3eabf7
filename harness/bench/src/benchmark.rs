//! The contract between the harness and each benchmark module (one per paper, plus the
//! device-bandwidth ceiling): typed YAML parts, the cases of a sweep, running one case on one
//! target, and turning stored rows into tables and figures.

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::DataFrame;
use serde::de::DeserializeOwned;

use crate::context::RunContext;
use crate::experiment::{self, ExperimentError, ExperimentSpec, Params};
use crate::report::{ReportCtx, ReportError, ReportItem};
use crate::results::Status;
use fembench_core::Precision;
use fembench_device::coo_sum::{self, CooSumKernels};
use fembench_device::kernels::{Defines, KernelSource, CACHE_FLUSH, COO_SUM, RADIX_SORT, SCAN};
use fembench_device::radix_sort::{self, RadixKernels};
use fembench_device::scan::{self, ScanKernels};
use fembench_device::{Backend, Device, DeviceError, Kernel, KernelArgs, Module};
use fembench_measure::{CacheFlusher, MeasurePolicy};

pub use crate::measured::{CaseError, Measured};

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
    /// Seconds spent compiling (or loading from the on-disk cache) since the last `take_compile_s`.
    compile_s: f64,
}

impl ModuleCache {
    /// The module is compiled for this one kernel (`FB_SELECT`, `FB_ONLY_<name>`: see
    /// `kernels/fembench.h`), so a kernel file's other kernels cost no compile time.
    fn kernel(&mut self, dev: &dyn Device, source: &KernelSource, defines: &Defines, name: &str) -> Result<Kernel, DeviceError> {
        let defines = defines.clone().with("FB_SELECT", 1).with(&format!("FB_ONLY_{name}"), 1);
        let key = (source.file, defines);
        if !self.modules.contains_key(&key) {
            let t0 = std::time::Instant::now();
            let m = dev.compile(source, &key.1);
            self.compile_s += t0.elapsed().as_secs_f64();
            self.modules.insert(key.clone(), m?);
        }
        dev.kernel(&self.modules[&key], name)
    }

    /// The kernel whose arguments are the struct `A`, refused where they differ from its
    /// signature in count or kind: a wrong struct fails here, on every backend.
    pub fn kernel_for<A: KernelArgs>(&mut self, dev: &dyn Device, source: &KernelSource, defines: &Defines) -> Result<Kernel, DeviceError> {
        let k = self.kernel(dev, source, defines, A::KERNEL)?;
        k.accepts::<A>()?;
        Ok(k)
    }

    /// Kernel `name` of `source`, which takes the argument struct `A` of another kernel of the
    /// same parameters (a variant of a shipped kernel), refused where its signature differs.
    pub fn kernel_as<A: KernelArgs>(
        &mut self,
        dev: &dyn Device,
        source: &KernelSource,
        defines: &Defines,
        name: &str,
    ) -> Result<Kernel, DeviceError> {
        self.kernel(dev, source, defines, name)?.with_arguments_of::<A>()
    }

    /// The shared exclusive scan's kernels (`kernels/scan.kern`), for any module that needs a
    /// prefix sum on the device.
    pub fn scan(&mut self, dev: &dyn Device) -> Result<ScanKernels, DeviceError> {
        let d = Defines::new();
        Ok(ScanKernels {
            blocks: self.kernel_for::<scan::ScanBlocks>(dev, &SCAN, &d)?,
            sums: self.kernel_for::<scan::ScanSums>(dev, &SCAN, &d)?,
            add: self.kernel_for::<scan::ScanAdd>(dev, &SCAN, &d)?,
        })
    }

    /// The shared duplicate-summing kernels of the COO route (`kernels/coo_sum.kern`).
    pub fn coo_sum(&mut self, dev: &dyn Device, precision: Precision) -> Result<CooSumKernels, DeviceError> {
        let d = Defines::for_precision(precision);
        Ok(CooSumKernels {
            heads: self.kernel_for::<coo_sum::CooHeads>(dev, &COO_SUM, &d)?,
            segsum: self.kernel_for::<coo_sum::CooSegsum>(dev, &COO_SUM, &d)?,
            compact: self.kernel_for::<coo_sum::CooCompactRows>(dev, &COO_SUM, &d)?,
        })
    }

    /// The slot-map scatter (`slot_scatter` of `kernels/coo_sum.kern`): element entries added
    /// atomically into the slots of a map built once.
    pub fn slot_scatter(&mut self, dev: &dyn Device, precision: Precision) -> Result<Kernel, DeviceError> {
        self.kernel_for::<coo_sum::SlotScatter>(dev, &COO_SUM, &Defines::for_precision(precision))
    }

    /// The shared device radix sort of COO pairs (`kernels/radix_sort.kern`).
    pub fn radix_sort(&mut self, dev: &dyn Device) -> Result<RadixKernels, DeviceError> {
        let d = Defines::new();
        Ok(RadixKernels {
            iota: self.kernel_for::<radix_sort::RadixIota>(dev, &RADIX_SORT, &d)?,
            count: self.kernel_for::<radix_sort::RadixCount>(dev, &RADIX_SORT, &d)?,
            scatter: self.kernel_for::<radix_sort::RadixScatter>(dev, &RADIX_SORT, &d)?,
            row_ptr: self.kernel_for::<radix_sort::RadixRowPtr>(dev, &RADIX_SORT, &d)?,
            copy3: self.kernel_for::<radix_sort::RadixCopy3>(dev, &RADIX_SORT, &d)?,
        })
    }

    /// The word-fill kernel (`fb_fill_u32`): zeroing, poisoning, any 32-bit pattern.
    pub fn filler(&mut self, dev: &dyn Device) -> Result<Kernel, DeviceError> {
        self.kernel_for::<scan::FillU32>(dev, &CACHE_FLUSH, &Defines::new())
    }

    /// Compile seconds since the last call (each case's `compile_s` column).
    pub fn take_compile_s(&mut self) -> f64 {
        std::mem::take(&mut self.compile_s)
    }

    /// Fills a buffer with all-ones bits (NaN in f32 and f64) before a checked repetition, so
    /// that an output the method does not write cannot pass as a result.
    pub fn poison(&mut self, dev: &dyn Device, buf: &fembench_device::Buffer) -> Result<(), DeviceError> {
        let k = self.filler(dev)?;
        let words = buf.bytes() / 4;
        if words == 0 {
            return Ok(());
        }
        fembench_device::scan::fill_words(dev, &k, buf, u32::MAX, words)
    }
}

/// Everything a case needs besides its own parameters.
pub struct CaseCtx<'a> {
    pub target: Target<'a>,
    /// What the run's cases share: benchmarks' state between cases, background jobs.
    pub run: &'a Arc<RunContext>,
    pub precision: Precision,
    pub policy: &'a MeasurePolicy,
    pub flusher: Option<&'a CacheFlusher>,
    pub modules: &'a mut ModuleCache,
    /// The cases of the same experiment that the runner will run after this one, in order: a
    /// benchmark may prepare their host-side work together, before anything is timed (Cecka
    /// builds all the partitions of a problem in parallel).
    pub upcoming: &'a [Upcoming],
    /// The rest of the case, where it waits for host work in the background ([`Deferred`]).
    pub deferred: Option<Deferred>,
}

/// The rest of a case that waits for host work running in the background (a Pogo full run's
/// check against its CPU window), so that the device is not held idle meanwhile: it gets the
/// case's rows and returns them completed. The runner calls it before the next host-timed case
/// and before the experiment ends, and only then writes the case's rows (the case stays marked
/// as started until then, so a crash still records it as failed).
pub type Deferred = Box<dyn FnOnce(Vec<Measured>) -> Vec<Measured> + Send>;

/// A case still to run: its backend, precision and parameters.
#[derive(Debug, Clone)]
pub struct Upcoming {
    pub backend: Backend,
    pub precision: Precision,
    pub params: Params,
}

/// A benchmark module. Its YAML parts are its own types, so the schema of each experiment file
/// is checked by serde against exactly what that benchmark understands.
pub trait Benchmark: 'static {
    /// The `benchmark:` value of its experiment files (kebab-case, unique in the registry).
    const NAME: &'static str;
    /// The kernel files it compiles (tests compile every one of them on every backend).
    const KERNELS: &'static [KernelSource] = &[];
    /// The argument structs of the kernels it launches (one per kernel, made by
    /// `kernel_args!`): a test checks each against its kernel file's signature.
    const KERNEL_ARGS: &'static [fembench_device::args::Declared] = &[];
    /// Every argument struct it launches with: `KERNEL_ARGS`, and those its registered methods
    /// declare for kernels of their own.
    fn kernel_args() -> Vec<fembench_device::args::Declared> {
        Self::KERNEL_ARGS.to_vec()
    }
    /// The extra columns its rows carry (the names of `Measured::extra` and `Measured::series`),
    /// declared once: a case that writes another name fails with the name, so that a renamed
    /// column is caught by the first run of the case (on PoCL in CI) instead of printing "-" in
    /// a table; the published runs' columns are all declared (tests/pipeline).
    const COLUMNS: &'static [&'static str] = &[];
    type Sweep: DeserializeOwned + Clone + Debug;
    type Problem: DeserializeOwned + Default + Clone + Debug;
    type Outputs: DeserializeOwned + Clone + Debug;
    type Point: Clone;

    fn points(sweep: &Self::Sweep) -> Vec<Self::Point>;
    fn params(point: &Self::Point) -> Params;
    /// Checks that serde cannot express (relations between fields): the dotted path of the
    /// offending field (`problem.group_size`) and the message.
    fn check(_spec: &Spec<Self>) -> Result<(), (String, String)> {
        Ok(())
    }
    /// Host and device bytes one case needs at most (an estimate from the sweep point alone,
    /// before anything is built), so that a case that cannot fit is refused, not run into the
    /// out-of-memory killer. None: small enough not to matter.
    fn memory_estimate(_problem: &Self::Problem, _point: &Self::Point) -> Option<MemoryEstimate> {
        None
    }
    /// The backends and precisions a sweep point's method runs on. A combination that cannot
    /// exist (a CPU reference on CUDA, a GPU kernel on the CPU) is not a case at all, so it gives
    /// no row; `skipped` stays for run-time reasons (no GPU present, no fp64 on this device).
    fn case_exists(_point: &Self::Point, _backend: Backend, _precision: Precision) -> bool {
        true
    }
    fn run(ctx: &mut CaseCtx, problem: &Self::Problem, point: &Self::Point) -> Result<Vec<Measured>, CaseError>;
    /// The prepared problem a point's cases read (a mesh level, a model and its size), named
    /// within the benchmark: the points of one name go to one shard, so that no two workers
    /// build it. None: the point shares nothing costly.
    fn problem_key(_point: &Self::Point) -> Option<String> {
        None
    }
}

/// The report side of a benchmark: its tables and figures, from an experiment and a run's rows
/// only. It is given no device and no case context, and the modules that implement it import
/// neither (tests/house.rs).
pub trait Report: Benchmark {
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError>;
}

/// What a case is expected to need, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryEstimate {
    pub host_bytes: f64,
    pub device_bytes: f64,
}

/// The host memory this machine has (MemTotal), in bytes; None where unknown.
pub fn host_memory_bytes() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: f64 = text.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

pub type Spec<B> = ExperimentSpec<<B as Benchmark>::Sweep, <B as Benchmark>::Problem, <B as Benchmark>::Outputs>;

/// A parsed experiment file of any benchmark, as the runner and reporter see it.
pub trait Experiment {
    fn id(&self) -> &str;
    /// The benchmark module that runs it (`Benchmark::NAME`).
    fn kind(&self) -> &'static str;
    fn path(&self) -> &Path;
    fn text(&self) -> &str;
    fn backends(&self) -> &[Backend];
    fn precisions(&self) -> &[Precision];
    fn policy(&self, quick: bool) -> MeasurePolicy;
    /// Parameters of every sweep point (quick or full).
    fn points(&self, quick: bool) -> Vec<Params>;
    /// Whether the file has a `quick:` block (without one, `--quick` would run the full sweep).
    fn has_quick(&self) -> bool;
    fn run_point(&self, ctx: &mut CaseCtx, quick: bool, index: usize) -> Result<Vec<Measured>, CaseError>;
    /// The benchmark's declared extra columns (`Benchmark::COLUMNS`).
    fn columns(&self) -> &'static [&'static str];
    fn report(&self, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError>;
    /// The memory estimate of one sweep point, if the benchmark makes one.
    fn memory_estimate(&self, _quick: bool, _index: usize) -> Option<MemoryEstimate> {
        None
    }
    /// Whether sweep point `index` on this backend and precision is a case at all.
    fn case_exists(&self, _quick: bool, _index: usize, _backend: Backend, _precision: Precision) -> bool {
        true
    }
    /// The prepared problem of sweep point `index`, named across the benchmark's experiments
    /// (`Benchmark::problem_key` after the benchmark's name).
    fn problem_key(&self, _quick: bool, _index: usize) -> Option<String> {
        None
    }
    /// The cases of the experiment: sweep points times backends times precisions that exist.
    fn case_count(&self, quick: bool) -> usize {
        let points = self.points(quick).len();
        (0..points)
            .map(|i| {
                self.backends()
                    .iter()
                    .flat_map(|&b| self.precisions().iter().map(move |&p| (b, p)))
                    .filter(|&(b, p)| self.case_exists(quick, i, b, p))
                    .count()
            })
            .sum()
    }
}

struct Loaded<B: Report> {
    spec: Spec<B>,
    path: PathBuf,
    text: String,
}

impl<B: Report> Loaded<B> {
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

impl<B: Report> Experiment for Loaded<B> {
    fn id(&self) -> &str {
        &self.spec.id
    }
    fn kind(&self) -> &'static str {
        B::NAME
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
    fn problem_key(&self, quick: bool, index: usize) -> Option<String> {
        B::points(self.sweep(quick)).get(index).and_then(B::problem_key).map(|k| format!("{}/{k}", B::NAME))
    }
    fn has_quick(&self) -> bool {
        self.spec.quick.is_some()
    }
    fn run_point(&self, ctx: &mut CaseCtx, quick: bool, index: usize) -> Result<Vec<Measured>, CaseError> {
        let points = B::points(self.sweep(quick));
        let rows = B::run(ctx, self.problem(quick), &points[index])?;
        if let Some(rest) = ctx.deferred.take() {
            ctx.deferred = Some(Box::new(move |rows| declared_only(rest(rows), B::NAME, B::COLUMNS)));
        }
        undeclared(&rows, B::COLUMNS).map_or(Ok(rows), |why| Err(CaseError::Failed(format!("{why} ({} COLUMNS)", B::NAME))))
    }
    fn columns(&self) -> &'static [&'static str] {
        B::COLUMNS
    }
    fn report(&self, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        B::report(&self.spec, rows, ctx)
    }
    fn memory_estimate(&self, quick: bool, index: usize) -> Option<MemoryEstimate> {
        let points = B::points(self.sweep(quick));
        points.get(index).and_then(|p| B::memory_estimate(self.problem(quick), p))
    }
    fn case_exists(&self, quick: bool, index: usize, backend: Backend, precision: Precision) -> bool {
        B::points(self.sweep(quick)).get(index).is_some_and(|p| B::case_exists(p, backend, precision))
    }
}

pub use crate::results::RUNNER_COLUMNS;

/// The extra and series names of `rows` that neither `columns` nor the runner declares, in
/// words; None when every name is declared (a deferred rest sees the runner's columns too).
fn undeclared(rows: &[Measured], columns: &[&str]) -> Option<String> {
    let declared = |n: &&str| columns.contains(n) || RUNNER_COLUMNS.contains(n) || fembench_device::telemetry::COLUMNS.contains(n);
    let mut names: Vec<&str> = rows
        .iter()
        .flat_map(|m| m.extras.iter().map(|(n, _)| n.as_str()).chain(m.series.iter().map(|(n, _)| n.as_str())))
        .filter(|n| !declared(n))
        .collect();
    names.sort_unstable();
    names.dedup();
    (!names.is_empty()).then(|| format!("undeclared columns {}: declare each in the benchmark's", names.join(", ")))
}

/// `rows` (a deferred rest's), each failed where its own extras are not declared.
fn declared_only(mut rows: Vec<Measured>, name: &str, columns: &[&str]) -> Vec<Measured> {
    for m in &mut rows {
        if let Some(why) = undeclared(std::slice::from_ref(m), columns) {
            m.status = Status::Failed;
            m.reason = Some(format!("{why} ({name} COLUMNS)"));
            m.timing = None;
        }
    }
    rows
}

/// How much of a file `load` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// Everything, files it names included (`validate`, `run`).
    Full,
    /// The schema only: for re-reading a stored run's copy, whose mesh files may be elsewhere.
    SchemaOnly,
}

pub(crate) fn load_as<B: Report>(path: &Path, text: String, checks: Checks) -> Result<Box<dyn Experiment>, ExperimentError> {
    let spec: Spec<B> = experiment::parse_spec(path, &text)?;
    experiment::check_id(&spec.id).map_err(|m| ExperimentError::at(path, &text, "id", m))?;
    spec.measure.check().map_err(|(f, m)| ExperimentError::at(path, &text, &format!("measure.{f}"), format!("measure.{f}: {m}")))?;
    if let Some(q) = spec.quick.as_ref().and_then(|q| q.measure.as_ref()) {
        spec.measure
            .with(q)
            .check()
            .map_err(|(f, m)| ExperimentError::at(path, &text, &format!("quick.measure.{f}"), format!("quick.measure.{f}: {m}")))?;
    }
    check_distinct_cases::<B>(&spec).map_err(|(f, m)| ExperimentError::at(path, &text, &f, m))?;
    if checks == Checks::Full {
        B::check(&spec).map_err(|(f, m)| ExperimentError::at(path, &text, &f, m))?;
        if let Some(view) = quick_view::<B>(&spec) {
            B::check(&view).map_err(|(f, m)| {
                let f = in_quick::<B>(&spec, &f);
                ExperimentError::at(path, &text, &f, format!("under --quick: {m}"))
            })?;
        }
        let loaded = Loaded::<B> { spec, path: path.to_path_buf(), text };
        check_memory(&loaded)?;
        return Ok(Box::new(loaded));
    }
    Ok(Box::new(Loaded::<B> { spec, path: path.to_path_buf(), text }))
}

/// The experiment as `--quick` runs it: the quick sweep and problem in place of the full ones,
/// the quick measure settings applied. None where the file has no quick block.
fn quick_view<B: Benchmark>(spec: &Spec<B>) -> Option<Spec<B>> {
    let q = spec.quick.as_ref()?;
    let mut view = spec.clone();
    if let Some(s) = &q.sweep {
        view.sweep = s.clone();
    }
    if let Some(p) = &q.problem {
        view.problem = p.clone();
    }
    if let Some(m) = &q.measure {
        view.measure = spec.measure.with(m);
    }
    view.quick = None;
    Some(view)
}

/// Where a field of the quick view is written: under `quick:` where the quick block replaces
/// that part (its sweep, problem or measure), else at the top level it was taken from.
fn in_quick<B: Benchmark>(spec: &Spec<B>, field: &str) -> String {
    let Some(q) = spec.quick.as_ref() else { return field.to_string() };
    let replaced = match field.split('.').next() {
        Some("sweep") => q.sweep.is_some(),
        Some("problem") => q.problem.is_some(),
        Some("measure") => q.measure.is_some(),
        _ => false,
    };
    if replaced && !field.starts_with("quick.") {
        format!("quick.{field}")
    } else {
        field.to_string()
    }
}

/// Refuses a sweep that gives the same case twice (a list that repeats a value): it would run
/// twice and write two rows of one case id.
fn check_distinct_cases<B: Benchmark>(spec: &Spec<B>) -> Result<(), (String, String)> {
    let quick = spec.quick.as_ref().and_then(|q| q.sweep.as_ref());
    for (field, sweep) in [("sweep", Some(&spec.sweep)), ("quick.sweep", quick)] {
        let Some(sweep) = sweep else { continue };
        let mut seen = std::collections::HashSet::new();
        for p in B::points(sweep) {
            let key = B::params(&p).key();
            if !seen.insert(key.clone()) {
                return Err((field.into(), format!("{field}: the case `{key}` appears twice (a list repeats a value)")));
            }
        }
    }
    Ok(())
}

/// Refuses an experiment any of whose cases needs more host memory than this machine has.
fn check_memory<B: Report>(e: &Loaded<B>) -> Result<(), ExperimentError> {
    let Some(host) = host_memory_bytes() else { return Ok(()) };
    for quick in [false, true] {
        let points = B::points(e.sweep(quick));
        for (i, p) in points.iter().enumerate() {
            if let Some(m) = B::memory_estimate(e.problem(quick), p) {
                if m.host_bytes > host {
                    let params = B::params(p).key();
                    return Err(ExperimentError::at(
                        &e.path,
                        &e.text,
                        if quick { "quick.sweep" } else { "sweep" },
                        format!(
                            "{}case {i} ({params}) needs about {:.1} GB of host memory; this machine has {:.1} GB",
                            if quick { "quick " } else { "" },
                            m.host_bytes / 1e9,
                            host / 1e9
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "benchmark_tests.rs"]
mod tests;

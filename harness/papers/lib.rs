//! fembench: a benchmark harness and reproducibility suite for GPU finite-element algorithms.
//!
//! This crate is the top of the house: the benchmark modules, one folder per paper ([`cecka`],
//! [`banas`], [`acoo`], [`sanfui`], [`pogo`]) plus the device-bandwidth ceiling ([`bandwidth`]), and the [`REGISTRY`] that lists
//! them, one line each. What they are built on lives in crates whose dependencies run one way:
//! - `fembench-core`: backends, precisions, case parameters, scalar types, statistics;
//! - `fembench-device`: the [`device::Device`] trait on CUDA and OpenCL, kernel compilation and its
//!   disk cache, telemetry;
//! - `fembench-measure`: the measurement policy, the repetition loop, staged timing, cache flushing;
//! - `fembench-fem`: meshes, Gmsh import, Lagrange elements, coloring, partitioning, packing,
//!   verification helpers and writers shared by the papers;
//! - `fembench-bench`: experiments, the [`benchmark::Benchmark`] trait, the runner, rows, reports
//!   and comparison.
//!
//! Adding a paper: a folder here with a type implementing `Benchmark`, and one line in
//! [`REGISTRY`].

pub mod acoo;
pub mod banas;
pub mod bandwidth;
pub mod cecka;
pub mod pogo;
pub mod sanfui;

pub use fembench_bench::{
    axes, background, benchmark, cache, compare, context, experiment, external, hardware, history, interrupt, lifecycle, merge,
    method_registry, methods, named_axis, precompile, prep_cache, publish, registry, report, results, runner, shard,
};
pub use fembench_core::{real, stats, Backend, Precision};
pub use fembench_device::{self as device, kernels, telemetry};
pub use fembench_fem as fem;
pub use fembench_measure as measure;

use registry::{entry, Registry};

/// Fingerprints of the code that makes each paper's prepared problems (the SHA-256 of its
/// folder and of the shared `fem` and `core` sources, made by `build.rs`): part of every key of
/// the prepared-problem cache ([`prep_cache`]), so that a change to that code misses.
pub mod prep_code {
    pub const ACOO: &str = env!("FEMBENCH_CODE_ACOO");
    pub const BANAS: &str = env!("FEMBENCH_CODE_BANAS");
    pub const CECKA: &str = env!("FEMBENCH_CODE_CECKA");
    pub const POGO: &str = env!("FEMBENCH_CODE_POGO");
    pub const SANFUI: &str = env!("FEMBENCH_CODE_SANFUI");
}

/// Every benchmark module of this build: one line each.
pub static REGISTRY: Registry = Registry(&[
    entry::<bandwidth::DeviceBandwidth>(), // the ceiling later reports divide by
    entry::<cecka::CeckaAssembly>(),
    entry::<banas::BanasIntegration>(),
    entry::<acoo::AcooCapacitor>(),
    entry::<sanfui::SanfuiAssembly>(),
    entry::<pogo::PogoStepping>(),
    entry::<pogo::PogoScaling>(),
]);

/// Parses and validates one experiment file of any registered benchmark.
pub fn load(path: &std::path::Path) -> Result<Box<dyn benchmark::Experiment>, experiment::ExperimentError> {
    REGISTRY.load(path)
}

/// Writes the report of a run folder (`report.md` and its `figures/`, in the run folder) with
/// this build's registry.
pub fn report_run(run: &std::path::Path) -> Result<publish::ReportOutput, report::ReportError> {
    publish::report_run(&REGISTRY, run)
}

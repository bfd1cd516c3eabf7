//! A result row and its columns: identity, timer, every repetition, cost-model figures and the
//! benchmark's own extras; `rows_to_frame` lays rows out as one Parquet table.

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::experiment::{ParamValue, Params};

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Verified against the reference; its time counts.
    Ok,
    /// Wrong answer, compile or launch error, out of memory...: `reason` says which.
    Failed,
    /// Not run on purpose (no such device, no fp64): `reason` says why.
    Skipped,
    /// Cannot run by construction, as the experiment asks for it (no partition of the mesh fits
    /// the shared memory the file names): a result a paper's claim can rest on, not a fault.
    /// `reason` gives the proof.
    Infeasible,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Infeasible => "infeasible",
        }
    }
}

/// One measured quantity of one case: the unit of the results tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub run_id: String,
    pub experiment: String,
    pub case_id: String,
    pub backend: String,
    pub device: String,
    pub precision: String,
    pub params: Params,
    /// What was timed: a kernel, a stage, or a whole method.
    pub metric: String,
    pub status: Status,
    pub reason: Option<String>,
    pub timer: Option<String>,
    pub mode: Option<String>,
    pub reps: u32,
    pub time_median_s: Option<f64>,
    pub time_min_s: Option<f64>,
    pub time_max_s: Option<f64>,
    pub time_mean_s: Option<f64>,
    pub time_stddev_s: Option<f64>,
    /// 95% bootstrap interval of the median.
    pub time_ci_low_s: Option<f64>,
    pub time_ci_high_s: Option<f64>,
    /// Every timed repetition, in order (a list column in Parquet).
    pub samples_s: Vec<f64>,
    /// Runs of the timed work each sample spans, its time their mean (short host work is
    /// batched; 1 for device events).
    pub iters_per_sample: Option<u32>,
    /// Bytes the cost model says the timed work must move.
    pub bytes: Option<f64>,
    /// Floating-point operations the timed work executes, counted from the code.
    pub executed_flops: Option<f64>,
    /// The paper's count for the same work, where the paper gives one.
    pub paper_flops: Option<f64>,
    /// bytes / median time, GB/s (1e9).
    pub bandwidth_gbs: Option<f64>,
    /// executed_flops / median time (share of peak is computed from this), and the paper's count
    /// over the same time (to compare with the paper's GFLOP/s).
    pub gflops: Option<f64>,
    pub paper_gflops: Option<f64>,
    /// Verification error against the reference, and the tolerance it was held to.
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    /// Device memory the case allocated.
    pub memory_bytes: Option<f64>,
    /// The library and version of an external peer's row (none for fembench's own methods).
    pub library: Option<String>,
    /// Benchmark-specific figures (e.g. Cecka's Table VI error), one column each.
    pub extras: Vec<(String, f64)>,
    /// Benchmark-specific series (e.g. Pogo's receiver traces), one list column each (empty
    /// in the rows that have none).
    pub series: Vec<(String, Vec<f64>)>,
}

/// Which case rows belong to: the run, the experiment, the case, and where and how it ran.
#[derive(Debug, Clone, Copy)]
pub struct CaseKey<'a> {
    pub run_id: &'a str,
    pub experiment: &'a str,
    pub case_id: &'a str,
    pub backend: &'a str,
    pub device: &'a str,
    pub precision: &'a str,
    pub params: &'a Params,
}

impl Row {
    /// A row of the case `key` for `metric`, every measurement empty.
    pub fn blank(key: &CaseKey, metric: &str) -> Row {
        Row {
            run_id: key.run_id.into(),
            experiment: key.experiment.into(),
            case_id: key.case_id.into(),
            backend: key.backend.into(),
            device: key.device.into(),
            precision: key.precision.into(),
            params: key.params.clone(),
            metric: metric.into(),
            status: Status::Ok,
            reason: None,
            timer: None,
            mode: None,
            reps: 0,
            time_median_s: None,
            time_min_s: None,
            time_max_s: None,
            time_mean_s: None,
            time_stddev_s: None,
            time_ci_low_s: None,
            time_ci_high_s: None,
            samples_s: Vec::new(),
            iters_per_sample: None,
            bytes: None,
            executed_flops: None,
            paper_flops: None,
            bandwidth_gbs: None,
            gflops: None,
            paper_gflops: None,
            error: None,
            tolerance: None,
            memory_bytes: None,
            library: None,
            extras: Vec::new(),
            series: Vec::new(),
        }
    }
}

/// The columns the runner adds to every row of a case (beside the benchmark's own and the GPU's
/// telemetry): its wall time, the kernel compile time, the GPU's index, the other workers
/// beside it, and the prepared-problem cache entries the process read and built during the case
/// ([`crate::prep_cache`]; a case that reuses a problem an earlier case of the process loaded
/// has zeros).
pub const RUNNER_COLUMNS: [&str; 6] = ["case_wall_s", "compile_s", "device_index", "concurrent_workers", "prep_read", "prep_built"];

/// Whether rows may hold column `name` beyond their parameters: a row's own, the runner's, the
/// GPU telemetry's, or one of `declared` (a benchmark's `COLUMNS`).
pub fn is_declared(name: &str, declared: &[&str]) -> bool {
    FIXED_COLUMNS.contains(&name)
        || RUNNER_COLUMNS.contains(&name)
        || fembench_device::telemetry::COLUMNS.contains(&name)
        || declared.contains(&name)
}

/// Identity columns that a parameter may not be named after.
pub const FIXED_COLUMNS: &[&str] = &[
    "run_id",
    "experiment",
    "case_id",
    "backend",
    "device",
    "precision",
    "metric",
    "status",
    "reason",
    "timer",
    "mode",
    "reps",
    "time_median_s",
    "time_min_s",
    "time_max_s",
    "time_mean_s",
    "time_stddev_s",
    "time_ci_low_s",
    "time_ci_high_s",
    "samples_s",
    "iters_per_sample",
    "bytes",
    "executed_flops",
    "paper_flops",
    "bandwidth_gbs",
    "gflops",
    "paper_gflops",
    "error",
    "tolerance",
    "memory_bytes",
    "library",
];

/// A column name for `name` that no fixed or earlier column has: parameters keep their own
/// names where they can (reports read them), extras that clash get `prefix`.
fn unique_column(name: &str, prefix: &str, taken: &mut Vec<String>) -> String {
    let mut candidate = if FIXED_COLUMNS.contains(&name) { format!("{prefix}{name}") } else { name.to_string() };
    while taken.contains(&candidate) {
        candidate = format!("{prefix}{candidate}");
    }
    taken.push(candidate.clone());
    candidate
}

/// Rows to a DataFrame: fixed columns, then one typed column per parameter.
pub fn rows_to_frame(rows: &[Row]) -> PolarsResult<DataFrame> {
    let s = |name: &str, f: &dyn Fn(&Row) -> String| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
    let os = |name: &str, f: &dyn Fn(&Row) -> Option<String>| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
    let of = |name: &str, f: &dyn Fn(&Row) -> Option<f64>| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
    let mut cols = vec![
        s("run_id", &|r| r.run_id.clone()),
        s("experiment", &|r| r.experiment.clone()),
        s("case_id", &|r| r.case_id.clone()),
        s("backend", &|r| r.backend.clone()),
        s("device", &|r| r.device.clone()),
        s("precision", &|r| r.precision.clone()),
        s("metric", &|r| r.metric.clone()),
        s("status", &|r| r.status.as_str().to_string()),
        os("reason", &|r| r.reason.clone()),
        os("timer", &|r| r.timer.clone()),
        os("mode", &|r| r.mode.clone()),
        Column::new("reps".into(), rows.iter().map(|r| r.reps).collect::<Vec<_>>()),
        of("time_median_s", &|r| r.time_median_s),
        of("time_min_s", &|r| r.time_min_s),
        of("time_max_s", &|r| r.time_max_s),
        of("time_mean_s", &|r| r.time_mean_s),
        of("time_stddev_s", &|r| r.time_stddev_s),
        of("time_ci_low_s", &|r| r.time_ci_low_s),
        of("time_ci_high_s", &|r| r.time_ci_high_s),
        Column::new("samples_s".into(), rows.iter().map(|r| Series::new("".into(), &r.samples_s)).collect::<Vec<_>>()),
        Column::new("iters_per_sample".into(), rows.iter().map(|r| r.iters_per_sample).collect::<Vec<_>>()),
        of("bytes", &|r| r.bytes),
        of("executed_flops", &|r| r.executed_flops),
        of("paper_flops", &|r| r.paper_flops),
        of("bandwidth_gbs", &|r| r.bandwidth_gbs),
        of("gflops", &|r| r.gflops),
        of("paper_gflops", &|r| r.paper_gflops),
        of("error", &|r| r.error),
        of("tolerance", &|r| r.tolerance),
        of("memory_bytes", &|r| r.memory_bytes),
        os("library", &|r| r.library.clone()),
    ];
    // Parameter columns, typed by the first row that has the parameter.
    let names = first_seen(rows.iter().flat_map(|r| r.params.0.iter().map(|(k, _)| k.as_str())));
    let extra_names = first_seen(rows.iter().flat_map(|r| r.extras.iter().map(|(k, _)| k.as_str())));
    // Parameters first (their names are what reports group by), then extras; no two columns
    // may share a name, whatever a benchmark calls its figures.
    let mut taken: Vec<String> = FIXED_COLUMNS.iter().map(|s| s.to_string()).collect();
    let param_names: Vec<String> = names.iter().map(|n| unique_column(n, "param_", &mut taken)).collect();
    for name in &extra_names {
        let values: Vec<Option<f64>> = rows.iter().map(|r| r.extras.iter().find(|(k, _)| k == name).map(|(_, v)| *v)).collect();
        cols.push(Column::new(unique_column(name, "extra_", &mut taken).into(), values));
    }
    for name in first_seen(rows.iter().flat_map(|r| r.series.iter().map(|(k, _)| k.as_str()))) {
        let values: Vec<Series> = rows
            .iter()
            .map(|r| Series::new("".into(), r.series.iter().find(|(k, _)| k == name).map_or(&[][..], |(_, v)| &v[..])))
            .collect();
        cols.push(Column::new(unique_column(name, "series_", &mut taken).into(), values));
    }
    for (name, col_name) in names.into_iter().zip(param_names) {
        let values: Vec<Option<&ParamValue>> = rows.iter().map(|r| r.params.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v)).collect();
        cols.push(param_column(col_name, &values));
    }
    DataFrame::new(rows.len(), cols)
}

/// The distinct names in the order they are first seen.
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A parameter's column, typed by the first row that has it: integers, floats (an integer in a
/// float column is widened), or text.
fn param_column(name: String, values: &[Option<&ParamValue>]) -> Column {
    match values.iter().flatten().next() {
        Some(ParamValue::Int(_)) => {
            let ints: Vec<Option<i64>> = values.iter().map(|v| if let Some(ParamValue::Int(i)) = v { Some(*i) } else { None }).collect();
            Column::new(name.into(), ints)
        }
        Some(ParamValue::Float(_)) => {
            let widen = |v: &Option<&ParamValue>| match v {
                Some(ParamValue::Float(f)) => Some(*f),
                Some(ParamValue::Int(i)) => Some(*i as f64),
                _ => None,
            };
            Column::new(name.into(), values.iter().map(widen).collect::<Vec<_>>())
        }
        _ => Column::new(name.into(), values.iter().map(|v| v.map(|v| v.to_string())).collect::<Vec<_>>()),
    }
}

//! Result rows and run folders.
//!
//! A run writes `results/<run-id>/`:
//! - `meta.json`: git commit, host, CPU, devices with driver and runtime versions, harness
//!   version, each experiment file's hash, start and end time;
//! - `experiments/<id>.yaml`: the exact experiment files that ran;
//! - `rows/<experiment>/<seq>.parquet`: the rows of one finished case each, written atomically
//!   as soon as the case finishes, so an interrupted run keeps every finished case and
//!   `harness run --resume` runs only the rest.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::device::DeviceInfo;
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
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
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
    /// Bytes the cost model says the timed work must move.
    pub bytes: Option<f64>,
    /// Floating-point operations the cost model counts.
    pub flops: Option<f64>,
    /// bytes / median time, GB/s (1e9).
    pub bandwidth_gbs: Option<f64>,
    pub gflops: Option<f64>,
    /// Verification error against the reference, and the tolerance it was held to.
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    /// Device memory the case allocated.
    pub memory_bytes: Option<f64>,
    /// Benchmark-specific figures (e.g. Cecka's Table VI error), one column each.
    pub extras: Vec<(String, f64)>,
}

impl Row {
    /// A row with identity filled in and every measurement empty.
    pub fn blank(
        run_id: &str,
        experiment: &str,
        case_id: &str,
        backend: &str,
        device: &str,
        precision: &str,
        params: &Params,
        metric: &str,
    ) -> Row {
        Row {
            run_id: run_id.into(),
            experiment: experiment.into(),
            case_id: case_id.into(),
            backend: backend.into(),
            device: device.into(),
            precision: precision.into(),
            params: params.clone(),
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
            bytes: None,
            flops: None,
            bandwidth_gbs: None,
            gflops: None,
            error: None,
            tolerance: None,
            memory_bytes: None,
            extras: Vec::new(),
        }
    }
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
    "bytes",
    "flops",
    "bandwidth_gbs",
    "gflops",
    "error",
    "tolerance",
    "memory_bytes",
];

fn param_column(name: &str) -> String {
    if FIXED_COLUMNS.contains(&name) {
        format!("param_{name}")
    } else {
        name.to_string()
    }
}

/// Rows to a DataFrame: fixed columns, then one typed column per parameter.
pub fn rows_to_frame(rows: &[Row]) -> PolarsResult<DataFrame> {
    let n = rows.len();
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
        of("bytes", &|r| r.bytes),
        of("flops", &|r| r.flops),
        of("bandwidth_gbs", &|r| r.bandwidth_gbs),
        of("gflops", &|r| r.gflops),
        of("error", &|r| r.error),
        of("tolerance", &|r| r.tolerance),
        of("memory_bytes", &|r| r.memory_bytes),
    ];
    // Parameter columns, typed by the first row that has the parameter.
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        for (k, _) in &r.params.0 {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    let mut extra_names: Vec<String> = Vec::new();
    for r in rows {
        for (k, _) in &r.extras {
            if !extra_names.contains(k) {
                extra_names.push(k.clone());
            }
        }
    }
    for name in &extra_names {
        let values: Vec<Option<f64>> = rows.iter().map(|r| r.extras.iter().find(|(k, _)| k == name).map(|(_, v)| *v)).collect();
        cols.push(Column::new(param_column(name).into(), values));
    }
    for name in names {
        let values: Vec<Option<&ParamValue>> = rows.iter().map(|r| r.params.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v)).collect();
        let col_name = param_column(&name);
        let first = values.iter().flatten().next();
        let col = match first {
            Some(ParamValue::Int(_)) => Column::new(
                col_name.into(),
                values
                    .iter()
                    .map(|v| match v {
                        Some(ParamValue::Int(i)) => Some(*i),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            ),
            Some(ParamValue::Float(_)) => Column::new(
                col_name.into(),
                values
                    .iter()
                    .map(|v| match v {
                        Some(ParamValue::Float(f)) => Some(*f),
                        Some(ParamValue::Int(i)) => Some(*i as f64),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => Column::new(col_name.into(), values.iter().map(|v| v.map(|v| v.to_string())).collect::<Vec<_>>()),
        };
        cols.push(col);
    }
    DataFrame::new(n, cols)
}

/// Run metadata (`meta.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunMeta {
    pub run_id: String,
    pub harness_version: String,
    pub git_commit: String,
    pub host: String,
    pub cpu_model: String,
    pub started: String,
    pub finished: Option<String>,
    pub quick: bool,
    /// Backends the command line restricted the run to (empty: each experiment's own list).
    pub backends: Vec<String>,
    pub device_index: usize,
    pub experiments: Vec<ExperimentRecord>,
    pub devices: Vec<DeviceInfo>,
    /// Backends that were asked for but could not be opened, with the reason.
    pub unavailable: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub id: String,
    pub file: String,
    pub sha256: String,
}

pub fn now_string() -> String {
    chrono::Local::now().format("%Y-%m-%dT%H:%M:%S%z").to_string()
}

/// A run's folder on disk.
pub struct RunDir {
    pub path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Polars { path: PathBuf, source: PolarsError },
    #[error("{path}: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{0} is not a run folder (no meta.json)")]
    NotARun(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io { path: path.to_path_buf(), source }
}

impl RunDir {
    pub fn create(path: PathBuf) -> Result<Self, ResultsError> {
        fs::create_dir_all(path.join("rows")).map_err(io(&path))?;
        fs::create_dir_all(path.join("experiments")).map_err(io(&path))?;
        Ok(RunDir { path })
    }

    pub fn open(path: &Path) -> Result<Self, ResultsError> {
        if !path.join("meta.json").is_file() {
            return Err(ResultsError::NotARun(path.to_path_buf()));
        }
        Ok(RunDir { path: path.to_path_buf() })
    }

    pub fn read_meta(&self) -> Result<RunMeta, ResultsError> {
        let p = self.path.join("meta.json");
        let text = fs::read_to_string(&p).map_err(io(&p))?;
        serde_json::from_str(&text).map_err(|source| ResultsError::Json { path: p, source })
    }

    pub fn write_meta(&self, meta: &RunMeta) -> Result<(), ResultsError> {
        let p = self.path.join("meta.json");
        let text = serde_json::to_string_pretty(meta).map_err(|source| ResultsError::Json { path: p.clone(), source })?;
        write_atomic(&p, text.as_bytes())
    }

    pub fn save_experiment(&self, id: &str, text: &str) -> Result<PathBuf, ResultsError> {
        let p = self.path.join("experiments").join(format!("{id}.yaml"));
        write_atomic(&p, text.as_bytes())?;
        Ok(p)
    }

    /// Stored experiment files of this run, by id.
    pub fn experiment_files(&self) -> Result<Vec<PathBuf>, ResultsError> {
        let dir = self.path.join("experiments");
        let mut v: Vec<PathBuf> = fs::read_dir(&dir).map_err(io(&dir))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        v.sort();
        Ok(v)
    }

    fn rows_dir(&self, experiment: &str) -> PathBuf {
        self.path.join("rows").join(experiment)
    }

    /// Writes the rows of one finished case as its own Parquet file (atomically).
    pub fn write_case(&self, experiment: &str, rows: &[Row]) -> Result<(), ResultsError> {
        let dir = self.rows_dir(experiment);
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        // Next number after the highest present: after a resume, files may be missing in between.
        let seq = fs::read_dir(&dir)
            .map_err(io(&dir))?
            .filter_map(|e| e.ok()?.path().file_stem()?.to_str()?.parse::<u64>().ok())
            .max()
            .map_or(0, |m| m + 1);
        let path = dir.join(format!("{seq:06}.parquet"));
        let mut df = rows_to_frame(rows).map_err(|source| ResultsError::Polars { path: path.clone(), source })?;
        let tmp = path.with_extension("parquet.tmp");
        let file = fs::File::create(&tmp).map_err(io(&tmp))?;
        ParquetWriter::new(file).finish(&mut df).map_err(|source| ResultsError::Polars { path: tmp.clone(), source })?;
        fs::rename(&tmp, &path).map_err(io(&path))
    }

    /// All rows of one experiment of this run, or None if it has none yet.
    pub fn read_experiment(&self, experiment: &str) -> Result<Option<DataFrame>, ResultsError> {
        let dir = self.rows_dir(experiment);
        if !dir.is_dir() {
            return Ok(None);
        }
        let mut parts: Vec<PathBuf> = fs::read_dir(&dir)
            .map_err(io(&dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("parquet"))
            .collect();
        parts.sort();
        let mut frames = Vec::with_capacity(parts.len());
        for p in &parts {
            let file = fs::File::open(p).map_err(io(p))?;
            let df = ParquetReader::new(file).finish().map_err(|source| ResultsError::Polars { path: p.clone(), source })?;
            frames.push(df);
        }
        if frames.is_empty() {
            return Ok(None);
        }
        align_and_stack(frames).map(Some).map_err(|source| ResultsError::Polars { path: dir.clone(), source })
    }

    /// Case ids that already have rows: `--resume` skips them.
    pub fn finished_cases(&self, experiment: &str) -> Result<BTreeSet<String>, ResultsError> {
        let mut done = BTreeSet::new();
        if let Some(df) = self.read_experiment(experiment)? {
            let col = df.column("case_id").map_err(|source| ResultsError::Polars { path: self.rows_dir(experiment), source })?;
            let ca = col.str().map_err(|source| ResultsError::Polars { path: self.rows_dir(experiment), source })?;
            done.extend(ca.iter().flatten().map(str::to_string));
        }
        Ok(done)
    }
}

/// Stacks frames whose columns may differ (a failed case has no extra columns): missing columns
/// become nulls of the type another frame gives them.
fn align_and_stack(frames: Vec<DataFrame>) -> PolarsResult<DataFrame> {
    let mut schema: Vec<(PlSmallStr, DataType)> = Vec::new();
    for df in &frames {
        for c in df.columns() {
            if !schema.iter().any(|(n, _)| n == c.name()) {
                schema.push((c.name().clone(), c.dtype().clone()));
            }
        }
    }
    let mut out: Option<DataFrame> = None;
    for df in frames {
        let h = df.height();
        let cols: Vec<Column> = schema
            .iter()
            .map(|(name, dtype)| match df.column(name) {
                Ok(c) if c.dtype() == dtype => Ok(c.clone()),
                Ok(c) => c.cast(dtype),
                Err(_) => Ok(Column::full_null(name.clone(), h, dtype)),
            })
            .collect::<PolarsResult<_>>()?;
        let aligned = DataFrame::new(h, cols)?;
        match &mut out {
            None => out = Some(aligned),
            Some(all) => {
                all.vstack_mut(&aligned)?;
            }
        }
    }
    Ok(out.unwrap_or_default())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).map_err(io(&tmp))?;
    fs::rename(&tmp, path).map_err(io(path))
}

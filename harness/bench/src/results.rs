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
use sha2::Digest;

use crate::experiment::{ParamValue, Params};
pub use crate::meta::{now_string, ExperimentRecord, RunMeta};
use fembench_device::kernel_cache::Request;

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
    /// 95% bootstrap interval of the median.
    pub time_ci_low_s: Option<f64>,
    pub time_ci_high_s: Option<f64>,
    /// Every timed repetition, in order (a list column in Parquet).
    pub samples_s: Vec<f64>,
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
    /// Benchmark-specific figures (e.g. Cecka's Table VI error), one column each.
    pub extras: Vec<(String, f64)>,
    /// Benchmark-specific series (e.g. Pogo's receiver traces), one list column each (empty
    /// in the rows that have none).
    pub series: Vec<(String, Vec<f64>)>,
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
            time_ci_low_s: None,
            time_ci_high_s: None,
            samples_s: Vec::new(),
            bytes: None,
            executed_flops: None,
            paper_flops: None,
            bandwidth_gbs: None,
            gflops: None,
            paper_gflops: None,
            error: None,
            tolerance: None,
            memory_bytes: None,
            extras: Vec::new(),
            series: Vec::new(),
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
    "time_ci_low_s",
    "time_ci_high_s",
    "samples_s",
    "bytes",
    "executed_flops",
    "paper_flops",
    "bandwidth_gbs",
    "gflops",
    "paper_gflops",
    "error",
    "tolerance",
    "memory_bytes",
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
        of("time_ci_low_s", &|r| r.time_ci_low_s),
        of("time_ci_high_s", &|r| r.time_ci_high_s),
        Column::new("samples_s".into(), rows.iter().map(|r| Series::new("".into(), &r.samples_s)).collect::<Vec<_>>()),
        of("bytes", &|r| r.bytes),
        of("executed_flops", &|r| r.executed_flops),
        of("paper_flops", &|r| r.paper_flops),
        of("bandwidth_gbs", &|r| r.bandwidth_gbs),
        of("gflops", &|r| r.gflops),
        of("paper_gflops", &|r| r.paper_gflops),
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
    // Parameters first (their names are what reports group by), then extras; no two columns
    // may share a name, whatever a benchmark calls its figures.
    let mut taken: Vec<String> = FIXED_COLUMNS.iter().map(|s| s.to_string()).collect();
    let param_names: Vec<String> = names.iter().map(|n| unique_column(n, "param_", &mut taken)).collect();
    for name in &extra_names {
        let values: Vec<Option<f64>> = rows.iter().map(|r| r.extras.iter().find(|(k, _)| k == name).map(|(_, v)| *v)).collect();
        cols.push(Column::new(unique_column(name, "extra_", &mut taken).into(), values));
    }
    let mut series_names: Vec<&str> = Vec::new();
    for r in rows {
        for (k, _) in &r.series {
            if !series_names.contains(&k.as_str()) {
                series_names.push(k);
            }
        }
    }
    for name in series_names {
        let values: Vec<Series> = rows
            .iter()
            .map(|r| Series::new("".into(), r.series.iter().find(|(k, _)| k == name).map_or(&[][..], |(_, v)| &v[..])))
            .collect();
        cols.push(Column::new(unique_column(name, "series_", &mut taken).into(), values));
    }
    for (name, col_name) in names.into_iter().zip(param_names) {
        let values: Vec<Option<&ParamValue>> = rows.iter().map(|r| r.params.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v)).collect();
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

/// A `kernels.json` file of compilations.
pub fn read_kernels(p: &Path) -> Result<Vec<Request>, ResultsError> {
    let text = fs::read_to_string(p).map_err(io(p))?;
    serde_json::from_str(&text).map_err(|source| ResultsError::Json { path: p.to_path_buf(), source })
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

    /// A new run folder `<parent>/<id>`, or `<id>-2`, `<id>-3`... if that name is taken (two runs
    /// started in the same second): the folder is claimed atomically by `create_dir`. Returns the
    /// folder and the id it got.
    pub fn create_new(parent: &Path, id: &str) -> Result<(Self, String), ResultsError> {
        fs::create_dir_all(parent).map_err(io(parent))?;
        for n in 1.. {
            let name = if n == 1 { id.to_string() } else { format!("{id}-{n}") };
            let path = parent.join(&name);
            match fs::create_dir(&path) {
                Ok(()) => return Ok((Self::create(path)?, name)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(ResultsError::Io { path, source: e }),
            }
        }
        unreachable!("an unbounded search ends in a free name")
    }

    fn marker(&self, experiment: &str, case_id: &str) -> PathBuf {
        let digest = sha2::Sha256::digest(case_id.as_bytes());
        let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        self.rows_dir(experiment).join(format!("started-{hex}.json"))
    }

    /// Marks a case as started (written before it runs, removed once its rows are written), so
    /// that a crash inside it is recorded by the next `--resume` instead of crashing it again.
    pub fn mark_started(&self, experiment: &str, case_id: &str) -> Result<(), ResultsError> {
        let dir = self.rows_dir(experiment);
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let text = serde_json::json!({ "case_id": case_id, "started": now_string() }).to_string();
        write_atomic(&self.marker(experiment, case_id), text.as_bytes())
    }

    pub fn clear_started(&self, experiment: &str, case_id: &str) -> Result<(), ResultsError> {
        let p = self.marker(experiment, case_id);
        match fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ResultsError::Io { path: p, source: e }),
        }
    }

    /// Case ids started but never finished (the process died inside them), with start times.
    pub fn crashed_cases(&self, experiment: &str) -> Result<Vec<(String, String)>, ResultsError> {
        let dir = self.rows_dir(experiment);
        if !dir.is_dir() {
            return Ok(vec![]);
        }
        let mut out = Vec::new();
        for entry in fs::read_dir(&dir).map_err(io(&dir))?.flatten() {
            let p = entry.path();
            let is_marker = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("started-") && n.ends_with(".json"));
            if !is_marker {
                continue;
            }
            let text = fs::read_to_string(&p).map_err(io(&p))?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|source| ResultsError::Json { path: p.clone(), source })?;
            if let Some(id) = v["case_id"].as_str() {
                out.push((id.to_string(), v["started"].as_str().unwrap_or("").to_string()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes the row files of the given cases (for `--retry`): they run again.
    pub fn remove_cases(&self, experiment: &str, case_ids: &BTreeSet<String>) -> Result<usize, ResultsError> {
        let dir = self.rows_dir(experiment);
        if !dir.is_dir() || case_ids.is_empty() {
            return Ok(0);
        }
        let mut removed = 0;
        for entry in fs::read_dir(&dir).map_err(io(&dir))?.flatten() {
            let p = entry.path();
            if p.extension().and_then(|x| x.to_str()) != Some("parquet") {
                continue;
            }
            let file = fs::File::open(&p).map_err(io(&p))?;
            let df = ParquetReader::new(file).finish().map_err(|source| ResultsError::Polars { path: p.clone(), source })?;
            let ids =
                df.column("case_id").and_then(|c| c.str().cloned()).map_err(|source| ResultsError::Polars { path: p.clone(), source })?;
            if ids.iter().flatten().any(|id| case_ids.contains(id)) {
                fs::remove_file(&p).map_err(io(&p))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// (case id, status) of every stored row.
    pub fn case_statuses(&self, experiment: &str) -> Result<Vec<(String, String)>, ResultsError> {
        let Some(df) = self.read_experiment(experiment)? else { return Ok(vec![]) };
        let err = |source| ResultsError::Polars { path: self.rows_dir(experiment), source };
        let ids = df.column("case_id").and_then(|c| c.str().cloned()).map_err(err)?;
        let st = df.column("status").and_then(|c| c.str().cloned()).map_err(err)?;
        Ok(ids.iter().zip(st.iter()).map(|(a, b)| (a.unwrap_or("").to_string(), b.unwrap_or("").to_string())).collect())
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

    /// The kernel compilations this run asked for (`kernels.json`), for `harness precompile`.
    pub fn read_kernels(&self) -> Result<Vec<Request>, ResultsError> {
        read_kernels(&self.path.join("kernels.json"))
    }

    /// Adds compilations to `kernels.json` (a resumed run keeps the earlier ones); written only
    /// when something is new.
    pub fn add_kernels(&self, requests: &[Request]) -> Result<(), ResultsError> {
        let p = self.path.join("kernels.json");
        let old: BTreeSet<Request> = if p.exists() { read_kernels(&p)?.into_iter().collect() } else { BTreeSet::new() };
        let all: BTreeSet<Request> = old.iter().cloned().chain(requests.iter().cloned()).collect();
        if all.len() == old.len() && p.exists() {
            return Ok(());
        }
        // One compilation a line.
        let lines: Vec<String> = all
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()
            .map_err(|source| ResultsError::Json { path: p.clone(), source })?;
        write_atomic(&p, format!("[\n{}\n]\n", lines.join(",\n")).as_bytes())
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

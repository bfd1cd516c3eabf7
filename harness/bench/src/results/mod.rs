//! Result rows and run folders.
//!
//! A run writes `results/<run-id>/`:
//! - `meta.json`: git commit, host, CPU, devices with driver and runtime versions, harness
//!   version, each experiment file's hash, start and end time;
//! - `experiments/<id>.yaml`: the exact experiment files that ran;
//! - `rows/<experiment>/<seq>.parquet`: the rows of one finished case each, written atomically
//!   as soon as the case finishes, so an interrupted run keeps every finished case and
//!   `harness run --resume` runs only the rest.

mod rows;
mod upkeep;
pub use rows::{is_declared, rows_to_frame, CaseKey, Row, Status, RUNNER_COLUMNS};

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use sha2::Digest;

pub use crate::meta::{now_string, stamp, ExperimentRecord, RunMeta};
use fembench_device::kernel_cache::Request;

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
    #[error(
        "{path}: a rows file that cannot be read ({detail}); its case's rows are lost. Delete the file \
         (rm '{path}') and `--resume` runs that case again"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "{path} is being written by another harness process ({holder}); one run folder takes one writer at a time: \
         wait for it to end, or resume another folder"
    )]
    Locked { path: PathBuf, holder: String },
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

    /// The started marker of a case (see [`RunDir::mark_started`]).
    pub fn marker(&self, experiment: &str, case_id: &str) -> PathBuf {
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
            let df = ParquetReader::new(file).finish().map_err(|e| ResultsError::Corrupt { path: p.clone(), detail: e.to_string() })?;
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
        // Encoded in memory first, so that a full disk or a failed write shows the operating
        // system's own error, not the encoder's.
        let mut bytes = Vec::new();
        ParquetWriter::new(&mut bytes).finish(&mut df).map_err(|source| ResultsError::Polars { path: path.clone(), source })?;
        write_file_atomic(&path, &bytes)
    }

    /// Whether an experiment of this run has any rows file.
    pub fn has_rows(&self, experiment: &str) -> bool {
        fs::read_dir(self.rows_dir(experiment))
            .map(|d| d.filter_map(|e| e.ok()).any(|e| e.path().extension().is_some_and(|x| x == "parquet")))
            .unwrap_or(false)
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
            let df = ParquetReader::new(file).finish().map_err(|e| ResultsError::Corrupt { path: p.clone(), detail: e.to_string() })?;
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

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    write_file_atomic(path, bytes)
}

/// This machine's name, as run folders record it.
pub fn hostname() -> String {
    fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

/// Writes a file whole or not at all: into `<name>.tmp` beside it, synced to the disk, then
/// renamed over it. A failure (a full disk) leaves the old file as it was, removes the partial
/// one and names the operating system's error.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    use std::io::Write as _;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let written = fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(ResultsError::Io { path: path.to_path_buf(), source: e });
    }
    fs::rename(&tmp, path).map_err(io(path))
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

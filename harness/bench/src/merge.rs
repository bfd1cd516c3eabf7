//! `harness merge RUN... --out DIR`: shards of one run (`harness run --shard K/N`, or the
//! per-GPU workers of `--gpus`) joined into one ordinary run folder, which `report`, `compare` and
//! `--resume` treat like any other.
//!
//! Refused: shards of different commits or harness versions, of different experiment files, of
//! different kinds of device, quick with full, or a case in two shards. Reported: the cases that
//! no shard holds (the merged run is written, and `--resume` can finish it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::benchmark::Checks;
use crate::registry::Registry;
use crate::results::{write_file_atomic, ResultsError, RunDir, RunMeta};
use fembench_core::Backend;

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("the runs are not shards of one run:\n  {}", .0.join("\n  "))]
    NotShards(Vec<String>),
    #[error("{} cases are in more than one shard, e.g. {}", .0.len(), .0.first().cloned().unwrap_or_default())]
    Doubled(Vec<String>),
    #[error("{0}")]
    Other(String),
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    pub run_dir: PathBuf,
    pub cases: usize,
    /// Planned cases that no shard holds, as `experiment: case`.
    pub missing: Vec<String>,
}

/// What must agree between shards, as (what, value) per run.
fn identity(m: &RunMeta) -> Vec<(&'static str, String)> {
    let mut exps: Vec<String> = m.experiments.iter().map(|e| format!("{}={}", e.id, e.sha256)).collect();
    exps.sort();
    let mut devices: Vec<String> = m.devices.iter().filter(|d| d.backend != Some(Backend::Cpu)).map(|d| d.name.clone()).collect();
    devices.sort();
    devices.dedup();
    vec![
        ("commit", m.git_commit.clone()),
        ("harness version", m.harness_version.clone()),
        ("experiment files", exps.join(", ")),
        ("quick", m.quick.to_string()),
        ("GPU kind", devices.join(", ")),
    ]
}

fn refusals(metas: &[RunMeta]) -> Vec<String> {
    let first = identity(&metas[0]);
    let mut out = Vec::new();
    for m in &metas[1..] {
        for ((what, a), (_, b)) in first.iter().zip(identity(m)) {
            // A CPU-only shard has no GPU: its kind agrees with any.
            if *a != b && !(*what == "GPU kind" && (a.is_empty() || b.is_empty())) {
                out.push(format!("{what}: {a} ({}) vs {b} ({})", metas[0].run_id, m.run_id));
            }
        }
    }
    out
}

/// Joins `shards` into a new run folder `out`.
pub fn merge(registry: &Registry, shards: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    if shards.len() < 2 {
        return Err(MergeError::Other("merge needs two or more run folders".into()));
    }
    if out.exists() {
        return Err(MergeError::Other(format!("{}: exists already; name a new folder", out.display())));
    }
    let runs: Vec<RunDir> = shards.iter().map(|s| RunDir::open(s)).collect::<Result<_, _>>()?;
    let metas: Vec<RunMeta> = runs.iter().map(|r| r.read_meta()).collect::<Result<_, _>>()?;
    let why = refusals(&metas);
    if !why.is_empty() {
        return Err(MergeError::NotShards(why));
    }
    // Every case once.
    let mut owner: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut doubled = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        for e in &metas[i].experiments {
            for case in r.finished_cases(&e.id)? {
                if let Some(j) = owner.insert((e.id.clone(), case.clone()), i) {
                    doubled.push(format!("{}: {case} ({} and {})", e.id, metas[j].run_id, metas[i].run_id));
                }
            }
        }
    }
    if !doubled.is_empty() {
        return Err(MergeError::Doubled(doubled));
    }
    let merged = RunDir::create(out.to_path_buf())?;
    for (i, r) in runs.iter().enumerate() {
        copy_rows(r, &merged, &metas[i])?;
    }
    copy_experiments(&runs[0], &merged)?;
    let mut kernels = Vec::new();
    for r in &runs {
        kernels.extend(r.read_kernels().unwrap_or_default());
    }
    merged.add_kernels(&kernels)?;
    let meta = merged_meta(&metas, out);
    merged.write_meta(&meta)?;
    let missing = missing_cases(registry, &merged, &meta, &owner)?;
    Ok(Merged { run_dir: out.to_path_buf(), cases: owner.len(), missing })
}

/// One meta for the merged run: the first shard's, with every shard's backends, devices and
/// kernels, the earliest start, the latest end (none if a shard did not finish), and each
/// experiment's wall time as its longest shard's (they ran side by side).
fn merged_meta(metas: &[RunMeta], out: &Path) -> RunMeta {
    let mut m = metas[0].clone();
    m.run_id = out.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| "merged".into());
    m.started = metas.iter().map(|x| x.started.clone()).min().unwrap_or_default();
    m.finished = if metas.iter().all(|x| x.finished.is_some()) { metas.iter().filter_map(|x| x.finished.clone()).max() } else { None };
    let mut backends: BTreeSet<String> = BTreeSet::new();
    for x in metas {
        backends.extend(x.backends.iter().cloned());
    }
    m.backends = if metas.iter().any(|x| x.backends.is_empty()) { Vec::new() } else { backends.into_iter().collect() };
    m.devices.clear();
    m.unavailable.clear();
    for x in metas {
        for d in &x.devices {
            if !m.devices.iter().any(|e| e.backend == d.backend && e.index == d.index && e.name == d.name) {
                m.devices.push(d.clone());
            }
        }
    }
    m.experiment_wall_s.clear();
    for x in metas {
        for (k, v) in &x.experiment_wall_s {
            let slot = m.experiment_wall_s.entry(k.clone()).or_insert(0.0);
            *slot = slot.max(*v);
        }
    }
    m.shard = None;
    m.merged_from =
        metas.iter().map(|x| format!("{}{}", x.run_id, x.shard.as_ref().map(|s| format!(" (shard {s})")).unwrap_or_default())).collect();
    m
}

fn copy_rows(from: &RunDir, to: &RunDir, meta: &RunMeta) -> Result<(), MergeError> {
    for e in &meta.experiments {
        let src = from.path.join("rows").join(&e.id);
        let Ok(entries) = std::fs::read_dir(&src) else { continue };
        let dst = to.path.join("rows").join(&e.id);
        std::fs::create_dir_all(&dst).map_err(|source| ResultsError::Io { path: dst.clone(), source })?;
        let mut files: Vec<PathBuf> =
            entries.filter_map(|x| x.ok().map(|x| x.path())).filter(|p| p.extension().is_some_and(|x| x == "parquet")).collect();
        files.sort();
        let mut next = std::fs::read_dir(&dst).map(|d| d.count()).unwrap_or(0);
        for f in files {
            let bytes = std::fs::read(&f).map_err(|source| ResultsError::Io { path: f.clone(), source })?;
            write_file_atomic(&dst.join(format!("{next:06}.parquet")), &bytes)?;
            next += 1;
        }
    }
    Ok(())
}

fn copy_experiments(from: &RunDir, to: &RunDir) -> Result<(), MergeError> {
    for f in from.experiment_files()? {
        let text = std::fs::read_to_string(&f).map_err(|source| ResultsError::Io { path: f.clone(), source })?;
        let id = f.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        to.save_experiment(&id, &text)?;
    }
    Ok(())
}

/// The cases the merged run's experiments plan (their stored files, its backends and mode) that
/// no shard holds.
fn missing_cases(
    registry: &Registry,
    run: &RunDir,
    meta: &RunMeta,
    have: &BTreeMap<(String, String), usize>,
) -> Result<Vec<String>, MergeError> {
    let restrict: Option<Vec<Backend>> = (!meta.backends.is_empty()).then(|| meta.backends.iter().filter_map(|b| b.parse().ok()).collect());
    let mut missing = Vec::new();
    for f in run.experiment_files()? {
        let text = std::fs::read_to_string(&f).map_err(|source| ResultsError::Io { path: f.clone(), source })?;
        let e = registry.load_text(&f, text, Checks::SchemaOnly).map_err(|e| MergeError::Other(e.to_string()))?;
        for id in crate::runner::planned_case_ids(e.as_ref(), meta.quick, restrict.as_deref()) {
            if !have.contains_key(&(e.id().to_string(), id.clone())) {
                missing.push(format!("{}: {id}", e.id()));
            }
        }
    }
    Ok(missing)
}

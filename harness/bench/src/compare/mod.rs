//! `harness compare BASE NEW`: two stored runs, row by row, for CI regression tracking.
//!
//! Rows are joined on experiment, case (backend, precision and parameters), metric and cache
//! mode. For each pair of timed rows the ratio of medians `new / base` gets a 95% bootstrap
//! interval from the stored samples of both runs (resampled independently). The verdict:
//! - `slower` / `faster`: the interval excludes 1 *and* the ratio is off by more than the
//!   threshold (default 5%): a change must be both significant and large enough to matter;
//! - `noisy`: not such a change, and the interval is wider than +- the threshold, so a change of
//!   that size could hide in it, or a side has fewer than [`MIN_SAMPLES`] repetitions;
//! - `same`: otherwise;
//! - `regression`: verified before, failed now (whatever the time); `fixed`: the reverse;
//! - `added` / `removed`: a row on one side only; `untimed`: a row without samples on a side.
//!
//! A change must also exceed the row's between-run envelope ([`noise`]): the spread of its
//! median over earlier runs where there are enough of them, else its class's floor (kernels 3%,
//! host-clocked stages 50%). So host stages, transfers and open regions are reported but fail a
//! job only beyond what real A/A pairs show.
//!
//! Failures count: a case that crashed or failed in NEW is a regression of every row BASE had
//! for it; a row BASE had and NEW lacks is a regression unless NEW ran a narrower selection of
//! backends; an empty NEW, or one cut short (not finished), fails the comparison.
//!
//! Runs made on different devices, or from experiment files that differ, are refused unless
//! `force`; the refusal says what differs. Output: a terminal table, Markdown (a pull-request
//! comment) or Bencher Metric Format JSON.

pub mod noise;
mod output;
pub mod plant;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::results::{ResultsError, RunDir, RunMeta};
use fembench_core::stats::{self, Interval};
use noise::NoiseClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Regression,
    Slower,
    Noisy,
    /// A row this runner cannot judge: its between-run spread here exceeds what a gate can use
    /// ([`noise::unjudged`]); never slower or faster.
    NotJudged,
    Faster,
    Fixed,
    Same,
    Added,
    Removed,
    Untimed,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Slower => "slower",
            Verdict::Noisy => "noisy",
            Verdict::NotJudged => "not judged",
            Verdict::Faster => "faster",
            Verdict::Fixed => "fixed",
            Verdict::Same => "same",
            Verdict::Added => "added",
            Verdict::Removed => "removed",
            Verdict::Untimed => "untimed",
        }
    }
    /// A change `--fail-on any` fails on (noise and bookkeeping are not changes).
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Slower | Verdict::Faster | Verdict::Fixed)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When `compare` exits non-zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A slower row or a verification that now fails.
    Regression,
    /// Any change, faster included.
    Any,
    Never,
}

/// One row of one run, as compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub class: NoiseClass,
    pub status: String,
    pub median_s: Option<f64>,
    pub ci_low_s: Option<f64>,
    pub ci_high_s: Option<f64>,
    pub samples: Vec<f64>,
    /// Other GPU workers on the host when it ran (`concurrent_workers`; None: none).
    pub workers: Option<f64>,
}

impl Side {
    fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The comparison of one row.
#[derive(Debug, Clone)]
pub struct Entry {
    pub experiment: String,
    pub case_id: String,
    pub metric: String,
    pub mode: String,
    pub base: Option<Side>,
    pub new: Option<Side>,
    pub ratio: Option<f64>,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
    /// The row's class and the between-run envelope its change had to exceed.
    pub class: NoiseClass,
    pub envelope: f64,
    /// Why a verdict was given where the sides alone do not say (a case that failed whole).
    pub note: Option<String>,
}

impl Entry {
    /// The benchmark's name in BMF and tables.
    pub fn name(&self) -> String {
        let mut n = format!("{}/{}/{}", self.experiment, self.case_id, self.metric);
        if !self.mode.is_empty() {
            n.push('/');
            n.push_str(&self.mode);
        }
        n
    }
}

/// Fewest repetitions per side for a verdict other than `noisy`.
pub const MIN_SAMPLES: usize = 5;

/// Resamples behind each interval; seeded, so a comparison is reproducible.
const RESAMPLES: usize = 2000;

/// The verdict on one pair of rows (see the module's documentation).
pub fn judge(base: &Side, new: &Side, threshold: f64) -> (Option<f64>, Option<Interval>, Verdict) {
    match (base.ok(), new.ok()) {
        // A case that ran and now fails, or can no longer run at all, regressed.
        (true, false) if new.status == "failed" || new.status == "infeasible" => return (None, None, Verdict::Regression),
        (false, true) if base.status == "failed" => return (None, None, Verdict::Fixed),
        (true, true) => {}
        // Skipped or failed on both sides for the same reason class: nothing changed.
        (false, false) if base.status == new.status => return (None, None, Verdict::Same),
        _ => return (None, None, Verdict::Untimed),
    }
    if base.samples.is_empty() || new.samples.is_empty() {
        return (None, None, Verdict::Untimed);
    }
    // A bootstrap interval of a median from a handful of samples is far too narrow (3 samples
    // give 3 possible medians): below MIN_SAMPLES a row cannot be judged, only called noisy.
    if base.samples.len() < MIN_SAMPLES || new.samples.len() < MIN_SAMPLES {
        let ratio = stats::median(&new.samples) / stats::median(&base.samples);
        return (Some(ratio), None, Verdict::Noisy);
    }
    let (ratio, ci) = stats::bootstrap_ratio_ci(&base.samples, &new.samples, 0.95, RESAMPLES, 0xC0DE);
    let verdict = if ci.low.is_nan() {
        Verdict::Noisy
    } else if ci.low > 1.0 && ratio > 1.0 + threshold {
        Verdict::Slower
    } else if ci.high < 1.0 && ratio < 1.0 - threshold {
        Verdict::Faster
    } else if ci.relative_half_width(1.0) > threshold || ci.low < 1.0 - threshold || ci.high > 1.0 + threshold {
        Verdict::Noisy
    } else {
        Verdict::Same
    };
    (Some(ratio), Some(ci), verdict)
}

/// BASE as a host-timed row is judged against its history: with at least [`noise::CPU_HISTORY_MIN`]
/// earlier medians, its samples scaled to the median of those medians and its own, so that the
/// reference is the history's level and not the mode one run happened to sit in (on a shared
/// host a run's CPU rows move by more than a slowdown worth catching). Other rows, and rows with
/// less history, as they are.
pub fn recentred(base: &Side, class: NoiseClass, history: &[f64]) -> Side {
    let own = fembench_core::stats::median(&base.samples);
    let mut levels: Vec<f64> = history.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    if !class.host_timed() || levels.len() < noise::CPU_HISTORY_MIN || !(own > 0.0) {
        return base.clone();
    }
    levels.push(own);
    let scale = fembench_core::stats::median(&levels) / own;
    Side { samples: base.samples.iter().map(|s| s * scale).collect(), ..base.clone() }
}

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{path}: {detail}")]
    Rows { path: PathBuf, detail: String },
    #[error("the runs are not comparable (--force compares them anyway):\n  {}", .0.join("\n  "))]
    NotComparable(Vec<String>),
    #[error("no experiment is in both runs{0}")]
    Nothing(String),
}

#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// Relative change below which a significant difference still counts as the same, on top
    /// of each row's between-run envelope (0: the envelope alone decides).
    pub threshold: f64,
    /// Earlier runs of the same experiments on the same kind of device: each row's envelope
    /// comes from its medians there where it has [`noise::HISTORY_MIN`] of them.
    pub history: Vec<PathBuf>,
    /// Only these experiments (empty: every experiment in both runs).
    pub experiments: Vec<String>,
    pub force: bool,
}

#[derive(Debug)]
pub struct Comparison {
    pub base: RunMeta,
    pub new: RunMeta,
    pub threshold: f64,
    pub entries: Vec<Entry>,
    /// What differs between the runs, when `force` let them be compared anyway.
    pub warnings: Vec<String>,
    /// What makes NEW unfit to pass whatever its rows say: empty, or cut short.
    pub problems: Vec<String>,
    /// How many history runs gave envelopes.
    pub history_runs: usize,
}

impl Comparison {
    pub fn count(&self, v: Verdict) -> usize {
        self.entries.iter().filter(|e| e.verdict == v).count()
    }

    /// Whether `compare` should exit non-zero.
    pub fn fails(&self, on: FailOn) -> bool {
        match on {
            FailOn::Never => false,
            FailOn::Regression => {
                !self.problems.is_empty() || self.entries.iter().any(|e| matches!(e.verdict, Verdict::Regression | Verdict::Slower))
            }
            FailOn::Any => !self.problems.is_empty() || self.entries.iter().any(|e| e.verdict.is_change()),
        }
    }

    pub fn summary(&self) -> String {
        let counts: Vec<String> = [
            Verdict::Regression,
            Verdict::Slower,
            Verdict::Faster,
            Verdict::Fixed,
            Verdict::Noisy,
            Verdict::NotJudged,
            Verdict::Same,
            Verdict::Added,
            Verdict::Removed,
            Verdict::Untimed,
        ]
        .iter()
        .filter_map(|&v| {
            let n = self.count(v);
            (n > 0).then(|| format!("{n} {v}"))
        })
        .collect();
        let mut s = format!(
            "{} ({}) -> {} ({}): {} rows compared (threshold {:.0}% above each row's envelope; {}): {}",
            self.base.run_id,
            self.base.git_commit,
            self.new.run_id,
            self.new.git_commit,
            self.entries.len(),
            100.0 * self.threshold,
            if self.history_runs >= noise::HISTORY_MIN {
                format!("envelopes from {} earlier runs where a row has them", self.history_runs)
            } else {
                "class floors as envelopes".to_string()
            },
            counts.join(", ")
        );
        for p in &self.problems {
            s.push_str(&format!("; FAILS: {p}"));
        }
        s
    }
}

type Key = (String, String, String, String);

fn column_err(path: &Path, column: &str, e: PolarsError) -> CompareError {
    CompareError::Rows { path: path.to_path_buf(), detail: format!("column {column}: {e}") }
}

/// The rows of one experiment of one run, keyed for joining.
fn read_sides(run: &RunDir, experiment: &str) -> Result<BTreeMap<Key, Side>, CompareError> {
    let Some(df) = run.read_experiment(experiment)? else { return Ok(BTreeMap::new()) };
    let path = run.path.join("rows").join(experiment);
    let strs = |c: &str| -> Result<Vec<String>, CompareError> {
        match df.column(c) {
            Ok(col) => {
                let ca = col.str().map_err(|e| column_err(&path, c, e))?;
                Ok(ca.iter().map(|v| v.unwrap_or("").to_string()).collect())
            }
            // Older runs and failed-only experiments may lack a column: empty strings.
            Err(_) => Ok(vec![String::new(); df.height()]),
        }
    };
    let nums = |c: &str| -> Result<Vec<Option<f64>>, CompareError> {
        match df.column(c) {
            Ok(col) => {
                let col = col.cast(&DataType::Float64).map_err(|e| column_err(&path, c, e))?;
                Ok(col.f64().map_err(|e| column_err(&path, c, e))?.iter().collect())
            }
            Err(_) => Ok(vec![None; df.height()]),
        }
    };
    let (case, metric, mode, status) = (strs("case_id")?, strs("metric")?, strs("mode")?, strs("status")?);
    let (backend, timer) = (strs("backend")?, strs("timer")?);
    let (median, lo, hi) = (nums("time_median_s")?, nums("time_ci_low_s")?, nums("time_ci_high_s")?);
    let workers = nums("concurrent_workers")?;
    let samples: Vec<Vec<f64>> = match df.column("samples_s") {
        Ok(col) => {
            let list = col.list().map_err(|e| column_err(&path, "samples_s", e))?;
            (0..list.len())
                .map(|i| list.get_as_series(i))
                .map(|s| {
                    s.and_then(|s| s.cast(&DataType::Float64).ok())
                        .map(|s| s.f64().map(|ca| ca.into_no_null_iter().collect()).unwrap_or_default())
                        .unwrap_or_default()
                })
                .collect()
        }
        Err(_) => vec![Vec::new(); df.height()],
    };
    let mut out = BTreeMap::new();
    for i in 0..df.height() {
        out.insert(
            (experiment.to_string(), case[i].clone(), metric[i].clone(), mode[i].clone()),
            Side {
                class: NoiseClass::of(&backend[i], &timer[i], &metric[i], &case[i], median[i]),
                status: status[i].clone(),
                median_s: median[i],
                ci_low_s: lo[i],
                ci_high_s: hi[i],
                samples: samples[i].clone(),
                workers: workers[i],
            },
        );
    }
    Ok(out)
}

/// What makes two runs incomparable: devices, and experiment files that differ.
fn differences(base: &RunMeta, new: &RunMeta, experiments: &[String]) -> Vec<String> {
    let mut d = Vec::new();
    // A backend opened in both runs must have been the same device.
    for b in &base.devices {
        let Some(backend) = b.backend else { continue };
        if let Some(n) = new.devices.iter().find(|n| n.backend == Some(backend)) {
            if n.name != b.name {
                d.push(format!("{backend} devices differ: {} (base) vs {} (new)", b.name, n.name));
            }
        }
    }
    if base.cpu_model != new.cpu_model {
        d.push(format!("host CPUs differ: {} (base) vs {} (new)", base.cpu_model, new.cpu_model));
    }
    for id in experiments {
        let sha = |m: &RunMeta| m.experiments.iter().find(|e| &e.id == id).map(|e| e.sha256.clone());
        if let (Some(a), Some(b)) = (sha(base), sha(new)) {
            if a != b {
                d.push(format!(
                    "experiment {id}: its file differs between the runs (sha256 {}.. vs {}..)",
                    &a[..a.len().min(12)],
                    &b[..b.len().min(12)]
                ));
            }
        }
    }
    if base.quick != new.quick {
        d.push(format!("one run is --quick and the other is not (base quick={}, new quick={})", base.quick, new.quick));
    }
    d
}

/// Compares two run folders: BASE, the baseline, and NEW, the run judged. Earlier runs in
/// `opts.history` give each row's between-run envelope.
pub fn compare_runs(base_dir: &Path, new_dir: &Path, opts: &CompareOptions) -> Result<Comparison, CompareError> {
    let (base_run, new_run) = (RunDir::open(base_dir)?, RunDir::open(new_dir)?);
    let (base, new) = (base_run.read_meta()?, new_run.read_meta()?);
    let ids = |m: &RunMeta| -> Vec<String> { m.experiments.iter().map(|e| e.id.clone()).collect() };
    let (bi, ni) = (ids(&base), ids(&new));
    let experiments: Vec<String> =
        bi.iter().filter(|id| ni.contains(id)).filter(|id| opts.experiments.is_empty() || opts.experiments.contains(id)).cloned().collect();
    if experiments.is_empty() {
        let asked = if opts.experiments.is_empty() { String::new() } else { format!(" among {}", opts.experiments.join(", ")) };
        return Err(CompareError::Nothing(asked));
    }
    let diffs = differences(&base, &new, &experiments);
    if !diffs.is_empty() && !opts.force {
        return Err(CompareError::NotComparable(diffs));
    }
    let history = open_history(&opts.history, &base)?;
    let mut entries = Vec::new();
    let mut new_rows = 0;
    for id in &experiments {
        let (b, n) = (read_sides(&base_run, id)?, read_sides(&new_run, id)?);
        new_rows += n.len();
        let past: Vec<BTreeMap<Key, Side>> = history.iter().map(|h| read_sides(h, id)).collect::<Result<_, _>>()?;
        entries.extend(experiment_entries(b, n, &past, &new, opts.threshold));
    }
    let mut problems = Vec::new();
    if new_rows == 0 {
        problems.push(format!("NEW ({}) has no rows for the experiments compared", new.run_id));
    }
    if new.finished.is_none() {
        problems.push(format!("NEW ({}) was cut short (not finished: stopped by a time limit, an interrupt or a crash)", new.run_id));
    }
    Ok(Comparison { base, new, threshold: opts.threshold, entries, warnings: diffs, problems, history_runs: history.len() })
}

/// The history runs that may give envelopes: each folder given, or each run folder inside a
/// folder given, whose devices are BASE's (other kinds of GPU are left out).
fn open_history(paths: &[PathBuf], base: &RunMeta) -> Result<Vec<RunDir>, CompareError> {
    let mut runs = Vec::new();
    for p in paths {
        if p.join("meta.json").is_file() {
            runs.push(RunDir::open(p)?);
        } else if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| CompareError::Rows { path: p.clone(), detail: e.to_string() })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|d| d.join("meta.json").is_file())
                .collect();
            inside.sort();
            for d in inside {
                runs.push(RunDir::open(&d)?);
            }
        } else {
            return Err(CompareError::Rows { path: p.clone(), detail: "not a run folder or a folder of runs".into() });
        }
    }
    let same_devices =
        |r: &RunDir| r.read_meta().map(|m| m.devices.iter().map(|d| &d.name).eq(base.devices.iter().map(|d| &d.name))).unwrap_or(false);
    Ok(runs.into_iter().filter(same_devices).collect())
}

/// The entries of one experiment: every row of NEW against BASE, every row BASE had and NEW
/// lacks, each judged against its envelope.
fn experiment_entries(
    mut base: BTreeMap<Key, Side>,
    new: BTreeMap<Key, Side>,
    past: &[BTreeMap<Key, Side>],
    new_meta: &RunMeta,
    threshold: f64,
) -> Vec<Entry> {
    // Cases that failed whole in NEW (one row, metric `case`): BASE's rows of them regressed.
    let failed_whole: BTreeMap<String, String> = new
        .iter()
        .filter(|(k, s)| k.2 == "case" && s.status == "failed")
        .map(|(k, _)| (k.1.clone(), "the case failed in NEW".to_string()))
        .collect();
    let base_cases: std::collections::BTreeSet<String> = base.keys().map(|k| k.1.clone()).collect();
    // A row's earlier medians; how many, and the envelope they give (None below HISTORY_MIN).
    let history_medians =
        |key: &Key| -> Vec<f64> { past.iter().filter_map(|h| h.get(key)).filter(|s| s.ok()).filter_map(|s| s.median_s).collect() };
    let own = |key: &Key| {
        let medians = history_medians(key);
        noise::history_envelope(&medians).map(|e| (medians.len(), e))
    };
    let envelope = |key: &Key, class: NoiseClass| own(key).map_or(class.floor(), |(_, e)| e.max(class.least()));
    let narrower = |case_id: &str| {
        let backend = case_id.split('/').next().unwrap_or("");
        !new_meta.backends.is_empty() && !new_meta.backends.iter().any(|b| b == backend)
    };
    let mut out = Vec::new();
    for (key, n) in new {
        if key.2 == "case" && n.status == "failed" && base_cases.contains(&key.1) && !base.contains_key(&key) {
            continue; // stands for BASE's rows of the case, below
        }
        let b = base.remove(&key);
        let class = b.as_ref().map_or(n.class, |b| b.class);
        let env = envelope(&key, class);
        let (ratio, interval, verdict) = match &b {
            Some(b) => judge(&recentred(b, class, &history_medians(&key)), &n, threshold.max(env)),
            None => (None, None, Verdict::Added),
        };
        // A host-clocked change between runs whose hosts were shared differently is no verdict;
        // nor is a time of a row this runner cannot judge (a failure still is).
        let shared = noise::shared_host(class, b.as_ref().and_then(|b| b.workers), n.workers);
        let unjudged = noise::unjudged(class, own(&key));
        let (verdict, note) = match (verdict, shared, unjudged) {
            (Verdict::Slower | Verdict::Faster | Verdict::Noisy | Verdict::Same, _, Some(why)) => (Verdict::NotJudged, Some(why)),
            (Verdict::Slower | Verdict::Faster, Some(why), None) => (Verdict::Noisy, Some(why)),
            (v, _, _) => (v, None),
        };
        out.push(Entry {
            experiment: key.0,
            case_id: key.1,
            metric: key.2,
            mode: key.3,
            base: b,
            new: Some(n),
            ratio,
            interval,
            verdict,
            class,
            envelope: env,
            note,
        });
    }
    out.extend(base.into_iter().map(|(key, b)| {
        let (env, why) = (envelope(&key, b.class), failed_whole.get(&key.1).cloned());
        lost(key, b, env, why, narrower)
    }));
    out
}

/// A row BASE had and NEW lacks: a regression where the case failed whole in NEW (`failed_whole`:
/// why) or went missing, removed where it was not verified in BASE or NEW did not select its
/// backend.
fn lost(key: Key, b: Side, envelope: f64, failed_whole: Option<String>, narrower: impl Fn(&str) -> bool) -> Entry {
    let (verdict, note) = match failed_whole {
        Some(why) if b.ok() => (Verdict::Regression, Some(why)),
        _ if !b.ok() => (Verdict::Removed, None),
        _ if narrower(&key.1) => (Verdict::Removed, Some("not selected in NEW".into())),
        _ => (Verdict::Regression, Some("missing in NEW".into())),
    };
    Entry {
        experiment: key.0,
        case_id: key.1,
        metric: key.2,
        mode: key.3,
        class: b.class,
        base: Some(b),
        new: None,
        ratio: None,
        interval: None,
        verdict,
        envelope,
        note,
    }
}

#[cfg(test)]
mod docs_tests;
#[cfg(test)]
mod tests;

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
//! Runs made on different devices, or from experiment files that differ, are refused unless
//! `force`; the refusal says what differs. Output: a terminal table, Markdown (a pull-request
//! comment) or Bencher Metric Format JSON.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::report::Table;
use crate::results::{ResultsError, RunDir, RunMeta};
use fembench_core::stats::{self, Interval};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Regression,
    Slower,
    Noisy,
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
    pub status: String,
    pub median_s: Option<f64>,
    pub ci_low_s: Option<f64>,
    pub ci_high_s: Option<f64>,
    pub samples: Vec<f64>,
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
        (true, false) if new.status == "failed" => return (None, None, Verdict::Regression),
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
    /// Relative change below which a significant difference still counts as the same (0.05).
    pub threshold: f64,
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
}

impl Comparison {
    pub fn count(&self, v: Verdict) -> usize {
        self.entries.iter().filter(|e| e.verdict == v).count()
    }

    /// Whether `compare` should exit non-zero.
    pub fn fails(&self, on: FailOn) -> bool {
        match on {
            FailOn::Never => false,
            FailOn::Regression => self.entries.iter().any(|e| matches!(e.verdict, Verdict::Regression | Verdict::Slower)),
            FailOn::Any => self.entries.iter().any(|e| e.verdict.is_change()),
        }
    }

    pub fn summary(&self) -> String {
        let counts: Vec<String> = [
            Verdict::Regression,
            Verdict::Slower,
            Verdict::Faster,
            Verdict::Fixed,
            Verdict::Noisy,
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
        format!(
            "{} ({}) -> {} ({}): {} rows compared at a {:.0}% threshold: {}",
            self.base.run_id,
            self.base.git_commit,
            self.new.run_id,
            self.new.git_commit,
            self.entries.len(),
            100.0 * self.threshold,
            counts.join(", ")
        )
    }

    /// The rows worth a reader's attention (every row with `all`), as a report table.
    pub fn table(&self, all: bool) -> Table {
        let fmt_t = |s: &Option<Side>| match s.as_ref().and_then(|s| s.median_s) {
            Some(t) => crate::report::fmt_num(t * 1e6),
            None => s.as_ref().map(|s| s.status.clone()).unwrap_or_else(|| "-".into()),
        };
        let mut entries: Vec<&Entry> = self.entries.iter().filter(|e| all || e.verdict != Verdict::Same).collect();
        entries.sort_by(|a, b| a.verdict.cmp(&b.verdict).then_with(|| a.name().cmp(&b.name())));
        Table {
            name: "compare".into(),
            title: format!("Comparison: {} -> {}", self.base.run_id, self.new.run_id),
            header: ["verdict", "row", "base µs", "new µs", "new/base", "95% interval"].map(String::from).to_vec(),
            rows: entries
                .iter()
                .map(|e| {
                    vec![
                        e.verdict.to_string(),
                        e.name(),
                        fmt_t(&e.base),
                        fmt_t(&e.new),
                        e.ratio.map(|r| format!("{r:.3}")).unwrap_or_default(),
                        e.interval.filter(|i| !i.low.is_nan()).map(|i| format!("[{:.3}, {:.3}]", i.low, i.high)).unwrap_or_default(),
                    ]
                })
                .collect(),
            notes: {
                let mut n = vec![
                    self.summary(),
                    "Ratio of medians with a 95% bootstrap interval from both runs' stored samples; slower/faster: the interval excludes 1 and the change exceeds the threshold; noisy: the interval is too wide to tell.".into(),
                ];
                n.extend(self.warnings.iter().map(|w| format!("warning: {w}")));
                if !all {
                    n.push(format!("{} rows with the verdict `same` are not listed (--all lists them).", self.count(Verdict::Same)));
                }
                n
            },
        }
    }

    /// Bencher Metric Format: `{"<benchmark>": {"latency": {"value", "lower_value",
    /// "upper_value"}}}` in nanoseconds, from the new run's median and its interval.
    pub fn to_bmf(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        for e in &self.entries {
            let Some(new) = e.new.as_ref().filter(|s| s.ok()) else { continue };
            let Some(m) = new.median_s else { continue };
            let ns = |v: f64| serde_json::json!(v * 1e9);
            let mut latency = serde_json::Map::new();
            latency.insert("value".into(), ns(m));
            if let (Some(lo), Some(hi)) = (new.ci_low_s, new.ci_high_s) {
                latency.insert("lower_value".into(), ns(lo));
                latency.insert("upper_value".into(), ns(hi));
            }
            out.insert(e.name(), serde_json::json!({ "latency": latency }));
        }
        serde_json::Value::Object(out)
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
    let (median, lo, hi) = (nums("time_median_s")?, nums("time_ci_low_s")?, nums("time_ci_high_s")?);
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
            Side { status: status[i].clone(), median_s: median[i], ci_low_s: lo[i], ci_high_s: hi[i], samples: samples[i].clone() },
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

/// Compares two run folders.
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
    let mut entries = Vec::new();
    for id in &experiments {
        let (mut b, n) = (read_sides(&base_run, id)?, read_sides(&new_run, id)?);
        let entry = |key: Key, base: Option<Side>, new: Option<Side>| {
            let (ratio, interval, verdict) = match (&base, &new) {
                (Some(b), Some(n)) => judge(b, n, opts.threshold),
                (None, _) => (None, None, Verdict::Added),
                (_, None) => (None, None, Verdict::Removed),
            };
            Entry { experiment: key.0, case_id: key.1, metric: key.2, mode: key.3, base, new, ratio, interval, verdict }
        };
        for (key, new_side) in n {
            let base_side = b.remove(&key);
            entries.push(entry(key, base_side, Some(new_side)));
        }
        for (key, base_side) in b {
            entries.push(entry(key, Some(base_side), None));
        }
    }
    Ok(Comparison { base, new, threshold: opts.threshold, entries, warnings: diffs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fembench_core::stats::SplitMix64;

    fn side(samples: Vec<f64>) -> Side {
        Side { status: "ok".into(), median_s: Some(stats::median(&samples)), ci_low_s: None, ci_high_s: None, samples }
    }

    fn noisy(rng: &mut SplitMix64, n: usize, centre: f64, spread: f64) -> Vec<f64> {
        (0..n).map(|_| centre * (1.0 + spread * (rng.unit() - 0.5))).collect()
    }

    #[test]
    fn a_large_significant_change_is_slower_or_faster() {
        let mut rng = SplitMix64::new(1);
        let base = side(noisy(&mut rng, 50, 1.0, 0.02));
        let slow = side(noisy(&mut rng, 50, 1.2, 0.02));
        let fast = side(noisy(&mut rng, 50, 0.8, 0.02));
        assert_eq!(judge(&base, &slow, 0.05).2, Verdict::Slower);
        assert_eq!(judge(&base, &fast, 0.05).2, Verdict::Faster);
    }

    #[test]
    fn a_small_significant_change_is_the_same() {
        let mut rng = SplitMix64::new(2);
        let base = side(noisy(&mut rng, 200, 1.0, 0.002));
        let new = side(noisy(&mut rng, 200, 1.02, 0.002));
        let (ratio, ci, v) = judge(&base, &new, 0.05);
        assert!(ci.unwrap().low > 1.0, "significant: {ci:?}");
        assert!((ratio.unwrap() - 1.02).abs() < 0.005);
        assert_eq!(v, Verdict::Same);
    }

    #[test]
    fn wide_intervals_are_noisy_not_changes() {
        let mut rng = SplitMix64::new(3);
        let base = side(noisy(&mut rng, 12, 1.0, 1.5));
        let new = side(noisy(&mut rng, 12, 1.1, 1.5));
        assert_eq!(judge(&base, &new, 0.05).2, Verdict::Noisy);
        // Too few samples to judge: noisy as well, however different.
        assert_eq!(judge(&side(vec![1.0; 4]), &side(vec![2.0; 4]), 0.05).2, Verdict::Noisy);
    }

    #[test]
    fn a_verification_that_now_fails_is_a_regression_whatever_the_time() {
        let ok = side(vec![1.0; 10]);
        let failed = Side { status: "failed".into(), median_s: None, ci_low_s: None, ci_high_s: None, samples: vec![] };
        assert_eq!(judge(&ok, &failed, 0.05).2, Verdict::Regression);
        assert_eq!(judge(&failed, &ok, 0.05).2, Verdict::Fixed);
        let skipped = Side { status: "skipped".into(), ..failed.clone() };
        assert_eq!(judge(&ok, &skipped, 0.05).2, Verdict::Untimed);
        assert_eq!(judge(&skipped, &skipped, 0.05).2, Verdict::Same);
    }

    /// The committed reference run, whose stored samples the A/A tests draw from. A checkout without one fails: these tests must not pass vacuously.
    fn reference_run() -> RunDir {
        let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let mut runs: Vec<PathBuf> = std::fs::read_dir(&results)
            .expect("results/ is readable")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("meta.json").is_file() && !p.to_string_lossy().ends_with("-quick"))
            .collect();
        // The full reference run: the committed run with the most experiments (then the newest).
        let experiments = |p: &PathBuf| RunDir::open(p).and_then(|r| r.read_meta()).map(|m| m.experiments.len()).unwrap_or(0);
        runs.sort_by_key(|p| (experiments(p), p.clone()));
        RunDir::open(runs.last().expect("a committed reference run under results/")).expect("the reference run opens")
    }

    /// Every ok row of the reference run with at least `2 * MIN_SAMPLES` samples.
    fn stored_samples() -> Vec<(String, Vec<f64>)> {
        let run = reference_run();
        let meta = run.read_meta().unwrap();
        let mut out = Vec::new();
        for e in &meta.experiments {
            for (key, side) in read_sides(&run, &e.id).unwrap() {
                if side.ok() && side.samples.len() >= 2 * MIN_SAMPLES {
                    out.push((format!("{}/{}/{}", key.0, key.1, key.2), side.samples));
                }
            }
        }
        assert!(out.len() >= 100, "only {} rows with stored samples", out.len());
        out
    }

    /// Splits one row's samples at random into two halves: an A/A pair from one population.
    fn halves(samples: &[f64], rng: &mut SplitMix64) -> (Vec<f64>, Vec<f64>) {
        let mut s = samples.to_vec();
        for i in (1..s.len()).rev() {
            s.swap(i, rng.below(i + 1));
        }
        let b = s.split_off(s.len() / 2);
        (s, b)
    }

    #[test]
    fn a_a_pairs_from_stored_samples_give_at_most_one_percent_changes() {
        let rows = stored_samples();
        let mut rng = SplitMix64::new(0xAA);
        let (mut pairs, mut changes) = (0usize, 0usize);
        for (_, samples) in &rows {
            for _ in 0..2 {
                let (a, b) = halves(samples, &mut rng);
                pairs += 1;
                if matches!(judge(&side(a), &side(b), 0.05).2, Verdict::Slower | Verdict::Faster) {
                    changes += 1;
                }
            }
        }
        let rate = changes as f64 / pairs as f64;
        eprintln!("A/A: {changes} of {pairs} pairs judged a change ({:.2}%)", 100.0 * rate);
        assert!(rate <= 0.01, "{changes} of {pairs} A/A pairs judged a change ({:.2}%)", 100.0 * rate);
    }

    #[test]
    fn a_planted_ten_percent_slowdown_is_caught() {
        let rows = stored_samples();
        let mut rng = SplitMix64::new(0x5107);
        let (mut resolvable, mut caught) = (0usize, 0usize);
        for (name, samples) in &rows {
            let (a, b) = halves(samples, &mut rng);
            // Rows whose own A/A pair is resolved (`same`) must show the planted change.
            if judge(&side(a.clone()), &side(b.clone()), 0.05).2 != Verdict::Same {
                continue;
            }
            resolvable += 1;
            let slowed: Vec<f64> = b.iter().map(|t| t * 1.10).collect();
            let v = judge(&side(a), &side(slowed), 0.05).2;
            assert_ne!(v, Verdict::Faster, "{name}: a 10% slowdown judged faster");
            if v == Verdict::Slower {
                caught += 1;
            }
        }
        assert!(resolvable >= 50, "only {resolvable} resolvable rows");
        let rate = caught as f64 / resolvable as f64;
        eprintln!("planted 10%: caught {caught} of {resolvable} resolvable rows ({:.1}%)", 100.0 * rate);
        assert!(rate >= 0.95, "caught {caught} of {resolvable} planted slowdowns ({:.1}%)", 100.0 * rate);
    }

    #[test]
    fn bmf_has_the_bencher_shape() {
        let run = reference_run();
        let dir = run.path.clone();
        let c = compare_runs(&dir, &dir, &CompareOptions { threshold: 0.05, ..Default::default() }).unwrap();
        assert_eq!(c.count(Verdict::Slower) + c.count(Verdict::Faster) + c.count(Verdict::Regression), 0, "a run against itself");
        let bmf = c.to_bmf();
        let map = bmf.as_object().expect("a JSON object of benchmarks");
        assert!(!map.is_empty());
        for (name, measures) in map {
            let latency = measures.get("latency").and_then(|l| l.as_object()).unwrap_or_else(|| panic!("{name}: no latency measure"));
            let value = latency["value"].as_f64().expect("value is a number");
            assert!(value > 0.0 && value.is_finite(), "{name}: {value}");
            if let (Some(lo), Some(hi)) = (latency.get("lower_value"), latency.get("upper_value")) {
                let (lo, hi) = (lo.as_f64().unwrap(), hi.as_f64().unwrap());
                let slack = 1e-9 * value;
                assert!(lo <= value + slack && value <= hi + slack, "{name}: {lo} <= {value} <= {hi}");
            }
        }
    }
}

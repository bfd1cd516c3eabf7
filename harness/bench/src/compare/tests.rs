//! `compare`'s verdicts on synthetic pairs, split halves of a published run, and real A/A pairs.

use super::*;
use fembench_core::stats::SplitMix64;
use std::collections::BTreeMap;

fn side(samples: Vec<f64>) -> Side {
    Side {
        class: NoiseClass::Kernel,
        status: "ok".into(),
        median_s: Some(stats::median(&samples)),
        ci_low_s: None,
        ci_high_s: None,
        samples,
        workers: None,
    }
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
    let failed = failed_side();
    assert_eq!(judge(&ok, &failed, 0.05).2, Verdict::Regression);
    assert_eq!(judge(&failed, &ok, 0.05).2, Verdict::Fixed);
    let skipped = Side { status: "skipped".into(), ..failed.clone() };
    assert_eq!(judge(&ok, &skipped, 0.05).2, Verdict::Untimed);
    assert_eq!(judge(&skipped, &skipped, 0.05).2, Verdict::Same);
}

/// The published H200 run, whose stored samples the A/A tests draw from. A checkout without
/// it fails: these tests must not pass vacuously.
fn reference_run() -> RunDir {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/published/h200");
    RunDir::open(&run).expect("the published H200 run opens")
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
    assert!(map.values().any(|m| m.get("latency").is_some()));
    for (name, measures) in map {
        assert!(measures["verified"]["value"].as_f64().is_some(), "{name}: no verified measure");
        let Some(latency) = measures.get("latency").and_then(|l| l.as_object()) else {
            assert_eq!(measures["verified"]["value"].as_f64(), Some(0.0), "{name}: an ok row without latency");
            continue;
        };
        let value = latency["value"].as_f64().expect("value is a number");
        assert!(value > 0.0 && value.is_finite(), "{name}: {value}");
        if let (Some(lo), Some(hi)) = (latency.get("lower_value"), latency.get("upper_value")) {
            let (lo, hi) = (lo.as_f64().unwrap(), hi.as_f64().unwrap());
            let slack = 1e-9 * value;
            assert!(lo <= value + slack && value <= hi + slack, "{name}: {lo} <= {value} <= {hi}");
        }
    }
}

/// The committed A/A runs: the same binary and experiments (device-bandwidth, cecka-sizes,
/// banas-integration, CUDA) run three times in a row on one H100 machine, then once on another.
fn aa(i: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/data/aa/h100-{i}"))
}

/// The committed H200 A/A runs: the same binary and experiments on CUDA twice in a row on one
/// H200 machine (1, 2), then once on a second H200 machine (3).
fn aa_h200(i: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/data/aa/h200-{i}"))
}

#[test]
fn real_a_a_pairs_show_no_change() {
    let mut per_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let pairs = [(aa(1), aa(2)), (aa(2), aa(3)), (aa(3), aa(4)), (aa_h200(1), aa_h200(2)), (aa_h200(2), aa_h200(3))];
    for (a, b) in pairs {
        let c = compare_runs(&a, &b, &CompareOptions::default()).unwrap();
        assert!(c.entries.len() > 500, "{} rows", c.entries.len());
        for e in &c.entries {
            let n = per_class.entry(e.class.as_str()).or_default();
            n.0 += 1;
            n.1 += matches!(e.verdict, Verdict::Slower | Verdict::Faster) as usize;
        }
        let changed: Vec<String> = c
            .entries
            .iter()
            .filter(|e| matches!(e.verdict, Verdict::Slower | Verdict::Faster))
            .map(|e| format!("{} {:?}", e.name(), e.ratio))
            .collect();
        assert!(changed.is_empty(), "A/A pair {a:?}-{b:?}: {changed:#?}");
        assert!(!c.fails(FailOn::Regression) && !c.fails(FailOn::Any), "{}", c.summary());
    }
    eprintln!("A/A false changes per class (rows, changes): {per_class:?}");
}

/// The kernel rows of 50 µs or more of a comparison, and how many of them are slower.
pub(super) fn long_kernels_caught(c: &Comparison) -> (Vec<&Entry>, usize) {
    let kernels: Vec<&Entry> = c
        .entries
        .iter()
        .filter(|e| e.class == NoiseClass::Kernel && e.base.as_ref().and_then(|b| b.median_s).is_some_and(|m| m >= 50e-6))
        .collect();
    let caught = kernels.iter().filter(|e| e.verdict == Verdict::Slower).count();
    (kernels, caught)
}

/// `base` against a copy of `new` with every time multiplied by `factor` (in a temporary folder),
/// with `history`.
pub(super) fn planted(base: &Path, new: &Path, factor: f64, history: Vec<PathBuf>) -> Comparison {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("planted");
    plant::plant_slowdown(new, &copy, factor).unwrap();
    compare_runs(base, &copy, &CompareOptions { history, ..Default::default() }).unwrap()
}

/// On an H200, without history: a 10% slowdown planted in the next run (on the same machine,
/// and on a second machine) is caught in at least 95% of the kernel rows of 50 µs or more.
#[test]
fn a_planted_ten_percent_slowdown_in_h200_kernels_is_caught_without_history() {
    for (base, new) in [(1, 2), (2, 3)] {
        let c = planted(&aa_h200(base), &aa_h200(new), 1.10, vec![]);
        let (kernels, caught) = long_kernels_caught(&c);
        eprintln!("H200 {base}-{new}, planted 10%: {caught} of {} kernel rows of 50 µs or more caught", kernels.len());
        assert!(kernels.len() >= 150 && caught * 100 >= 95 * kernels.len(), "{caught} of {}", kernels.len());
        assert!(c.entries.iter().all(|e| e.verdict != Verdict::Faster), "a slowdown judged faster");
    }
}

#[test]
fn a_planted_five_percent_slowdown_in_kernels_is_caught_with_history() {
    let c = planted(&aa(3), &aa(4), 1.05, vec![aa(1), aa(2), aa(3)]);
    let (kernels, caught) = long_kernels_caught(&c);
    let rate = caught as f64 / kernels.len() as f64;
    eprintln!("planted 5%: {caught} of {} kernel rows of 50 µs or more caught ({:.1}%)", kernels.len(), 100.0 * rate);
    assert!(kernels.len() >= 100);
    assert!(rate >= 0.95, "caught {caught} of {} ({:.1}%)", kernels.len(), 100.0 * rate);
    assert!(kernels.iter().all(|e| e.verdict != Verdict::Faster), "a slowdown judged faster");
}

fn key(case: &str, metric: &str) -> Key {
    ("e".into(), case.into(), metric.into(), String::new())
}

fn failed_side() -> Side {
    Side {
        class: NoiseClass::Kernel,
        status: "failed".into(),
        median_s: None,
        ci_low_s: None,
        ci_high_s: None,
        samples: vec![],
        workers: None,
    }
}

#[test]
fn a_case_that_failed_or_went_missing_is_a_regression() {
    let meta: RunMeta = serde_json::from_str(&std::fs::read_to_string(aa(1).join("meta.json")).unwrap()).unwrap();
    let ok = side(vec![1.0; 10]);
    let base: BTreeMap<Key, Side> =
        [(key("cuda/f32/a", "m1"), ok.clone()), (key("cuda/f32/a", "m2"), ok.clone()), (key("cuda/f32/b", "m1"), ok.clone())].into();
    // Case a crashed in NEW (one failed row of metric `case`); case b is missing.
    let new: BTreeMap<Key, Side> = [(key("cuda/f32/a", "case"), failed_side())].into();
    let e = experiment_entries(base.clone(), new.clone(), &[], &meta, 0.0);
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e.iter().all(|e| e.verdict == Verdict::Regression), "{e:?}");
    assert!(e.iter().any(|e| e.note.as_deref() == Some("missing in NEW")));
    // Run with a narrower selection of backends: the missing case is not a regression.
    let narrower = RunMeta { backends: vec!["cpu".into()], ..meta };
    let e = experiment_entries(base, new, &[], &narrower, 0.0);
    let b = e.iter().find(|e| e.case_id == "cuda/f32/b").unwrap();
    assert_eq!(b.verdict, Verdict::Removed);
}

#[test]
fn an_empty_or_cut_short_run_fails_the_comparison() {
    let tmp = std::env::temp_dir().join(format!("fembench-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    plant::plant_slowdown(&aa(2), &tmp, 1.0).unwrap();
    // Cut short: not finished.
    let meta_path = tmp.join("meta.json");
    let mut meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["finished"] = serde_json::Value::Null;
    std::fs::write(&meta_path, serde_json::to_string(&meta).unwrap()).unwrap();
    let c = compare_runs(&aa(1), &tmp, &CompareOptions::default()).unwrap();
    assert!(c.fails(FailOn::Regression) && c.problems.iter().any(|p| p.contains("cut short")), "{:?}", c.problems);
    // Empty: no rows at all.
    std::fs::remove_dir_all(tmp.join("rows")).unwrap();
    std::fs::create_dir_all(tmp.join("rows")).unwrap();
    let c = compare_runs(&aa(1), &tmp, &CompareOptions::default()).unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(c.problems.iter().any(|p| p.contains("no rows")), "{:?}", c.problems);
    assert!(c.fails(FailOn::Regression));
    assert!(c.to_bmf().as_object().unwrap().values().all(|m| m["verified"]["value"] == 0.0), "missing rows are 0 in BMF");
}

#[test]
fn the_history_page_draws_each_experiments_headline_rows() {
    let out = std::env::temp_dir().join(format!("fembench-history-{}.html", std::process::id()));
    let charts = crate::history::write_history(&[aa(2), aa(1), aa(3), aa(4)], &out).unwrap();
    let html = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(charts, 3 * crate::history::HEADLINE_ROWS, "{charts} charts");
    assert_eq!(html.matches("<svg").count(), charts);
    for exp in ["device-bandwidth", "cecka-sizes", "banas-integration"] {
        assert!(html.contains(&format!("<h2>{exp}</h2>")), "{exp}");
    }
    // Runs in the order they started, whatever the order given.
    let (one, two) = (html.find("20261126-113909-all").unwrap(), html.find("20261126-114029-all").unwrap());
    assert!(one < two);
    assert!(!html.contains("<script"), "no script");
}

/// The committed CPU A/A runs: the same binary running the quick CPU subsets of device-bandwidth
/// and cecka-sizes thirty times back to back on the 2-core CI machine.
fn aa_cpu(i: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/data/aa-cpu/cpu-{i:02}"))
}

fn verdicts(c: &Comparison) -> (usize, usize) {
    let judged =
        c.entries.iter().filter(|e| matches!(e.verdict, Verdict::Same | Verdict::Noisy | Verdict::Slower | Verdict::Faster)).count();
    (judged, c.count(Verdict::NotJudged))
}

/// CPU rows are judged only against a long history of their runner: every consecutive pair of
/// the last ten runs passes without history and with three runs of history (every CPU row not
/// judged), and with the first twenty runs as history (the rows whose spread there leaves room);
/// a 25% slowdown planted in a run fails it, caught in every judged row; a row whose history
/// spread is too wide is not judged even when it moves 2-3x.
#[test]
fn cpu_rows_are_judged_only_against_a_long_history_of_their_runner() {
    let profile: Vec<PathBuf> = (1..=20).map(aa_cpu).collect();
    for i in 21..30 {
        let (base, new) = (aa_cpu(i), aa_cpu(i + 1));
        for history in [vec![], (i - 3..i).map(aa_cpu).collect()] {
            let c = compare_runs(&base, &new, &CompareOptions { history, ..Default::default() }).unwrap();
            assert_eq!(verdicts(&c), (0, c.entries.len()), "pair {i}: {}", c.summary());
            assert!(!c.fails(FailOn::Any));
        }
        let c = compare_runs(&base, &new, &CompareOptions { history: profile.clone(), ..Default::default() }).unwrap();
        let (judged, unjudged) = verdicts(&c);
        assert!(judged >= 1 && unjudged + judged == c.entries.len(), "pair {i}: {}", c.summary());
        assert!(!c.fails(FailOn::Regression), "A/A pair {i}-{}: {}", i + 1, c.summary());
    }
    let tmp = std::env::temp_dir().join(format!("fembench-plant-cpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    plant::plant_slowdown(&aa_cpu(30), &tmp, 1.25).unwrap();
    let c = compare_runs(&aa_cpu(30), &tmp, &CompareOptions { history: profile, ..Default::default() }).unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    let (judged, _) = verdicts(&c);
    assert!(judged >= 1 && c.count(Verdict::Slower) == judged && c.fails(FailOn::Regression), "{}", c.summary());
    // The 8 MiB gather moved 3x between runs here: never called slower, whatever history.
    let gather = c.entries.iter().find(|e| e.case_id == "cpu/f64/kernel=gather,array_mib=8").unwrap();
    assert_eq!(gather.verdict, Verdict::NotJudged);
}

#[test]
fn a_host_timed_row_needs_ten_runs_of_history_and_a_cpu_row_room_in_its_envelope() {
    use noise::{unjudged, CPU_GATE_LIMIT, CPU_HISTORY_MIN};
    assert!(unjudged(NoiseClass::Cpu, None).unwrap().contains("at least 10"));
    assert!(unjudged(NoiseClass::Cpu, Some((CPU_HISTORY_MIN - 1, 0.05))).is_some());
    assert!(unjudged(NoiseClass::Cpu, Some((CPU_HISTORY_MIN, CPU_GATE_LIMIT + 0.01))).unwrap().contains("beyond"));
    assert_eq!(unjudged(NoiseClass::Cpu, Some((CPU_HISTORY_MIN, CPU_GATE_LIMIT))), None);
    // Host stages and open regions need the same history, but no gate limit: a wide envelope
    // still sees a 2x regression in a host stage.
    assert!(unjudged(NoiseClass::HostStage, None).unwrap().contains("a host stage row"));
    assert_eq!(unjudged(NoiseClass::OpenRegion, Some((CPU_HISTORY_MIN, 0.6))), None);
    for device_timed in [NoiseClass::Kernel, NoiseClass::ShortKernel, NoiseClass::Library, NoiseClass::Transfer] {
        assert_eq!(unjudged(device_timed, None), None, "{device_timed:?} is judged against its floor");
    }
}

/// A 25% slowdown planted in the next real run of the CI machine is called slower in every row
/// the gate judges, for both ways of splitting the thirty runs into pairs and history (runs
/// 21-30 against 1-20, runs 1-10 against 11-30): BASE is judged at its history's level, so one
/// run's fast or slow mode neither hides a slowdown nor makes one.
#[test]
fn a_planted_quarter_is_caught_in_every_judged_cpu_row_of_real_pairs() {
    let tmp = std::env::temp_dir().join(format!("fembench-plant-pairs-{}", std::process::id()));
    for (pairs, history) in [(21..30, 1..=20), (1..10, 11..=30)] {
        let profile: Vec<PathBuf> = history.map(aa_cpu).collect();
        let (mut judged, mut caught) = (0, 0);
        for i in pairs {
            let _ = std::fs::remove_dir_all(&tmp);
            plant::plant_slowdown(&aa_cpu(i + 1), &tmp, 1.25).unwrap();
            let c = compare_runs(&aa_cpu(i), &tmp, &CompareOptions { history: profile.clone(), ..Default::default() }).unwrap();
            judged += verdicts(&c).0;
            caught += c.count(Verdict::Slower);
        }
        assert!(judged >= 9 && caught == judged, "{caught} of {judged} judged rows caught");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A host-timed BASE with ten or more earlier runs is moved to its history's level; a kernel
/// row, or one with less history, is judged as it is.
#[test]
fn a_host_timed_base_is_judged_at_its_historys_level() {
    let mut rng = SplitMix64::new(9);
    let history: Vec<f64> = (0..12).map(|_| 1.0 + 0.04 * (rng.unit() - 0.5)).collect();
    // BASE sat in a slow mode (1.3); NEW is 25% slower than the history's level.
    let base = Side { class: NoiseClass::Cpu, ..side(noisy(&mut rng, 20, 1.3, 0.02)) };
    let new = Side { class: NoiseClass::Cpu, ..side(noisy(&mut rng, 20, 1.25, 0.02)) };
    let centred = recentred(&base, NoiseClass::Cpu, &history);
    assert!((stats::median(&centred.samples) - 1.0).abs() < 0.03, "{:?}", stats::median(&centred.samples));
    assert_eq!(judge(&centred, &new, 0.15).2, Verdict::Slower);
    assert_eq!(judge(&base, &new, 0.15).2, Verdict::Same, "against the slow run alone it hides");
    assert_eq!(recentred(&base, NoiseClass::Kernel, &history).samples, base.samples);
    assert_eq!(recentred(&base, NoiseClass::Cpu, &history[..9]).samples, base.samples);
}

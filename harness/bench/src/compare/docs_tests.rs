//! docs/ci.md's figures, computed from the committed A/A runs (`harness/tests/data/aa`,
//! `aa-cpu`) and the published four-GPU comparison, and looked up in the page (whitespace as
//! printed does not matter). A figure that drifts fails with what the runs give.

use super::*;
use std::collections::BTreeMap;

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(dir)
}

fn ci_md() -> String {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ci.md")).unwrap();
    page.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn check(lines: &[String]) {
    let page = ci_md();
    let gone: Vec<&String> = lines.iter().filter(|l| !page.contains(l.as_str())).collect();
    assert!(gone.is_empty(), "docs/ci.md lacks the runs' {gone:#?}");
}

/// The least and the greatest of `values`.
fn bounds(values: &[f64]) -> (f64, f64) {
    (values.iter().copied().fold(f64::MAX, f64::min), values.iter().copied().fold(f64::MIN, f64::max))
}

/// A relative change as the page prints it: a percentage under 75%, else a factor.
fn change(ratio: f64) -> String {
    if (ratio - 1.0).abs() < 0.75 {
        format!("{:.1}%", 100.0 * (ratio - 1.0).abs())
    } else {
        format!("{:.1}x", ratio.max(1.0 / ratio))
    }
}

/// Per class, the ratio of the largest change of a median over every pair of the runs.
fn largest(runs: &[PathBuf]) -> (BTreeMap<NoiseClass, f64>, usize) {
    let mut out: BTreeMap<NoiseClass, f64> = BTreeMap::new();
    let mut rows = 0;
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let c = compare_runs(&runs[i], &runs[j], &CompareOptions::default()).unwrap();
            rows = c.entries.len();
            for e in &c.entries {
                let Some(r) = e.ratio.filter(|r| r.is_finite()) else { continue };
                let was = out.entry(e.class).or_insert(1.0);
                if (r - 1.0).abs() > (*was - 1.0).abs() {
                    *was = r;
                }
            }
        }
    }
    (out, rows)
}

/// The table of classes: each class's largest change in the H100 and H200 A/A runs, and its
/// floor; the rows per run.
#[test]
fn the_class_table_is_the_committed_a_a_runs() {
    let (h100, n100) = largest(&(1..=4).map(|i| data(&format!("aa/h100-{i}"))).collect::<Vec<_>>());
    let (h200, n200) = largest(&(1..=3).map(|i| data(&format!("aa/h200-{i}"))).collect::<Vec<_>>());
    let floor = |c: NoiseClass| format!("{}%", 100.0 * c.floor());
    let lines = vec![
        format!("{n100} rows each"),
        format!("{n200} rows each; every pair of runs"),
        format!(
            "kernels of 50 µs or more | {} | {} | {} |",
            change(h100[&NoiseClass::Kernel]),
            change(h200[&NoiseClass::Kernel]),
            floor(NoiseClass::Kernel)
        ),
        format!(
            "under 50 µs | {} | {} | {} |",
            change(h100[&NoiseClass::ShortKernel]),
            change(h200[&NoiseClass::ShortKernel]),
            floor(NoiseClass::ShortKernel)
        ),
        format!(
            "closed region | {} | {} (a cuBLAS f64 GEMM, two machines) | {} |",
            change(h100[&NoiseClass::Library]),
            change(h200[&NoiseClass::Library]),
            floor(NoiseClass::Library)
        ),
        format!(
            "device events) | {} | {} | {} |",
            change(h100[&NoiseClass::Transfer]),
            change(h200[&NoiseClass::Transfer]),
            floor(NoiseClass::Transfer)
        ),
        format!(
            "the Python peers) | {} | {} (PyTorch's route) |",
            change(h100[&NoiseClass::OpenRegion]),
            change(h200[&NoiseClass::OpenRegion])
        ),
        format!(
            "sums of stages | {} | {} (Banaś' `prepare`, two machines) |",
            change(h100[&NoiseClass::HostStage]),
            change(h200[&NoiseClass::HostStage])
        ),
    ];
    check(&lines);
}

/// The H200 pairs without history: rows not judged, and a planted 10% slowdown caught in the
/// kernel rows of 50 µs or more on one machine and across two.
#[test]
fn the_h200_gate_figures_are_the_committed_runs() {
    let aa = |i: usize| data(&format!("aa/h200-{i}"));
    let c = compare_runs(&aa(1), &aa(2), &CompareOptions::default()).unwrap();
    let mut lines = vec![format!("{} of {} rows not judged", c.count(Verdict::NotJudged), c.entries.len())];
    for (base, new) in [(1, 2), (2, 3)] {
        let c = super::tests::planted(&aa(base), &aa(new), 1.10, vec![]);
        let (kernels, caught) = super::tests::long_kernels_caught(&c);
        lines.push(if new == 2 {
            format!(
                "caught in {caught} of {} kernel rows of 50 µs or more on one machine ({:.0}%)",
                kernels.len(),
                100.0 * caught as f64 / kernels.len() as f64
            )
        } else {
            format!("and in {caught} of {} across two machines", kernels.len())
        });
    }
    check(&lines);
}

/// The four-H200 reproduction against the one-GPU run of the same binary: the verdicts' counts
/// and the rows that moved, each from a GPU other than the one-GPU run's.
#[test]
fn the_four_gpu_compare_figures_are_the_published_runs() {
    let published = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/published");
    let c = compare_runs(&published.join("h200-x4-one-gpu"), &published.join("h200-x4-reproduce"), &CompareOptions::default()).unwrap();
    let moved: Vec<&Entry> = c.entries.iter().filter(|e| matches!(e.verdict, Verdict::Slower | Verdict::Faster)).collect();
    assert!(moved.iter().all(|e| e.class == NoiseClass::Kernel), "a moved row that is not a kernel of 50 µs or more");
    let slower: Vec<&&Entry> = moved.iter().filter(|e| e.verdict == Verdict::Slower).collect();
    assert_eq!(slower.len(), 1);
    assert_eq!(slower[0].case_id, "cuda/f32/kernel=gather,array_mib=512");
    let faster: Vec<f64> = moved.iter().filter(|e| e.verdict == Verdict::Faster).map(|e| 100.0 * (1.0 - e.ratio.unwrap())).collect();
    assert!(moved
        .iter()
        .filter(|e| e.verdict == Verdict::Faster)
        .all(|e| e.case_id.contains("method=elem-color,level=2") || e.case_id.contains("method=elem-color,level=3")));
    // Which GPU each moved row ran on in the four-GPU run.
    let run = RunDir::open(&published.join("h200-x4-reproduce")).unwrap();
    let mut gpus = std::collections::BTreeSet::new();
    for e in &moved {
        let df = run.read_experiment(&e.experiment).unwrap().unwrap();
        let df = df
            .lazy()
            .filter(col("case_id").eq(lit(e.case_id.clone())))
            .select([col("device_index").cast(DataType::Float64)])
            .collect()
            .unwrap();
        gpus.insert(df.column("device_index").unwrap().f64().unwrap().get(0).unwrap() as i64);
    }
    let gpus: Vec<String> = gpus.iter().map(|g| g.to_string()).collect();
    let (lo, hi) = bounds(&faster);
    check(&[
        format!(
            "{} rows compared, {} same, {} noisy, {} not judged, {} added, and {} slower and {} faster",
            c.entries.len(),
            c.count(Verdict::Same),
            c.count(Verdict::Noisy),
            c.count(Verdict::NotJudged),
            c.count(Verdict::Added),
            c.count(Verdict::Slower),
            c.count(Verdict::Faster)
        ),
        format!("that ran on GPUs {}", gpus.join(" and ")),
        format!("the 512 MiB f32 gather {:.1}% slower", 100.0 * (slower[0].ratio.unwrap() - 1.0)),
        format!("at levels 2-3 {lo:.1}-{hi:.1}% faster"),
        format!("kernel floor ({}%", 100.0 * NoiseClass::Kernel.floor()),
    ]);
}

/// The thirty CPU runs of the CI machine: each CPU row's largest distance from its median over
/// the runs, and the gate's judged rows with runs 1-20 as history.
#[test]
fn the_cpu_runner_figures_are_the_committed_runs() {
    let runs: Vec<PathBuf> = (1..=30).map(|i| data(&format!("aa-cpu/cpu-{i:02}"))).collect();
    let mut medians: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for pair in runs.windows(2) {
        let c = compare_runs(&pair[0], &pair[1], &CompareOptions::default()).unwrap();
        for e in c.entries.iter().filter(|e| e.class == NoiseClass::Cpu) {
            let m = medians.entry(e.name()).or_default();
            if m.is_empty() {
                m.push(e.base.as_ref().and_then(|s| s.median_s).unwrap());
            }
            m.push(e.new.as_ref().and_then(|s| s.median_s).unwrap());
        }
    }
    let spread = |m: &[f64]| {
        let mut s = m.to_vec();
        s.sort_by(f64::total_cmp);
        let mid = (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0;
        m.iter().map(|v| v / mid).fold(1.0, |w: f64, r| if (r - 1.0).abs() > (w - 1.0).abs() { r } else { w })
    };
    let row = |needle: &str| medians.iter().find(|(k, _)| k.contains(needle)).unwrap_or_else(|| panic!("no {needle}")).1.clone();
    let dot = row("cpu/f32/kernel=dot,array_mib=8/");
    let consecutive = dot.windows(2).map(|w| (w[1] / w[0] - 1.0).abs()).fold(0.0, f64::max);
    let wide = medians.values().filter(|m| (spread(m) - 1.0).abs() > 0.38).count();
    let slow_modes: Vec<f64> = medians
        .iter()
        .filter(|(k, _)| k.contains("kernel=gather") || k.contains("kernel=scatter_add"))
        .map(|(_, m)| spread(m).max(1.0 / spread(m)))
        .collect();
    let serial = row("cpu/f64/method=cpu-serial,level=2,");
    let mut sorted = serial.clone();
    sorted.sort_by(f64::total_cmp);
    let profile: Vec<PathBuf> = runs[..20].to_vec();
    let mut judged = std::collections::BTreeSet::new();
    for i in 20..29 {
        let c = compare_runs(&runs[i], &runs[i + 1], &CompareOptions { history: profile.clone(), ..Default::default() }).unwrap();
        let n =
            c.entries.iter().filter(|e| matches!(e.verdict, Verdict::Same | Verdict::Noisy | Verdict::Slower | Verdict::Faster)).count();
        judged.insert(n);
    }
    assert_eq!(judged.len(), 1, "judged rows differ between pairs: {judged:?}");
    let judged = *judged.iter().next().unwrap();
    check(&[
        format!("{} CPU rows each", medians.len()),
        format!("leaves {judged} of the {} CPU rows judged", medians.len()),
        format!("(the stablest) | {:.0}% ({:.0}% between two consecutive runs) |", 100.0 * (spread(&dot) - 1.0).abs(), 100.0 * consecutive),
        format!("| half of the {} rows | more than 38% |", medians.len()),
        format!("| {:.1}x to {:.1}x: a slow mode", bounds(&slow_modes).0, bounds(&slow_modes).1),
        format!("assembly, {:.1} ms | {:.0}% |", sorted[sorted.len() / 2] * 1e3, 100.0 * (spread(&serial) - 1.0).abs()),
        format!("| 0 of 9 | {judged} of {} ({:.1}%) |", medians.len(), 100.0 * judged as f64 / medians.len() as f64),
    ]);
    assert_eq!(wide * 2, medians.len(), "half of the rows moved more than 38%: {wide} of {}", medians.len());
}

/// docs/measurement.md's table of how much a row moves between runs: per class (transfers split
/// into uploads and downloads), the median over rows of 50 µs or more of |ratio - 1|, for each
/// consecutive pair of the committed A/A runs, as the range over the pairs.
#[test]
fn the_measurement_spreads_are_the_committed_a_a_runs() {
    let classes: [(&str, &dyn Fn(&Entry) -> bool); 6] = [
        ("device-event kernels (ours)", &|e| e.class == NoiseClass::Kernel),
        ("(cuBLAS, cuSPARSE)", &|e| e.class == NoiseClass::Library),
        ("downloads (pinned)", &|e| e.class == NoiseClass::Transfer && e.metric.contains("download")),
        ("uploads (pinned, written back)", &|e| e.class == NoiseClass::Transfer && e.metric.contains("upload")),
        ("Python peers)", &|e| e.class == NoiseClass::OpenRegion),
        ("sums of stages", &|e| e.class == NoiseClass::HostStage),
    ];
    let sig2 = |v: f64| {
        let v: f64 = format!("{v:.1e}").parse().unwrap();
        let digits = (1 - v.abs().log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    };
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); classes.len()];
    for (gpu, n) in [("h100", 4), ("h200", 3)] {
        let mut spread: Vec<Vec<f64>> = vec![Vec::new(); classes.len()];
        for i in 1..n {
            let (a, b) = (data(&format!("aa/{gpu}-{i}")), data(&format!("aa/{gpu}-{}", i + 1)));
            let c = compare_runs(&a, &b, &CompareOptions::default()).unwrap();
            for (k, (_, pick)) in classes.iter().enumerate() {
                let mut d: Vec<f64> = c
                    .entries
                    .iter()
                    .filter(|e| pick(e) && e.base.as_ref().and_then(|s| s.median_s).is_some_and(|m| m >= 50e-6))
                    .filter_map(|e| e.ratio.map(|r| (r - 1.0).abs()))
                    .collect();
                d.sort_by(f64::total_cmp);
                let mid = if d.len() % 2 == 1 { d[d.len() / 2] } else { (d[d.len() / 2 - 1] + d[d.len() / 2]) / 2.0 };
                spread[k].push(100.0 * mid);
            }
        }
        for (k, s) in spread.iter().enumerate() {
            let (lo, hi) = bounds(s);
            cells[k].push(format!("{}-{}%", sig2(lo), sig2(hi)));
        }
    }
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/measurement.md")).unwrap();
    let gone: Vec<String> = classes
        .iter()
        .zip(&cells)
        .map(|((name, _), c)| format!("{name} | {} | {} |", c[0], c[1]))
        .filter(|l| !page.contains(l.as_str()))
        .collect();
    assert!(gone.is_empty(), "docs/measurement.md lacks the runs' {gone:#?}");
}

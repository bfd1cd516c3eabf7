//! What the gallery and the docs say of the published runs as a whole: their walls, cases and
//! statuses, the four-GPU run's prose, and no share of peak above 100%.

use fembench::results::RunDir;

use crate::common;
use crate::published::worker_wall;

/// docs/cluster.md's prose on the four-GPU run: the shards' sum and longest wall, the CPU phase's
/// experiments (their walls in the CPU worker's `meta.json`; SciPy's case at 2.4M nodes by its
/// row), and the compare against the one-GPU run.
#[test]
fn the_four_gpu_prose_in_cluster_md_is_the_runs() {
    use fembench::compare::{compare_runs, CompareOptions, Verdict};
    let run = common::published("h200-x4-reproduce");
    let dir = run.join("workers");
    let docs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cluster.md")).unwrap();
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut sums = Vec::new();
    let mut cpu_walls = serde_json::Value::Null;
    for mode in ["cold", "warm"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(mode)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        let walls: Vec<u64> = files.iter().filter(|f| f.to_str().unwrap().contains("-shard-")).map(|f| worker_wall(f)).collect();
        sums.push((walls.iter().sum::<u64>(), *walls.iter().max().unwrap()));
        if mode == "cold" {
            let cpu = files.iter().find(|f| !f.to_str().unwrap().contains("-shard-")).unwrap();
            cpu_walls =
                serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(cpu).unwrap()).unwrap()["experiment_wall_s"].clone();
        }
    }
    let wall = |e: &str| format!("{:.0} s", cpu_walls[e].as_f64().unwrap());
    let scipy = crate::readme_numbers::row(
        "h200-x4-reproduce",
        "cecka-sizes",
        "cpu/f64/method=scipy-tocsr,level=7,order=1,min_colors=0",
        "scipy-tocsr",
        "case_wall_s",
    );
    let c = compare_runs(&common::published("h200-x4-one-gpu"), &run, &CompareOptions::default()).unwrap();
    let faster: Vec<f64> = c.entries.iter().filter(|e| e.verdict == Verdict::Faster).map(|e| 100.0 * (1.0 - e.ratio.unwrap())).collect();
    let slower = c.entries.iter().find(|e| e.verdict == Verdict::Slower).unwrap();
    let lines = [
        format!("add up to {} s cold and {} s warm, and the longest takes {} s and {} s", sums[0].0, sums[1].0, sums[0].1, sums[1].1),
        format!("484K triangles, {}; Banaś' NumPy route and CPU reference at p = 5-7, {};", wall("acoo-capacitor"), wall("banas-integration")),
        format!("2.4M nodes, {scipy:.0} s; Sanfui's serial assembly at 500K nodes, {})", wall("sanfui-formats")),
        format!(
            "{} rows, {} of them only in the four-GPU run; [compare-one-gpu.md](../results/published/h200-x4-reproduce/compare-one-gpu.md)): {} the same, {} slower, {} faster, {} noisy and {} not judged",
            c.entries.len(),
            c.count(Verdict::Added),
            c.count(Verdict::Same),
            c.count(Verdict::Slower),
            c.count(Verdict::Faster),
            c.count(Verdict::Noisy),
            c.count(Verdict::NotJudged)
        ),
        format!("gather {:.1}% slower on GPU 1", 100.0 * (slower.ratio.unwrap() - 1.0)),
        format!("{}% faster on GPUs 1 and 3", crate::docs_prose::range(&faster, |v| format!("{v:.0}"))),
    ];
    let gone: Vec<&String> = lines.iter().filter(|l| !docs.contains(l.as_str())).collect();
    assert!(gone.is_empty(), "docs/cluster.md lacks the runs' {gone:#?}");
}

/// The gallery's account of each published run: its wall from its `meta.json` (start to finish),
/// its cases and the rows' statuses, counted from its rows.
#[test]
fn the_gallery_counts_are_the_runs() {
    let gallery = std::fs::read_to_string(common::published("h200").parent().unwrap().join("README.md")).unwrap();
    let tally = |gpu: &str| {
        let run = RunDir::open(&common::published(gpu)).unwrap();
        let (mut cases, mut statuses) = (std::collections::BTreeSet::new(), std::collections::BTreeMap::<String, usize>::new());
        for file in run.experiment_files().unwrap() {
            let id = file.file_stem().unwrap().to_str().unwrap().to_string();
            let Some(df) = run.read_experiment(&id).unwrap() else { continue };
            let (c, s) = (df.column("case_id").unwrap().str().unwrap().clone(), df.column("status").unwrap().str().unwrap().clone());
            for i in 0..df.height() {
                cases.insert((id.clone(), c.get(i).unwrap().to_string()));
                *statuses.entry(s.get(i).unwrap().to_string()).or_default() += 1;
            }
        }
        (cases.len(), statuses)
    };
    let count = |gpu: &str| {
        let (cases, statuses) = tally(gpu);
        (worker_wall(&common::published(gpu).join("meta.json")), cases, statuses)
    };
    let st = |s: &std::collections::BTreeMap<String, usize>, k: &str| s.get(k).copied().unwrap_or(0);
    let mut lines = Vec::new();
    let (wall, cases, s) = count("h200");
    lines.push(format!(
        "({wall} s from start to finish: {cases} cases, {} rows ok, {} failed, {} infeasible, {} skipped:",
        st(&s, "ok"),
        st(&s, "failed"),
        st(&s, "infeasible"),
        st(&s, "skipped")
    ));
    let (wall, cases, s) = count("h100-x4");
    lines.push(format!("({wall} s from its start to its finish, the gaps between the calls included"));
    assert_eq!(st(&s, "ok"), s.values().sum::<usize>(), "h100-x4: every row ok");
    lines.push(format!("every one of its {cases} cases)"));
    for (gpu, tail) in [
        ("h200-x4", ""),
        ("h200-libraries", " with an empty prepared-problem cache"),
        ("h200-graphs", " with an empty prepared-problem cache"),
    ] {
        let (wall, cases, s) = count(gpu);
        assert_eq!(st(&s, "ok"), s.values().sum::<usize>(), "{gpu}: every row ok");
        lines.push(format!("({wall} s from start to finish{tail}; {cases} cases, every row ok)"));
    }
    let (_, cases, s) = count("h200-x4-reproduce");
    assert_eq!(st(&s, "ok") + st(&s, "infeasible"), s.values().sum::<usize>(), "h200-x4-reproduce: every row ok or infeasible");
    lines.push(format!("{cases} cases, every row ok or infeasible"));
    // The a-COO run stopped in its last case: no finish in its meta.json, that case's start
    // marker in its rows, every finished row ok.
    let (cases, s) = tally("h200-acoo");
    let dir = common::published("h200-acoo");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert!(meta["finished"].is_null(), "h200-acoo: an interrupted run");
    assert_eq!(st(&s, "ok"), s.values().sum::<usize>(), "h200-acoo: every finished row ok");
    let markers: Vec<serde_json::Value> = std::fs::read_dir(dir.join("rows/acoo-capacitor"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("started-"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    assert_eq!(markers.len(), 1, "h200-acoo: one case started and not finished");
    lines.push(format!("{cases} cases finished, every row ok; it stopped in its last case, `{}`", markers[0]["case_id"].as_str().unwrap()));
    let gone: Vec<&String> = lines.iter().filter(|l| !gallery.contains(l.as_str())).collect();
    assert!(gone.is_empty(), "results/published/README.md lacks the runs' {gone:#?}");
}

/// No published share of peak passes 100%: every cell of a "% of peak" column or row of each
/// published report, and of the hardware comparison, is at most 100 (each row's share is of the
/// unit its flops ran on: Banaś' mma-nojac of the tensor cores, not the lanes).
#[test]
fn no_published_share_of_peak_is_above_100() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(common::published("h200").parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path().join("report.md")))
        .filter(|p| p.exists())
        .collect();
    files.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plots/published/hardware/hardware.md"));
    let mut above = Vec::new();
    for file in &files {
        let md = std::fs::read_to_string(file).unwrap();
        // In prose or a cell: "71% of FP32 peak".
        for line in md.lines() {
            for (at, _) in line.match_indices("% of ") {
                let rest = line[at..].split(['|', ',', ';', ')']).next().unwrap();
                let head = &line[..at];
                let start = head.rfind(|c: char| !(c.is_ascii_digit() || c == '.')).map_or(0, |i| i + 1);
                if rest.contains("peak") && head[start..].parse::<f64>().is_ok_and(|v| v > 100.0) {
                    above.push(format!("{}: {line}", file.display()));
                }
            }
        }
        let mut columns: Vec<usize> = Vec::new();
        for line in md.lines() {
            if !line.starts_with('|') {
                columns.clear();
                continue;
            }
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            if columns.is_empty() && cells.iter().any(|c| c.contains("% of peak")) && !cells.iter().any(|c| c.parse::<f64>().is_ok()) {
                columns = (0..cells.len()).filter(|&i| cells[i].contains("% of peak")).collect();
                continue;
            }
            let row_share = cells.iter().take(3).any(|c| c.contains("% of peak"));
            let picked: Vec<&str> = if row_share { cells.clone() } else { columns.iter().filter_map(|&i| cells.get(i).copied()).collect() };
            for c in picked {
                let v = c.trim_end_matches('%').parse::<f64>().or_else(|_| c.split(['%', ' ']).next().unwrap_or("").parse::<f64>());
                if v.is_ok_and(|v| v > 100.0) {
                    above.push(format!("{}: {line}", file.display()));
                    break;
                }
            }
        }
    }
    assert!(above.is_empty(), "shares of peak above 100%:\n{}", above.join("\n"));
}

/// The README's time of a one-H200 `make reproduce`: the sum of the reference run's experiment
/// walls (its `meta.json`).
#[test]
fn the_readmes_one_gpu_reproduce_time_is_the_reference_run() {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::published("h200").join("meta.json")).unwrap()).unwrap();
    let total: f64 = meta["experiment_wall_s"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let want = format!("`make reproduce` spends {total:.0} s in its experiments on one H200 with an empty prepared-problem cache");
    assert!(readme.split_whitespace().collect::<Vec<_>>().join(" ").contains(&want), "the README lacks `{want}`");
}

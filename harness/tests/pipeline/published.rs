//! The published runs: their reports regenerate byte for byte, carry every paper's ledger
//! verbatim and nothing above physics, and hold no column their benchmark does not declare.

use super::{bandwidth_cpu_quick, copy_tree};
use crate::common;
use fembench::benchmark::Checks;
use fembench::experiment::Params;
use fembench::load;
use fembench::results::{rows_to_frame, CaseKey, Row, RunDir};
use fembench::runner::{run, RUNNER_COLUMNS};

/// The published reference run, reported again by today's code, gives its committed `report.md`
/// byte for byte: a change in how rows are grouped, joined, formatted or linked shows here. Every
/// figure the report links is one it drew.
#[test]
fn the_published_runs_report_the_same_markdown() {
    let gpu = "h200";
    let stored = common::published(gpu);
    let tmp = tempfile::tempdir().unwrap();
    let out = fembench::publish::report_run_with(&fembench::REGISTRY, &stored, Some(tmp.path()), None).unwrap();
    assert!(out.not_reported.is_empty(), "{gpu}: {:?}", out.not_reported);
    assert!(out.figure_paths.len() >= 40, "{gpu}: {} figures", out.figure_paths.len());
    let (want, got) =
        (std::fs::read_to_string(stored.join("report.md")).unwrap(), std::fs::read_to_string(tmp.path().join("report.md")).unwrap());
    assert!(want.lines().count() > 400, "{gpu}");
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        assert_eq!(w, g, "{gpu}: report.md line {} differs (run `harness report results/published/{gpu}`)", i + 1);
    }
    assert_eq!(want, got, "{gpu}");
    for link in common::markdown_links(&got) {
        assert!(tmp.path().join(&link).is_file(), "{gpu}: {link} was linked but not drawn");
    }
}

/// The four-GPU reproduction and the one-GPU run beside it: the four-GPU run's `meta.json` names
/// four distinct H200s and the CPU, its report regenerates byte for byte, and its stored compare
/// is what `harness compare` gives today on the two runs' rows.
#[test]
fn the_four_gpu_run_and_its_compare_are_regenerated() {
    let (one, four) = (common::published("h200-x4-one-gpu"), common::published("h200-x4-reproduce"));
    multi_gpu_run_is_regenerated(&one, &four, 4, 1);
}

/// A multi-GPU run's `meta.json` names `gpus` distinct GPUs, its report regenerates byte for byte,
/// and its stored `compare-one-gpu.md` is what `harness compare` gives today against the one-GPU
/// run beside it, with exit `code` (1: a slower row).
fn multi_gpu_run_is_regenerated(one: &std::path::Path, many: &std::path::Path, gpus: usize, code: i32) {
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(many.join("meta.json")).unwrap()).unwrap();
    let uuids: std::collections::BTreeSet<_> =
        meta["devices"].as_array().unwrap().iter().filter(|d| d["backend"] == "cuda").map(|d| d["uuid"].as_str().unwrap()).collect();
    assert_eq!(uuids.len(), gpus, "{uuids:?}");
    let tmp = tempfile::tempdir().unwrap();
    fembench::publish::report_run_with(&fembench::REGISTRY, many, Some(tmp.path()), None).unwrap();
    let got = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
    assert!(got == std::fs::read_to_string(many.join("report.md")).unwrap(), "run `harness report {}`", many.display());
    let cmp = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["compare", one.to_str().unwrap(), many.to_str().unwrap(), "--format", "markdown"])
        .output()
        .unwrap();
    let stored = std::fs::read_to_string(many.join("compare-one-gpu.md")).unwrap();
    assert!(
        String::from_utf8_lossy(&cmp.stdout) == stored,
        "{}: the stored compare-one-gpu.md drifted from `harness compare`",
        many.display()
    );
    assert_eq!(cmp.status.code(), Some(code), "{}: the stored compare's exit code", many.display());
}

/// The two-GPU reproduction and the one-GPU run of the same binary beside it: its `meta.json`
/// names two distinct H200s, its report regenerates byte for byte, its stored compare is what
/// `harness compare` gives today (no slower row), and the walls and counts the gallery, the
/// README and docs/cluster.md print are the workers' own and the compare's.
#[test]
fn the_two_gpu_run_its_compare_and_walls_are_the_runs() {
    let (one, two) = (common::published("h200-x2-one-gpu"), common::published("h200-x2-reproduce"));
    multi_gpu_run_is_regenerated(&one, &two, 2, 0);
    let mut files: Vec<_> = std::fs::read_dir(two.join("workers/cold")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (shards, cpu): (Vec<_>, Vec<_>) = files.iter().partition(|f| f.to_str().unwrap().contains("-shard-"));
    let shards: Vec<u64> = shards.iter().map(|f| worker_wall(f)).collect();
    let whole = worker_wall(&two.join("meta.json"));
    let gallery = std::fs::read_to_string(two.parent().unwrap().join("README.md")).unwrap();
    let line = format!(
        "({whole} s from start to finish: GPU workers of {} and {} s, then the CPU cases alone, {} s;",
        shards[0],
        shards[1],
        worker_wall(cpu[0])
    );
    assert!(gallery.contains(&line), "results/published/README.md lacks `{line}`");
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!("takes {whole} s with an empty prepared-problem cache: GPU workers of {} and {} s", shards[0], shards[1]);
    assert!(readme.contains(&said), "the README lacks `{said}`");
    let docs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cluster.md")).unwrap();
    let row = format!("| cold cache | {}, {} s | {} s | {whole} s |", shards[0], shards[1], worker_wall(cpu[0]));
    assert!(docs.contains(&row), "docs/cluster.md lacks `{row}`");
    use fembench::compare::{compare_runs, CompareOptions, Verdict};
    let c = compare_runs(&one, &two, &CompareOptions::default()).unwrap();
    let faster: Vec<f64> = c.entries.iter().filter(|e| e.verdict == Verdict::Faster).map(|e| 100.0 * (1.0 - e.ratio.unwrap())).collect();
    let said = format!(
        "{} rows are the same, none slower, {} faster and {} not judged (host-timed): the two faster rows are `elem-color` at level 2 (f32 and f64, {}%)",
        c.count(Verdict::Same),
        c.count(Verdict::Faster),
        c.count(Verdict::NotJudged),
        crate::docs_prose::range(&faster, |v| format!("{v:.0}"))
    );
    assert_eq!(c.count(Verdict::Slower), 0);
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(docs.contains(&said), "docs/cluster.md lacks `{said}`");
}

/// Seconds from a worker's start to its end, from its `meta.json` (one day's UTC times).
pub(crate) fn worker_wall(meta: &std::path::Path) -> u64 {
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(meta).unwrap()).unwrap();
    let secs = |k: &str| {
        let t = m[k].as_str().unwrap();
        let hms: Vec<u64> = t[11..19].split(':').map(|x| x.parse().unwrap()).collect();
        (&t[..10], hms[0] * 3600 + hms[1] * 60 + hms[2])
    };
    let ((d0, s0), (d1, s1)) = (secs("started"), secs("finished"));
    assert_eq!(d0, d1, "{}", meta.display());
    s1 - s0
}

/// The four-GPU times that docs/cluster.md's table and the README print are those of the workers'
/// own `meta.json` files and of the command's wall as scripts/gpu-scale.sh wrote it.
#[test]
fn the_four_gpu_times_in_the_docs_are_the_workers_own() {
    let dir = common::published("h200-x4-reproduce").join("workers");
    let command = std::fs::read_to_string(dir.join("command.txt")).unwrap();
    let docs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cluster.md")).unwrap();
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    for mode in ["cold", "warm"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(mode)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        let (shards, cpu): (Vec<_>, Vec<_>) = files.iter().partition(|f| f.to_str().unwrap().contains("-shard-"));
        let shards: Vec<String> = shards.iter().map(|f| worker_wall(f).to_string()).collect();
        let ms: f64 = command.split(&format!("{mode}: exit 0, wall ")).nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let whole = (ms / 1000.0).round();
        let row = format!("| {mode} cache | {} s | {} s | {whole} s |", shards.join(", "), worker_wall(cpu[0]));
        assert!(docs.contains(&row), "docs/cluster.md lacks `{row}`");
        assert!(readme.contains(&format!(" {whole} s ")), "the README lacks the {mode} wall, {whole} s");
    }
}

/// A hardware comparison of a CPU run made now and the committed H200 run: both devices side by
/// side in each shared experiment, each GPU cell as a share of its own run's copy bandwidth, a
/// speed-up column, and the grouped bars and share-against-size figures drawn.
#[test]
fn a_cpu_run_and_a_stored_gpu_run_make_one_hardware_report() {
    let out = tempfile::tempdir().unwrap();
    let exps: Vec<_> =
        ["device-bandwidth.yaml", "cecka-sizes.yaml"].iter().map(|f| load(&common::experiments_dir().join(f)).unwrap()).collect();
    let s = run(&exps, &bandwidth_cpu_quick(out.path())).unwrap();
    assert_eq!(s.rows_failed, 0);
    let gpu = common::published("h200");
    let rep = fembench::hardware::compare_hardware(&[gpu.clone(), s.run_dir.clone()]).unwrap();
    let devices: Vec<&str> = rep.targets.iter().map(|t| t.device.as_str()).collect();
    assert!(devices.contains(&"NVIDIA H200") && rep.targets.iter().any(|t| t.backend == "cpu" && t.run == 1), "{devices:?}");
    let sizes = rep.tables.iter().find(|t| t.name == "hardware-cecka-sizes").expect("a cecka-sizes table");
    let h200 = sizes.header.iter().position(|h| h.starts_with("[1] NVIDIA H200 cuda")).unwrap();
    let ours = sizes
        .header
        .iter()
        .position(|h| h.contains("cpu (") && h.contains(&s.run_dir.file_name().unwrap().to_string_lossy().to_string()))
        .unwrap();
    // A CPU method ran in both runs: both cells hold a time; a GPU method, only the H200's.
    let serial = sizes.rows.iter().find(|r| r[0].contains("method=cpu-serial")).expect("cpu-serial row");
    assert!(serial[ours].contains(" s") || serial[ours].contains("ms") || serial[ours].contains("us"), "{serial:?}");
    let shared = sizes.rows.iter().find(|r| r[0].starts_with("f64/method=shared-atomic")).expect("shared-atomic f64 row");
    assert!(shared[h200].contains("% of copy") && shared[ours] == "-", "{shared:?}");
    // Speed-ups are over device [1], the H200: no case ran on it and on a host, so no column.
    assert_eq!(sizes.header.len(), 2 + rep.targets.len(), "{:?}", sizes.header);
    let bw = rep.tables.iter().find(|t| t.name == "hardware-device-bandwidth").unwrap();
    let copy = bw.rows.iter().find(|r| r[0].starts_with("f64/kernel=copy")).unwrap();
    assert!(copy[h200].contains("100% of copy"), "the copy kernel is its own ceiling: {copy:?}");
    assert!(!rep.bars.is_empty() && !rep.figures.is_empty());
    let (md, _, figures) = fembench::hardware::write_hardware_report(&[gpu, s.run_dir.clone()], &out.path().join("hw")).unwrap();
    assert!(std::fs::read_to_string(md).unwrap().contains("| f64/method=shared-atomic"));
    for f in figures.iter().filter(|f| f.extension().unwrap() == "png") {
        assert_eq!(&std::fs::read(f).unwrap()[1..4], b"PNG");
    }
}

/// The claims ledgers are built from rows, and `--outputs-from` gives a stored run the tables of
/// today's experiment files: the published H200 run, its stored files stripped of their claims
/// tables, gets them back from `experiments/`, with verdicts that follow its rows.
#[test]
fn a_stored_run_gets_the_claims_ledgers_of_todays_experiment_files() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_tree(&common::published("h200"), &run);
    for e in std::fs::read_dir(run.join("experiments")).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, fembench::publish::with_outputs_of(&text, "outputs:\n  tables: []\n")).unwrap();
    }
    fembench::publish::report_run(&fembench::REGISTRY, &run).unwrap();
    let own = std::fs::read_to_string(run.join("report.md")).unwrap();
    // No ledger but Pogo's, which every Pogo report carries whatever its outputs list.
    assert!(!own.contains("Obs. 8") && !own.contains("less or equal to three") && own.contains("approximately halve"));
    let out = fembench::publish::report_run_with(&fembench::REGISTRY, &run, None, Some(&common::experiments_dir())).unwrap();
    assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    // (verdict, the whole line) of a claim's row.
    let row = |claim: &str, on: &str| -> (String, String) {
        let line = md.lines().find(|l| l.contains(claim) && l.contains(on)).unwrap_or_else(|| panic!("no row for {claim} on {on}"));
        // A '|' inside a cell is escaped as '\|': not a cell boundary.
        (line.replace("\\|", "/").split('|').nth(4).unwrap().trim().to_string(), line.to_string())
    };
    // Banaś, H200 f32: SHM slower than REG at every degree; REG_NOJAC fastest at every degree.
    assert_eq!(row("SHM variants are usually slower than REG", "cuda f32").0, "holds");
    assert_eq!(row("REG_NOJAC variant is the fastest", "cuda f32").0, "holds");
    // Cecka: the f32 error grows like nodes^(1/2) (Table VI); the 30x speed-up holds at level 7.
    assert_eq!(row("Errors are similar between the GPU assembly methods", "cuda f32").0, "holds");
    assert_eq!(row("speedups of 30 or more", "cecka-sizes: the four methods and cpu-serial, level 7").0, "holds");
}

/// The papers' text, where this checkout sits beside it (`../shared/papers`, or
/// `FEMBENCH_PAPERS`): the quotes are checked against it.
fn papers_text() -> Option<String> {
    let dir = std::env::var_os("FEMBENCH_PAPERS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/papers"));
    let files = std::fs::read_dir(&dir).ok()?;
    Some(files.filter_map(|f| std::fs::read_to_string(f.ok()?.path()).ok()).collect::<Vec<_>>().join("\n"))
}

/// Text as compared for quotes: emphasis marks and HTML italics dropped, whitespace single.
fn plain(s: &str) -> String {
    s.replace(['*'], "").replace("<i>", "").replace("</i>", "").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every published report carries the ledger of each of the five papers, no row above physics,
/// and (where the papers are at hand) every quoted sentence is the paper's, verbatim.
#[test]
fn the_published_reports_carry_every_papers_ledger_quoted_verbatim_and_nothing_above_physics() {
    let papers = papers_text().map(|t| plain(&t));
    if papers.is_none() {
        eprintln!("the papers' text is not beside this checkout: quotes not checked against it (FEMBENCH_PAPERS)");
    }
    for gpu in ["h200", "h200-x4-reproduce", "h200-x2-reproduce"] {
        let md = std::fs::read_to_string(common::published(gpu).join("report.md")).unwrap();
        for id in ["acoo-capacitor", "banas-integration", "cecka-orders", "pogo-weld", "sanfui-formats"] {
            let section = md.split("\n## ").find(|s| s.starts_with(id)).unwrap_or_else(|| panic!("{gpu}: no {id} section"));
            assert!(section.contains("### The paper's claims on this run"), "{gpu}: {id} has no ledger");
        }
        // Rows above physics: none, but those the run folder lists as measured before their
        // cost model was corrected (each still flagged in its report).
        let known: Vec<String> = std::fs::read_to_string(common::published(gpu).join("known-above-physics.txt"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect();
        let mut flagged = Vec::new();
        for table in md.split("### Rows above physics").skip(1) {
            let rows = table.lines().skip(4).take_while(|l| l.starts_with('|'));
            flagged.extend(rows.map(|l| l.trim_matches('|').split('|').next().unwrap().trim().to_string()));
        }
        flagged.sort();
        let mut want = known.clone();
        want.sort();
        assert_eq!(flagged, want, "{gpu}: rows above physics in the published report (left) against known-above-physics.txt (right)");
        let mut quotes = 0;
        for line in md.lines().filter(|l| l.starts_with('|')) {
            for cell in line.split(" | ").filter(|c| c.trim_start().starts_with('\u{201c}')) {
                let quote = cell.trim().trim_start_matches('\u{201c}').split('\u{201d}').next().unwrap().replace("\\|", "|");
                quotes += 1;
                if let Some(text) = &papers {
                    for part in quote.split(" … ") {
                        assert!(text.contains(&plain(part)), "{gpu}: not the paper's words: {part:?}");
                    }
                }
            }
        }
        assert!(quotes >= 40, "{gpu}: {quotes} quoted claims");
        // Sanfui's Fig. 8 (storage against DOFs per node) is drawn and linked.
        assert!(md.contains("figures/sanfui-formats-storage-dof.svg"), "{gpu}: no Fig. 8");
        // Its Fig. 11 (atomics) has the SharedNZ baseline beside the combinations, as Fig. 10.
        for race in ["atomics", "coloring"] {
            let figures = std::fs::read_dir(common::published(gpu).join("figures")).unwrap();
            let svg = figures.filter_map(|f| f.ok()).find(|f| {
                let n = f.file_name().to_string_lossy().to_string();
                n.starts_with(&format!("sanfui-formats-time-{race}-")) && n.ends_with("f32.svg")
            });
            let svg = std::fs::read_to_string(svg.unwrap_or_else(|| panic!("{gpu}: no {race} figure")).path()).unwrap();
            assert!(svg.contains("shared-nz"), "{gpu}: the {race} figure has no SharedNZ series");
        }
    }
}

/// The published multi-GPU runs (the weld on four H100s of one node, the 3D box on four H200s)
/// report the same markdown again, with no row above physics, and every row on two and four GPUs
/// verifies and equals the one-GPU run of its model to the bit (the weak study's larger models
/// too: their cases make that run themselves).
#[test]
fn the_published_multigpu_runs_report_the_same_and_equal_one_gpu() {
    for (gpu, id, multi) in [("h100-x4", "pogo-multigpu", 18), ("h200-x4", "pogo-multigpu-3d", 4)] {
        let stored = common::published(gpu);
        let tmp = tempfile::tempdir().unwrap();
        fembench::publish::report_run_with(&fembench::REGISTRY, &stored, Some(tmp.path()), None).unwrap();
        let want = std::fs::read_to_string(stored.join("report.md")).unwrap();
        assert_eq!(want, std::fs::read_to_string(tmp.path().join("report.md")).unwrap(), "run `harness report results/published/{gpu}`");
        assert!(!want.contains("### Rows above physics"), "{gpu}: rows above physics");
        let df = RunDir::open(&stored).unwrap().read_experiment(id).unwrap().unwrap();
        let num = |c: &str, i: usize| df.column(c).unwrap().cast(&polars::prelude::DataType::Float64).unwrap().f64().unwrap().get(i);
        let str_at = |c: &str, i: usize| df.column(c).unwrap().str().unwrap().get(i).unwrap_or("").to_string();
        let several: Vec<usize> = (0..df.height()).filter(|&i| num("gpus", i) > Some(1.0) && str_at("status", i) != "skipped").collect();
        assert_eq!(several.len(), multi, "{gpu}");
        for i in several {
            let vs = num("vs_one_gpu", i).unwrap_or(f64::NAN);
            assert!(str_at("status", i) == "ok" && vs == 0.0, "{gpu} row {i}: {vs}");
        }
    }
}

/// Every column of every published run is a row's own, a parameter of its case, the runner's or
/// the GPU's telemetry, or declared by its benchmark (`Benchmark::COLUMNS`): the declared lists
/// are complete, so the check at run time (an undeclared name fails the case) holds for them.
#[test]
fn every_column_of_the_published_runs_is_declared() {
    let params = Params::default();
    let key = CaseKey { run_id: "r", experiment: "e", case_id: "c", backend: "cpu", device: "d", precision: "f64", params: &params };
    let frame = rows_to_frame(&[Row::blank(&key, "m")]).unwrap();
    let own: Vec<String> = frame.get_column_names().iter().map(|c| c.to_string()).collect();
    let mut undeclared = Vec::new();
    let mut checked = 0;
    for gpu in ["h200", "h100-x4", "h200-x4", "h200-x4-reproduce", "h200-x2-reproduce"] {
        let run = RunDir::open(&common::published(gpu)).unwrap();
        for file in run.experiment_files().unwrap() {
            let text = std::fs::read_to_string(&file).unwrap();
            let exp = fembench::REGISTRY.load_text(&file, text, Checks::SchemaOnly).unwrap();
            let Some(rows) = run.read_experiment(exp.id()).unwrap() else { continue };
            let params: Vec<String> =
                [false, true].iter().flat_map(|&q| exp.points(q)).flat_map(|p| p.0.into_iter().map(|(n, _)| n)).collect();
            for name in rows.get_column_names().iter().map(|c| c.as_str()) {
                let known = own.iter().any(|c| c == name)
                    || params.iter().any(|p| p == name)
                    || RUNNER_COLUMNS.contains(&name)
                    || fembench::telemetry::COLUMNS.contains(&name)
                    || exp.columns().contains(&name);
                if !known {
                    undeclared.push(format!("{gpu}/{}: {name}", exp.id()));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "only {checked} columns read");
    assert!(undeclared.is_empty(), "columns no benchmark declares:\n{}", undeclared.join("\n"));
}

/// The optional columns the cross-benchmark reports read (a case's size in the hardware
/// comparison, the TF32 flag of the physics check) are each declared by a benchmark: they are
/// the only optional columns a report reads without its own benchmark's list.
#[test]
fn the_generic_reports_read_only_columns_some_benchmark_declares() {
    let mut declared = std::collections::BTreeSet::new();
    for file in std::fs::read_dir(common::experiments_dir()).unwrap().flatten().map(|e| e.path()) {
        if file.extension().is_some_and(|x| x == "yaml") {
            declared.extend(load(&file).unwrap().columns().iter().copied());
        }
    }
    let generic = fembench::hardware::SIZE_COLUMNS.iter().chain([&fembench::report::physics::TF32_COLUMN]);
    let undeclared: Vec<&&str> = generic.filter(|c| !declared.contains(**c)).collect();
    assert!(declared.len() > 50 && undeclared.is_empty(), "declared by no benchmark: {undeclared:?}");
}

/// The published hardware comparison holds no share of peak above 100%: each compute-bound cell
/// is divided by the peak of the unit its row ran on (the FP64 or TF32 tensor cores for cuBLAS'
/// products), named in the cell; and its speed-up column is device [1]'s over device [k]'s.
#[test]
fn the_hardware_comparison_divides_by_the_units_peak_and_speeds_up_device_one() {
    let rep = fembench::hardware::compare_hardware(&[common::published("h200"), common::published("h200-x2-reproduce")]).unwrap();
    let mut shares = 0;
    for cell in rep.tables.iter().flat_map(|t| t.rows.iter().flatten()) {
        for part in cell.split(", ").filter(|p| p.ends_with(" peak")) {
            let pct: f64 = part.split('%').next().unwrap().parse().unwrap();
            assert!(pct <= 100.0, "{cell}");
            shares += 1;
        }
    }
    assert!(shares > 10, "{shares} shares of peak");
    let banas = rep.tables.iter().find(|t| t.name == "hardware-banas-integration").unwrap();
    let dgemm = banas.rows.iter().find(|r| r[0] == "f64/method=cublas-gemm,degree=7" && r[1] == "gemm").unwrap();
    assert!(dgemm[2].contains("% of FP64") && dgemm[2].contains("tensor peak"), "{dgemm:?}");
    let acoo = rep.tables.iter().find(|t| t.name == "hardware-acoo-capacitor").unwrap();
    let col = acoo.header.iter().position(|h| h == "speed-up [1] over [2]").expect("the speed-up of [1]");
    let row = acoo.rows.iter().find(|r| r[0] == "f32/method=a-fem,level=3" && r[1] == "consolidate").unwrap();
    // The speed-up is device [2]'s time over device [1]'s.
    let us = |c: &str| c.trim_end_matches(" us").parse::<f64>().unwrap();
    assert_eq!(row[col], format!("{:.2}x", us(&row[3]) / us(&row[2])), "{row:?}");
}

/// A run is published only from a clean, committed tree: no published `meta.json` names a
/// commit with uncommitted changes (`-dirty`), and each names one.
#[test]
fn every_published_run_was_built_from_a_committed_tree() {
    let root = common::published("h200").parent().unwrap().to_path_buf();
    let mut runs = 0;
    for dir in std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).filter(|p| p.join("meta.json").exists()) {
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let commit = meta["git_commit"].as_str().unwrap_or_default();
        assert!(commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{}: built from `{commit}`", dir.display());
        runs += 1;
    }
    assert!(runs >= 5, "{runs} published runs");
}

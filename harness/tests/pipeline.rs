//! The result/report pipeline: rows on disk as cases finish, failures as rows, resume, an
//! interrupted run keeping its finished cases, and reports from stored rows.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fembench::benchmark::{CaseError, Experiment, Measured};
use fembench::device::{Backend, DeviceError};
use fembench::load;
use fembench::measure::{CacheMode, Timer, Timing};
use fembench::report_run;
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};
use polars::prelude::DataFrame;

/// Cases that succeed, give a wrong answer, fail on the device, panic, or succeed, by index.
const OUTCOMES: [&str; 5] = ["ok", "wrong", "device-error", "panic", "ok"];

fn scripted() -> common::Scripted {
    common::Scripted {
        id: "scripted",
        cases: OUTCOMES.len(),
        outcome: |index| {
            let timing = Timing { samples: vec![1e-3, 2e-3, 3e-3], timer: Timer::HostWall, mode: CacheMode::Warm };
            match OUTCOMES[index] {
                "ok" => Ok(vec![Measured::verified("m", timing, 0.0, 1e-12).bytes(1e6)]),
                "wrong" => Ok(vec![Measured::verified("m", timing, 0.5, 1e-12).bytes(1e6)]),
                "device-error" => Err(CaseError::Device(DeviceError::OutOfMemory { bytes: 1 << 40, detail: "test".into() })),
                _ => panic!("scripted panic"),
            }
        },
    }
}

fn strs(df: &DataFrame, col: &str) -> Vec<String> {
    df.column(col).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect()
}

fn f64s(df: &DataFrame, col: &str) -> Vec<Option<f64>> {
    df.column(col).unwrap().f64().unwrap().iter().collect()
}

#[test]
fn failures_become_rows_and_the_run_goes_on() {
    let out = tempfile::tempdir().unwrap();
    let exps: Vec<Box<dyn Experiment>> = vec![Box::new(scripted())];
    let s = run(&exps, &RunOptions { out_dir: out.path().into(), ..Default::default() }).unwrap();
    assert_eq!(s.cases_run, 5);
    assert_eq!((s.rows_ok, s.rows_failed), (2, 3));
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("scripted").unwrap().unwrap();
    let status = strs(&df, "status");
    let reason = strs(&df, "reason");
    let median = f64s(&df, "time_median_s");
    assert_eq!(status, ["ok", "failed", "failed", "failed", "ok"]);
    // A wrong answer keeps its error but never its time.
    assert!(reason[1].contains("verification failed"), "{}", reason[1]);
    assert_eq!(median[1], None);
    assert_eq!(f64s(&df, "error")[1], Some(0.5));
    assert!(reason[2].contains("out of device memory"), "{}", reason[2]);
    assert!(reason[3].contains("panic") && reason[3].contains("scripted panic"), "{}", reason[3]);
    assert_eq!(median[0], Some(2e-3));
    assert_eq!(f64s(&df, "bandwidth_gbs")[0], Some(1e6 / 2e-3 / 1e9));
    assert_eq!(strs(&df, "timer")[0], "host-wall");
}

fn bandwidth_cpu_quick(out: &Path) -> RunOptions {
    RunOptions { backends: vec![Backend::Cpu], quick: true, out_dir: out.into(), ..Default::default() }
}

#[test]
fn cpu_run_writes_parquet_and_a_report_with_figures() {
    let out = tempfile::tempdir().unwrap();
    let exp = load(&common::experiments_dir().join("device-bandwidth.yaml")).unwrap();
    let s = run(&[exp], &bandwidth_cpu_quick(out.path())).unwrap();
    assert_eq!((s.rows_ok, s.rows_failed), (32, 0));
    let run_dir = RunDir::open(&s.run_dir).unwrap();
    let meta = run_dir.read_meta().unwrap();
    assert!(meta.finished.is_some());
    assert_eq!(meta.experiments.len(), 1);
    assert_eq!(meta.experiments[0].sha256.len(), 64);
    let df = run_dir.read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), 32);
    assert!(f64s(&df, "bandwidth_gbs").iter().all(|b| b.is_some_and(|b| b > 0.0)));

    let plots = out.path().join("plots");
    let rep = report_run(&s.run_dir, &plots).unwrap();
    let md = std::fs::read_to_string(rep.markdown_path.unwrap()).unwrap();
    assert!(md.contains("Attainable device bandwidth") && md.contains("| cpu "), "{md}");
    assert!(rep.terminal.contains("triad"));
    assert_eq!(rep.figure_paths.len(), 4, "one SVG and one PNG per precision");
    for f in &rep.figure_paths {
        let bytes = std::fs::read(f).unwrap();
        assert!(bytes.len() > 1000, "{} is nearly empty", f.display());
        if f.extension().unwrap() == "png" {
            assert_eq!(&bytes[1..4], b"PNG");
        } else {
            assert!(String::from_utf8_lossy(&bytes).contains("<svg"));
        }
    }
}

fn parts(run_dir: &Path) -> Vec<PathBuf> {
    let dir = run_dir.join("rows/device-bandwidth");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "parquet")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// `stop_after` (a batch job's limit) starts no case once it has run out; the run folder then
/// resumes where it stopped.
#[test]
fn a_run_stopped_by_its_time_limit_resumes_where_it_stopped() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let limited = RunOptions { stop_after: Some(Duration::ZERO), ..bandwidth_cpu_quick(out.path()) };
    let s = run(&[load(&path).unwrap()], &limited).unwrap();
    assert_eq!((s.cases_run, s.cases_left), (0, 32));
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let again = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!((again.cases_run, again.cases_left, again.rows_ok), (32, 0, 32));
}

#[test]
fn resume_runs_only_missing_cases() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let s = run(&[load(&path).unwrap()], &bandwidth_cpu_quick(out.path())).unwrap();
    let before = parts(&s.run_dir);
    assert_eq!(before.len(), 32);
    std::fs::remove_file(&before[3]).unwrap();
    std::fs::remove_file(&before[17]).unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let again = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!(again.cases_run, 2);
    assert_eq!(again.cases_skipped_as_done, 30);
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), 32);
}

#[test]
fn killed_run_keeps_finished_cases_and_resumes() {
    let out = tempfile::tempdir().unwrap();
    // Slow cases, so the kill lands half-way.
    let text = std::fs::read_to_string(common::experiments_dir().join("device-bandwidth.yaml")).unwrap().replace(
        "    min_time_s: 0.0\n    target_rel_ci: 0.0\noutputs:",
        "    min_time_s: 0.15\n    max_time_s: 0.3\n    target_rel_ci: 0.0\noutputs:",
    );
    assert!(text.contains("min_time_s: 0.15"));
    let exp_path = out.path().join("slow.yaml");
    std::fs::write(&exp_path, &text).unwrap();
    let results = out.path().join("results");
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--quick", "--backend", "cpu", "--out"])
        .arg(&results)
        .arg(&exp_path)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let run_dir = loop {
        assert!(start.elapsed() < Duration::from_secs(60), "no rows appeared");
        let found = std::fs::read_dir(&results).ok().and_then(|mut r| r.next()).and_then(|e| e.ok()).map(|e| e.path());
        if let Some(d) = found {
            if parts(&d).len() >= 4 {
                break d;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = parts(&run_dir).len();
    assert!((4..32).contains(&kept), "kill landed after {kept} cases");
    // What was kept reads back whole.
    let df = RunDir::open(&run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), kept);

    let status =
        Command::new(env!("CARGO_BIN_EXE_harness")).args(["run", "--quick", "--resume"]).arg(&run_dir).arg(&exp_path).status().unwrap();
    assert!(status.success());
    let df = RunDir::open(&run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), 32);
    let ids = strs(&df, "case_id");
    let unique: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 32, "a case ran twice");
    // The case the kill interrupted (if it had started) is a failed row saying so, not lost.
    let (status, reason) = (strs(&df, "status"), strs(&df, "reason"));
    let failed: Vec<usize> = (0..32).filter(|&i| status[i] != "ok").collect();
    assert!(failed.len() <= 1, "{failed:?}");
    for i in failed {
        assert!(reason[i].contains("process ended inside this case"), "{}", reason[i]);
    }
}

#[test]
fn resume_refuses_a_changed_experiment() {
    let out = tempfile::tempdir().unwrap();
    let original = common::experiments_dir().join("device-bandwidth.yaml");
    let s = run(&[load(&original).unwrap()], &bandwidth_cpu_quick(out.path())).unwrap();
    let changed = out.path().join("changed.yaml");
    std::fs::write(&changed, std::fs::read_to_string(&original).unwrap().replace("scalar: 0.4", "scalar: 0.5")).unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[load(&changed).unwrap()], &opts).unwrap_err();
    assert!(err.to_string().contains("changed since the run started"), "{err}");
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The committed H200 reference run, reported again by today's code, gives the tables it was
/// published with (figure links aside, which name where the plots went): a change in how rows are
/// grouped, joined or formatted shows here.
#[test]
fn the_committed_reference_run_reports_the_same_tables() {
    let stored = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/20261122-093813-all");
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_tree(&stored, &run);
    let out = report_run(&run, &tmp.path().join("plots")).unwrap();
    assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
    assert!(out.figure_paths.len() >= 40, "{} figures", out.figure_paths.len());
    let text = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p).unwrap().lines().filter(|l| !l.starts_with("![")).map(String::from).collect()
    };
    let (want, got) = (text(&stored.join("report.md")), text(&run.join("report.md")));
    assert!(want.len() > 400);
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w, g, "report.md line {} differs", i + 1);
    }
    assert_eq!(want.len(), got.len());
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
    let gpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/20261123-054214-all");
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

/// The claims ledgers are built from rows: the committed H200 run of bb4a0d6 (measured before the
/// Cecka and Banaś ledgers existed) gets them from today's experiment files' `outputs:`, with
/// verdicts that follow its rows; its own files alone give none.
#[test]
fn a_stored_run_gets_the_claims_ledgers_of_todays_experiment_files() {
    let stored = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/20261123-094735-all");
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_tree(&stored, &run);
    let plots = tmp.path().join("plots");
    fembench::publish::report_run(&fembench::REGISTRY, &run, &plots).unwrap();
    let own = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(!own.contains("Obs. 8"));
    let out = fembench::publish::report_run_with(&fembench::REGISTRY, &run, &plots, Some(&common::experiments_dir())).unwrap();
    assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    // (verdict, the whole line) of a claim's row.
    let row = |claim: &str, on: &str| -> (String, String) {
        let line = md.lines().find(|l| l.contains(claim) && l.contains(on)).unwrap_or_else(|| panic!("no row for {claim} on {on}"));
        (line.split('|').nth(3).unwrap().trim().to_string(), line.to_string())
    };
    // Banaś, H200 f32: SHM slower than REG at every degree; REG_NOJAC fastest at every degree.
    assert_eq!(row("SHM variants are usually slower than REG", "cuda f32").0, "holds");
    assert_eq!(row("REG_NOJAC is the fastest variant", "cuda f32").0, "holds");
    // Cecka: the f32 error grows like nodes^(1/2) (Table VI); the 30x speed-up holds at level 7.
    assert_eq!(row("The f32 error grows", "cuda f32").0, "holds");
    assert_eq!(row("30 or more times faster", "cecka-sizes: the four methods and cpu-serial, level 7").0, "holds");
    // Fig. 3 on the H200: 12 -> 24 colors costs 48%, so the claim holds only in part.
    assert_eq!(row("Doubling the number of colors", "cuda f32").0, "partly");
}

/// The Banaś stage tables say that uploads read memory written back from the CPU caches only
/// where the rows say so (`host_written_back`): two committed H100 runs, one made with
/// `FEMBENCH_UPLOAD_FROM_CACHE=1`.
#[test]
fn the_upload_note_follows_the_rows() {
    for (id, written_back) in [("20261125-082953-all", true), ("20261125-082727-all", false)] {
        let stored = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results").join(id);
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        copy_tree(&stored, &run);
        let out = report_run(&run, &tmp.path().join("plots")).unwrap();
        assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
        let text = std::fs::read_to_string(run.join("report.md")).unwrap();
        assert!(text.contains("upload and download from page-locked (pinned) host memory"), "{id}");
        assert_eq!(text.contains("written back from the CPU caches before the upload"), written_back, "{id}");
    }
}

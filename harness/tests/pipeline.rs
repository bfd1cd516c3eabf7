//! The result/report pipeline: rows on disk as cases finish, failures as rows, resume, an
//! interrupted run keeping its finished cases, and reports from stored rows.

mod common;

#[path = "pipeline/docs_numbers.rs"]
mod docs_numbers;
#[path = "pipeline/docs_peers.rs"]
mod docs_peers;
#[path = "pipeline/docs_prose.rs"]
mod docs_prose;
#[path = "pipeline/prep_cache.rs"]
mod prep_cache;
#[path = "pipeline/published.rs"]
mod published;
#[path = "pipeline/published_docs.rs"]
mod published_docs;
#[path = "pipeline/readme_numbers.rs"]
mod readme_numbers;
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
            let timing = Timing { samples: vec![1e-3, 2e-3, 3e-3], timer: Timer::HostWall, mode: CacheMode::Warm, batch: 1 };
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

    let rep = report_run(&s.run_dir).unwrap();
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

/// The quick bandwidth experiment's run folder with no case run yet (its time limit ran out at
/// once): what the resume tests start from.
fn stopped_at_once(out: &Path) -> fembench::runner::RunSummary {
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    run(&[load(&path).unwrap()], &RunOptions { stop_after: Some(Duration::ZERO), ..bandwidth_cpu_quick(out) }).unwrap()
}

/// A slow quick bandwidth run on the CPU in its own process, once it has written `at_least`
/// cases: the process, its run folder and its experiment file.
fn slow_run_in_progress(out: &Path, at_least: usize) -> (std::process::Child, PathBuf, PathBuf) {
    // Slow cases, so that a signal lands half-way.
    let text = std::fs::read_to_string(common::experiments_dir().join("device-bandwidth.yaml")).unwrap().replace(
        "    min_time_s: 0.25\n    max_time_s: 1.0\n    target_rel_ci: 0.0\noutputs:",
        "    min_time_s: 0.15\n    max_time_s: 0.3\n    target_rel_ci: 0.0\noutputs:",
    );
    assert!(text.contains("min_time_s: 0.15"));
    let exp_path = out.join("slow.yaml");
    std::fs::write(&exp_path, &text).unwrap();
    let results = out.join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--quick", "--backend", "cpu", "--out"])
        .arg(&results)
        .arg(&exp_path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(60), "no rows appeared");
        let found = std::fs::read_dir(&results).ok().and_then(|mut r| r.next()).and_then(|e| e.ok()).map(|e| e.path());
        if let Some(d) = found {
            if parts(&d).len() >= at_least {
                return (child, d, exp_path);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every case of the quick bandwidth experiment has exactly one row.
fn every_case_once(run_dir: &Path) -> DataFrame {
    let df = RunDir::open(run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), 32);
    let ids = strs(&df, "case_id");
    let unique: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 32, "a case ran twice");
    df
}

fn no_started_markers(run_dir: &Path) -> bool {
    std::fs::read_dir(run_dir.join("rows/device-bandwidth"))
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("started-"))
}

#[test]
fn killed_run_keeps_finished_cases_and_resumes() {
    let out = tempfile::tempdir().unwrap();
    let (mut child, run_dir, exp_path) = slow_run_in_progress(out.path(), 4);
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = parts(&run_dir).len();
    assert!((4..32).contains(&kept), "kill landed after {kept} cases");
    // What was kept reads back whole.
    let df = RunDir::open(&run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    assert_eq!(df.height(), kept);

    let code = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--quick", "--resume"])
        .arg(&run_dir)
        .arg(&exp_path)
        .status()
        .unwrap()
        .code();
    let df = every_case_once(&run_dir);
    // The case the kill interrupted (if it had started) is a failed row saying so, not lost, and
    // the resumed run exits 4 for it (0 where the kill fell between cases).
    let (status, reason) = (strs(&df, "status"), strs(&df, "reason"));
    let failed: Vec<usize> = (0..32).filter(|&i| status[i] != "ok").collect();
    assert!(failed.len() <= 1, "{failed:?}");
    assert_eq!(code, Some(if failed.is_empty() { 0 } else { 4 }), "the exit code of the resumed run");
    for i in failed {
        assert!(reason[i].contains("process ended inside this case"), "{}", reason[i]);
    }
}

/// Ctrl-C: the case in hand finishes and is kept, the run stops with 130 and says how to resume,
/// and `--resume` (without naming the files again) runs exactly the rest.
#[test]
fn an_interrupted_run_keeps_its_cases_and_says_how_to_resume() {
    let out = tempfile::tempdir().unwrap();
    let (child, run_dir, _) = slow_run_in_progress(out.path(), 3);
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let done = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(130), "{said}");
    assert!(said.contains("--resume") && said.contains("cases left"), "{said}");
    let kept = parts(&run_dir).len();
    assert!((3..32).contains(&kept), "{kept}");
    assert!(no_started_markers(&run_dir), "the case in hand finished");
    let meta = RunDir::open(&run_dir).unwrap().read_meta().unwrap();
    assert!(meta.finished.is_none(), "a run with cases left is not finished");
    let status = Command::new(env!("CARGO_BIN_EXE_harness")).args(["run", "--quick", "--resume"]).arg(&run_dir).status().unwrap();
    assert!(status.success());
    let df = every_case_once(&run_dir);
    assert!(strs(&df, "status").iter().all(|s| s == "ok"));
}

/// One writer per run folder: a second `--resume` while another process holds the folder is
/// refused, naming the holder, and writes nothing.
#[test]
fn a_second_writer_of_a_run_folder_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let s = stopped_at_once(out.path());
    let held = RunDir::open(&s.run_dir).unwrap().lock().unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[load(&path).unwrap()], &opts).unwrap_err().to_string();
    assert!(err.contains("another harness process") && err.contains(&format!("pid {}", std::process::id())), "{err}");
    assert!(parts(&s.run_dir).is_empty());
    drop(held);
    assert_eq!(run(&[load(&path).unwrap()], &opts).unwrap().rows_ok, 32);
}

/// A full disk: the write fails with the operating system's own error, leaves no partial file,
/// and the case is left as not run (not "crashed"), so a resume after space is freed runs it.
#[test]
fn a_full_disk_is_named_and_loses_nothing() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let s = stopped_at_once(out.path());
    // Every rows file this resume would write lands on /dev/full.
    let rows = s.run_dir.join("rows/device-bandwidth");
    std::fs::create_dir_all(&rows).unwrap();
    for seq in 0..40 {
        std::os::unix::fs::symlink("/dev/full", rows.join(format!("{seq:06}.parquet.tmp"))).unwrap();
    }
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[load(&path).unwrap()], &opts).unwrap_err().to_string();
    assert!(err.contains("No space left on device"), "{err}");
    assert!(parts(&s.run_dir).is_empty() && no_started_markers(&s.run_dir));
    for seq in 0..40 {
        let _ = std::fs::remove_file(rows.join(format!("{seq:06}.parquet.tmp")));
    }
    run(&[load(&path).unwrap()], &opts).unwrap();
    let df = every_case_once(&s.run_dir);
    assert!(strs(&df, "status").iter().all(|s| s == "ok"), "no case was called crashed");
}

/// A rows file that cannot be read refuses the resume, naming the file and the next step.
#[test]
fn a_corrupt_rows_file_names_itself_and_the_way_on() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let s = run(&[load(&path).unwrap()], &bandwidth_cpu_quick(out.path())).unwrap();
    let bad = parts(&s.run_dir)[5].clone();
    std::fs::write(&bad, b"not parquet").unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[load(&path).unwrap()], &opts).unwrap_err().to_string();
    assert!(err.contains(&bad.display().to_string()) && err.contains("Delete the file"), "{err}");
    std::fs::remove_file(&bad).unwrap();
    let again = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!(again.cases_run, 1);
    every_case_once(&s.run_dir);
}

/// A resume takes only the run's own experiments: another file is refused, not added.
#[test]
fn a_resume_refuses_an_experiment_the_run_does_not_have() {
    let out = tempfile::tempdir().unwrap();
    let s = stopped_at_once(out.path());
    let other = load(&common::experiments_dir().join("cecka-sizes.yaml")).unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[other], &opts).unwrap_err().to_string();
    assert!(err.contains("is not part of run"), "{err}");
}

/// An empty run has nothing to report: refused, not a header-only report.
#[test]
fn an_empty_run_is_not_reported() {
    let out = tempfile::tempdir().unwrap();
    let s = stopped_at_once(out.path());
    let err = report_run(&s.run_dir).unwrap_err().to_string();
    assert!(err.contains("no rows"), "{err}");
    assert!(!s.run_dir.join("report.md").exists());
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

/// The Banaś stage tables say that uploads read memory written back from the CPU caches only
/// where the rows say so (`host_written_back`): the published H200 run (written back), and the same
/// run with that column set to 0.
#[test]
fn the_upload_note_follows_the_rows() {
    for written_back in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        copy_tree(&common::published("h200"), &run);
        if !written_back {
            common::set_column(&run.join("rows/banas-integration"), "host_written_back", 0.0);
        }
        let out = report_run(&run).unwrap();
        assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
        let text = std::fs::read_to_string(run.join("report.md")).unwrap();
        assert!(text.contains("upload and download from page-locked (pinned) host memory"));
        assert_eq!(text.contains("written back from the CPU caches before the upload"), written_back);
    }
}

/// Shards cover every case exactly once, and their merge equals an unsharded run case for case;
/// merge refuses a case in two shards and shards of different commits.
#[test]
fn shards_merge_into_the_unsharded_run() {
    let out = tempfile::tempdir().unwrap();
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let whole = run(&[load(&path).unwrap()], &bandwidth_cpu_quick(out.path())).unwrap();
    let mut shards = Vec::new();
    for k in 1..=3 {
        let shard = Some(format!("{k}/3").parse().unwrap());
        let s = run(&[load(&path).unwrap()], &RunOptions { shard, ..bandwidth_cpu_quick(&out.path().join("shards")) }).unwrap();
        assert!(s.rows_ok >= 8, "shard {k}: {} rows", s.rows_ok);
        assert_eq!(RunDir::open(&s.run_dir).unwrap().read_meta().unwrap().shard.as_deref(), Some(format!("{k}/3").as_str()));
        shards.push(s.run_dir);
    }
    let merged = fembench::merge::merge(&fembench::REGISTRY, &shards, &out.path().join("merged")).unwrap();
    assert!(merged.missing.is_empty(), "{:?}", merged.missing);
    let ids = |dir: &Path| -> std::collections::BTreeSet<String> { RunDir::open(dir).unwrap().finished_cases("device-bandwidth").unwrap() };
    assert_eq!(ids(&merged.run_dir), ids(&whole.run_dir));
    assert_eq!(merged.cases, 32);
    // An ordinary run folder: it reports, and a resume finds nothing left.
    report_run(&merged.run_dir).unwrap();
    let again =
        run(&[load(&path).unwrap()], &RunOptions { resume: Some(merged.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) }).unwrap();
    assert_eq!((again.cases_run, again.cases_skipped_as_done), (0, 32));
    // A case in two shards: refused.
    let twice = fembench::merge::merge(&fembench::REGISTRY, &[shards[0].clone(), shards[0].clone()], &out.path().join("twice"));
    assert!(matches!(twice, Err(fembench::merge::MergeError::Doubled(_))), "{twice:?}");
    // Another commit: refused, naming it.
    let meta_path = shards[2].join("meta.json");
    let text = std::fs::read_to_string(&meta_path).unwrap();
    let commit = RunDir::open(&shards[2]).unwrap().read_meta().unwrap().git_commit;
    std::fs::write(&meta_path, text.replace(&commit, "0000000-other")).unwrap();
    let err = fembench::merge::merge(&fembench::REGISTRY, &shards, &out.path().join("mixed")).unwrap_err().to_string();
    assert!(err.contains("commit"), "{err}");
}

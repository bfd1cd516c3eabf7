//! Measurement and bookkeeping defects found in review (issue 9), each with a test that fails on
//! the old behaviour: resume and retry, crash markers, run folders, column names, reports that
//! go on past a broken experiment, stored samples, provenance.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use fembench::benchmark::{CaseError, Experiment, Measured};
use fembench::device::Backend;
use fembench::experiment::{ParamValue, Params};
use fembench::load;
use fembench::measure::{CacheMode, Timer, Timing};
use fembench::report_run;
use fembench::results::{rows_to_frame, CaseKey, Row, RunDir};
use fembench::runner::{case_id, run, RunOptions};
use fembench::Precision;
use polars::prelude::DataFrame;

fn bandwidth_cpu_quick(out: &Path) -> RunOptions {
    RunOptions { backends: vec![Backend::Cpu], quick: true, out_dir: out.into(), ..Default::default() }
}

fn bandwidth() -> Box<dyn Experiment> {
    load(&common::experiments_dir().join("device-bandwidth.yaml")).unwrap()
}

fn strs(df: &DataFrame, col: &str) -> Vec<String> {
    df.column(col).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect()
}

#[test]
fn resume_refuses_a_run_of_another_commit_unless_forced() {
    let out = tempfile::tempdir().unwrap();
    let s = run(&[bandwidth()], &bandwidth_cpu_quick(out.path())).unwrap();
    let dir = RunDir::open(&s.run_dir).unwrap();
    let mut meta = dir.read_meta().unwrap();
    meta.git_commit = "0123456789ab".into();
    dir.write_meta(&meta).unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let err = run(&[bandwidth()], &opts).unwrap_err().to_string();
    assert!(err.contains("commit 0123456789ab") && err.contains("--force"), "{err}");
    let forced = RunOptions { force: true, ..opts };
    assert_eq!(run(&[bandwidth()], &forced).unwrap().cases_run, 0);
}

#[test]
fn resume_honours_backend_restriction() {
    let out = tempfile::tempdir().unwrap();
    let s = run(&[bandwidth()], &bandwidth_cpu_quick(out.path())).unwrap();
    let dir = RunDir::open(&s.run_dir).unwrap();
    let some: BTreeSet<String> = strs(&dir.read_experiment("device-bandwidth").unwrap().unwrap(), "case_id").into_iter().take(2).collect();
    assert_eq!(dir.remove_cases("device-bandwidth", &some).unwrap(), 2);
    // The run was CPU-only; resuming it for OpenCL alone has nothing to run.
    let other = RunOptions { resume: Some(s.run_dir.clone()), backends: vec![Backend::OpenCl], ..bandwidth_cpu_quick(out.path()) };
    assert_eq!(run(&[bandwidth()], &other).unwrap().cases_run, 0);
    let same = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    assert_eq!(run(&[bandwidth()], &same).unwrap().cases_run, 2);
}

/// A benchmark whose first case fails and the rest succeed, with an extra named like a
/// parameter and one named like a fixed column (stored, not fatal).
fn flaky() -> common::Scripted {
    common::Scripted {
        id: "flaky",
        cases: 3,
        outcome: |index| {
            if index == 0 {
                return Err(CaseError::Failed("first attempt fails".into()));
            }
            let t = Timing { samples: vec![1e-3, 2e-3, 4e-3], timer: Timer::HostWall, mode: CacheMode::Warm, batch: 1 };
            Ok(vec![Measured::verified("m", t, 0.0, 1.0).extra("i", 7.0).extra("status", 1.0)])
        },
    }
}

#[test]
fn retry_runs_failed_cases_again_and_extras_never_clash_with_columns() {
    let out = tempfile::tempdir().unwrap();
    let exps: Vec<Box<dyn Experiment>> = vec![Box::new(flaky())];
    let s = run(&exps, &RunOptions { out_dir: out.path().into(), ..Default::default() }).unwrap();
    assert_eq!((s.rows_ok, s.rows_failed), (2, 1));
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("flaky").unwrap().unwrap();
    let names: Vec<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
    assert!(names.contains(&"i".to_string()) && names.contains(&"extra_i".to_string()), "{names:?}");
    assert!(names.contains(&"extra_status".to_string()), "{names:?}");
    // Every repetition is stored, with the bootstrap interval of the median.
    let samples = df.column("samples_s").unwrap().list().unwrap().get_as_series(1).unwrap();
    assert_eq!(samples.f64().unwrap().iter().flatten().collect::<Vec<_>>(), vec![1e-3, 2e-3, 4e-3]);
    let lo = df.column("time_ci_low_s").unwrap().f64().unwrap().get(1).unwrap();
    let hi = df.column("time_ci_high_s").unwrap().f64().unwrap().get(1).unwrap();
    assert!(lo <= 2e-3 && 2e-3 <= hi, "{lo} {hi}");

    let plain = RunOptions { resume: Some(s.run_dir.clone()), out_dir: out.path().into(), ..Default::default() };
    assert_eq!(run(&exps, &plain).unwrap().cases_run, 0, "a plain resume keeps failed rows");
    let retry = RunOptions { retry: vec!["failed".into()], ..plain };
    let again = run(&exps, &retry).unwrap();
    assert_eq!(again.cases_run, 1);
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("flaky").unwrap().unwrap();
    assert_eq!(df.height(), 3, "the failed case's old row is replaced, not kept beside the new one");
}

#[test]
fn a_case_that_killed_the_process_is_recorded_as_failed_on_resume() {
    let out = tempfile::tempdir().unwrap();
    let s = run(&[bandwidth()], &bandwidth_cpu_quick(out.path())).unwrap();
    let dir = RunDir::open(&s.run_dir).unwrap();
    let ids = strs(&dir.read_experiment("device-bandwidth").unwrap().unwrap(), "case_id");
    let victim: BTreeSet<String> = [ids[5].clone()].into();
    // As if the process died inside that case: its marker is there, its rows are not.
    dir.remove_cases("device-bandwidth", &victim).unwrap();
    dir.mark_started("device-bandwidth", &ids[5]).unwrap();
    let opts = RunOptions { resume: Some(s.run_dir.clone()), ..bandwidth_cpu_quick(out.path()) };
    let again = run(&[bandwidth()], &opts).unwrap();
    assert_eq!(again.cases_run, 0, "the case that crashed is not run again");
    let df = dir.read_experiment("device-bandwidth").unwrap().unwrap();
    let (case, status, reason) = (strs(&df, "case_id"), strs(&df, "status"), strs(&df, "reason"));
    let i = case.iter().position(|c| *c == ids[5]).unwrap();
    assert_eq!(status[i], "failed");
    assert!(reason[i].contains("process ended inside this case"), "{}", reason[i]);
    assert!(dir.crashed_cases("device-bandwidth").unwrap().is_empty(), "the marker is cleared");
    // `--retry failed` runs it again.
    let retry = RunOptions { retry: vec!["failed".into()], ..opts };
    assert_eq!(run(&[bandwidth()], &retry).unwrap().cases_run, 1);
}

#[test]
fn runs_started_in_the_same_second_get_their_own_folders() {
    let out = tempfile::tempdir().unwrap();
    let (a, id_a) = RunDir::create_new(out.path(), "20261122-000000-x").unwrap();
    let (b, id_b) = RunDir::create_new(out.path(), "20261122-000000-x").unwrap();
    assert_ne!(a.path, b.path);
    assert_eq!(id_b, format!("{id_a}-2"));
}

#[test]
fn the_case_id_of_the_runner_is_stable() {
    let p = Params::default().push("level", ParamValue::Int(3));
    assert_eq!(case_id(Backend::Cuda, Precision::F32, &p), "cuda/f32/level=3");
}

/// The identity of a test row of run "run", experiment "e" on the CPU in f64.
fn key<'a>(case_id: &'a str, params: &'a Params) -> CaseKey<'a> {
    CaseKey { run_id: "run", experiment: "e", case_id, backend: "cpu", device: "d", precision: "f64", params }
}

#[test]
fn rows_with_clashing_names_make_a_frame() {
    let p = Params::default().push("bytes", ParamValue::Int(1)).push("level", ParamValue::Int(2));
    let mut r = Row::blank(&key("c", &p), "m");
    r.extras = vec![("level".into(), 1.0), ("run_id".into(), 2.0)];
    let df = rows_to_frame(&[r]).unwrap();
    let names: BTreeSet<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
    for want in ["param_bytes", "level", "extra_level", "extra_run_id"] {
        assert!(names.contains(want), "{want} missing from {names:?}");
    }
}

#[test]
fn report_goes_on_past_an_experiment_it_cannot_read() {
    let out = tempfile::tempdir().unwrap();
    let s = run(&[bandwidth()], &bandwidth_cpu_quick(out.path())).unwrap();
    // A second stored experiment that no longer parses (and a mesh-free schema check only).
    std::fs::write(s.run_dir.join("experiments/broken.yaml"), "id: broken\nbenchmark: no-such-benchmark\n").unwrap();
    let rep = report_run(&s.run_dir).unwrap();
    assert_eq!(rep.not_reported.len(), 1, "{:?}", rep.not_reported);
    assert_eq!(rep.not_reported[0].0, "broken");
    let md = std::fs::read_to_string(rep.markdown_path.unwrap()).unwrap();
    assert!(md.contains("Attainable device bandwidth") && md.contains("Not reported"), "{md}");
}

#[test]
fn the_recorded_commit_is_the_checkout_it_was_built_from() {
    let Ok(out) = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
    else {
        eprintln!("skipping: no git");
        return;
    };
    if !out.status.success() {
        eprintln!("skipping: not a git checkout");
        return;
    }
    // The commit part must match; `-dirty` depends on files outside the build (notes, README).
    let now = String::from_utf8_lossy(&out.stdout).trim().trim_end_matches("-dirty").to_string();
    let built = fembench::runner::build_commit().trim_end_matches("-dirty");
    assert_eq!(built, now, "the build recorded a stale commit");
}

/// Series (Pogo's receiver traces) survive Parquet: two cases written apart, one with a series
/// and one without, read back as one frame with the series as a list column (empty where a
/// row has none).
#[test]
fn series_are_stored_as_list_columns_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create(dir.path().join("run")).unwrap();
    let p = Params::default().push("level", ParamValue::Int(1));
    let mut a = Row::blank(&key("cpu/f64/level=1", &p), "m");
    a.series = vec![("trace".into(), vec![1.5, -2.0, 3.25])];
    let b = Row::blank(&key("cpu/f64/level=2", &p), "m");
    run.write_case("e", &[a]).unwrap();
    run.write_case("e", &[b]).unwrap();
    let df = run.read_experiment("e").unwrap().unwrap();
    let col = df.column("trace").unwrap().list().unwrap();
    let mut got: Vec<Vec<f64>> =
        (0..col.len()).map(|i| col.get_as_series(i).map_or(vec![], |s| s.f64().unwrap().into_no_null_iter().collect())).collect();
    got.sort_by_key(|v| v.len());
    assert_eq!(got, vec![vec![], vec![1.5, -2.0, 3.25]]);
}

//! `harness run`'s exit codes, through the binary on PoCL: a planted wrong matrix (a copy of the
//! kernels whose element kernel drops element 0, loaded through FEMBENCH_KERNEL_DIR) fails the
//! run with exit 4, its FAILED line reaches a pipe and its report lists the case; the same file
//! with the shipped kernels exits 0; a case that cannot run by construction (SharedNZ at order 5
//! in 16 KiB of shared memory) is `infeasible`, not failed, and its run exits 0.

use std::path::Path;
use std::process::Command;

use crate::common;

const CECKA_ELEM: &str = "id: elem\ntitle: elem\nbenchmark: cecka-assembly\n\
    sweep: { method: [elem-atomic], level: [0], order: [1] }\nbackends: [opencl]\nprecisions: [f32]\n\
    measure: { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0 }\noutputs: { tables: [timings] }\n";

/// `harness run FILE --backend opencl ARGS --out OUT --report` with `env`: its exit code and
/// stdout.
fn harness_run(file: &Path, args: &[&str], out: &Path, env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.arg("run").arg(file).args(["--backend", "opencl", "--report"]).args(args).arg("--out").arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

/// A folder holding CECKA_ELEM as `elem.yaml`, and that file.
fn elem_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("elem.yaml");
    std::fs::write(&file, CECKA_ELEM).unwrap();
    (dir, file)
}

/// The kernel folder with cecka.kern's element kernel skipping element 0.
fn planted_kernels(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let kern = dir.join("cecka.kern");
    let text = std::fs::read_to_string(&kern).unwrap();
    let (from, to) =
        ("  if (t >= count) return;\n  int e = first + t;", "  if (t >= count || first + t == 0) return;\n  int e = first + t;");
    assert_eq!(text.matches(from).count(), 1, "cecka_elements' guard is where the plant expects it");
    std::fs::write(&kern, text.replace(from, to)).unwrap();
}

#[test]
fn a_wrong_matrix_exits_4_and_an_infeasible_case_exits_0() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let (dir, file) = elem_file();

    let (code, out) = harness_run(&file, &[], &dir.path().join("right"), &[]);
    assert_eq!(code, Some(0), "{out}");

    let kernels = dir.path().join("kernels");
    std::fs::create_dir(&kernels).unwrap();
    planted_kernels(&kernels);
    let (code, out) = harness_run(&file, &[], &dir.path().join("wrong"), &[("FEMBENCH_KERNEL_DIR", &kernels)]);
    assert_eq!(code, Some(4), "a wrong matrix must fail the run: {out}");
    assert!(out.contains("verification failed") && out.contains("rows failed (exit 4)"), "{out}");
    // Its FAILED line reaches a pipe too (a batch job's log), not only a terminal's progress bar.
    assert!(out.lines().any(|l| l.starts_with("FAILED elem ") && l.contains("verification failed")), "{out}");
    let run = std::fs::read_dir(dir.path().join("wrong")).unwrap().next().unwrap().unwrap().path();
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Failed cases of elem (1)"), "the report is written and lists the failure");

    let (code, out) = harness_run(&common::experiments_dir().join("cecka-shared-16k.yaml"), &["--quick"], &dir.path().join("16k"), &[]);
    assert_eq!(code, Some(0), "an infeasible case is not a failure: {out}");
    assert!(out.contains("0 failed") && out.contains("infeasible"), "{out}");
    let run = std::fs::read_dir(dir.path().join("16k")).unwrap().next().unwrap().unwrap().path();
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("that cannot run by construction") && report.contains("order=5"), "{report}");
}

/// `--gpus` with `--stop-after`: every worker gets the limit, the run stops with its cases left
/// (exit 3), and `--resume` of the merged run folder runs them. Here one worker on PoCL (device
/// 0, `--backend opencl`), stopped before its first case.
#[test]
fn a_gpus_run_keeps_stop_after_and_resumes() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let (dir, file) = elem_file();
    let out = dir.path().join("runs");
    let (code, log) = harness_run(&file, &["--gpus", "0", "--stop-after", "0"], &out, &[]);
    assert_eq!(code, Some(3), "cases left by --stop-after: {log}");
    let merged = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().ends_with("-gpus1"))
        .unwrap_or_else(|| panic!("no merged run folder: {log}"));
    let o = Command::new(env!("CARGO_BIN_EXE_harness")).arg("run").arg("--resume").arg(&merged).output().unwrap();
    let log = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{log}{}", String::from_utf8_lossy(&o.stderr));
    assert!(log.contains("1 cases (0 already done), 1 rows ok"), "the resume ran the case the worker left: {log}");

    let (code, log) = harness_run(&file, &["--gpus", "0", "--device", "1"], &out, &[]);
    assert_eq!(code, Some(2), "--device beside --gpus is refused: {log}");
    assert!(log.contains("cannot be used with"), "{log}");
}

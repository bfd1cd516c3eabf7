//! The prepared-problem cache end to end: runs with the cache off, cold and warm give the same
//! verified outputs case for case, say where their inputs came from, and the code fingerprint
//! that keys every entry follows the sources.

use std::path::Path;
use std::process::Command;

use fembench::results::RunDir;
use polars::prelude::*;

/// A quick CPU run of experiments with small prepared problems of every paper, on `cache`.
fn run(out: &Path, cache: &str) -> std::path::PathBuf {
    let exps = ["pogo-weld", "cecka-sizes", "acoo-capacitor", "sanfui-formats", "banas-integration"];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let st = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(&root)
        .arg("run")
        .args(exps.iter().map(|e| format!("experiments/{e}.yaml")))
        .args(["--quick", "--backend", "cpu", "--prep-cache", cache, "--out"])
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success(), "{st}");
    let mut runs: Vec<_> = std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).collect();
    runs.sort();
    runs.pop().unwrap()
}

/// Each row's identity and verified outputs (status, error, tolerance, the checked pass's
/// numbers), sorted, and the sums of `prep_read` and `prep_built`. a-COO's CG solves sum their
/// dot products in parallel, in an order that changes from run to run (two runs without the cache
/// differ in the fourth digit of the error and by one iteration): its errors are compared to two
/// digits and its iteration counts to within two; so are the libraries' routes' errors.
fn outputs(run_dir: &Path) -> (Vec<String>, f64, f64, Vec<f64>) {
    let run = RunDir::open(run_dir).unwrap();
    let (mut rows, mut read, mut built, mut iterations) = (Vec::new(), 0.0, 0.0, Vec::new());
    for e in run.read_meta().unwrap().experiments {
        let df = run.read_experiment(&e.id).unwrap().unwrap();
        let col = |n: &str| df.column(n).ok().map(|c| c.cast(&DataType::String).unwrap().str().unwrap().clone());
        let named: Vec<(&str, StringChunked)> =
            ["case_id", "metric", "status", "error", "tolerance", "trace_error", "iterations", "csr_error", "cfl_margin"]
                .into_iter()
                .filter_map(|n| col(n).map(|c| (n, c)))
                .collect();
        // The libraries' routes on their CPU devices (JAX's and Warp's) sum in a thread order of
        // their own, which can change from run to run: their errors too are compared to two digits.
        let library = col("library");
        let from_library = |i: usize| library.as_ref().is_some_and(|l| l.get(i).is_some_and(|v| !v.is_empty()));
        // So do the host's parallel methods' norms (rayon's reduction order): two digits as well.
        let ids = col("case_id").unwrap();
        let parallel_host = |i: usize| ids.get(i).is_some_and(|c| c.contains("method=cpu-parallel"));
        let digits = |n: &str, v: &str, i: usize| match (e.id.as_str(), n, v.parse::<f64>()) {
            ("acoo-capacitor", "error", Ok(x)) => format!("{x:.1e}"),
            (_, "error", Ok(x)) if from_library(i) || parallel_host(i) => format!("{x:.1e}"),
            // Within two iterations: a count rounded down to an even number would split 181 and
            // 182; the ordered rows are compared by the caller instead.
            ("acoo-capacitor", "iterations", Ok(_)) => "(within 2)".to_string(),
            _ => v.to_string(),
        };
        for i in 0..df.height() {
            rows.push(named.iter().map(|(n, c)| format!("{n}={}", digits(n, c.get(i).unwrap_or("-"), i))).collect::<Vec<_>>().join(" "));
        }
        if e.id == "acoo-capacitor" {
            let ids = df.column("case_id").unwrap().str().unwrap().clone();
            let its = df.column("iterations").unwrap().f64().unwrap().clone();
            let mut by_case: Vec<(String, f64)> =
                ids.iter().zip(its.iter()).filter_map(|(c, i)| Some((c?.to_string(), i.unwrap_or(f64::NAN)))).collect();
            by_case.sort_by(|a, b| a.0.cmp(&b.0));
            iterations.extend(by_case.into_iter().map(|(_, i)| i));
        }
        let sum = |n: &str| df.column(n).unwrap().f64().unwrap().sum().unwrap_or(0.0);
        read += sum("prep_read");
        built += sum("prep_built");
    }
    rows.sort();
    (rows, read, built, iterations)
}

#[test]
fn runs_with_the_cache_off_cold_and_warm_give_the_same_outputs() {
    let (out, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = cache.path().to_str().unwrap();
    let (off, off_read, off_built, off_its) = outputs(&run(&out.path().join("off"), "off"));
    let (cold, cold_read, cold_built, cold_its) = outputs(&run(&out.path().join("cold"), dir));
    let warm_run = run(&out.path().join("warm"), dir);
    // A run on the host alone (the CPU methods and the libraries' CPU devices) reports too.
    let reported = tempfile::tempdir().unwrap();
    let report = fembench::publish::report_run_with(&fembench::REGISTRY, &warm_run, Some(reported.path()), None).unwrap();
    assert!(report.not_reported.is_empty(), "{:?}", report.not_reported);
    let (warm, warm_read, warm_built, warm_its) = outputs(&warm_run);
    for its in [&cold_its, &warm_its] {
        assert_eq!(its.len(), off_its.len());
        assert!(off_its.iter().zip(its).all(|(a, b)| (a - b).abs() <= 2.0), "a-COO's iterations: {off_its:?} against {its:?}");
    }
    assert!(!off_its.is_empty());
    assert!(off.len() > 20 && off.iter().all(|r| r.contains("status=ok")), "{off:#?}");
    // Only the rows that differ are printed, so that a failure names them.
    let differing = |other: &[String]| -> Vec<(String, String)> {
        off.iter().zip(other).filter(|(a, b)| a != b).map(|(a, b)| (a.clone(), b.clone())).collect()
    };
    assert!(off.len() == cold.len() && differing(&cold).is_empty(), "the cold cache changed a verified output: {:#?}", differing(&cold));
    assert!(off.len() == warm.len() && differing(&warm).is_empty(), "the warm cache changed a verified output: {:#?}", differing(&warm));
    assert_eq!((off_read, off_built), (0.0, 0.0), "the cache was off");
    assert!(cold_built >= 5.0 && cold_read == 0.0, "cold: {cold_read} read, {cold_built} built");
    assert!(warm_built == 0.0 && warm_read >= cold_built, "warm: {warm_read} read, {warm_built} built (cold built {cold_built})");
    cache_list_reads_the_entries_and_stops_quietly_on_a_closed_pipe(dir, cold_built);
}

/// `harness cache list` names every entry; a reader that closes its end first (`| head -n 0`)
/// ends the listing without a panic.
fn cache_list_reads_the_entries_and_stops_quietly_on_a_closed_pipe(dir: &str, built: f64) {
    let list = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_harness"));
        c.args(["cache", "list", "--prep-cache", dir]);
        c
    };
    let full = list().output().unwrap();
    let text = String::from_utf8_lossy(&full.stdout);
    assert!(full.status.success() && built >= 1.0 && text.lines().count() >= 2, "{text}");
    let mut child = list().stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let closed = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&closed.stderr);
    assert!(closed.status.success() && !err.contains("panicked"), "{:?}: {err}", closed.status);
}

fn hash_dir(h: &mut sha2::Sha256, root: &Path, dir: &str) {
    use sha2::Digest;
    fn files(d: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut list = Vec::new();
    files(&root.join(dir), &mut list);
    list.sort();
    for p in list {
        h.update(p.strip_prefix(root).unwrap().to_string_lossy().as_bytes());
        h.update(std::fs::read(&p).unwrap());
    }
}

/// Every entry's key holds its paper's code fingerprint: the hash of the paper's folder and of
/// the shared fem and core sources as they are now. An edit to any of them changes it, so a
/// cache filled by other code misses.
#[test]
fn the_code_fingerprints_are_the_sources_hashes() {
    use sha2::Digest;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (paper, code) in [
        ("acoo", fembench::prep_code::ACOO),
        ("banas", fembench::prep_code::BANAS),
        ("cecka", fembench::prep_code::CECKA),
        ("pogo", fembench::prep_code::POGO),
        ("sanfui", fembench::prep_code::SANFUI),
    ] {
        let mut h = sha2::Sha256::new();
        for dir in [format!("papers/{paper}"), "fem/src".into(), "core/src".into()] {
            hash_dir(&mut h, root, &dir);
        }
        assert_eq!(format!("{:x}", h.finalize()), code, "{paper}: the fingerprint is not the hash of its sources");
    }
    let recipe = |code| fembench::prep_cache::Recipe { kind: "pogo-model", code, params: "model=weld" }.key();
    assert_ne!(recipe(fembench::prep_code::POGO), recipe("an edited generator"));
}

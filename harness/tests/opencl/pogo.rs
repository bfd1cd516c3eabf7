//! Pogo's explicit steps on OpenCL against the oracle.

use crate::common;
use fembench::pogo::spec::Method;

/// Pogo's device methods (sliced ELL, f32 and f64, and f64 with K' in f32; the paper's kernel
/// on the aligned and the greedy blocks' memory arrangements, f32 and f64) and Eq. (4) on the
/// host, each after 100 steps from rest equal to the element-by-element f64 oracle within its
/// bound, with the receivers' traces.
#[test]
fn pogo_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-weld");
}

/// The same for the geophysical model: four rocks, absorbing regions (damping in C'), and a
/// checked pass that starts from rest on the Gaussian's rising flank.
#[test]
fn pogo_geophysical_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-geophysical");
}

/// The same for the gear (experiments/pogo-gear.yaml): internal boundaries (a bore, holes, opened
/// cracks), a force on every node of a tooth face, and a full run of a stated number of steps.
#[test]
fn pogo_gear_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-gear");
}

fn pogo_rows_match_the_oracle(file: &str) {
    let experiment = file.rsplit('/').next().unwrap_or(file);
    let Some(df) = common::quick_rows_on_opencl(&format!("{file}.yaml"), experiment) else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, method, reason, precision, metric) = (strs("status"), strs("method"), strs("reason"), strs("precision"), strs("metric"));
    let (error, tolerance, trace) = (nums("error"), nums("tolerance"), nums("trace_error"));
    let (run_steps, stride, receivers) = (nums("timed_steps"), nums("trace_stride"), nums("receivers"));
    let traces = df.column("trace").unwrap().list().unwrap().clone();
    let (mut seen, mut absent) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    let mut full = std::collections::BTreeSet::new();
    for i in 0..df.height() {
        assert!(common::ok_or_library_absent(&status[i], &reason[i]), "{} {} {}: {}", metric[i], method[i], precision[i], reason[i]);
        if status[i] != "ok" {
            absent.insert((method[i].clone(), precision[i].clone()));
            continue;
        }
        let f64_only = precision[i] == "f64" && !method[i].ends_with("kf32");
        if metric[i] == "full-run" {
            // The full run: U at the CPU window's end within the long-run bound (at most 0.1),
            // the receivers' discrepancy over the window small, every stored step present.
            assert!(error[i] <= tolerance[i] && tolerance[i] <= 0.1, "{} {} full-run error {}", method[i], precision[i], error[i]);
            assert!(trace[i] <= if f64_only { 1e-8 } else { 0.1 }, "{} {} full-run trace {}", method[i], precision[i], trace[i]);
            let stored = traces.get_as_series(i).unwrap().len() as f64;
            assert_eq!(stored, (run_steps[i] / stride[i]).ceil() * 2.0 * receivers[i], "{} {}", method[i], precision[i]);
            full.insert((method[i].clone(), precision[i].clone()));
            continue;
        }
        assert!(
            if f64_only { error[i] <= 1e-12 } else { error[i] <= tolerance[i] && error[i] > 0.0 },
            "{} {} error {}",
            method[i],
            precision[i],
            error[i]
        );
        // The device methods record the receivers; the host steps and the libraries' do not.
        if Method::named(&method[i]).is_some_and(|m| !m.on_cpu()) {
            assert!(trace[i] <= if f64_only { 1e-10 } else { 1e-2 }, "{} {} trace {}", method[i], precision[i], trace[i]);
        }
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // Every case the quick file plans on OpenCL and the host, from the file and the registry
    // (the paper's kernel and ours in f32 and f64, the K'-in-f32 ones and the host steps in f64),
    // and a full run of each planned case whose method makes one.
    let planned = common::planned_cases(&format!("{file}.yaml"), &[fembench::device::Backend::OpenCl, fembench::device::Backend::Cpu]);
    assert_eq!(seen, planned.difference(&absent).cloned().collect(), "{seen:?}");
    let runs: std::collections::BTreeSet<_> =
        planned.into_iter().filter(|(m, _)| Method::named(m).is_some_and(|m| m.full_runs())).collect();
    assert_eq!(full, runs, "{full:?}");
}

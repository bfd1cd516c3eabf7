//! Pogo's experiment files: the checks of its full runs, arrival, SELL and multi-GPU fields.

use super::{line_of, refused, shipped, variant_of};
use fembench::load;

#[test]
fn a_full_run_shorter_than_its_window_is_refused_at_its_line() {
    let (_d, path) = variant_of("pogo-weld.yaml", "  full_run:", "  full_run: {coarsen: 1, window: 5000, steps: 100}");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "steps: 100}")), "{e}");
    assert!(e.message.contains("full_run.steps"), "{e}");
}

#[test]
fn a_run_through_every_increment_must_be_a_full_run_of_the_sweep_and_is_refused_at_its_line() {
    // The shipped gear: sell in f64 goes all the way, the others stop after 25,000.
    let gear = load(&shipped().join("pogo-gear.yaml")).unwrap_or_else(|e| panic!("{e}"));
    // Two sizes of one model (the arrival check's and the paper's): a point per method each.
    assert_eq!(gear.points(false).len(), 18);
    for (line, wants) in [
        ("    every_increment: [{method: csr-cusparse, precision: f64}]", "csr-cusparse makes no full run"),
        ("    every_increment: [{method: sell-kf32, precision: f32}]", "sell-kf32 runs in f64 only"),
        ("    every_increment: [{method: sell, precision: f16}]", "f16"),
    ] {
        let (_d, path) = variant_of("pogo-gear.yaml", "    every_increment:", line);
        let e = refused(&path);
        assert_eq!(e.line, Some(line_of(&path, "every_increment:")), "{e}");
        assert!(e.message.contains(wants), "{e}");
    }
    // A precision the experiment does not run.
    let (_d, path) = variant_of("pogo-gear.yaml", "precisions:", "precisions: [f32]");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "every_increment:")), "{e}");
    assert!(e.message.contains("f64 is not in the experiment's precisions"), "{e}");
    // Without `steps`, every run already goes through every increment.
    let (_d, path) = variant_of("pogo-gear.yaml", "    steps:", "    # (no steps)");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "every_increment:")), "{e}");
    assert!(e.message.contains("without full_run.steps"), "{e}");
}

#[test]
fn an_arrival_check_off_the_sweep_or_at_the_full_runs_size_is_refused_at_its_line() {
    for (line, wants) in [
        ("  arrival: {coarsen: 3}", "problem.arrival.coarsen: 3 is not in the sweep's coarsen"),
        ("  arrival: {coarsen: 1}", "is the full run's size"),
        ("  arrival: {coarsen: 4, steps: 0}", "problem.arrival.steps must lie in 1..=1000000"),
    ] {
        let (_d, path) = variant_of("pogo-weld.yaml", "  arrival:", line);
        let e = refused(&path);
        assert_eq!(e.line, Some(line_of(&path, line.trim())), "{e}");
        assert!(e.message.contains(wants), "{e}");
    }
}

#[test]
fn a_sell_sigma_that_is_not_whole_slices_is_refused_at_its_line() {
    let (_d, path) = variant_of("pogo-weld.yaml", "  sell_sigma:", "  sell_sigma: 100");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "sell_sigma: 100")), "{e}");
    assert!(e.message.contains("multiple of 32"), "{e}");
}

#[test]
fn a_mesh_file_for_a_sweep_of_sizes_or_a_missing_one_is_refused_at_its_line() {
    // The weld sweeps three sizes: a file is one mesh.
    let (_d, path) = variant_of("pogo-weld.yaml", "  sell_sigma:", "  msh: weld.msh");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "msh: weld.msh")), "{e}");
    assert!(e.message.contains("coarsen [1]"), "{e}");
    // One size, but no such file: the error names it.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("coarsen: [4, 2, 1]", "coarsen: [1]")
        .replace("  arrival: {coarsen: 4}", "")
        .replace("msh: weld.msh", "msh: /no/such/weld.msh");
    std::fs::write(&path, text).unwrap();
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "msh: /no/such/weld.msh")), "{e}");
    assert!(e.message.contains("/no/such/weld.msh"), "{e}");
}

#[test]
fn the_multigpu_study_refuses_a_gpu_count_of_zero_and_an_unsplit_method_at_their_lines() {
    let (_d, path) = variant_of("large/pogo-multigpu.yaml", "  gpus:", "  gpus: [0, 2]");
    let e = refused(&path);
    assert_eq!((e.line, e.column.is_some()), (Some(line_of(&path, "gpus: [0, 2]")), true), "{e}");
    assert!(e.message.contains("sweep.gpus"), "{e}");
    let (_d, path) = variant_of("large/pogo-multigpu.yaml", "  method:", "  method: [sell, pogo-greedy]");
    let e = refused(&path);
    assert_eq!(e.line, Some(line_of(&path, "method: [sell, pogo-greedy]")), "{e}");
    assert!(e.message.contains("pogo-greedy is not split"), "{e}");
}

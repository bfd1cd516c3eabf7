//! The declared-columns check of a case's rows.

use super::{declared_only, undeclared, Measured};
use crate::results::Status;
use fembench_measure::{CacheMode, Timer, Timing};

fn row(extra: &str) -> Measured {
    let timing = Timing { samples: vec![1.0], timer: Timer::DeviceEvent, mode: CacheMode::Warm, batch: 1 };
    Measured::verified("m", timing, 0.0, 1.0).extra(extra, 1.0)
}

#[test]
fn an_undeclared_extra_or_series_is_named_and_a_declared_one_passes() {
    assert_eq!(undeclared(&[row("nodes")], &["nodes"]), None);
    let why = undeclared(&[row("nodez"), row("nodes").series("trace", vec![1.0])], &["nodes"]).unwrap();
    assert!(why.contains("nodez, trace"), "{why}");
}

#[test]
fn a_deferred_row_with_an_undeclared_extra_fails_with_its_name_and_no_time() {
    let rows = declared_only(vec![row("nodes"), row("renamed")], "bench", &["nodes"]);
    assert_eq!(rows[0].status, Status::Ok);
    assert_eq!(rows[1].status, Status::Failed);
    assert!(rows[1].reason.as_deref().is_some_and(|r| r.contains("renamed") && r.contains("bench COLUMNS")));
    assert!(rows[1].timing.is_none());
}

#[test]
fn the_runners_columns_are_declared_for_every_benchmark() {
    assert_eq!(undeclared(&[row("case_wall_s"), row("gpu_power_w")], &[]), None);
}

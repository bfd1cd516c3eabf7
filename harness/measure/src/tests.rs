use super::*;

fn timing(samples: &[f64]) -> Timing {
    Timing { samples: samples.to_vec(), timer: Timer::HostWall, mode: CacheMode::Warm, batch: 1 }
}

#[test]
fn short_device_regions_are_batched_to_the_minimum_sample() {
    assert_eq!(device_batch(1e-3), 1);
    assert_eq!(device_batch(MIN_DEVICE_SAMPLE_S), 1);
    assert_eq!(device_batch(4.4e-6), 5, "a 4.4 µs copy: five runs, 22 µs a sample");
    assert_eq!(device_batch(0.0), MAX_DEVICE_BATCH);
    assert_eq!(device_batch(f64::NAN), 1, "an unreadable time is not batched");
}

#[test]
fn statistics_of_known_samples() {
    let t = timing(&[4.0, 1.0, 3.0, 2.0]);
    assert_eq!(t.median(), 2.5);
    assert_eq!(t.min(), 1.0);
    assert_eq!(t.max(), 4.0);
    assert_eq!(t.mean(), 2.5);
    assert!((t.stddev() - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
    assert_eq!(timing(&[3.0, 1.0, 2.0]).median(), 2.0);
}

#[test]
fn repetitions_stop_at_count_and_time() {
    let policy = MeasurePolicy { warmup: 1, min_reps: 5, min_time_s: 0.0, max_reps: 100, target_rel_ci: 0.0, ..Default::default() };
    let mut calls = 0;
    let t = measure_host::<()>(&policy, &mut || {
        calls += 1;
        std::thread::sleep(std::time::Duration::from_millis(3));
        Ok(())
    })
    .unwrap();
    assert_eq!(t.samples.len(), 5);
    assert_eq!((calls, t.batch), (6, 1), "one warm-up plus five timed, unbatched: each run lasts more than a sample");

    // A minimum time no repetition reaches is capped by max_reps.
    let policy = MeasurePolicy { warmup: 0, min_reps: 1, min_time_s: 1e9, max_reps: 7, ..Default::default() };
    let t = measure_host::<()>(&policy, &mut || Ok(())).unwrap();
    assert_eq!(t.samples.len(), 7);
}

#[test]
fn short_host_work_is_batched_after_a_warm_up() {
    // Work of ~0 s: warmed up for HOST_WARMUP_S, then batched to the largest batch.
    let policy = MeasurePolicy { warmup: 1, min_reps: 5, min_time_s: 0.0, max_reps: 5, target_rel_ci: 0.0, ..Default::default() };
    let mut calls = 0u64;
    let start = Instant::now();
    let t = measure_host::<()>(&policy, &mut || {
        calls += 1;
        std::hint::black_box(calls);
        Ok(())
    })
    .unwrap();
    assert!(start.elapsed().as_secs_f64() >= HOST_WARMUP_S, "the warm-up lasts HOST_WARMUP_S");
    assert!(t.batch > 1, "batch {}", t.batch);
    assert_eq!(t.samples.len(), 5);
    assert!(calls >= 5 * t.batch as u64, "every sample runs its batch ({calls} calls, batch {})", t.batch);
    // A batch lasts MIN_HOST_SAMPLE_S at the fastest run, and a long run is never batched.
    assert_eq!(batch_for(1e-4), 20);
    assert_eq!(batch_for(MIN_HOST_SAMPLE_S), 1);
    assert_eq!(batch_for(0.0), MAX_BATCH);
    // The policy's time limit counts the batches' whole time, not the per-run means: the
    // samples stop at the first batch that brings the whole time past 10 ms.
    let limited = MeasurePolicy {
        warmup: 0,
        min_reps: 3,
        min_time_s: 0.0,
        max_reps: 100_000,
        target_rel_ci: 1e-9,
        max_time_s: 0.01,
        ..Default::default()
    };
    let t = measure_host::<()>(&limited, &mut || {
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < 1e-4 {
            std::hint::spin_loop();
        }
        Ok(())
    })
    .unwrap();
    let whole: Vec<f64> = t.samples.iter().map(|s| s * t.batch as f64).collect();
    let spent: f64 = whole.iter().sum();
    assert!(t.batch > 1 && spent >= 0.01 && spent - whole[whole.len() - 1] < 0.01, "batch {}, {whole:?}", t.batch);
}

#[test]
fn override_changes_only_named_settings() {
    let base = MeasurePolicy::default();
    let o = MeasureOverride { min_reps: Some(3), ..Default::default() };
    let p = base.with(&o);
    assert_eq!(p.min_reps, 3);
    assert_eq!(p.warmup, base.warmup);
    assert_eq!(p.min_time_s, base.min_time_s);
}

#[test]
fn noisy_samples_repeat_longer_than_steady_ones() {
    let policy = MeasurePolicy {
        warmup: 0,
        min_reps: 10,
        min_time_s: 0.0,
        max_reps: 400,
        target_rel_ci: 0.01,
        max_time_s: 0.0,
        ..Default::default()
    };
    let mut rng = fembench_core::stats::SplitMix64::new(3);
    let steady: Vec<f64> = (0..400).map(|_| 1.0 + 0.001 * rng.unit()).collect();
    let noisy: Vec<f64> = (0..400).map(|_| 1.0 + 2.0 * rng.unit()).collect();
    let reps_with = |p: &MeasurePolicy, xs: &[f64]| {
        let mut last = 0;
        (1..=xs.len()).find(|&n| p.done(&xs[..n], &mut last)).unwrap()
    };
    let reps = |xs: &[f64]| reps_with(&policy, xs);
    assert_eq!(reps(&steady), 10, "steady samples stop at min_reps");
    assert_eq!(reps(&noisy), 400, "samples too noisy for +-1% run to max_reps");
    let policy0 = MeasurePolicy { target_rel_ci: 0.0, ..policy.clone() };
    let mut last = 0;
    assert!(policy0.done(&noisy[..10], &mut last), "no noise target: stop at min_reps");
    // With a time budget (nvbench's timeout), noisy samples stop once it is spent.
    let budget = MeasurePolicy { max_time_s: 100.0, ..policy.clone() };
    let n = reps_with(&budget, &noisy);
    let spent: f64 = noisy[..n].iter().sum();
    assert!(spent >= 100.0 && spent - noisy[n - 1] < 100.0, "stops at the first repetition past the budget ({n} reps, {spent} s)");
}

#[test]
fn policy_relations_are_checked() {
    let p = MeasurePolicy { min_reps: 20, max_reps: 10, ..Default::default() };
    assert_eq!(p.check().unwrap_err().0, "max_reps");
    let p = MeasurePolicy { min_reps: 0, ..Default::default() };
    assert_eq!(p.check().unwrap_err().0, "min_reps");
    assert!(MeasurePolicy::default().check().is_ok());
}

#[test]
fn cold_mode_without_a_flusher_is_an_error_not_a_warm_row() {
    // No device is needed: the check comes before any launch. A stand-in device that panics
    // on use proves it.
    struct NoDevice;
    impl Device for NoDevice {
        fn info(&self) -> &fembench_device::DeviceInfo {
            unimplemented!()
        }
        fn alloc(&self, _: usize) -> DeviceResult<Buffer> {
            unimplemented!()
        }
        fn upload(&self, _: &mut Buffer, _: &[u8]) -> DeviceResult<()> {
            unimplemented!()
        }
        fn download_at(&self, _: &Buffer, _: usize, _: &mut [u8]) -> DeviceResult<()> {
            unimplemented!()
        }
        fn copy(&self, _: &mut Buffer, _: &Buffer, _: usize) -> DeviceResult<()> {
            unimplemented!()
        }
        fn compile(&self, _: &kernels::KernelSource, _: &Defines) -> DeviceResult<fembench_device::Module> {
            unimplemented!()
        }
        fn precompile(&self, _: &[(kernels::KernelSource, Defines)]) -> Vec<DeviceResult<bool>> {
            unimplemented!()
        }
        fn kernel(&self, _: &fembench_device::Module, _: &str) -> DeviceResult<Kernel> {
            unimplemented!()
        }
        fn launch(&self, _: &Kernel, _: Launch, _: &[fembench_device::Arg]) -> DeviceResult<()> {
            unimplemented!()
        }
        fn synchronize(&self) -> DeviceResult<()> {
            Ok(())
        }
        fn time_events(&self, _: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
            unimplemented!()
        }
        fn upload_async(&self, _: &mut Buffer, _: &fembench_device::HostBuffer, _: usize) -> DeviceResult<()> {
            unimplemented!()
        }
        fn download_async(&self, _: &Buffer, _: &mut fembench_device::HostBuffer, _: usize) -> DeviceResult<()> {
            unimplemented!()
        }
    }
    let policy = MeasurePolicy { warmup: 0, ..Default::default() };
    let r = measure_device(&NoDevice, &policy, CacheMode::Cold, Gate::Closed, None, &mut || Ok(()));
    assert!(matches!(r, Err(fembench_device::DeviceError::Unsupported(m)) if m.contains("cold")));
}

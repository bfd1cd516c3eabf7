//! Measurement: warm-up, then repetitions until a minimum count and a minimum total time are
//! reached *and* the 95% bootstrap interval of the median is narrower than a target (nvbench's
//! noise-based stopping), or `max_reps` is reached; device-event timing for kernels, host wall
//! time for host work; an optional cold mode that flushes the last-level cache before every
//! repetition (as nvbench does). Every repetition's time is kept ([`Timing::samples`]); the
//! summary (median, interval) is computed from them, never instead of them.
//!
//! # What a device time covers
//! [`Device::time_events`] gives the same interval on CUDA and OpenCL: from the moment the device
//! may start the first command of the timed body to the end of its last command. The body is
//! enqueued behind a gate the host opens only after it has enqueued everything (CUDA: a stream
//! wait on a flag in pinned host memory, recorded before the start event; OpenCL: a user event
//! in the first command's wait list), so host launch latency and the host's own time between
//! launches are never counted, on either API. Events are created once per device, not per
//! repetition. Gaps *between* the body's commands on the device (launch-to-launch latency once
//! queued) are counted on both. Allocation, freeing and host-side page faults never happen
//! inside a timed body: callers allocate and fill every buffer before they measure. A timed
//! upload reads host memory the host wrote back from its caches first
//! (`HostBuffer::write_back_cpu_caches`): DMA from lines dirty in the writing cores' caches
//! runs at a speed that depends on where those threads ran.
//!
//! Staged timing (a pass of named stages, each by its own clock, repeated as whole passes) is
//! [`stages`].
//!
//! Measuring never verifies or reports: the case lifecycle above it (`fembench-bench`'s
//! `lifecycle`) poisons a method's outputs, runs one checked repetition and verifies it against
//! the reference, then times the repetitions here.

use std::time::Instant;

use serde::{Deserialize, Serialize};

pub mod stages;
pub mod trace;
pub use stages::{run_staged, time_device, Pass, Staged};

use fembench_core::NonEmpty;
use fembench_device::kernels::{self, Defines};
use fembench_device::scan::FlushCache;
use fembench_device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};

/// Whether caches are left warm between repetitions or flushed before each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    Warm,
    Cold,
}

impl CacheMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Warm => "warm",
            CacheMode::Cold => "cold",
        }
    }
}

/// Which clock produced a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Timer {
    /// CUDA events or OpenCL profiling timestamps around the enqueued work, released at once
    /// behind a gate: no host time inside.
    DeviceEvent,
    /// Device events around work the host enqueues while it runs (library calls that wait on
    /// the stream, long runs of launches): host gaps inside count, as for a user.
    DeviceEventOpen,
    /// `Instant` around host work (CPU reference, host stages).
    HostWall,
    /// The sum of a pass's stage times, each by its own timer (Banaś' "total").
    StageSum,
}

impl Timer {
    pub fn as_str(self) -> &'static str {
        match self {
            Timer::DeviceEvent => "device-event",
            Timer::DeviceEventOpen => "device-event-open",
            Timer::HostWall => "host-wall",
            Timer::StageSum => "stage-sum",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeasurePolicy {
    /// Untimed runs first: module load, JIT, first-touch page faults.
    pub warmup: u32,
    pub min_reps: u32,
    /// Keep repeating until the timed repetitions add up to this many seconds...
    pub min_time_s: f64,
    /// ...but never more than this many.
    pub max_reps: u32,
    /// Each mode gives its own result row.
    pub modes: NonEmpty<CacheMode>,
    /// Stop once the 95% interval of the median is within +- this fraction of it (0: never stop
    /// on noise, only on `max_reps` after the minimum count and time).
    pub target_rel_ci: f64,
    /// nvbench's timeout: stop once the timed repetitions add up to this many seconds, even if
    /// the noise target is not met (after `min_reps`). Noisy host timings otherwise run to
    /// `max_reps`. 0: no limit.
    pub max_time_s: f64,
}

impl Default for MeasurePolicy {
    fn default() -> Self {
        MeasurePolicy {
            warmup: 2,
            min_reps: 10,
            min_time_s: 0.1,
            max_reps: 1000,
            modes: NonEmpty(vec![CacheMode::Warm]),
            target_rel_ci: 0.01,
            max_time_s: 10.0,
        }
    }
}

/// `quick.measure`: only the named settings change.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureOverride {
    pub warmup: Option<u32>,
    pub min_reps: Option<u32>,
    pub min_time_s: Option<f64>,
    pub max_reps: Option<u32>,
    pub modes: Option<NonEmpty<CacheMode>>,
    pub target_rel_ci: Option<f64>,
    pub max_time_s: Option<f64>,
}

impl MeasurePolicy {
    /// The most warm-up repetitions a case may ask for.
    pub const MAX_WARMUP: u32 = 10_000;
    /// The most timed repetitions a case may ask for.
    pub const MAX_REPS: u32 = 1_000_000;
    /// The longest `min_time_s` or `max_time_s` a case may ask for, in seconds.
    pub const MAX_SECONDS: f64 = 3600.0;

    pub fn with(&self, o: &MeasureOverride) -> MeasurePolicy {
        MeasurePolicy {
            warmup: o.warmup.unwrap_or(self.warmup),
            min_reps: o.min_reps.unwrap_or(self.min_reps),
            min_time_s: o.min_time_s.unwrap_or(self.min_time_s),
            max_reps: o.max_reps.unwrap_or(self.max_reps),
            modes: o.modes.clone().unwrap_or_else(|| self.modes.clone()),
            target_rel_ci: o.target_rel_ci.unwrap_or(self.target_rel_ci),
            max_time_s: o.max_time_s.unwrap_or(self.max_time_s),
        }
    }

    /// Relations serde cannot check: (field, message) of the first broken one.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        // Every case must end: repetitions and seconds are bounded, whatever else is set.
        if self.warmup > Self::MAX_WARMUP {
            return Err(("warmup", format!("warmup must be at most {} (got {})", Self::MAX_WARMUP, self.warmup)));
        }
        if self.max_reps > Self::MAX_REPS {
            return Err(("max_reps", format!("max_reps must be at most {} (got {})", Self::MAX_REPS, self.max_reps)));
        }
        if self.min_time_s > Self::MAX_SECONDS {
            return Err(("min_time_s", format!("min_time_s must be at most {} s (got {})", Self::MAX_SECONDS, self.min_time_s)));
        }
        if self.max_time_s > Self::MAX_SECONDS {
            return Err(("max_time_s", format!("max_time_s must be at most {} s (got {})", Self::MAX_SECONDS, self.max_time_s)));
        }
        if self.min_reps == 0 {
            return Err(("min_reps", "min_reps must be at least 1".into()));
        }
        if self.max_reps < self.min_reps {
            return Err(("max_reps", format!("max_reps ({}) is below min_reps ({})", self.max_reps, self.min_reps)));
        }
        if !(self.min_time_s >= 0.0 && self.min_time_s.is_finite()) {
            return Err(("min_time_s", format!("min_time_s must be a finite number >= 0 (got {})", self.min_time_s)));
        }
        if !(self.max_time_s >= 0.0 && self.max_time_s.is_finite()) {
            return Err(("max_time_s", format!("max_time_s must be a finite number >= 0 (got {})", self.max_time_s)));
        }
        if self.max_time_s > 0.0 && self.max_time_s < self.min_time_s {
            return Err(("max_time_s", format!("max_time_s ({}) is below min_time_s ({})", self.max_time_s, self.min_time_s)));
        }
        if !(self.target_rel_ci >= 0.0 && self.target_rel_ci < 1.0) {
            return Err(("target_rel_ci", format!("target_rel_ci must be in [0, 1) (got {})", self.target_rel_ci)));
        }
        Ok(())
    }

    /// The stopping rule, given the samples so far and the count at the last noise check.
    pub fn done(&self, samples: &[f64], last_check: &mut usize) -> bool {
        let reps = samples.len() as u32;
        if reps >= self.max_reps.max(1) {
            return true;
        }
        let total: f64 = samples.iter().sum();
        if reps < self.min_reps.max(1) || total < self.min_time_s {
            return false;
        }
        if self.target_rel_ci <= 0.0 || (self.max_time_s > 0.0 && total >= self.max_time_s) {
            return true;
        }
        // The bootstrap costs O(resamples x n): look again only after 10% more samples.
        let n = samples.len();
        if n < *last_check + (*last_check / 10).max(1) && *last_check > 0 {
            return false;
        }
        *last_check = n;
        let ci = fembench_core::stats::bootstrap_median_ci(samples, 0.95, fembench_core::stats::STOP_RESAMPLES, 0x5eed);
        ci.relative_half_width(fembench_core::stats::median(samples)) <= self.target_rel_ci
    }
}

/// The timed samples of one measurement and their summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Every timed sample, in seconds per run of the timed body.
    pub samples: Vec<f64>,
    pub timer: Timer,
    pub mode: CacheMode,
    /// Runs of the body each sample spans (its time is their mean): short host work is batched
    /// up to [`MIN_HOST_SAMPLE_S`] ([`measure_host`]); 1 elsewhere.
    pub batch: u32,
}

impl Timing {
    pub fn median(&self) -> f64 {
        fembench_core::stats::median(&self.samples)
    }
    /// The 95% bootstrap interval of the median.
    pub fn median_ci(&self) -> fembench_core::stats::Interval {
        fembench_core::stats::bootstrap_median_ci(&self.samples, 0.95, fembench_core::stats::REPORT_RESAMPLES, 0x5eed)
    }
    pub fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }
    pub fn max(&self) -> f64 {
        self.samples.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
    pub fn mean(&self) -> f64 {
        self.samples.iter().sum::<f64>() / self.samples.len() as f64
    }
    /// Sample standard deviation.
    pub fn stddev(&self) -> f64 {
        let n = self.samples.len();
        if n < 2 {
            return 0.0;
        }
        let m = self.mean();
        (self.samples.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    }
}

/// Writes a buffer twice the size of the device's last-level cache, so that a following
/// repetition finds none of its data cached.
pub struct CacheFlusher {
    buf: Buffer,
    kernel: Kernel,
    words: usize,
}

impl CacheFlusher {
    pub fn new(dev: &dyn Device) -> DeviceResult<Self> {
        // Some drivers report only a first-level cache here (NVIDIA's OpenCL: 4 MiB on an H200
        // with 60 MB of L2), so never flush less than 128 MiB.
        let cache = dev.info().cache_bytes.max(128 << 20) as usize;
        let words = 2 * cache / 4;
        let module = dev.compile(&kernels::CACHE_FLUSH, &Defines::new())?;
        let kernel = dev.kernel(&module, "fb_flush_cache")?;
        kernel.accepts::<FlushCache>()?;
        let buf = dev.alloc(words * 4)?;
        Ok(Self { buf, kernel, words })
    }

    /// The bytes one flush writes (twice the last-level cache, at least 256 MiB).
    pub fn bytes(&self) -> usize {
        4 * self.words
    }

    pub fn flush(&self, dev: &dyn Device, salt: u32) -> DeviceResult<()> {
        let groups = (dev.info().compute_units.max(1) as usize) * 4;
        dev.launch_with(
            &self.kernel,
            Launch { groups, group_size: 256 },
            &FlushCache { buf: &self.buf, value: salt, n: self.words as i64 },
        )?;
        dev.synchronize()
    }
}

/// The one repetition loop: `sample(i)` times repetition i, until the policy's stopping rule
/// (count, time, noise, budget) is met. Warm-up is the caller's (it differs per clock).
pub fn repeat<E>(policy: &MeasurePolicy, mut sample: impl FnMut(usize) -> Result<f64, E>) -> Result<Vec<f64>, E> {
    let mut samples = Vec::new();
    let mut last_check = 0;
    while !policy.done(&samples, &mut last_check) {
        samples.push(sample(samples.len())?);
    }
    Ok(samples)
}

/// How a timed device region holds its work: `Closed` enqueues the whole body behind a gate and
/// then releases it ([`Device::time_events`]: no host gaps inside the region); `Open` lets the work
/// run as it is enqueued ([`Device::time_events_open`]), for library calls that wait on the
/// stream themselves, so host time between them counts, as it does for a user of the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Closed,
    Open,
}

/// Times `body` (which enqueues device work) with device events under `policy`, in one cache mode.
pub fn measure_device(
    dev: &dyn Device,
    policy: &MeasurePolicy,
    mode: CacheMode,
    gate: Gate,
    flusher: Option<&CacheFlusher>,
    body: &mut dyn FnMut() -> DeviceResult<()>,
) -> DeviceResult<Timing> {
    for _ in 0..policy.warmup {
        body()?;
    }
    dev.synchronize()?;
    let flusher = match (mode, flusher) {
        (CacheMode::Cold, None) => {
            return Err(fembench_device::DeviceError::Unsupported("cold mode asked for, but no cache flusher could be made".into()))
        }
        (CacheMode::Cold, Some(f)) => Some(f),
        (CacheMode::Warm, _) => None,
    };
    let samples = repeat(policy, |i| {
        if let Some(f) = flusher {
            f.flush(dev, i as u32)?;
        }
        match gate {
            Gate::Closed => dev.time_events(body),
            Gate::Open => dev.time_events_open(body),
        }
    })?;
    let timer = match gate {
        Gate::Closed => Timer::DeviceEvent,
        Gate::Open => Timer::DeviceEventOpen,
    };
    Ok(Timing { samples, timer, mode, batch: 1 })
}

/// Host work shorter than this is timed in batches: each sample runs the body as many times as
/// it takes to last at least this long and records their mean (criterion's iteration batching).
/// A single run of 20 µs on a shared 2-core host moved 2-4x between processes (a parallel loop
/// waits for pool threads that slept); batches keep the threads awake and the clock's reading
/// far above its own resolution.
pub const MIN_HOST_SAMPLE_S: f64 = 2e-3;

/// Short host work warms up for at least this long in all (pool threads awake, clocks up, pages
/// touched) before its batch is sized and its samples are timed.
pub const HOST_WARMUP_S: f64 = 0.05;

/// The most runs one batch holds.
const MAX_BATCH: u32 = 1 << 20;

/// Times host work with the wall clock under `policy` (cache mode is always warm on the host).
/// Work shorter than [`MIN_HOST_SAMPLE_S`] runs in batches after a warm-up of at least
/// [`HOST_WARMUP_S`]; the policy's time limits count the batches' whole time.
pub fn measure_host<E>(policy: &MeasurePolicy, body: &mut dyn FnMut() -> Result<(), E>) -> Result<Timing, E> {
    let batch = host_batch(policy, body)?;
    let mut samples = Vec::new();
    let mut spent = Vec::new();
    let mut last_check = 0;
    while !policy.done(&spent, &mut last_check) {
        let start = Instant::now();
        for _ in 0..batch {
            body()?;
        }
        let t = start.elapsed().as_secs_f64();
        spent.push(t);
        samples.push(t / batch as f64);
    }
    Ok(Timing { samples, timer: Timer::HostWall, mode: CacheMode::Warm, batch })
}

/// The policy's warm-up runs, each timed; then, for work faster than [`MIN_HOST_SAMPLE_S`], more
/// runs up to [`HOST_WARMUP_S`] in all, and the batch that lasts [`MIN_HOST_SAMPLE_S`] at the
/// fastest run seen. A policy without warm-up still gets one untimed run to size the batch.
fn host_batch<E>(policy: &MeasurePolicy, body: &mut dyn FnMut() -> Result<(), E>) -> Result<u32, E> {
    let start = Instant::now();
    let mut fastest = f64::INFINITY;
    let mut runs = 0;
    while runs < policy.warmup.max(1) || (fastest < MIN_HOST_SAMPLE_S && start.elapsed().as_secs_f64() < HOST_WARMUP_S) {
        let t = Instant::now();
        body()?;
        fastest = fastest.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    Ok(batch_for(fastest))
}

/// Runs of work that takes `fastest` seconds in one sample of at least [`MIN_HOST_SAMPLE_S`].
fn batch_for(fastest: f64) -> u32 {
    if fastest >= MIN_HOST_SAMPLE_S {
        return 1;
    }
    (MIN_HOST_SAMPLE_S / fastest.max(1e-9)).ceil().clamp(1.0, MAX_BATCH as f64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(samples: &[f64]) -> Timing {
        Timing { samples: samples.to_vec(), timer: Timer::HostWall, mode: CacheMode::Warm, batch: 1 }
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
}

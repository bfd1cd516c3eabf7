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
    // Short warm regions behind the gate: a batch of runs between one event pair.
    let batch = match (mode, gate) {
        (CacheMode::Warm, Gate::Closed) => device_batch(dev.time_events(body)?),
        _ => 1,
    };
    let samples = repeat(policy, |i| {
        if let Some(f) = flusher {
            f.flush(dev, i as u32)?;
        }
        match gate {
            Gate::Closed if batch > 1 => dev
                .time_events(&mut || {
                    for _ in 0..batch {
                        body()?;
                    }
                    Ok(())
                })
                .map(|t| t / batch as f64),
            Gate::Closed => dev.time_events(body),
            Gate::Open => dev.time_events_open(body),
        }
    })?;
    let timer = match gate {
        Gate::Closed => Timer::DeviceEvent,
        Gate::Open => Timer::DeviceEventOpen,
    };
    Ok(Timing { samples, timer, mode, batch })
}

/// Warm device work shorter than this is timed in batches: the body runs back to back as many
/// times as it takes to last this long between one pair of events, and the sample is their
/// mean (nvbench's batch measurement). A region of a few microseconds otherwise carries the
/// fixed cost of opening the gate and recording the events, which grows on a busy host: a
/// 4.4 µs copy read 6.1 µs beside three other workers.
pub const MIN_DEVICE_SAMPLE_S: f64 = 20e-6;

/// The most runs one device batch holds (the gate holds the whole batch's launches queued).
const MAX_DEVICE_BATCH: u32 = 64;

/// Runs of a region that took `once` seconds in one sample of at least [`MIN_DEVICE_SAMPLE_S`].
fn device_batch(once: f64) -> u32 {
    if !(once < MIN_DEVICE_SAMPLE_S) {
        return 1;
    }
    (MIN_DEVICE_SAMPLE_S / once.max(1e-7)).ceil().clamp(1.0, MAX_DEVICE_BATCH as f64) as u32
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
mod tests;

//! Measurement: warm-up, then repetitions until both a minimum count and a minimum total time are
//! reached; device-event timing for kernels, host wall time for whole host stages; an optional
//! cold mode that flushes the last-level cache before every repetition (as nvbench does).
//! Measuring never verifies or reports: callers verify the outputs after the timed repetitions.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::device::{Arg, Buffer, Device, DeviceResult, Kernel, Launch};
use crate::experiment::NonEmpty;
use crate::kernels::{self, Defines};

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
    /// CUDA events or OpenCL profiling timestamps around the enqueued work.
    DeviceEvent,
    /// `Instant` around host work (CPU reference, whole stages including transfers).
    HostWall,
}

impl Timer {
    pub fn as_str(self) -> &'static str {
        match self {
            Timer::DeviceEvent => "device-event",
            Timer::HostWall => "host-wall",
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
}

impl Default for MeasurePolicy {
    fn default() -> Self {
        MeasurePolicy { warmup: 2, min_reps: 10, min_time_s: 0.1, max_reps: 1000, modes: NonEmpty(vec![CacheMode::Warm]) }
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
}

impl MeasurePolicy {
    pub fn with(&self, o: &MeasureOverride) -> MeasurePolicy {
        MeasurePolicy {
            warmup: o.warmup.unwrap_or(self.warmup),
            min_reps: o.min_reps.unwrap_or(self.min_reps),
            min_time_s: o.min_time_s.unwrap_or(self.min_time_s),
            max_reps: o.max_reps.unwrap_or(self.max_reps),
            modes: o.modes.clone().unwrap_or_else(|| self.modes.clone()),
        }
    }

    fn done(&self, reps: usize, total: f64) -> bool {
        let reps = reps as u32;
        reps >= self.max_reps.max(1) || (reps >= self.min_reps.max(1) && total >= self.min_time_s)
    }
}

/// The timed samples of one measurement and their summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    pub samples: Vec<f64>,
    pub timer: Timer,
    pub mode: CacheMode,
}

impl Timing {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        s
    }
    pub fn median(&self) -> f64 {
        let s = self.sorted();
        let n = s.len();
        if n == 0 {
            return f64::NAN;
        }
        if n % 2 == 1 {
            s[n / 2]
        } else {
            0.5 * (s[n / 2 - 1] + s[n / 2])
        }
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
        let buf = dev.alloc(words * 4)?;
        Ok(Self { buf, kernel, words })
    }

    pub fn flush(&self, dev: &dyn Device, salt: u32) -> DeviceResult<()> {
        let groups = (dev.info().compute_units.max(1) as usize) * 4;
        dev.launch(&self.kernel, Launch { groups, group_size: 256 }, &[Arg::Buf(&self.buf), Arg::U32(salt), Arg::I64(self.words as i64)])?;
        dev.synchronize()
    }
}

/// Times `body` (which enqueues device work) with device events under `policy`, in one cache mode.
pub fn measure_device(
    dev: &dyn Device,
    policy: &MeasurePolicy,
    mode: CacheMode,
    flusher: Option<&CacheFlusher>,
    body: &mut dyn FnMut() -> DeviceResult<()>,
) -> DeviceResult<Timing> {
    for _ in 0..policy.warmup {
        body()?;
    }
    dev.synchronize()?;
    let mut samples = Vec::new();
    let mut total = 0.0;
    while !policy.done(samples.len(), total) {
        if mode == CacheMode::Cold {
            if let Some(f) = flusher {
                f.flush(dev, samples.len() as u32)?;
            }
        }
        let t = dev.time_events(body)?;
        total += t;
        samples.push(t);
    }
    Ok(Timing { samples, timer: Timer::DeviceEvent, mode })
}

/// Times host work with the wall clock under `policy` (cache mode is always warm on the host).
pub fn measure_host<E>(policy: &MeasurePolicy, body: &mut dyn FnMut() -> Result<(), E>) -> Result<Timing, E> {
    for _ in 0..policy.warmup {
        body()?;
    }
    let mut samples = Vec::new();
    let mut total = 0.0;
    while !policy.done(samples.len(), total) {
        let start = Instant::now();
        body()?;
        let t = start.elapsed().as_secs_f64();
        total += t;
        samples.push(t);
    }
    Ok(Timing { samples, timer: Timer::HostWall, mode: CacheMode::Warm })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(samples: &[f64]) -> Timing {
        Timing { samples: samples.to_vec(), timer: Timer::HostWall, mode: CacheMode::Warm }
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
        let policy = MeasurePolicy { warmup: 1, min_reps: 5, min_time_s: 0.0, max_reps: 100, ..Default::default() };
        let mut calls = 0;
        let t = measure_host::<()>(&policy, &mut || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(t.samples.len(), 5);
        assert_eq!(calls, 6, "one warm-up plus five timed");

        // A minimum time no repetition reaches is capped by max_reps.
        let policy = MeasurePolicy { warmup: 0, min_reps: 1, min_time_s: 1e9, max_reps: 7, ..Default::default() };
        let t = measure_host::<()>(&policy, &mut || Ok(())).unwrap();
        assert_eq!(t.samples.len(), 7);
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
}

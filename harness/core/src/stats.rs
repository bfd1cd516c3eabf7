//! Statistics of repeated timings: medians, a bootstrap confidence interval of the median, and
//! the relative half-width the noise-based stopping rule looks at.
//!
//! The bootstrap resamples the stored repetitions with replacement and takes the 2.5% and 97.5%
//! quantiles of the resampled medians (percentile bootstrap). Its random numbers come from a
//! fixed-seed SplitMix64 generator, so the same samples always give the same interval: a stored
//! run can be re-reported without its numbers moving.

/// Median of a slice (NaN for an empty one). Does not need sorted input.
pub fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    median_in_place(&mut s)
}

fn median_in_place(s: &mut [f64]) -> f64 {
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, hi, _) = s.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        hi
    } else {
        let lo = s[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }
}

/// SplitMix64: a small, well-mixed generator; enough for resampling indices.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 32).wrapping_mul(n as u64) >> 32) as usize
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A confidence interval of a statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Half the width over the centre value, e.g. 0.01 for +-1%.
    pub fn relative_half_width(&self, centre: f64) -> f64 {
        0.5 * (self.high - self.low) / centre.abs()
    }
}

/// Resamples the bootstrap draws for intervals that are reported.
pub const REPORT_RESAMPLES: usize = 2000;
/// Resamples for the stopping rule, which is evaluated many times while a case runs.
pub const STOP_RESAMPLES: usize = 300;

/// Percentile-bootstrap interval of the median at `level` (e.g. 0.95). With fewer than 3
/// samples there is nothing to resample: the interval is the samples' range.
pub fn bootstrap_median_ci(samples: &[f64], level: f64, resamples: usize, seed: u64) -> Interval {
    let n = samples.len();
    if n == 0 {
        return Interval { low: f64::NAN, high: f64::NAN };
    }
    if n < 3 {
        let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return Interval { low: lo, high: hi };
    }
    let mut rng = SplitMix64::new(seed ^ (n as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut draw = vec![0.0; n];
    let mut medians: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            for d in draw.iter_mut() {
                *d = samples[rng.below(n)];
            }
            median_in_place(&mut draw)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Interval { low: quantile_sorted(&medians, alpha), high: quantile_sorted(&medians, 1.0 - alpha) }
}

/// The ratio of medians `median(new) / median(base)` and its percentile-bootstrap interval at
/// `level`, each sample set resampled on its own (two independent runs). With fewer than 3
/// samples on a side the interval is unknown (NaN bounds): no verdict can rest on it.
pub fn bootstrap_ratio_ci(base: &[f64], new: &[f64], level: f64, resamples: usize, seed: u64) -> (f64, Interval) {
    let ratio = median(new) / median(base);
    if base.len() < 3 || new.len() < 3 {
        return (ratio, Interval { low: f64::NAN, high: f64::NAN });
    }
    let mut rng = SplitMix64::new(seed ^ ((base.len() as u64) << 32 | new.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (mut db, mut dn) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    let mut ratios: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            for d in db.iter_mut() {
                *d = base[rng.below(base.len())];
            }
            for d in dn.iter_mut() {
                *d = new[rng.below(new.len())];
            }
            median_in_place(&mut dn) / median_in_place(&mut db)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    (ratio, Interval { low: quantile_sorted(&ratios, alpha), high: quantile_sorted(&ratios, 1.0 - alpha) })
}

/// Linear-interpolated quantile of sorted values.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos - pos.floor());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - frac) + sorted[i + 1] * frac
    } else {
        sorted[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn bootstrap_interval_brackets_the_median_and_shrinks_with_more_samples() {
        let mut rng = SplitMix64::new(7);
        let draw = |rng: &mut SplitMix64, n: usize| -> Vec<f64> { (0..n).map(|_| 1.0 + 0.1 * rng.unit()).collect() };
        let small = draw(&mut rng, 20);
        let large = draw(&mut rng, 2000);
        let ci_s = bootstrap_median_ci(&small, 0.95, REPORT_RESAMPLES, 1);
        let ci_l = bootstrap_median_ci(&large, 0.95, REPORT_RESAMPLES, 1);
        for (s, ci) in [(&small, ci_s), (&large, ci_l)] {
            let m = median(s);
            assert!(ci.low <= m && m <= ci.high, "{ci:?} around {m}");
        }
        assert!(ci_l.high - ci_l.low < 0.5 * (ci_s.high - ci_s.low), "{ci_l:?} vs {ci_s:?}");
        // Uniform on [1, 1.1]: the median's standard error at n = 2000 is about 0.1/(2 sqrt(2000)),
        // so the 95% interval is about +-0.0022 wide around 1.05.
        assert!((ci_l.high - ci_l.low) < 0.01 && (ci_l.high - ci_l.low) > 0.001, "{ci_l:?}");
    }

    #[test]
    fn the_same_samples_give_the_same_interval() {
        let s: Vec<f64> = (0..50).map(|i| 1.0 + ((i * 37) % 11) as f64).collect();
        assert_eq!(bootstrap_median_ci(&s, 0.95, 500, 3), bootstrap_median_ci(&s, 0.95, 500, 3));
    }

    #[test]
    fn bootstrap_coverage_is_near_the_nominal_level() {
        // Draws from a skewed distribution with a known median (exponential: ln 2).
        let mut rng = SplitMix64::new(11);
        let trials = 300;
        let mut covered = 0;
        for t in 0..trials {
            let s: Vec<f64> = (0..60).map(|_| -(1.0 - rng.unit()).ln()).collect();
            let ci = bootstrap_median_ci(&s, 0.95, 400, t);
            if ci.low <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= ci.high {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.88..=0.99).contains(&rate), "coverage {rate}");
    }
}

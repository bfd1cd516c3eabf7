//! The scalar types kernels run in, with what host code needs to make inputs, check outputs and
//! emulate device atomics.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::Precision;

pub trait Real: bytemuck::Pod + Default + Copy + Send + Sync + PartialOrd + Into<f64> + std::fmt::Debug + 'static {
    const PRECISION: Precision;
    /// Unit round-off (half the machine epsilon is the rounding bound; we use the epsilon).
    const EPS: f64;
    type Atomic: Send + Sync;

    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn nan() -> Self {
        Self::from_f64(f64::NAN)
    }
    fn atomic(v: Self) -> Self::Atomic;
    /// Compare-and-swap add, as the OpenCL kernels do it.
    fn atomic_add(cell: &Self::Atomic, v: Self);
    fn atomic_load(cell: &Self::Atomic) -> Self;
    fn atomic_store(cell: &Self::Atomic, v: Self);
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    const EPS: f64 = f32::EPSILON as f64;
    type Atomic = AtomicU32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn atomic(v: Self) -> AtomicU32 {
        AtomicU32::new(v.to_bits())
    }
    fn atomic_add(cell: &AtomicU32, v: Self) {
        let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| Some((f32::from_bits(bits) + v).to_bits()));
    }
    fn atomic_load(cell: &AtomicU32) -> Self {
        f32::from_bits(cell.load(Ordering::Relaxed))
    }
    fn atomic_store(cell: &AtomicU32, v: Self) {
        cell.store(v.to_bits(), Ordering::Relaxed)
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    const EPS: f64 = f64::EPSILON;
    type Atomic = AtomicU64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn atomic(v: Self) -> AtomicU64 {
        AtomicU64::new(v.to_bits())
    }
    fn atomic_add(cell: &AtomicU64, v: Self) {
        let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| Some((f64::from_bits(bits) + v).to_bits()));
    }
    fn atomic_load(cell: &AtomicU64) -> Self {
        f64::from_bits(cell.load(Ordering::Relaxed))
    }
    fn atomic_store(cell: &AtomicU64, v: Self) {
        cell.store(v.to_bits(), Ordering::Relaxed)
    }
}

/// SplitMix64: a fast, well-mixed hash of an index, for reproducible inputs without a RNG crate.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in [0, 1) from (seed, index).
pub fn unit(seed: u64, i: u64) -> f64 {
    (splitmix64(seed ^ splitmix64(i)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A pseudo-random permutation of `0..n`, evaluated per index (so it can be built in parallel):
/// a 4-round Feistel network on the next power of two, cycle-walking back into range.
pub fn permute(i: u64, n: u64, seed: u64) -> u64 {
    debug_assert!(i < n);
    let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
    let half = bits.div_ceil(2);
    let lo_mask = (1u64 << half) - 1;
    let mut x = i;
    loop {
        let (mut l, mut r) = (x >> half, x & lo_mask);
        for round in 0..4u64 {
            let f = splitmix64(r ^ seed.wrapping_add(round).wrapping_mul(0xA24B_AED4_963E_E407)) & lo_mask;
            let nl = r;
            r = (l ^ f) & lo_mask;
            l = nl;
        }
        x = (l << half) | r;
        // With an odd bit count the top half has one bit less: values past 2^bits walk again.
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = permute(i, n, 42) as usize;
                assert!(!seen[j], "n={n}: {j} hit twice");
                seen[j] = true;
            }
        }
    }

    #[test]
    fn unit_is_in_range_and_varies() {
        let v: Vec<f64> = (0..1000).map(|i| unit(7, i)).collect();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean - 0.5).abs() < 0.05);
    }
}

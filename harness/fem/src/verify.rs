//! Checking a computed result against the f64 reference: a normwise error with a pass/fail
//! scale, a per-entry check against rounding-error bounds, and the mean relative error papers
//! report. Every check treats NaN (a poisoned output the method did not write) as a failure.

use rayon::prelude::*;

/// How far a computed result is from the reference.
#[derive(Debug, Clone, Copy)]
pub struct Comparison {
    /// max |x - ref| / max |ref| of each part, the largest over the parts (the pass/fail check).
    pub max_scaled: f64,
    /// Mean of |x - ref| / |ref| over every entry of every part whose reference is not zero to
    /// round-off (|ref| > 1e-12 max |ref| of its part): Cecka et al.'s Table VI error.
    pub avg_relative: f64,
}

/// Compares each (computed, reference) part; parts are scaled separately (a matrix and its
/// right-hand side). A part whose length differs from its reference gives NaN.
pub fn compare(parts: &[(&[f64], &[f64])]) -> Comparison {
    let part = |x: &[f64], r: &[f64]| {
        if x.len() != r.len() {
            return (f64::NAN, f64::NAN, 0usize);
        }
        let scale = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let floor = 1e-12 * scale;
        let (max_err, rel_sum, count) = x
            .par_iter()
            .zip(r)
            .map(|(a, b)| {
                let d = (a - b).abs();
                let d = if a.is_nan() { f64::NAN } else { d };
                if b.abs() > floor {
                    (d, d / b.abs(), 1usize)
                } else {
                    (d, 0.0, 0usize)
                }
            })
            .reduce(|| (0.0, 0.0, 0), |p, q| (if p.0.is_nan() || q.0.is_nan() { f64::NAN } else { p.0.max(q.0) }, p.1 + q.1, p.2 + q.2));
        (max_err / scale.max(f64::MIN_POSITIVE), rel_sum, count)
    };
    let (mut max_scaled, mut rel, mut count) = (0.0f64, 0.0, 0usize);
    for (x, r) in parts {
        let (m, s, c) = part(x, r);
        max_scaled = if m.is_nan() || max_scaled.is_nan() { f64::NAN } else { max_scaled.max(m) };
        rel += s;
        count += c;
    }
    Comparison { max_scaled, avg_relative: rel / count.max(1) as f64 }
}

/// Per-entry check of (computed, reference, bound) parts: an entry fails when its error exceeds
/// `u * bound` (a bound of zero still allows the smallest positive error). Returns how many
/// entries fail and the largest ratio of error to bound; NaN counts as failing.
pub fn check_bounds(parts: &[(&[f64], &[f64], &[f64])], u: f64) -> (usize, f64) {
    let part = |x: &[f64], r: &[f64], b: &[f64]| -> (usize, f64) {
        if x.len() != r.len() {
            return (usize::MAX, f64::INFINITY);
        }
        x.par_iter()
            .zip(r)
            .zip(b)
            .map(|((x, r), b)| {
                let err = (x - r).abs();
                let bound = (u * b).max(f64::MIN_POSITIVE);
                let ratio = err / bound;
                if ratio.is_nan() || ratio > 1.0 {
                    (1usize, if ratio.is_nan() { f64::INFINITY } else { ratio })
                } else {
                    (0usize, ratio)
                }
            })
            .reduce(|| (0, 0.0), |a, b| (a.0 + b.0, a.1.max(b.1)))
    };
    parts.iter().fold((0usize, 0.0f64), |(n, w), (x, r, b)| {
        let (pn, pw) = part(x, r, b);
        (n.saturating_add(pn), w.max(pw))
    })
}

/// Relative error in the 2-norm, ||x - ref|| / ||ref|| (a-COO's L2 error of a solution); NaN
/// when the lengths differ or x holds NaN.
pub fn relative_l2(x: &[f64], reference: &[f64]) -> f64 {
    if x.len() != reference.len() {
        return f64::NAN;
    }
    let (num, den) =
        x.par_iter().zip(reference).map(|(a, b)| ((a - b) * (a - b), b * b)).reduce(|| (0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
    num.sqrt() / den.sqrt().max(f64::MIN_POSITIVE)
}

/// A deterministic probe vector for products y = A x: of both signs, no two neighbours alike.
pub fn probe_vector(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i * 7919 % 1013) as f64 / 1013.0 - 0.37) * if i % 3 == 0 { 1.0 } else { 2.0 }).collect()
}

/// max_i |got_i - want_i| / scale_i (a product's error against each row's own bound); NaN if
/// any entry of `got` is NaN or the lengths differ.
pub fn max_scaled_error(got: &[f64], want: &[f64], scale: &[f64]) -> f64 {
    if got.len() != want.len() || want.len() != scale.len() {
        return f64::NAN;
    }
    got.iter().zip(want).zip(scale).fold(0.0f64, |w, ((&g, &r), &s)| {
        if g.is_nan() || w.is_nan() {
            f64::NAN
        } else {
            w.max((g - r).abs() / s.max(f64::MIN_POSITIVE))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_fail_on_nan_and_on_a_wrong_entry() {
        let r = [1.0, -2.0, 4.0];
        let ok = compare(&[(&r, &r)]);
        assert_eq!((ok.max_scaled, ok.avg_relative), (0.0, 0.0));
        let off = compare(&[(&[1.0, -2.0, 5.0], &r)]);
        assert!((off.max_scaled - 0.25).abs() < 1e-15 && (off.avg_relative - 0.25 / 3.0).abs() < 1e-15);
        assert!(compare(&[(&r, &r), (&[f64::NAN], &[1.0])]).max_scaled.is_nan());
        assert!(compare(&[(&r[..2], &r)]).max_scaled.is_nan());
        let b = [1.0, 1.0, 1.0];
        assert_eq!(check_bounds(&[(&r, &r, &b)], 1e-16).0, 0);
        assert_eq!(check_bounds(&[(&[1.0, -2.0, 4.0 + 1e-12], &r, &b)], 1e-16).0, 1);
        assert_eq!(check_bounds(&[(&[f64::NAN, -2.0, 4.0], &r, &b)], 1.0), (1, f64::INFINITY));
        assert!((relative_l2(&[3.0, 4.0], &[3.0, 0.0]) - 4.0 / 3.0).abs() < 1e-15);
        assert!(relative_l2(&[f64::NAN], &[1.0]).is_nan());
        let (want, scale) = ([1.0, -2.0, 0.0], [2.0, 2.0, 4.0]);
        assert_eq!(max_scaled_error(&want, &want, &scale), 0.0);
        assert!((max_scaled_error(&[1.0, -2.0, 1.0], &want, &scale) - 0.25).abs() < 1e-15);
        assert!(max_scaled_error(&[f64::NAN, -2.0, 0.0], &want, &scale).is_nan());
        assert!(max_scaled_error(&want[..2], &want, &scale).is_nan());
        let x = probe_vector(9);
        assert!(x.iter().any(|&v| v < 0.0) && x.iter().any(|&v| v > 0.0) && x.windows(2).all(|w| w[0] != w[1]));
    }
}

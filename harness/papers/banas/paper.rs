//! Published constants of Banaś, Płaszewski and Macioł (Tables 2-7 and the CPU figures), shown
//! beside our figures and labelled as the paper's.

/// The paper's Table 3 (GTX580), p = 2..7.
/// Table 2 of the paper, p = 1..7: entries of the quadrature points and weights, of the shape
/// functions and their derivatives at one point and at all points, and 3x3 blocks of A^e.
pub(crate) const PAPER_TABLE2: [(&str, [u64; 7]); 4] = [
    ("xi^Q and w^Q", [24, 72, 192, 320, 600, 924, 1344]),
    ("phi^Q[i_Q] (one point)", [24, 72, 160, 300, 504, 784, 1152]),
    ("phi^Q (all points)", [144, 1296, 7680, 24000, 75600, 181104, 387072]),
    ("A^e (3x3 blocks)", [36, 324, 1600, 5625, 15876, 38416, 82944]),
];

pub(crate) const PAPER_PLAN_GTX580: [(&str, [f64; 6]); 8] = [
    ("parts of A^e, REG", [2.0, 4.0, 11.0, 32.0, 76.0, 162.0]),
    ("parts of A^e, SHM", [1.0, 2.0, 6.0, 16.0, 38.0, 81.0]),
    ("blocks per thread, SHM", [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]),
    ("elements per launch", [29056.0, 5376.0, 1904.0, 672.0, 224.0, 112.0]),
    ("elements per work-group", [227.0, 48.0, 17.0, 6.0, 2.0, 1.0]),
    ("input MB, JAC", [8.87, 1.67, 0.67, 0.50, 0.76, 1.52]),
    ("input MB, NOJAC", [19.95, 9.85, 5.83, 3.92, 2.15, 1.80]),
    ("output MB", [323.21, 295.31, 367.70, 366.28, 295.44, 318.94]),
];

/// Table 4 (HD5870), p = 2..7, the rows of [`PAPER_PLAN_GTX580`].
pub(crate) const PAPER_PLAN_HD5870: [(&str, [f64; 6]); 8] = [
    ("parts of A^e, REG", [2.0, 7.0, 22.0, 63.0, 151.0, 324.0]),
    ("parts of A^e, SHM", [1.0, 3.0, 8.0, 21.0, 51.0, 108.0]),
    ("blocks per thread, SHM", [2.0, 3.0, 3.0, 3.0, 3.0, 3.0]),
    ("elements per launch", [11360.0, 2240.0, 640.0, 160.0, 80.0, 40.0]),
    ("elements per work-group", [71.0, 14.0, 4.0, 1.0, 1.0, 1.0]),
    ("input MB, JAC", [3.47, 0.71, 0.29, 0.34, 0.72, 1.49]),
    ("input MB, NOJAC", [7.80, 4.11, 1.98, 0.99, 0.88, 0.88]),
    ("output MB", [126.36, 123.05, 123.60, 87.21, 105.51, 113.91]),
];

/// Per element, microseconds, p = 2..7: (variant, kernel, total, GFLOP/s) of Tables 6 and 7.
pub(crate) type PaperRows = [(&'static str, [f64; 6], [f64; 6], [f64; 6]); 4];
pub(crate) const PAPER_GTX580: PaperRows = [
    (
        "reg-jac",
        [2.10, 27.16, 124.0, 679.3, 3010.0, 9894.0],
        [24.61, 147.6, 469.1, 1641.0, 5298.0, 14817.0],
        [208.0, 230.0, 235.0, 240.0, 204.0, 200.0],
    ),
    (
        "reg-nojac",
        [1.21, 17.80, 80.07, 439.9, 2117.0, 7203.0],
        [25.99, 149.1, 442.0, 1433.0, 4458.0, 12213.0],
        [366.0, 354.0, 366.0, 372.0, 291.0, 276.0],
    ),
    (
        "shm-jac",
        [1.91, 23.06, 114.2, 477.4, 2318.0, 7357.0],
        [24.41, 143.5, 459.4, 1439.0, 4605.0, 12280.0],
        [228.0, 270.0, 274.0, 274.0, 254.0, 253.0],
    ),
    (
        "shm-nojac",
        [1.30, 19.05, 94.31, 490.9, 1932.0, 6199.0],
        [26.07, 150.4, 456.2, 1484.0, 4273.0, 11208.0],
        [338.0, 328.0, 334.0, 324.0, 306.0, 302.0],
    ),
];
pub(crate) const PAPER_HD5870: PaperRows = [
    (
        "reg-jac",
        [3.13, 53.73, 325.3, 1779.0, 9496.0, 34568.0],
        [10.77, 91.32, 458.9, 2177.0, 10418.0, 36618.0],
        [139.0, 103.0, 92.0, 94.0, 69.0, 63.0],
    ),
    (
        "reg-nojac",
        [4.06, 34.61, 190.8, 985.0, 4684.0, 17094.0],
        [13.35, 76.68, 332.0, 1404.0, 5632.0, 19202.0],
        [109.0, 162.0, 159.0, 172.0, 141.0, 130.0],
    ),
    (
        "shm-jac",
        [3.90, 63.74, 297.5, 1477.0, 6428.0, 21359.0],
        [11.54, 101.3, 431.0, 1876.0, 7350.0, 23408.0],
        [111.0, 110.0, 106.0, 106.0, 93.0, 89.0],
    ),
    (
        "shm-nojac",
        [5.33, 67.90, 305.9, 1519.0, 6152.0, 20742.0],
        [14.62, 109.9, 447.1, 1937.0, 7101.0, 22850.0],
        [82.0, 103.0, 103.0, 104.0, 98.0, 92.0],
    ),
];
/// Table 5: the Xeon E5-2670 (8 cores, f64, OpenMP), microseconds and GFLOP/s per element.
pub(crate) const PAPER_XEON_US: [f64; 6] = [9.25, 104.4, 672.5, 3285.0, 16180.0, 101309.0];
pub(crate) const PAPER_XEON_GFLOPS: [f64; 6] = [41.06, 46.87, 42.37, 45.79, 34.61, 17.35];
/// Single-precision peaks the paper quotes, GFLOP/s.
pub(crate) const PAPER_PEAK_GTX580: f64 = 1581.0;

pub(crate) fn paper_at(values: &[f64; 6], degree: i64) -> Option<f64> {
    (2..=7).contains(&degree).then(|| values[(degree - 2) as usize])
}

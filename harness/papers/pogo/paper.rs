//! The paper's published numbers, shown beside ours and labelled as the paper's.

/// Table A.5: bytes per 32x16 block per step (f64), without K' (the rest), and K' at L_av = 9
/// with a full block: the paper's count is 48 720 + 147 456 eta.
pub const TABLE_A5_F64: [(&str, f64); 10] = [
    ("U_prev", 8192.0),
    ("U_curr", 8192.0),
    ("Block links", 80.0),
    ("U_curr (linked)", 4608.0),
    ("C'", 4096.0),
    ("Source pointers", 2048.0),
    ("Fixed boundary condition", 1024.0),
    ("Link pointers", 12288.0),
    ("K'", 147456.0),
    ("U_next", 8192.0),
];

/// Appendix A's bytes per block per step for a blocker efficiency eta, in f64 or f32 (f32: the
/// table's doubles at 4 bytes).
pub fn block_bytes(eta: f64, double: bool) -> f64 {
    if double {
        48720.0 + 147456.0 * eta
    } else {
        // Doubles halve: U_prev, U_curr, linked U_curr, C', U_next; ints and shorts stay.
        (8192.0 + 8192.0 + 4608.0 + 4096.0 + 8192.0) / 2.0 + 80.0 + 2048.0 + 1024.0 + 12288.0 + 147456.0 / 2.0 * eta
    }
}

/// Table 1 and Table 2 (GTX580): per model, DOFs (millions), dt (s), increments, the aligned and
/// greedy efficiencies (%) and explicit stepping times (s) in f64 (f32).
pub struct PaperModel {
    pub name: &'static str,
    pub dofs_m: f64,
    pub dt: f64,
    pub increments: usize,
    pub eta_aligned: f64,
    pub eta_greedy: f64,
    pub step_aligned_s: (f64, f64),
    pub step_greedy_s: (f64, f64),
    /// Abaqus, one CPU core: explicit stepping time (s).
    pub abaqus_s: f64,
}

pub const MODELS: [PaperModel; 3] = [
    PaperModel {
        name: "weld",
        dofs_m: 1.92,
        dt: 1e-9,
        increments: 40_000,
        eta_aligned: 95.0,
        eta_greedy: 88.3,
        step_aligned_s: (75.3, 43.7),
        step_greedy_s: (78.4, 43.1),
        abaqus_s: 16_282.0,
    },
    PaperModel {
        name: "gear",
        dofs_m: 2.89,
        dt: 2e-9,
        increments: 500_000,
        eta_aligned: 96.3,
        eta_greedy: 81.7,
        step_aligned_s: (1476.0, 822.0),
        step_greedy_s: (1588.0, 925.0),
        abaqus_s: 367_253.0,
    },
    PaperModel {
        name: "geophysical",
        dofs_m: 2.02,
        dt: 2e-4,
        increments: 25_000,
        eta_aligned: 99.7,
        eta_greedy: 84.4,
        step_aligned_s: (49.4, 27.3),
        step_greedy_s: (54.6, 29.8),
        abaqus_s: 12_477.0,
    },
];

/// Table 4 (aligned blocker): per model and precision, blocks, bytes a block a step and GB/s.
pub const TABLE4: [(&str, &str, f64, f64, f64); 6] = [
    ("weld", "f32", 1974.0, 102_121.0, 184.0),
    ("weld", "f64", 1974.0, 188_803.0, 197.0),
    ("gear", "f32", 2931.0, 103_080.0, 184.0),
    ("gear", "f64", 2931.0, 190_720.0, 189.0),
    ("geophysical", "f32", 1979.0, 105_587.0, 191.0),
    ("geophysical", "f64", 1979.0, 195_734.0, 196.0),
];

/// Table 2's Pogo rows: per model and blocker, block time, pre-processing and total (s).
pub const TABLE2: [(&str, &str, f64, f64, f64); 6] = [
    ("weld", "aligned", 23.4, 23.6, 122.0),
    ("weld", "greedy", 1.9, 22.6, 102.9),
    ("gear", "aligned", 50.0, 32.4, 1558.0),
    ("gear", "greedy", 6.9, 37.5, 1633.0),
    ("geophysical", "aligned", 16.7, 10.1, 76.2),
    ("geophysical", "greedy", 2.5, 10.4, 67.5),
];

pub fn model(name: &str) -> Option<&'static PaperModel> {
    MODELS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_a5_sums_to_the_papers_total_and_formula() {
        let total: f64 = super::TABLE_A5_F64.iter().map(|r| r.1).sum();
        assert_eq!(total, 196_176.0); // the paper's total per block
        assert_eq!(super::block_bytes(1.0, true), 196_176.0);
    }
}

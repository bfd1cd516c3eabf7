//! The Banaś et al. experiment files' own types: variants, sweep, problem, tables and figures,
//! a case's sweep point and the stage names.

use serde::Deserialize;

/// A method, by its registered name (`registry::METHODS`, where each method is a type and its
/// line says what it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(pub(crate) &'static str);

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Polynomial degree p, 1..7.
        degree: u32,
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Element matrices one launch writes, in MiB; the planner fits the elements per launch to
    /// it and to the device's memory (the paper's launches wrote about 300 MB).
    pub output_mib: f64,
    /// Fraction of every launch's elements checked against the f64 reference after every pass
    /// (evenly spread, first and last included; at least one); the whole output is also scanned
    /// for NaN left of the poison. Default 0.01.
    pub verify_fraction: f64,
    /// Elements the CPU reference integrates per timed repetition (default: 8 per thread).
    pub cpu_elements: Option<usize>,
    /// Override the planner's work-group size.
    pub group_size: Option<usize>,
    /// REG: override the planner's blocks per thread, as [rows, columns].
    pub reg_blocks: Option<[usize; 2]>,
    /// SHM: shared memory for a part of A^e, in bytes (ceiling: the device's limit).
    pub shared_bytes: Option<usize>,
    /// MMA: override the planner's tiling, as [warp rows, warp columns, 8x8 sub-tiles per warp
    /// in a row, in a column]; the tile must be square (sub-tiles have 8 columns, and 8 rows in
    /// f64, 16 in f32).
    pub mma_tiling: Option<[usize; 4]>,
    /// MMA: quadrature points staged at once (a multiple of 4 in f64, of 8 in f32; default 16).
    pub mma_points: Option<usize>,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ {
            output_mib: 256.0,
            verify_fraction: 0.01,
            cpu_elements: None,
            group_size: None,
            reg_blocks: None,
            shared_bytes: None,
            mma_tiling: None,
            mma_points: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table 2: entries of the arrays the integration works on, ours beside the paper's.
    Sizes,
    /// Tables 3/4: the plan the host computed from the device's limits.
    Plan,
    /// Tables 5/6/7: per element, the time of each stage, flops and GFLOP/s.
    Stages,
    /// Per degree: the best variant, its GFLOP/s and fraction of peak, against the CPU.
    Best,
    /// The paper's observations, each with a verdict on this run's rows (claims.rs).
    Claims,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 2: stage times per element against p, stacked.
    StageTimes,
    /// Fig. 3: kernel GFLOP/s against p.
    GflopsVsDegree,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

/// The stages of one GPU run, in the order the paper's tables list them.
pub const STAGES: [&str; 5] = ["prepare", "allocate", "upload", "kernel", "download"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_written_in_yaml_as_its_name() {
        for m in Method::all() {
            let parsed: Method = serde_json::from_str(&format!("\"{}\"", m.as_str())).unwrap_or_else(|e| panic!("{}: {e}", m.as_str()));
            assert_eq!(parsed, m);
        }
        let e = serde_json::from_str::<Method>("\"reg-jack\"").unwrap_err().to_string();
        assert!(e.contains("unknown variant `reg-jack`") && e.contains("`reg-jac`"), "{e}");
    }
}

//! fembench: a benchmark harness and reproducibility suite for GPU finite-element algorithms.
//!
//! The pipeline, one module per step: [`experiment`] (YAML) -> [`benchmark`] cases ->
//! [`measure`] -> [`results`] (Parquet rows) -> [`report`] (tables and figures). Kernels live in
//! `kernels/` behind one portability header ([`kernels`]) and run through one [`device`] trait on
//! CUDA or OpenCL. Each benchmark is one module: [`bandwidth`] measures the device's attainable
//! bandwidth, the ceiling later reports divide by; [`cecka`] and [`banas`] hold one paper each.

pub mod banas;
pub mod bandwidth;
pub mod benchmark;
pub mod cecka;
pub mod compare;
pub mod device;
pub mod experiment;
pub mod kernels;
pub mod measure;
pub mod real;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod telemetry;

use serde::{Deserialize, Serialize};

/// Floating-point precision of a case's device data and arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
